/* Communicators: every communicator the application can use gets a private shadow duplicate
 * (MPI_Comm_dup, collective over its members, made right where the communicator is created)
 * that carries the injector's timestamps, FINs and re-implemented collectives without ever
 * matching the application's own messages. A communicator created by a call the injector
 * does not wrap has no shadow: its traffic passes through undelayed (with a warning). */
#include "ij.h"
#include "lt.h" /* struct lt_map */

#include <stdlib.h>

static struct lt_map comms; /* handle bits -> struct ij_comm * */

struct ij_comm *ij_comm_get(MPI_Comm c)
{
    uint64_t *v = lt_map_get(&comms, LT_HANDLE(c));
    return v ? (struct ij_comm *)(uintptr_t)*v : NULL;
}

struct ij_peer *ij_peer(struct ij_comm *c, int peer)
{
    if (!c->peers) {
        c->peers = calloc((size_t)c->remote, sizeof *c->peers);
        if (!c->peers)
            ij_fatal("out of memory");
    }
    if (peer < 0 || peer >= c->remote)
        ij_fatal("peer %d outside a communicator of %d ranks", peer, c->remote);
    return &c->peers[peer];
}

/* World rank of each rank a point-to-point call on c addresses (the remote group of an
 * intercommunicator); -1 where there is none (a rank of another world). */
static int *world_ranks(MPI_Comm c, int inter, int n)
{
    MPI_Group g, w;
    if (inter)
        PMPI_Comm_remote_group(c, &g);
    else
        PMPI_Comm_group(c, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &w);
    int *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    if (!in || !out)
        ij_fatal("out of memory");
    for (int i = 0; i < n; i++)
        in[i] = i;
    PMPI_Group_translate_ranks(g, n, in, w, out);
    for (int i = 0; i < n; i++)
        if (out[i] == MPI_UNDEFINED)
            out[i] = -1;
    free(in);
    PMPI_Group_free(&g);
    PMPI_Group_free(&w);
    return out;
}

void ij_comm_register(MPI_Comm c)
{
    if (c == MPI_COMM_NULL || ij_comm_get(c))
        return;
    struct ij_comm *ic = calloc(1, sizeof *ic);
    if (!ic)
        ij_fatal("out of memory");
    ic->app = c;
    PMPI_Comm_dup(c, &ic->shadow);
    PMPI_Comm_rank(c, &ic->rank);
    PMPI_Comm_size(c, &ic->size);
    PMPI_Comm_test_inter(c, &ic->inter);
    ic->remote = ic->size;
    if (ic->inter)
        PMPI_Comm_remote_size(c, &ic->remote);
    if (ij.pair_delta)
        ic->world = world_ranks(c, ic->inter, ic->remote);
    lt_map_put(&comms, LT_HANDLE(c), (uint64_t)(uintptr_t)ic);
}

uint64_t ij_delta(const struct ij_comm *c, int peer)
{
    if (!ij.pair_delta || !c || !c->world || peer < 0 || peer >= c->remote)
        return ij.delta;
    int w = c->world[peer];
    return w < 0 ? ij.delta : ij.delta + ij.pair_delta[w];
}

static void release(struct ij_comm *ic)
{
    if (ic->peers) {
        for (int i = 0; i < ic->remote; i++)
            for (int ch = 0; ch < 2; ch++) {
                free(ic->peers[i].ts[ch].e);
                free(ic->peers[i].ts[ch].probe_rel);
                free(ic->peers[i].ts[ch].drop);
                free(ic->peers[i].fin[ch].e);
            }
        free(ic->peers);
    }
    PMPI_Comm_free(&ic->shadow);
    free(ic->world);
    free(ic);
}

void ij_comm_forget(MPI_Comm c)
{
    struct ij_comm *ic = ij_comm_get(c);
    if (!ic)
        return;
    lt_map_del(&comms, LT_HANDLE(c));
    release(ic);
}

void ij_comm_free_all(void)
{
    for (size_t i = 0; i < comms.cap; i++)
        if (comms.full[i])
            release((struct ij_comm *)(uintptr_t)comms.val[i]);
    free(comms.key);
    free(comms.val);
    free(comms.full);
    comms = (struct lt_map){0};
}

/* ---- wrappers of the calls that create communicators ---- */
#define NEWCOMM(call, out)                                                                    \
    do {                                                                                      \
        int rc_ = (call);                                                                     \
        if (rc_ == MPI_SUCCESS && ij.active)                                                  \
            ij_comm_register(*(out));                                                         \
        return rc_;                                                                           \
    } while (0)

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Comm_dup(comm, newcomm), newcomm);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

/* The shadow must be created collectively before the new communicator is used, which a
 * nonblocking duplication cannot promise: the injector duplicates at once and returns a
 * completed request. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    *request = MPI_REQUEST_NULL;
    NEWCOMM(PMPI_Comm_dup(comm, newcomm), newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), newcomm);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm), newcomm);
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                   reorder, newcomm),
            newcomm);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    NEWCOMM(PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                            destinations, destweights, info, reorder, newcomm),
            newcomm);
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    NEWCOMM(PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                  newintercomm),
            newintercomm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    NEWCOMM(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    if (ij.active)
        ij_comm_forget(*comm);
    return PMPI_Comm_free(comm);
}

int MPI_Comm_disconnect(MPI_Comm *comm)
{
    if (ij.active)
        ij_comm_forget(*comm);
    return PMPI_Comm_disconnect(comm);
}
