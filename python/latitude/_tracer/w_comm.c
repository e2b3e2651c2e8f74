/* Communicators, groups and process topologies. Every call that creates a communicator is
 * followed by "#@ comm <handle> seq=<k> world=<ranks>" so readers can map its ranks to
 * MPI_COMM_WORLD ranks and recognise the same communicator on every member. */
#include "lt_log.h"

/* Record ends with the new communicator's "#@ comm" line (none for MPI_COMM_NULL). */
static void end_newcomm(char *p, MPI_Comm newcomm)
{
    p = lt_end(p);
    if (newcomm != MPI_COMM_NULL) {
        p = lt_ensure(p, lt_comm_new(newcomm));
        p = lt_ext_comm(p, newcomm);
    }
    lt_commit(p);
}

#define OPEN(name, t0)                                                                         \
    char *p = lt_open(name, t0, 0)

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_rank(comm, rank);
    LT_REC("MPI_Comm_rank", t0, p = lt_comm(p, comm); p = lt_ptr(p, rank));
    return rc;
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_size(comm, size);
    LT_REC("MPI_Comm_size", t0, p = lt_comm(p, comm); p = lt_ptr(p, size));
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (lt_active()) {
        OPEN("MPI_Comm_dup", t0);
        p = lt_comm(p, comm);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
    if (lt_active()) {
        OPEN("MPI_Comm_dup_with_info", t0);
        p = lt_comm(p, comm);
        p = lt_hdl(p, info);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

/* The new handle is only valid once the request completes: its "#@ comm" line follows the
 * "#@ done" line of the Wait/Test call that completes the request. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_idup(comm, newcomm, req);
    if (lt_active()) {
        OPEN("MPI_Comm_idup", t0);
        p = lt_comm(p, comm);
        p = lt_ptr(p, newcomm);
        p = lt_ptr(p, req);
        lt_req_new(*req, req, 0, MPI_COMM_NULL, newcomm);
        lt_commit(lt_end(p));
    }
    return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (lt_active()) {
        OPEN("MPI_Comm_split", t0);
        p = lt_comm(p, comm);
        p = lt_int(p, color);
        p = lt_int(p, key);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    if (lt_active()) {
        OPEN("MPI_Comm_split_type", t0);
        p = lt_comm(p, comm);
        p = lt_int(p, split_type);
        p = lt_int(p, key);
        p = lt_hdl(p, info);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_create(comm, group, newcomm);
    if (lt_active()) {
        OPEN("MPI_Comm_create", t0);
        p = lt_comm(p, comm);
        p = lt_hdl(p, group);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
    if (lt_active()) {
        OPEN("MPI_Comm_create_group", t0);
        p = lt_comm(p, comm);
        p = lt_hdl(p, group);
        p = lt_int(p, tag);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader,
                         int tag, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, newcomm);
    if (lt_active()) {
        OPEN("MPI_Intercomm_create", t0);
        p = lt_comm(p, local);
        p = lt_int(p, local_leader);
        p = lt_comm(p, peer);
        p = lt_int(p, remote_leader);
        p = lt_int(p, tag);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Intercomm_merge(intercomm, high, newcomm);
    if (lt_active()) {
        OPEN("MPI_Intercomm_merge", t0);
        p = lt_comm(p, intercomm);
        p = lt_int(p, high);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);
    if (lt_active()) {
        OPEN("MPI_Cart_create", t0);
        p = lt_comm(p, comm);
        p = lt_int(p, ndims);
        p = lt_ptr(p, dims);
        p = lt_ptr(p, periods);
        p = lt_int(p, reorder);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Cart_sub(comm, remain_dims, newcomm);
    if (lt_active()) {
        OPEN("MPI_Cart_sub", t0);
        p = lt_comm(p, comm);
        p = lt_ptr(p, remain_dims);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm);
    if (lt_active()) {
        OPEN("MPI_Graph_create", t0);
        p = lt_comm(p, comm);
        p = lt_int(p, nnodes);
        p = lt_ptr(p, index);
        p = lt_ptr(p, edges);
        p = lt_int(p, reorder);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                             destinations, destweights, info, reorder, newcomm);
    if (lt_active()) {
        OPEN("MPI_Dist_graph_create_adjacent", t0);
        p = lt_comm(p, comm);
        p = lt_int(p, indegree);
        p = lt_ptr(p, sources);
        p = lt_ptr(p, sourceweights);
        p = lt_int(p, outdegree);
        p = lt_ptr(p, destinations);
        p = lt_ptr(p, destweights);
        p = lt_hdl(p, info);
        p = lt_int(p, reorder);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *newcomm)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                    reorder, newcomm);
    if (lt_active()) {
        OPEN("MPI_Dist_graph_create", t0);
        p = lt_comm(p, comm);
        p = lt_int(p, n);
        p = lt_ptr(p, sources);
        p = lt_ptr(p, degrees);
        p = lt_ptr(p, destinations);
        p = lt_ptr(p, weights);
        p = lt_hdl(p, info);
        p = lt_int(p, reorder);
        p = lt_ptr(p, newcomm);
        end_newcomm(p, *newcomm);
    }
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    uint64_t t0 = lt_now();
    lt_comm_forget(*comm);
    int rc = PMPI_Comm_free(comm);
    LT_REC("MPI_Comm_free", t0, p = lt_ptr(p, comm));
    return rc;
}

int MPI_Comm_disconnect(MPI_Comm *comm)
{
    uint64_t t0 = lt_now();
    lt_comm_forget(*comm);
    int rc = PMPI_Comm_disconnect(comm);
    LT_REC("MPI_Comm_disconnect", t0, p = lt_ptr(p, comm));
    return rc;
}

/* ---- queries ---- */
#define COMM_Q(NAME, PNAME, T)                                                                 \
    int NAME(MPI_Comm comm, T *out)                                                            \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        int rc = PNAME(comm, out);                                                             \
        LT_REC(#NAME, t0, p = lt_comm(p, comm); p = lt_ptr(p, out));                           \
        return rc;                                                                             \
    }
COMM_Q(MPI_Comm_group, PMPI_Comm_group, MPI_Group)
COMM_Q(MPI_Comm_remote_group, PMPI_Comm_remote_group, MPI_Group)
COMM_Q(MPI_Comm_remote_size, PMPI_Comm_remote_size, int)
COMM_Q(MPI_Comm_test_inter, PMPI_Comm_test_inter, int)
COMM_Q(MPI_Cartdim_get, PMPI_Cartdim_get, int)
COMM_Q(MPI_Topo_test, PMPI_Topo_test, int)
COMM_Q(MPI_Comm_get_errhandler, PMPI_Comm_get_errhandler, MPI_Errhandler)

int MPI_Comm_compare(MPI_Comm c1, MPI_Comm c2, int *result)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_compare(c1, c2, result);
    LT_REC("MPI_Comm_compare", t0, p = lt_comm(p, c1); p = lt_comm(p, c2); p = lt_ptr(p, result));
    return rc;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_set_errhandler(comm, eh);
    LT_REC("MPI_Comm_set_errhandler", t0, p = lt_comm(p, comm); p = lt_hdl(p, eh));
    return rc;
}

int MPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_set_name(comm, name);
    LT_REC("MPI_Comm_set_name", t0, p = lt_comm(p, comm); p = lt_ptr(p, name));
    return rc;
}

int MPI_Comm_get_name(MPI_Comm comm, char *name, int *len)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Comm_get_name(comm, name, len);
    LT_REC("MPI_Comm_get_name", t0, p = lt_comm(p, comm); p = lt_ptr(p, name); p = lt_ptr(p, len));
    return rc;
}

/* MPICH defines these two as macros: nothing to intercept there. */
#ifndef MPI_Comm_c2f
MPI_Fint MPI_Comm_c2f(MPI_Comm comm)
{
    uint64_t t0 = lt_now();
    MPI_Fint f = PMPI_Comm_c2f(comm);
    LT_REC("MPI_Comm_c2f", t0, p = lt_comm(p, comm));
    return f;
}

MPI_Comm MPI_Comm_f2c(MPI_Fint comm)
{
    uint64_t t0 = lt_now();
    MPI_Comm c = PMPI_Comm_f2c(comm);
    LT_REC("MPI_Comm_f2c", t0, p = lt_int(p, comm));
    return c;
}
#endif

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Cart_get(comm, maxdims, dims, periods, coords);
    LT_REC("MPI_Cart_get", t0, p = lt_comm(p, comm); p = lt_int(p, maxdims); p = lt_ptr(p, dims);
           p = lt_ptr(p, periods); p = lt_ptr(p, coords));
    return rc;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Cart_rank(comm, coords, rank);
    LT_REC("MPI_Cart_rank", t0, p = lt_comm(p, comm); p = lt_ptr(p, coords); p = lt_ptr(p, rank));
    return rc;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Cart_coords(comm, rank, maxdims, coords);
    LT_REC("MPI_Cart_coords", t0, p = lt_comm(p, comm); p = lt_int(p, rank);
           p = lt_int(p, maxdims); p = lt_ptr(p, coords));
    return rc;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *source, int *dest)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Cart_shift(comm, direction, disp, source, dest);
    LT_REC("MPI_Cart_shift", t0, p = lt_comm(p, comm); p = lt_int(p, direction);
           p = lt_int(p, disp); p = lt_ptr(p, source); p = lt_ptr(p, dest));
    return rc;
}

int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Dims_create(nnodes, ndims, dims);
    LT_REC("MPI_Dims_create", t0, p = lt_int(p, nnodes); p = lt_int(p, ndims);
           p = lt_ptr(p, dims));
    return rc;
}

/* ---- groups ---- */
#define GROUP_Q(NAME, PNAME)                                                                   \
    int NAME(MPI_Group g, int *out)                                                            \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        int rc = PNAME(g, out);                                                                \
        LT_REC(#NAME, t0, p = lt_hdl(p, g); p = lt_ptr(p, out));                               \
        return rc;                                                                             \
    }
GROUP_Q(MPI_Group_size, PMPI_Group_size)
GROUP_Q(MPI_Group_rank, PMPI_Group_rank)

#define GROUP_SEL(NAME, PNAME, T)                                                              \
    int NAME(MPI_Group g, int n, T ranks, MPI_Group *newgroup)                                 \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        int rc = PNAME(g, n, ranks, newgroup);                                                 \
        LT_REC(#NAME, t0, p = lt_hdl(p, g); p = lt_int(p, n); p = lt_ptr(p, ranks);            \
               p = lt_ptr(p, newgroup));                                                       \
        return rc;                                                                             \
    }
GROUP_SEL(MPI_Group_incl, PMPI_Group_incl, const int *)
GROUP_SEL(MPI_Group_excl, PMPI_Group_excl, const int *)
typedef int range3[3];
GROUP_SEL(MPI_Group_range_incl, PMPI_Group_range_incl, range3 *)
GROUP_SEL(MPI_Group_range_excl, PMPI_Group_range_excl, range3 *)

#define GROUP_OP(NAME, PNAME)                                                                  \
    int NAME(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)                                  \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        int rc = PNAME(g1, g2, newgroup);                                                      \
        LT_REC(#NAME, t0, p = lt_hdl(p, g1); p = lt_hdl(p, g2); p = lt_ptr(p, newgroup));      \
        return rc;                                                                             \
    }
GROUP_OP(MPI_Group_union, PMPI_Group_union)
GROUP_OP(MPI_Group_intersection, PMPI_Group_intersection)
GROUP_OP(MPI_Group_difference, PMPI_Group_difference)

int MPI_Group_compare(MPI_Group g1, MPI_Group g2, int *result)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Group_compare(g1, g2, result);
    LT_REC("MPI_Group_compare", t0, p = lt_hdl(p, g1); p = lt_hdl(p, g2); p = lt_ptr(p, result));
    return rc;
}

int MPI_Group_translate_ranks(MPI_Group g1, int n, const int ranks1[], MPI_Group g2,
                              int ranks2[])
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Group_translate_ranks(g1, n, ranks1, g2, ranks2);
    LT_REC("MPI_Group_translate_ranks", t0, p = lt_hdl(p, g1); p = lt_int(p, n);
           p = lt_ptr(p, ranks1); p = lt_hdl(p, g2); p = lt_ptr(p, ranks2));
    return rc;
}

int MPI_Group_free(MPI_Group *g)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Group_free(g);
    LT_REC("MPI_Group_free", t0, p = lt_ptr(p, g));
    return rc;
}
