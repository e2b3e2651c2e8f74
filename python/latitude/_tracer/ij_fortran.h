/* Fortran bindings of the injector (Open MPI only).
 *
 * Open MPI's Fortran bindings (mpif.h, `use mpi`, and `use mpi_f08` through the ompi_*_f entry
 * points) call the C PMPI_ functions directly, so a Fortran program never enters the C
 * wrappers and would run uninjected. The injector therefore defines the Fortran symbols
 * itself (mpi_send_, its name-mangling variants and ompi_send_f): each converts its arguments
 * to C (handles with PMPI_*_f2c, Fortran sentinels such as MPI_IN_PLACE and
 * MPI_STATUS_IGNORE to C's, LOGICALs to int, 1-based indices) and calls the injector's own C
 * wrapper, so C and Fortran programs get exactly the same treatment. MPICH's Fortran bindings
 * call the C MPI_ functions, which the C wrappers already catch: nothing here is compiled. */
#ifndef IJ_FORTRAN_H
#define IJ_FORTRAN_H

#include "fsentinel.h"
#include "ij.h"

#if defined(OPEN_MPI) && OPEN_MPI
#define IJ_FORTRAN 1

typedef MPI_Fint F;

/* every name a Fortran compiler or Open MPI's f08 layer may call mpi_<low>_ by */
#define F_ALIAS1(fn, al) __typeof__(fn) al __attribute__((alias(#fn)));
#define F_ALIASES(low, UP)                                                                     \
    F_ALIAS1(mpi_##low##_, mpi_##low)                                                          \
    F_ALIAS1(mpi_##low##_, mpi_##low##__)                                                      \
    F_ALIAS1(mpi_##low##_, UP)                                                                 \
    F_ALIAS1(mpi_##low##_, ompi_##low##_f)

#define FC(x) PMPI_Comm_f2c(*(x))
#define FT(x) PMPI_Type_f2c(*(x))
#define FO(x) PMPI_Op_f2c(*(x))
#define FG(x) PMPI_Group_f2c(*(x))
#define FI(x) PMPI_Info_f2c(*(x))

/* MPI_IN_PLACE and MPI_BOTTOM (Open MPI's Fortran common blocks) -> C, as a buffer the C
 * wrappers take (fsentinel.c, shared with the tracer) */
static inline void *ij_fbuf(const void *buf)
{
    return (void *)fs_buf(buf);
}

/* One status: C storage for a Fortran status argument (NULL-safe for MPI_STATUS_IGNORE). */
struct ij_fstatus {
    MPI_Status c;
    F *f;
};
MPI_Status *ij_fstatus_in(struct ij_fstatus *s, F *f);
void ij_fstatus_out(struct ij_fstatus *s);

/* An array call (Waitall, Testsome, ...): C requests and statuses for n Fortran ones. */
struct ij_farray {
    int n;
    F *freqs, *fsts;
    MPI_Request small[16], *reqs;
    MPI_Status ssmall[16], *sts;
};
MPI_Request *ij_farray_in(struct ij_farray *a, int n, F *freqs, F *fsts);
MPI_Status *ij_farray_statuses(struct ij_farray *a); /* MPI_STATUSES_IGNORE or C storage */
/* handles back to Fortran; statuses of entries [0, nst) to Fortran status slots [0, nst) */
void ij_farray_out(struct ij_farray *a, int nst);

/* Fortran LOGICAL array -> int (Cart_create's periods, Cart_sub's remain_dims) */
int *ij_flogicals(const F *f, int n, int *small, int nsmall);

static inline F ij_flogical(int c) { return c ? 1 : 0; }
static inline F ij_fcomm(MPI_Comm c) { return PMPI_Comm_c2f(c); }
static inline F ij_freq(MPI_Request r) { return PMPI_Request_c2f(r); }

#endif
#endif
