/* Fortran bindings, part 2: collectives, blocking and nonblocking (see ij_fortran.h). Each
 * pair calls the injector's C collective, so Fortran programs get the same algorithms and
 * latencies as C ones. */
#include "ij_fortran.h"

#ifdef IJ_FORTRAN
#include <stdlib.h>

#define UNPAREN(...) __VA_ARGS__
/* mpi_<low>_ and mpi_i<low>_ from one parameter list P and one C argument list A */
#define PAIR(low, UP, fn, ifn, P, A)                                                           \
    void mpi_##low##_(UNPAREN P, F *ierr) { *ierr = MPI_##fn(UNPAREN A); }                     \
    F_ALIASES(low, MPI_##UP)                                                                   \
    void mpi_i##low##_(UNPAREN P, F *req, F *ierr)                                             \
    {                                                                                          \
        MPI_Request r;                                                                         \
        *ierr = MPI_##ifn(UNPAREN A, &r);                                                        \
        *req = ij_freq(r);                                                                     \
    }                                                                                          \
    F_ALIASES(i##low, MPI_I##UP)

/* argument shapes shared by several collectives */
#define P_ROOTED (void *sbuf, F *scount, F *sdt, void *rbuf, F *rcount, F *rdt, F *root, F *comm)
#define A_ROOTED                                                                               \
    (ij_fbuf(sbuf), *scount, FT(sdt), ij_fbuf(rbuf), *rcount, FT(rdt), *root, FC(comm))
#define P_ALL (void *sbuf, F *scount, F *sdt, void *rbuf, F *rcount, F *rdt, F *comm)
#define A_ALL (ij_fbuf(sbuf), *scount, FT(sdt), ij_fbuf(rbuf), *rcount, FT(rdt), FC(comm))
#define P_RED (void *sbuf, void *rbuf, F *count, F *dt, F *op, F *comm)
#define A_RED (ij_fbuf(sbuf), ij_fbuf(rbuf), *count, FT(dt), FO(op), FC(comm))

PAIR(bcast, BCAST, Bcast, Ibcast, (void *buf, F *count, F *dt, F *root, F *comm),
     (ij_fbuf(buf), *count, FT(dt), *root, FC(comm)))
PAIR(reduce, REDUCE, Reduce, Ireduce, (void *sbuf, void *rbuf, F *count, F *dt, F *op, F *root, F *comm),
     (ij_fbuf(sbuf), ij_fbuf(rbuf), *count, FT(dt), FO(op), *root, FC(comm)))
PAIR(allreduce, ALLREDUCE, Allreduce, Iallreduce, P_RED, A_RED)
PAIR(scan, SCAN, Scan, Iscan, P_RED, A_RED)
PAIR(exscan, EXSCAN, Exscan, Iexscan, P_RED, A_RED)
PAIR(reduce_scatter_block, REDUCE_SCATTER_BLOCK, Reduce_scatter_block, Ireduce_scatter_block, P_RED, A_RED)
PAIR(reduce_scatter, REDUCE_SCATTER, Reduce_scatter, Ireduce_scatter,
     (void *sbuf, void *rbuf, F *rcounts, F *dt, F *op, F *comm),
     (ij_fbuf(sbuf), ij_fbuf(rbuf), rcounts, FT(dt), FO(op), FC(comm)))
PAIR(gather, GATHER, Gather, Igather, P_ROOTED, A_ROOTED)
PAIR(scatter, SCATTER, Scatter, Iscatter, P_ROOTED, A_ROOTED)
PAIR(allgather, ALLGATHER, Allgather, Iallgather, P_ALL, A_ALL)
PAIR(alltoall, ALLTOALL, Alltoall, Ialltoall, P_ALL, A_ALL)
PAIR(gatherv, GATHERV, Gatherv, Igatherv,
     (void *sbuf, F *scount, F *sdt, void *rbuf, F *rcounts, F *displs, F *rdt, F *root, F *comm),
     (ij_fbuf(sbuf), *scount, FT(sdt), ij_fbuf(rbuf), rcounts, displs, FT(rdt), *root, FC(comm)))
PAIR(scatterv, SCATTERV, Scatterv, Iscatterv,
     (void *sbuf, F *scounts, F *displs, F *sdt, void *rbuf, F *rcount, F *rdt, F *root, F *comm),
     (ij_fbuf(sbuf), scounts, displs, FT(sdt), ij_fbuf(rbuf), *rcount, FT(rdt), *root, FC(comm)))
PAIR(allgatherv, ALLGATHERV, Allgatherv, Iallgatherv,
     (void *sbuf, F *scount, F *sdt, void *rbuf, F *rcounts, F *displs, F *rdt, F *comm),
     (ij_fbuf(sbuf), *scount, FT(sdt), ij_fbuf(rbuf), rcounts, displs, FT(rdt), FC(comm)))
PAIR(alltoallv, ALLTOALLV, Alltoallv, Ialltoallv,
     (void *sbuf, F *scounts, F *sdispls, F *sdt, void *rbuf, F *rcounts, F *rdispls, F *rdt,
      F *comm),
     (ij_fbuf(sbuf), scounts, sdispls, FT(sdt), ij_fbuf(rbuf), rcounts, rdispls, FT(rdt),
      FC(comm)))

void mpi_barrier_(F *comm, F *ierr) { *ierr = MPI_Barrier(FC(comm)); }
F_ALIASES(barrier, MPI_BARRIER)

void mpi_ibarrier_(F *comm, F *req, F *ierr)
{
    MPI_Request r;
    *ierr = MPI_Ibarrier(FC(comm), &r);
    *req = ij_freq(r);
}
F_ALIASES(ibarrier, MPI_IBARRIER)

/* blocking only: the converted datatype arrays must not outlive the call */
void mpi_alltoallw_(void *sbuf, F *scounts, F *sdispls, F *stypes, void *rbuf, F *rcounts,
                    F *rdispls, F *rtypes, F *comm, F *ierr)
{
    MPI_Comm c = FC(comm);
    int n = 0;
    PMPI_Comm_size(c, &n);
    MPI_Datatype *st = malloc(sizeof *st * (size_t)(2 * n + 1)), *rt = st + n;
    if (!st)
        ij_fatal("out of memory");
    void *s = ij_fbuf(sbuf);
    for (int i = 0; i < n; i++) {
        st[i] = s == MPI_IN_PLACE ? MPI_DATATYPE_NULL : FT(&stypes[i]);
        rt[i] = FT(&rtypes[i]);
    }
    *ierr = MPI_Alltoallw(s, scounts, sdispls, st, ij_fbuf(rbuf), rcounts, rdispls, rt, c);
    free(st);
}
F_ALIASES(alltoallw, MPI_ALLTOALLW)
#endif
