/* Fortran wrappers, part 2: collectives and communicators (see lt_fortran.h). Buffers go
 * through lt_fbuf so that the Fortran MPI_IN_PLACE is recognised as such. */
#include "lt_fortran.h"

#ifdef LT_FORTRAN
typedef MPI_Fint F;
#define B(x) ((void *)lt_fbuf(x))
#define BLOCKING NULL, MPI_REQUEST_NULL
#define NB(req) (req), FR(req)

void mpi_barrier_(F *comm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_barrier_)(comm, ierr);
    lt_log_barrier(LT_NAME("MPI_Barrier"), t0, FC(comm), BLOCKING);
}
F_ALIASES(barrier, MPI_BARRIER)

void mpi_ibarrier_(F *comm, F *req, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_ibarrier_)(comm, req, ierr);
    lt_log_barrier(LT_NAME("MPI_Ibarrier"), t0, FC(comm), NB(req));
}
F_ALIASES(ibarrier, MPI_IBARRIER)

void mpi_bcast_(void *buf, F *count, F *dt, F *root, F *comm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_bcast_)(buf, count, dt, root, comm, ierr);
    lt_log_bcast(LT_NAME("MPI_Bcast"), t0, buf, *count, FT(dt), *root, FC(comm), BLOCKING);
}
F_ALIASES(bcast, MPI_BCAST)

void mpi_ibcast_(void *buf, F *count, F *dt, F *root, F *comm, F *req, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_ibcast_)(buf, count, dt, root, comm, req, ierr);
    lt_log_bcast(LT_NAME("MPI_Ibcast"), t0, buf, *count, FT(dt), *root, FC(comm), NB(req));
}
F_ALIASES(ibcast, MPI_IBCAST)

void mpi_reduce_(void *s, void *r, F *count, F *dt, F *op, F *root, F *comm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_reduce_)(s, r, count, dt, op, root, comm, ierr);
    lt_log_reduce(LT_NAME("MPI_Reduce"), t0, B(s), B(r), *count, FT(dt), FO(op), *root,
                  FC(comm), BLOCKING);
}
F_ALIASES(reduce, MPI_REDUCE)

#define ALLRED(low, UP, NAME)                                                                  \
    void mpi_##low##_(void *s, void *r, F *count, F *dt, F *op, F *comm, F *ierr)              \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        REAL(pmpi_##low##_)(s, r, count, dt, op, comm, ierr);                                  \
        lt_log_allreduce(LT_NAME(NAME), t0, B(s), B(r), *count, FT(dt), FO(op), FC(comm),      \
                         BLOCKING);                                                            \
    }                                                                                          \
    F_ALIASES(low, UP)
ALLRED(allreduce, MPI_ALLREDUCE, "MPI_Allreduce")
ALLRED(scan, MPI_SCAN, "MPI_Scan")
ALLRED(exscan, MPI_EXSCAN, "MPI_Exscan")
ALLRED(reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block")

void mpi_iallreduce_(void *s, void *r, F *count, F *dt, F *op, F *comm, F *req, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_iallreduce_)(s, r, count, dt, op, comm, req, ierr);
    lt_log_allreduce(LT_NAME("MPI_Iallreduce"), t0, B(s), B(r), *count, FT(dt), FO(op),
                     FC(comm), NB(req));
}
F_ALIASES(iallreduce, MPI_IALLREDUCE)

void mpi_reduce_scatter_(void *s, void *r, F *rcounts, F *dt, F *op, F *comm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_reduce_scatter_)(s, r, rcounts, dt, op, comm, ierr);
    lt_log_reduce_scatter(LT_NAME("MPI_Reduce_scatter"), t0, B(s), B(r), rcounts, FT(dt),
                          FO(op), FC(comm), BLOCKING);
}
F_ALIASES(reduce_scatter, MPI_REDUCE_SCATTER)

#define ROOTED(low, UP, NAME, SCATTER)                                                         \
    void mpi_##low##_(void *s, F *sc, F *st, void *r, F *rc, F *rt, F *root, F *comm, F *ierr) \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        REAL(pmpi_##low##_)(s, sc, st, r, rc, rt, root, comm, ierr);                           \
        lt_log_rooted(LT_NAME(NAME), t0, SCATTER, B(s), *sc, FT(st), B(r), *rc,        \
                      FT(rt), *root, FC(comm), BLOCKING);                                      \
    }                                                                                          \
    F_ALIASES(low, UP)
ROOTED(gather, MPI_GATHER, "MPI_Gather", 0)
ROOTED(scatter, MPI_SCATTER, "MPI_Scatter", 1)

#define ALL(low, UP, NAME)                                                                     \
    void mpi_##low##_(void *s, F *sc, F *st, void *r, F *rc, F *rt, F *comm, F *ierr)          \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        REAL(pmpi_##low##_)(s, sc, st, r, rc, rt, comm, ierr);                                 \
        lt_log_all(LT_NAME(NAME), t0, B(s), *sc, FT(st), r, *rc, FT(rt), FC(comm), BLOCKING);  \
    }                                                                                          \
    F_ALIASES(low, UP)
ALL(allgather, MPI_ALLGATHER, "MPI_Allgather")
ALL(alltoall, MPI_ALLTOALL, "MPI_Alltoall")

void mpi_ialltoall_(void *s, F *sc, F *st, void *r, F *rc, F *rt, F *comm, F *req, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_ialltoall_)(s, sc, st, r, rc, rt, comm, req, ierr);
    lt_log_all(LT_NAME("MPI_Ialltoall"), t0, B(s), *sc, FT(st), r, *rc, FT(rt), FC(comm),
               NB(req));
}
F_ALIASES(ialltoall, MPI_IALLTOALL)

void mpi_gatherv_(void *s, F *sc, F *st, void *r, F *rcs, F *displs, F *rt, F *root, F *comm,
                  F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_gatherv_)(s, sc, st, r, rcs, displs, rt, root, comm, ierr);
    lt_log_gatherv(LT_NAME("MPI_Gatherv"), t0, B(s), *sc, FT(st), r, rcs, displs, FT(rt), *root,
                   FC(comm), BLOCKING);
}
F_ALIASES(gatherv, MPI_GATHERV)

void mpi_scatterv_(void *s, F *scs, F *displs, F *st, void *r, F *rc, F *rt, F *root, F *comm,
                   F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_scatterv_)(s, scs, displs, st, r, rc, rt, root, comm, ierr);
    lt_log_scatterv(LT_NAME("MPI_Scatterv"), t0, s, scs, displs, FT(st), B(r), *rc,
                    FT(rt), *root, FC(comm), BLOCKING);
}
F_ALIASES(scatterv, MPI_SCATTERV)

void mpi_allgatherv_(void *s, F *sc, F *st, void *r, F *rcs, F *displs, F *rt, F *comm,
                     F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_allgatherv_)(s, sc, st, r, rcs, displs, rt, comm, ierr);
    lt_log_allgatherv(LT_NAME("MPI_Allgatherv"), t0, B(s), *sc, FT(st), r, rcs, displs, FT(rt),
                      FC(comm), BLOCKING);
}
F_ALIASES(allgatherv, MPI_ALLGATHERV)

void mpi_alltoallv_(void *s, F *scs, F *sds, F *st, void *r, F *rcs, F *rds, F *rt, F *comm,
                    F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_alltoallv_)(s, scs, sds, st, r, rcs, rds, rt, comm, ierr);
    lt_log_alltoallv(LT_NAME("MPI_Alltoallv"), t0, B(s), scs, sds, FT(st), r, rcs, rds, FT(rt),
                     FC(comm), BLOCKING);
}
F_ALIASES(alltoallv, MPI_ALLTOALLV)

/* ---- communicators ---- */
static void newcomm_end(char *p, F *newcomm)
{
    p = lt_end(p);
    MPI_Comm c = FC(newcomm);
    if (c != MPI_COMM_NULL) {
        p = lt_ensure(p, lt_comm_new(c));
        p = lt_ext_comm(p, c);
    }
    lt_commit(p);
}

void mpi_comm_dup_(F *comm, F *newcomm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_comm_dup_)(comm, newcomm, ierr);
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Comm_dup", t0, 0);
    p = lt_comm(p, FC(comm));
    p = lt_ptr(p, newcomm);
    newcomm_end(p, newcomm);
}
F_ALIASES(comm_dup, MPI_COMM_DUP)

void mpi_comm_split_(F *comm, F *color, F *key, F *newcomm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_comm_split_)(comm, color, key, newcomm, ierr);
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Comm_split", t0, 0);
    p = lt_comm(p, FC(comm));
    p = lt_int(p, *color);
    p = lt_int(p, *key);
    p = lt_ptr(p, newcomm);
    newcomm_end(p, newcomm);
}
F_ALIASES(comm_split, MPI_COMM_SPLIT)

void mpi_comm_create_(F *comm, F *group, F *newcomm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_comm_create_)(comm, group, newcomm, ierr);
    if (!lt_active())
        return;
    MPI_Group g = PMPI_Group_f2c(*group);
    char *p = lt_open("MPI_Comm_create", t0, 0);
    p = lt_comm(p, FC(comm));
    p = lt_hdl(p, g);
    p = lt_ptr(p, newcomm);
    newcomm_end(p, newcomm);
}
F_ALIASES(comm_create, MPI_COMM_CREATE)

void mpi_cart_create_(F *comm, F *ndims, F *dims, F *periods, F *reorder, F *newcomm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_cart_create_)(comm, ndims, dims, periods, reorder, newcomm, ierr);
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Cart_create", t0, 0);
    p = lt_comm(p, FC(comm));
    p = lt_int(p, *ndims);
    p = lt_ptr(p, dims);
    p = lt_ptr(p, periods);
    p = lt_int(p, *reorder);
    p = lt_ptr(p, newcomm);
    newcomm_end(p, newcomm);
}
F_ALIASES(cart_create, MPI_CART_CREATE)

void mpi_comm_split_type_(F *comm, F *type, F *key, F *info, F *newcomm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_comm_split_type_)(comm, type, key, info, newcomm, ierr);
    if (!lt_active())
        return;
    MPI_Info i = PMPI_Info_f2c(*info);
    char *p = lt_open("MPI_Comm_split_type", t0, 0);
    p = lt_comm(p, FC(comm));
    p = lt_int(p, *type);
    p = lt_int(p, *key);
    p = lt_hdl(p, i);
    p = lt_ptr(p, newcomm);
    newcomm_end(p, newcomm);
}
F_ALIASES(comm_split_type, MPI_COMM_SPLIT_TYPE)

void mpi_cart_sub_(F *comm, F *remain, F *newcomm, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_cart_sub_)(comm, remain, newcomm, ierr);
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Cart_sub", t0, 0);
    p = lt_comm(p, FC(comm));
    p = lt_ptr(p, remain);
    p = lt_ptr(p, newcomm);
    newcomm_end(p, newcomm);
}
F_ALIASES(cart_sub, MPI_CART_SUB)

void mpi_comm_free_(F *comm, F *ierr)
{
    uint64_t t0 = lt_now();
    lt_comm_forget(FC(comm));
    REAL(pmpi_comm_free_)(comm, ierr);
    LT_REC("MPI_Comm_free", t0, p = lt_ptr(p, comm));
}
F_ALIASES(comm_free, MPI_COMM_FREE)
#endif
