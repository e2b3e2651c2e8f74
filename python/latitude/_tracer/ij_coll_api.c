/* Collective wrappers: choose the algorithm exactly as `latitude schedule`'s default preset
 * does (latitude-core collectives/select.rs, Preset::choose: MPICH's selection with its
 * default thresholds) and run it as an injected schedule. Blocking and nonblocking forms
 * share one builder; nonblocking ones return a generalized request.
 *
 * Passed to MPI unchanged (no latency added, counted in the report): collectives on
 * intercommunicators or on communicators without a shadow, and the few cases the
 * re-implementation refuses (non-commutative operations where the algorithm would reorder
 * the operands). LATITUDE_INJECT_COLL=0 passes every collective through.
 */
#include "ij_sched.h"

#define KIB 1024u

static struct ij_comm *coll_comm(MPI_Comm comm)
{
    if (!ij.active || !ij.coll)
        return NULL;
    struct ij_comm *c = ij_comm_get(comm);
    if (!c)
        ij_warn_once("unknown-coll", "collective on a communicator created by a call the "
                     "injector does not wrap: passed to MPI without added latency");
    else if (c->inter)
        ij_warn_once("inter-coll", "collectives on intercommunicators are passed to MPI "
                     "without added latency");
    return c && !c->inter ? c : NULL;
}

/* run (req == NULL) or start the schedule; rc < 0: the builder refused, tell the caller */
static int go(struct ij_sched *s, int rc, MPI_Request *req)
{
    if (rc < 0) {
        ij_sched_free(s);
        ij.n_fallback++;
        ij_warn_once("fallback", "a collective with a non-commutative operation was passed to "
                     "MPI without added latency");
        return -1;
    }
    return req ? ij_sched_start(s, req) : ij_sched_run(s);
}

static int pof2_floor_u(int p) { return ij_pof2_floor(p > 0 ? p : 1); }

/* ---- barrier ---- */
static int barrier(MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Ibarrier(comm, req) : PMPI_Barrier(comm);
    struct ij_sched *s = ij_sched_new(c);
    ij_barrier_dissemination(s);
    return go(s, 0, req);
}
int MPI_Barrier(MPI_Comm comm) { return barrier(comm, NULL); }
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req) { return barrier(comm, req); }

/* ---- bcast ---- */
static int bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                 MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Ibcast(buf, count, dt, root, comm, req)
                   : PMPI_Bcast(buf, count, dt, root, comm);
    struct ij_sched *s = ij_sched_new(c);
    uint64_t n = ij_type_bytes(count, dt);
    int rc = n < 12 * KIB || c->size < 8 ? ij_bcast_binomial(s, buf, count, dt, root)
                                         : ij_bcast_scatter_allgather(s, buf, count, dt, root);
    return go(s, rc, req);
}
int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    return bcast(buf, count, dt, root, comm, NULL);
}
int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req)
{
    return bcast(buf, count, dt, root, comm, req);
}

/* ---- reduce, allreduce ---- */
static int reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                  MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (c) {
        struct ij_sched *s = ij_sched_new(c);
        uint64_t n = ij_type_bytes(count, dt);
        int rc = n <= 2 * KIB || n < (uint64_t)pof2_floor_u(c->size)
                     ? ij_reduce_binomial(s, sbuf, rbuf, count, dt, op, root)
                     : ij_reduce_rabenseifner(s, sbuf, rbuf, count, dt, op, root);
        if (go(s, rc, req) == MPI_SUCCESS)
            return MPI_SUCCESS;
    }
    return req ? PMPI_Ireduce(sbuf, rbuf, count, dt, op, root, comm, req)
               : PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm);
}
int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm)
{
    return reduce(sbuf, rbuf, count, dt, op, root, comm, NULL);
}
int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req)
{
    return reduce(sbuf, rbuf, count, dt, op, root, comm, req);
}

static int allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (c) {
        struct ij_sched *s = ij_sched_new(c);
        uint64_t n = ij_type_bytes(count, dt);
        int rc = n <= 2 * KIB || n < (uint64_t)pof2_floor_u(c->size)
                     ? ij_allreduce_recdoub(s, sbuf, rbuf, count, dt, op)
                     : ij_allreduce_rabenseifner(s, sbuf, rbuf, count, dt, op);
        if (go(s, rc, req) == MPI_SUCCESS)
            return MPI_SUCCESS;
    }
    return req ? PMPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, req)
               : PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
}
int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    return allreduce(sbuf, rbuf, count, dt, op, comm, NULL);
}
int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    return allreduce(sbuf, rbuf, count, dt, op, comm, req);
}

/* ---- scan, exscan ---- */
static int scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                MPI_Comm comm, MPI_Request *req, int ex)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c) {
        if (ex)
            return req ? PMPI_Iexscan(sbuf, rbuf, count, dt, op, comm, req)
                       : PMPI_Exscan(sbuf, rbuf, count, dt, op, comm);
        return req ? PMPI_Iscan(sbuf, rbuf, count, dt, op, comm, req)
                   : PMPI_Scan(sbuf, rbuf, count, dt, op, comm);
    }
    struct ij_sched *s = ij_sched_new(c);
    return go(s, ij_scan_recdoub(s, sbuf, rbuf, count, dt, op, ex), req);
}
int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return scan(sbuf, rbuf, count, dt, op, comm, NULL, 0);
}
int MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
              MPI_Comm comm, MPI_Request *req)
{
    return scan(sbuf, rbuf, count, dt, op, comm, req, 0);
}
int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
               MPI_Comm comm)
{
    return scan(sbuf, rbuf, count, dt, op, comm, NULL, 1);
}
int MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                MPI_Comm comm, MPI_Request *req)
{
    return scan(sbuf, rbuf, count, dt, op, comm, req, 1);
}

/* ---- allgather(v) ---- */
static int ag_alg(uint64_t total, int p)
{
    if (total < 512 * KIB && (p & (p - 1)) == 0)
        return IJ_AG_RECDOUB;
    return total < 80 * KIB ? IJ_AG_BRUCK : IJ_AG_RING;
}

static int allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                     MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Iallgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, req)
                   : PMPI_Allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    struct ij_sched *s = ij_sched_new(c);
    struct ij_blocks rb = {rbuf, rdt, ij_extent(rdt), rcount, NULL, NULL};
    int alg = ag_alg(ij_type_bytes(rcount, rdt) * (uint64_t)c->size, c->size);
    return go(s, ij_allgather(s, alg, sbuf, scount, sdt, &rb), req);
}
int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                  MPI_Datatype rdt, MPI_Comm comm)
{
    return allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, NULL);
}
int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                   MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    return allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, req);
}

static int allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                      const int rcounts[], const int displs[], MPI_Datatype rdt, MPI_Comm comm,
                      MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Iallgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, req)
                   : PMPI_Allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm);
    struct ij_sched *s = ij_sched_new(c);
    struct ij_blocks rb = {rbuf, rdt, ij_extent(rdt), 0, rcounts, displs};
    uint64_t total = 0;
    for (int i = 0; i < c->size; i++)
        total += ij_type_bytes(rcounts[i], rdt);
    return go(s, ij_allgather(s, ag_alg(total, c->size), sbuf, scount, sdt, &rb), req);
}
int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rdt, MPI_Comm comm)
{
    return allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, NULL);
}
int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rdt, MPI_Comm comm,
                    MPI_Request *req)
{
    return allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, req);
}

/* ---- alltoall(v, w) ---- */

/* MPI_IN_PLACE: the data to send is in the receive buffer; send from a copy */
static const void *in_place_copy(struct ij_sched *s, const void *sbuf, void *rbuf,
                                 MPI_Aint span_elems, MPI_Datatype dt)
{
    if (sbuf != MPI_IN_PLACE)
        return sbuf;
    void *copy = ij_elems(s, (int)span_elems, dt);
    ij_copy(rbuf, (int)span_elems, dt, copy, (int)span_elems, dt);
    return copy;
}

static int alltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                    MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Ialltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, req)
                   : PMPI_Alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    struct ij_sched *s = ij_sched_new(c);
    if (sbuf == MPI_IN_PLACE) {
        scount = rcount;
        sdt = rdt;
    }
    sbuf = in_place_copy(s, sbuf, rbuf, (MPI_Aint)rcount * c->size, rdt);
    struct ij_blocks sb = {(char *)sbuf, sdt, ij_extent(sdt), scount, NULL, NULL};
    struct ij_blocks rb = {rbuf, rdt, ij_extent(rdt), rcount, NULL, NULL};
    uint64_t n = ij_type_bytes(scount, sdt);
    int alg = n <= 256 && c->size >= 8 ? IJ_A2A_BRUCK
              : n <= 32 * KIB          ? IJ_A2A_LINEAR
                                       : IJ_A2A_PAIRWISE;
    return go(s, ij_alltoall(s, alg, &sb, NULL, &rb, NULL), req);
}
int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                 MPI_Datatype rdt, MPI_Comm comm)
{
    return alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, NULL);
}
int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                  MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    return alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, req);
}

/* largest element index + 1 a v-variant touches (for an MPI_IN_PLACE copy) */
static MPI_Aint span_of(const int *counts, const int *displs, int p)
{
    MPI_Aint m = 0;
    for (int i = 0; i < p; i++)
        if ((MPI_Aint)displs[i] + counts[i] > m)
            m = (MPI_Aint)displs[i] + counts[i];
    return m;
}

static int alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                     MPI_Datatype sdt, void *rbuf, const int rcounts[], const int rdispls[],
                     MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Ialltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt,
                                     comm, req)
                   : PMPI_Alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt,
                                    comm);
    struct ij_sched *s = ij_sched_new(c);
    if (sbuf == MPI_IN_PLACE) {
        scounts = rcounts;
        sdispls = rdispls;
        sdt = rdt;
    }
    sbuf = in_place_copy(s, sbuf, rbuf, span_of(rcounts, rdispls, c->size), rdt);
    struct ij_blocks sb = {(char *)sbuf, sdt, ij_extent(sdt), 0, scounts, sdispls};
    struct ij_blocks rb = {rbuf, rdt, ij_extent(rdt), 0, rcounts, rdispls};
    return go(s, ij_alltoall(s, IJ_A2A_LINEAR, &sb, NULL, &rb, NULL), req);
}
int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype sdt,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rdt,
                  MPI_Comm comm)
{
    return alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, NULL);
}
int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                   MPI_Datatype sdt, void *rbuf, const int rcounts[], const int rdispls[],
                   MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    return alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, req);
}

static int alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                     const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                     const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                     MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c || sbuf == MPI_IN_PLACE) {
        if (c)
            ij_warn_once("a2aw-inplace", "MPI_Alltoallw with MPI_IN_PLACE is passed to MPI "
                         "without added latency");
        return req ? PMPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                     rtypes, comm, req)
                   : PMPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                    rtypes, comm);
    }
    struct ij_sched *s = ij_sched_new(c);
    /* byte displacements: blocks of MPI_BYTE "elements" */
    struct ij_blocks sb = {(char *)sbuf, MPI_BYTE, 1, 0, scounts, sdispls};
    struct ij_blocks rb = {rbuf, MPI_BYTE, 1, 0, rcounts, rdispls};
    return go(s, ij_alltoall(s, IJ_A2A_LINEAR, &sb, stypes, &rb, rtypes), req);
}
int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                  const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                  const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    return alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, NULL);
}
int MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                   const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                   const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                   MPI_Request *req)
{
    return alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, req);
}

/* ---- gather(v), scatter(v) ---- */
static int gather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                  MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Igather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, req)
                   : PMPI_Gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    struct ij_sched *s = ij_sched_new(c);
    return go(s, ij_gather_binomial(s, sbuf, scount, sdt, rbuf, rcount, rdt, root), req);
}
int MPI_Gather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
               MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, NULL);
}
int MPI_Igather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    return gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, req);
}

static int scatter(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                   MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Iscatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, req)
                   : PMPI_Scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    struct ij_sched *s = ij_sched_new(c);
    return go(s, ij_scatter_binomial(s, sbuf, scount, sdt, rbuf, rcount, rdt, root), req);
}
int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, NULL);
}
int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                 MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    return scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, req);
}

static int gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rdt, int root,
                   MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Igatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, req)
                   : PMPI_Gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm);
    struct ij_sched *s = ij_sched_new(c);
    struct ij_blocks rb = {rbuf, rdt, c->rank == root ? ij_extent(rdt) : 1, 0, rcounts, displs};
    return go(s, ij_gatherv_linear(s, sbuf, scount, sdt, &rb, root), req);
}
int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
                const int displs[], MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, NULL);
}
int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                 const int rcounts[], const int displs[], MPI_Datatype rdt, int root,
                 MPI_Comm comm, MPI_Request *req)
{
    return gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, req);
}

static int scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype sdt,
                    void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm,
                    MPI_Request *req)
{
    struct ij_comm *c = coll_comm(comm);
    if (!c)
        return req ? PMPI_Iscatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, req)
                   : PMPI_Scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm);
    struct ij_sched *s = ij_sched_new(c);
    struct ij_blocks sb = {(char *)sbuf, sdt, c->rank == root ? ij_extent(sdt) : 1, 0, scounts,
                           displs};
    return go(s, ij_scatterv_linear(s, &sb, rbuf, rcount, rdt, root), req);
}
int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype sdt,
                 void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, NULL);
}
int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype sdt,
                  void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm,
                  MPI_Request *req)
{
    return scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, req);
}

/* ---- reduce_scatter(_block) ---- */
static int reduce_scatter(const void *sbuf, void *rbuf, const int counts[], MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, MPI_Request *req, int block)
{
    struct ij_comm *c = coll_comm(comm);
    if (c) {
        struct ij_sched *s = ij_sched_new(c);
        int *cn = ij_mem(s, sizeof *cn * (size_t)c->size);
        uint64_t total = 0;
        for (int i = 0; i < c->size; i++) {
            cn[i] = block ? counts[0] : counts[i];
            total += ij_type_bytes(cn[i], dt);
        }
        int ring = total >= 512 * KIB;
        if (go(s, ij_reduce_scatter(s, ring, sbuf, rbuf, cn, dt, op), req) == MPI_SUCCESS)
            return MPI_SUCCESS;
    }
    if (block)
        return req ? PMPI_Ireduce_scatter_block(sbuf, rbuf, counts[0], dt, op, comm, req)
                   : PMPI_Reduce_scatter_block(sbuf, rbuf, counts[0], dt, op, comm);
    return req ? PMPI_Ireduce_scatter(sbuf, rbuf, counts, dt, op, comm, req)
               : PMPI_Reduce_scatter(sbuf, rbuf, counts, dt, op, comm);
}
int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int counts[], MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(sbuf, rbuf, counts, dt, op, comm, NULL, 0);
}
int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int counts[], MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return reduce_scatter(sbuf, rbuf, counts, dt, op, comm, req, 0);
}
int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(sbuf, rbuf, &count, dt, op, comm, NULL, 1);
}
int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return reduce_scatter(sbuf, rbuf, &count, dt, op, comm, req, 1);
}
