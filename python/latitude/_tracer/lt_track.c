/* Communicator membership ("#@ comm" lines) and the resolution of wildcard receives
 * ("#@ status" lines): what plain liballprof v1 loses. See docs/trace-format.md. */
#include "lt_log.h"

#include <stdlib.h>

/* ---- communicators ---- */
struct comm_ent {
    int n, rn;     /* local and remote (intercommunicator) group sizes */
    int *world;    /* world rank of each local rank, then of each remote rank */
    unsigned seq;  /* earlier communicators with the same membership on this rank */
};
static struct lt_map comms; /* handle -> struct comm_ent * */
static struct lt_map seqs;  /* membership hash -> count */

static int *translate(MPI_Group g, int n, int *out)
{
    static MPI_Group world = MPI_GROUP_NULL;
    if (world == MPI_GROUP_NULL)
        PMPI_Comm_group(MPI_COMM_WORLD, &world);
    int *idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    PMPI_Group_translate_ranks(g, n, idx, world, out);
    free(idx);
    return out;
}

static struct comm_ent *comm_build(MPI_Comm c)
{
    struct comm_ent *e = calloc(1, sizeof *e);
    int inter = 0;
    MPI_Group g, rg;
    PMPI_Comm_test_inter(c, &inter);
    PMPI_Comm_group(c, &g);
    PMPI_Group_size(g, &e->n);
    if (inter) {
        PMPI_Comm_remote_group(c, &rg);
        PMPI_Group_size(rg, &e->rn);
    }
    e->world = malloc(sizeof(int) * (size_t)(e->n + e->rn + 1));
    translate(g, e->n, e->world);
    PMPI_Group_free(&g);
    if (inter) {
        translate(rg, e->rn, e->world + e->n);
        PMPI_Group_free(&rg);
    }
    return e;
}

static void comm_drop(uint64_t h)
{
    uint64_t *v = lt_map_get(&comms, h);
    if (v) {
        struct comm_ent *e = (struct comm_ent *)(uintptr_t)*v;
        free(e->world);
        free(e);
        lt_map_del(&comms, h);
    }
}

static struct comm_ent *comm_lookup(MPI_Comm c)
{
    uint64_t h = LT_HANDLE(c);
    uint64_t *v = lt_map_get(&comms, h);
    if (v)
        return (struct comm_ent *)(uintptr_t)*v;
    struct comm_ent *e = comm_build(c);
    lt_map_put(&comms, h, (uint64_t)(uintptr_t)e);
    return e;
}

void lt_comm_forget(MPI_Comm c)
{
    if (c != MPI_COMM_NULL)
        comm_drop(LT_HANDLE(c));
}

/* Register a communicator just created (its handle may be a reused one) and number it. */
static struct comm_ent *comm_new(MPI_Comm c)
{
    comm_drop(LT_HANDLE(c));
    struct comm_ent *e = comm_lookup(c);
    uint64_t hash = 1469598103934665603ULL ^ (uint64_t)e->n;
    for (int i = 0; i < e->n + e->rn; i++)
        hash = (hash ^ (uint64_t)(uint32_t)e->world[i]) * 1099511628211ULL;
    uint64_t *cnt = lt_map_get(&seqs, hash);
    e->seq = cnt ? (unsigned)*cnt : 0;
    lt_map_put(&seqs, hash, (uint64_t)e->seq + 1);
    return e;
}

size_t lt_comm_new(MPI_Comm c)
{
    if (c == MPI_COMM_NULL)
        return 0;
    struct comm_ent *e = comm_new(c);
    return (size_t)(e->n + e->rn) * 12u + 128u;
}

/* world=0-3 style: runs of consecutive ranks collapse to lo-hi */
static char *rank_list(char *p, const int *r, int n)
{
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && r[i] >= 0 && r[j + 1] == r[j] + 1)
            j++;
        if (i)
            *p++ = ',';
        p = lt_i64(p, r[i]);
        if (j > i) {
            *p++ = '-';
            p = lt_i64(p, r[j]);
        }
        i = j + 1;
    }
    return p;
}

/* "#@ comm <handle> seq=<k> world=<list> [remote=<list>]"; call lt_comm_new first. */
char *lt_ext_comm(char *p, MPI_Comm c)
{
    if (c == MPI_COMM_NULL)
        return p;
    struct comm_ent *e = comm_lookup(c);
    p = LT_EXT(p, "comm ");
    p = lt_u64(p, LT_HANDLE(c));
    p = LT_LIT(p, " seq=");
    p = lt_u64(p, e->seq);
    p = LT_LIT(p, " world=");
    p = rank_list(p, e->world, e->n);
    if (e->rn) {
        p = LT_LIT(p, " remote=");
        p = rank_list(p, e->world + e->n, e->rn);
    }
    *p++ = '\n';
    return p;
}

char *lt_ext_newcomm(char *p, MPI_Comm c)
{
    if (c == MPI_COMM_NULL)
        return p;
    p = lt_ensure(p, lt_comm_new(c));
    return lt_ext_comm(p, c);
}

void lt_header_ext(void)
{
    size_t need = lt_comm_new(MPI_COMM_WORLD) + lt_comm_new(MPI_COMM_SELF);
    lt_lock();
    lt_reserve_locked(need + 64);
    char *p = lt.buf + lt.used;
    p = lt_ext_comm(p, MPI_COMM_WORLD);
    p = lt_ext_comm(p, MPI_COMM_SELF);
    lt.used = (size_t)(p - lt.buf);
    lt_unlock();
}

static int world_rank(MPI_Comm comm, int rank, int remote)
{
    if (rank < 0 || comm == MPI_COMM_NULL)
        return rank; /* MPI_PROC_NULL, MPI_ANY_SOURCE, ... */
    if (comm == MPI_COMM_WORLD)
        return rank;
    struct comm_ent *e = comm_lookup(comm);
    if (remote && e->rn)
        return rank < e->rn ? e->world[e->n + rank] : rank;
    return rank < e->n ? e->world[rank] : rank;
}

char *lt_ext_status(char *p, int64_t call, MPI_Comm comm, const MPI_Status *st)
{
    int cancelled = 0, bytes = 0, inter = 0;
    if (call >= 0) /* only requests can be cancelled; probes leave the flag undefined */
        PMPI_Test_cancelled(st, &cancelled);
    if (cancelled || st->MPI_SOURCE == MPI_PROC_NULL)
        return p;
    PMPI_Get_count(st, MPI_BYTE, &bytes);
    if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD)
        PMPI_Comm_test_inter(comm, &inter);
    p = LT_EXT(p, "status ");
    if (call >= 0) {
        p = LT_LIT(p, "call=");
        p = lt_i64(p, call);
        *p++ = ' ';
    }
    p = LT_LIT(p, "src=");
    p = lt_i64(p, world_rank(comm, st->MPI_SOURCE, inter));
    p = LT_LIT(p, " tag=");
    p = lt_i64(p, st->MPI_TAG);
    p = LT_LIT(p, " bytes=");
    p = lt_i64(p, bytes);
    *p++ = '\n';
    return p;
}
