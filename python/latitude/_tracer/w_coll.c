/* Collectives, blocking and nonblocking (the I-variant adds the request field; its
 * completion shows up in the "#@ done" line of a Wait/Test call). Arguments MPI ignores on
 * this rank (the receive side off the root, the send side with MPI_IN_PLACE) may be garbage
 * and are written without being dereferenced: datatypes as "<handle>,0,0", count lists as
 * zeros. */
#include "lt_log.h"

#include <stdlib.h>

/* 1: root, 0: other participant, -1: not taking part (intercommunicator MPI_PROC_NULL) */
static int root_role(MPI_Comm comm, int root)
{
    int inter = 0, rank = -1;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return root == MPI_ROOT ? 1 : root == MPI_PROC_NULL ? -1 : 0;
    PMPI_Comm_rank(comm, &rank);
    return rank == root;
}

static char *dtype_if(char *p, MPI_Datatype dt, int used)
{
    return used ? lt_dtype(p, dt) : lt_dtype_unused(p, dt);
}

static char *list_if(char *p, const int *counts, int n, int used)
{
    p = lt_ensure(p, LT_LIST_BYTES(n));
    return lt_list(p, used ? counts : NULL, n);
}

/* ... comm [request] : tend; a nonblocking collective registers its request */
static void coll_end(char *p, MPI_Comm comm, const void *reqaddr, MPI_Request req)
{
    p = lt_comm(p, comm);
    if (reqaddr) {
        p = lt_ptr(p, reqaddr);
        lt_req_new(req, reqaddr, 0, MPI_COMM_NULL, NULL);
    }
    lt_commit(lt_end(p));
}

#define OPEN(name, n, t0)                                                                         \
    if (!lt_active())                                                                             \
        return;                                                                                   \
    char *p = lt_open_n(name, n, t0, 0)

void lt_log_barrier(const char *name, size_t n, uint64_t t0, MPI_Comm comm, const void *reqaddr,
                    MPI_Request req)
{
    OPEN(name, n, t0);
    coll_end(p, comm, reqaddr, req);
}

void lt_log_bcast(const char *name, size_t n, uint64_t t0, const void *buf, int count,
                  MPI_Datatype dt, int root, MPI_Comm comm, const void *reqaddr, MPI_Request req)
{
    OPEN(name, n, t0);
    p = lt_ptr(p, buf);
    p = lt_int(p, count);
    p = dtype_if(p, dt, root_role(comm, root) >= 0);
    p = lt_int(p, root);
    coll_end(p, comm, reqaddr, req);
}

void lt_log_reduce(const char *name, size_t n, uint64_t t0, const void *sbuf, void *rbuf,
                   int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
                   const void *reqaddr, MPI_Request req)
{
    OPEN(name, n, t0);
    p = lt_ptr(p, sbuf);
    p = lt_ptr(p, rbuf);
    p = lt_int(p, count);
    p = dtype_if(p, dt, root_role(comm, root) >= 0);
    p = lt_op(p, op);
    p = lt_int(p, root);
    coll_end(p, comm, reqaddr, req);
}

/* Allreduce, Scan, Exscan, Reduce_scatter_block: sendbuf, recvbuf, count, type, op, comm */
void lt_log_allreduce(const char *name, size_t n, uint64_t t0, const void *sbuf, void *rbuf,
                      int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, const void *reqaddr,
                      MPI_Request req)
{
    OPEN(name, n, t0);
    p = lt_ptr(p, sbuf);
    p = lt_ptr(p, rbuf);
    p = lt_int(p, count);
    p = lt_dtype(p, dt);
    p = lt_op(p, op);
    coll_end(p, comm, reqaddr, req);
}

void lt_log_reduce_scatter(const char *name, size_t n, uint64_t t0, const void *sbuf, void *rbuf,
                           const int *rcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                           const void *reqaddr, MPI_Request req)
{
    OPEN(name, n, t0);
    p = lt_ptr(p, sbuf);
    p = lt_ptr(p, rbuf);
    p = list_if(p, rcounts, lt_comm_peers(comm), 1);
    p = lt_dtype(p, dt);
    p = lt_op(p, op);
    coll_end(p, comm, reqaddr, req);
}

/* Gather (scatter = 0) and Scatter (scatter = 1) */
void lt_log_rooted(const char *name, size_t n, uint64_t t0, int scatter, const void *sbuf,
                   int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   int root, MPI_Comm comm, const void *reqaddr, MPI_Request req)
{
    OPEN(name, n, t0);
    int role = root_role(comm, root);
    int send_used = scatter ? role == 1 : role == 0 || (role == 1 && sbuf != MPI_IN_PLACE);
    int recv_used = scatter ? role == 0 || (role == 1 && rbuf != MPI_IN_PLACE) : role == 1;
    p = lt_ptr(p, sbuf);
    p = lt_int(p, scount);
    p = dtype_if(p, stype, send_used);
    p = lt_ptr(p, rbuf);
    p = lt_int(p, rcount);
    p = dtype_if(p, rtype, recv_used);
    p = lt_int(p, root);
    coll_end(p, comm, reqaddr, req);
}

/* Allgather and Alltoall */
void lt_log_all(const char *name, size_t n, uint64_t t0, const void *sbuf, int scount,
                MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm,
                const void *reqaddr, MPI_Request req)
{
    OPEN(name, n, t0);
    p = lt_ptr(p, sbuf);
    p = lt_int(p, scount);
    p = dtype_if(p, stype, sbuf != MPI_IN_PLACE);
    p = lt_ptr(p, rbuf);
    p = lt_int(p, rcount);
    p = lt_dtype(p, rtype);
    coll_end(p, comm, reqaddr, req);
}

void lt_log_gatherv(const char *name, size_t n, uint64_t t0, const void *sbuf, int scount,
                    MPI_Datatype stype, void *rbuf, const int *rcounts, const int *displs,
                    MPI_Datatype rtype, int root, MPI_Comm comm, const void *reqaddr,
                    MPI_Request req)
{
    OPEN(name, n, t0);
    int role = root_role(comm, root), np = lt_comm_peers(comm);
    p = lt_ptr(p, sbuf);
    p = lt_int(p, scount);
    p = dtype_if(p, stype, role == 0 || (role == 1 && sbuf != MPI_IN_PLACE));
    p = lt_ptr(p, rbuf);
    p = list_if(p, rcounts, np, role == 1);
    p = list_if(p, displs, np, role == 1);
    p = dtype_if(p, rtype, role == 1);
    p = lt_int(p, root);
    coll_end(p, comm, reqaddr, req);
}

void lt_log_scatterv(const char *name, size_t n, uint64_t t0, const void *sbuf, const int *scounts,
                     const int *displs, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, int root, MPI_Comm comm, const void *reqaddr,
                     MPI_Request req)
{
    OPEN(name, n, t0);
    int role = root_role(comm, root), np = lt_comm_peers(comm);
    p = lt_ptr(p, sbuf);
    p = list_if(p, scounts, np, role == 1);
    p = list_if(p, displs, np, role == 1);
    p = dtype_if(p, stype, role == 1);
    p = lt_ptr(p, rbuf);
    p = lt_int(p, rcount);
    p = dtype_if(p, rtype, role == 0 || (role == 1 && rbuf != MPI_IN_PLACE));
    p = lt_int(p, root);
    coll_end(p, comm, reqaddr, req);
}

void lt_log_allgatherv(const char *name, size_t n, uint64_t t0, const void *sbuf, int scount,
                       MPI_Datatype stype, void *rbuf, const int *rcounts, const int *displs,
                       MPI_Datatype rtype, MPI_Comm comm, const void *reqaddr, MPI_Request req)
{
    OPEN(name, n, t0);
    int np = lt_comm_peers(comm);
    p = lt_ptr(p, sbuf);
    p = lt_int(p, scount);
    p = dtype_if(p, stype, sbuf != MPI_IN_PLACE);
    p = lt_ptr(p, rbuf);
    p = list_if(p, rcounts, np, 1);
    p = list_if(p, displs, np, 1);
    p = lt_dtype(p, rtype);
    coll_end(p, comm, reqaddr, req);
}

void lt_log_alltoallv(const char *name, size_t n, uint64_t t0, const void *sbuf,
                      const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
                      const int *rcounts, const int *rdispls, MPI_Datatype rtype, MPI_Comm comm,
                      const void *reqaddr, MPI_Request req)
{
    OPEN(name, n, t0);
    int np = lt_comm_peers(comm), in_place = sbuf == MPI_IN_PLACE;
    p = lt_ptr(p, sbuf);
    p = list_if(p, scounts, np, !in_place);
    p = list_if(p, sdispls, np, !in_place);
    p = dtype_if(p, stype, !in_place);
    p = lt_ptr(p, rbuf);
    p = list_if(p, rcounts, np, 1);
    p = list_if(p, rdispls, np, 1);
    p = lt_dtype(p, rtype);
    coll_end(p, comm, reqaddr, req);
}

/* "#@ typesizes send=<s0,...> recv=<r0,...>": the per-peer type sizes of Alltoallw */
static char *type_sizes(char *p, const MPI_Datatype *types, int np, int used)
{
    for (int i = 0; i < np; i++) {
        int sz = 0;
        if (used && types[i] != MPI_DATATYPE_NULL)
            PMPI_Type_size(types[i], &sz);
        if (i)
            *p++ = ',';
        p = lt_i64(p, sz);
    }
    return p;
}

void lt_log_alltoallw(const char *name, size_t n, uint64_t t0, const void *sbuf,
                      const int *scounts, const int *sdispls, const MPI_Datatype *stypes,
                      void *rbuf, const int *rcounts, const int *rdispls,
                      const MPI_Datatype *rtypes, MPI_Comm comm, const void *reqaddr,
                      MPI_Request req)
{
    OPEN(name, n, t0);
    int np = lt_comm_peers(comm), in_place = sbuf == MPI_IN_PLACE;
    p = lt_ptr(p, sbuf);
    p = list_if(p, scounts, np, !in_place);
    p = list_if(p, sdispls, np, !in_place);
    p = lt_ptr(p, stypes);
    p = lt_ptr(p, rbuf);
    p = list_if(p, rcounts, np, 1);
    p = list_if(p, rdispls, np, 1);
    p = lt_ptr(p, rtypes);
    p = lt_comm(p, comm);
    if (reqaddr) {
        p = lt_ptr(p, reqaddr);
        lt_req_new(req, reqaddr, 0, MPI_COMM_NULL, NULL);
    }
    p = lt_end(p);
    p = lt_ensure(p, 2 * LT_LIST_BYTES(np) + 32);
    p = LT_EXT(p, "typesizes send=");
    p = type_sizes(p, stypes, np, !in_place);
    p = LT_LIT(p, " recv=");
    p = type_sizes(p, rtypes, np, 1);
    *p++ = '\n';
    lt_commit(p);
}

/* ---- C bindings: each blocking collective and its nonblocking twin ---- */
#define T0 uint64_t t0 = lt_now()
#define BLOCKING NULL, MPI_REQUEST_NULL
#define NB(req) (req), *(req)
#define NM(s) LT_NAME(s)

int MPI_Barrier(MPI_Comm comm)
{
    T0;
    int rc = PMPI_Barrier(comm);
    lt_log_barrier(NM("MPI_Barrier"), t0, comm, BLOCKING);
    return rc;
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    T0;
    int rc = PMPI_Ibarrier(comm, req);
    lt_log_barrier(NM("MPI_Ibarrier"), t0, comm, NB(req));
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    T0;
    int rc = PMPI_Bcast(buf, count, dt, root, comm);
    lt_log_bcast(NM("MPI_Bcast"), t0, buf, count, dt, root, comm, BLOCKING);
    return rc;
}
int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req)
{
    T0;
    int rc = PMPI_Ibcast(buf, count, dt, root, comm, req);
    lt_log_bcast(NM("MPI_Ibcast"), t0, buf, count, dt, root, comm, NB(req));
    return rc;
}

int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm)
{
    T0;
    int rc = PMPI_Reduce(s, r, count, dt, op, root, comm);
    lt_log_reduce(NM("MPI_Reduce"), t0, s, r, count, dt, op, root, comm, BLOCKING);
    return rc;
}
int MPI_Ireduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req)
{
    T0;
    int rc = PMPI_Ireduce(s, r, count, dt, op, root, comm, req);
    lt_log_reduce(NM("MPI_Ireduce"), t0, s, r, count, dt, op, root, comm, NB(req));
    return rc;
}

#define ALLRED(NAME, PNAME, INAME, PINAME)                                                        \
    int NAME(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)        \
    {                                                                                             \
        T0;                                                                                       \
        int rc = PNAME(s, r, count, dt, op, comm);                                                \
        lt_log_allreduce(NM(#NAME), t0, s, r, count, dt, op, comm, BLOCKING);                     \
        return rc;                                                                                \
    }                                                                                             \
    int INAME(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,       \
              MPI_Request *req)                                                                   \
    {                                                                                             \
        T0;                                                                                       \
        int rc = PINAME(s, r, count, dt, op, comm, req);                                          \
        lt_log_allreduce(NM(#INAME), t0, s, r, count, dt, op, comm, NB(req));                     \
        return rc;                                                                                \
    }
ALLRED(MPI_Allreduce, PMPI_Allreduce, MPI_Iallreduce, PMPI_Iallreduce)
ALLRED(MPI_Scan, PMPI_Scan, MPI_Iscan, PMPI_Iscan)
ALLRED(MPI_Exscan, PMPI_Exscan, MPI_Iexscan, PMPI_Iexscan)
ALLRED(MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block, MPI_Ireduce_scatter_block,
       PMPI_Ireduce_scatter_block)

int MPI_Reduce_scatter(const void *s, void *r, const int rcounts[], MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm)
{
    T0;
    int rc = PMPI_Reduce_scatter(s, r, rcounts, dt, op, comm);
    lt_log_reduce_scatter(NM("MPI_Reduce_scatter"), t0, s, r, rcounts, dt, op, comm, BLOCKING);
    return rc;
}
int MPI_Ireduce_scatter(const void *s, void *r, const int rcounts[], MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm, MPI_Request *req)
{
    T0;
    int rc = PMPI_Ireduce_scatter(s, r, rcounts, dt, op, comm, req);
    lt_log_reduce_scatter(NM("MPI_Ireduce_scatter"), t0, s, r, rcounts, dt, op, comm, NB(req));
    return rc;
}

#define ROOTED(NAME, PNAME, INAME, PINAME, SCATTER)                                               \
    int NAME(const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt,           \
             int root, MPI_Comm comm)                                                             \
    {                                                                                             \
        T0;                                                                                       \
        int rc = PNAME(s, sc, st, r, rc_, rt, root, comm);                                        \
        lt_log_rooted(NM(#NAME), t0, SCATTER, s, sc, st, r, rc_, rt, root, comm, BLOCKING);       \
        return rc;                                                                                \
    }                                                                                             \
    int INAME(const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt,          \
              int root, MPI_Comm comm, MPI_Request *req)                                          \
    {                                                                                             \
        T0;                                                                                       \
        int rc = PINAME(s, sc, st, r, rc_, rt, root, comm, req);                                  \
        lt_log_rooted(NM(#INAME), t0, SCATTER, s, sc, st, r, rc_, rt, root, comm, NB(req));       \
        return rc;                                                                                \
    }
ROOTED(MPI_Gather, PMPI_Gather, MPI_Igather, PMPI_Igather, 0)
ROOTED(MPI_Scatter, PMPI_Scatter, MPI_Iscatter, PMPI_Iscatter, 1)

#define ALL(NAME, PNAME, INAME, PINAME)                                                           \
    int NAME(const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt,           \
             MPI_Comm comm)                                                                       \
    {                                                                                             \
        T0;                                                                                       \
        int rc = PNAME(s, sc, st, r, rc_, rt, comm);                                              \
        lt_log_all(NM(#NAME), t0, s, sc, st, r, rc_, rt, comm, BLOCKING);                         \
        return rc;                                                                                \
    }                                                                                             \
    int INAME(const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt,          \
              MPI_Comm comm, MPI_Request *req)                                                    \
    {                                                                                             \
        T0;                                                                                       \
        int rc = PINAME(s, sc, st, r, rc_, rt, comm, req);                                        \
        lt_log_all(NM(#INAME), t0, s, sc, st, r, rc_, rt, comm, NB(req));                         \
        return rc;                                                                                \
    }
ALL(MPI_Allgather, PMPI_Allgather, MPI_Iallgather, PMPI_Iallgather)
ALL(MPI_Alltoall, PMPI_Alltoall, MPI_Ialltoall, PMPI_Ialltoall)

int MPI_Gatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rcs[],
                const int displs[], MPI_Datatype rt, int root, MPI_Comm comm)
{
    T0;
    int rc = PMPI_Gatherv(s, sc, st, r, rcs, displs, rt, root, comm);
    lt_log_gatherv(NM("MPI_Gatherv"), t0, s, sc, st, r, rcs, displs, rt, root, comm, BLOCKING);
    return rc;
}
int MPI_Igatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rcs[],
                 const int displs[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    T0;
    int rc = PMPI_Igatherv(s, sc, st, r, rcs, displs, rt, root, comm, req);
    lt_log_gatherv(NM("MPI_Igatherv"), t0, s, sc, st, r, rcs, displs, rt, root, comm, NB(req));
    return rc;
}

int MPI_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype st, void *r,
                 int rcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
    T0;
    int rc = PMPI_Scatterv(s, scs, displs, st, r, rcount, rt, root, comm);
    lt_log_scatterv(NM("MPI_Scatterv"), t0, s, scs, displs, st, r, rcount, rt, root, comm,
                    BLOCKING);
    return rc;
}
int MPI_Iscatterv(const void *s, const int scs[], const int displs[], MPI_Datatype st, void *r,
                  int rcount, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    T0;
    int rc = PMPI_Iscatterv(s, scs, displs, st, r, rcount, rt, root, comm, req);
    lt_log_scatterv(NM("MPI_Iscatterv"), t0, s, scs, displs, st, r, rcount, rt, root, comm,
                    NB(req));
    return rc;
}

int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rcs[],
                   const int displs[], MPI_Datatype rt, MPI_Comm comm)
{
    T0;
    int rc = PMPI_Allgatherv(s, sc, st, r, rcs, displs, rt, comm);
    lt_log_allgatherv(NM("MPI_Allgatherv"), t0, s, sc, st, r, rcs, displs, rt, comm, BLOCKING);
    return rc;
}
int MPI_Iallgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rcs[],
                    const int displs[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    T0;
    int rc = PMPI_Iallgatherv(s, sc, st, r, rcs, displs, rt, comm, req);
    lt_log_allgatherv(NM("MPI_Iallgatherv"), t0, s, sc, st, r, rcs, displs, rt, comm, NB(req));
    return rc;
}

int MPI_Alltoallv(const void *s, const int scs[], const int sds[], MPI_Datatype st, void *r,
                  const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm)
{
    T0;
    int rc = PMPI_Alltoallv(s, scs, sds, st, r, rcs, rds, rt, comm);
    lt_log_alltoallv(NM("MPI_Alltoallv"), t0, s, scs, sds, st, r, rcs, rds, rt, comm, BLOCKING);
    return rc;
}
int MPI_Ialltoallv(const void *s, const int scs[], const int sds[], MPI_Datatype st, void *r,
                   const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request *req)
{
    T0;
    int rc = PMPI_Ialltoallv(s, scs, sds, st, r, rcs, rds, rt, comm, req);
    lt_log_alltoallv(NM("MPI_Ialltoallv"), t0, s, scs, sds, st, r, rcs, rds, rt, comm, NB(req));
    return rc;
}

int MPI_Alltoallw(const void *s, const int scs[], const int sds[], const MPI_Datatype sts[],
                  void *r, const int rcs[], const int rds[], const MPI_Datatype rts[],
                  MPI_Comm comm)
{
    T0;
    int rc = PMPI_Alltoallw(s, scs, sds, sts, r, rcs, rds, rts, comm);
    lt_log_alltoallw(NM("MPI_Alltoallw"), t0, s, scs, sds, sts, r, rcs, rds, rts, comm, BLOCKING);
    return rc;
}
int MPI_Ialltoallw(const void *s, const int scs[], const int sds[], const MPI_Datatype sts[],
                   void *r, const int rcs[], const int rds[], const MPI_Datatype rts[],
                   MPI_Comm comm, MPI_Request *req)
{
    T0;
    int rc = PMPI_Ialltoallw(s, scs, sds, sts, r, rcs, rds, rts, comm, req);
    lt_log_alltoallw(NM("MPI_Ialltoallw"), t0, s, scs, sds, sts, r, rcs, rds, rts, comm, NB(req));
    return rc;
}

int MPI_Reduce_local(const void *in, void *inout, int count, MPI_Datatype dt, MPI_Op op)
{
    T0;
    int rc = PMPI_Reduce_local(in, inout, count, dt, op);
    LT_REC("MPI_Reduce_local", t0, p = lt_ptr(p, in); p = lt_ptr(p, inout);
           p = lt_int(p, count); p = lt_dtype(p, dt); p = lt_op(p, op));
    return rc;
}
