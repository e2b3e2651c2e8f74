/* Fortran wrappers (Open MPI only): the runtime the generated mpi_<name>_ wrappers call.
 *
 * Open MPI's Fortran bindings (mpif.h, `use mpi`, and `use mpi_f08` through the ompi_*_f
 * entry points) call the C PMPI_ functions directly, so the C wrappers never see Fortran
 * calls. We interpose the Fortran symbols themselves (mpi_send_, its name-mangling variants
 * and ompi_send_f), call the real pmpi_send_ found with dlsym(RTLD_NEXT), and write the same
 * records as the C wrappers with handles converted to C (so traces of C and Fortran programs
 * read alike). MPICH's mpif.h/`use mpi` bindings call the C MPI_ functions: the C wrappers
 * trace them and the Fortran wrappers are not compiled. */
#ifndef LT_FORTRAN_H
#define LT_FORTRAN_H

#include "fsentinel.h"
#include "lt_log.h"

#if defined(OPEN_MPI) && OPEN_MPI
#define LT_FORTRAN 1
#pragma GCC visibility push(hidden)

typedef void (*lt_ffn)();
lt_ffn lt_fsym(const char *name);
/* the real Fortran entry point, looked up once per call site */
#define REAL(sym)                                                                              \
    ({                                                                                         \
        static lt_ffn fn_;                                                                     \
        if (!fn_)                                                                              \
            fn_ = lt_fsym(#sym);                                                               \
        fn_;                                                                                   \
    })

/* all the names a Fortran compiler or Open MPI's f08 layer may call mpi_<low>_ by */
#define F_ALIAS1(fn, al) __typeof__(fn) al __attribute__((alias(#fn)));
#define F_ALIASES(low, UP)                                                                     \
    F_ALIAS1(mpi_##low##_, mpi_##low)                                                          \
    F_ALIAS1(mpi_##low##_, mpi_##low##__)                                                      \
    F_ALIAS1(mpi_##low##_, UP)                                                                 \
    F_ALIAS1(mpi_##low##_, ompi_##low##_f)

/* Open MPI's Fortran MPI_STATUS_SIZE: the C MPI_Status in Fortran integers */
#define LT_F_STATUS ((sizeof(MPI_Status) + sizeof(MPI_Fint) - 1) / sizeof(MPI_Fint))

/* completion of Fortran requests: convert the handles and substitute statuses if the trace
 * may need them (begin, before the call), resolve them (claim, after it, if the record is
 * written), write "#@ done" (end; Fortran indices are 1-based), free */
struct lt_fcomp {
    int on, many, n;
    struct lt_completion c;
    MPI_Request hsmall[LT_SMALL], *h;
    const void *ssmall[LT_SMALL], **slots;
    MPI_Fint *fst, *ust; /* statuses handed to MPI, the user's */
};
MPI_Fint *lt_fcomp_begin(struct lt_fcomp *f, MPI_Fint *reqs, int n, MPI_Fint *st, int many);
void lt_fcomp_claim(struct lt_fcomp *f);
char *lt_fcomp_end(char *p, struct lt_fcomp *f, const MPI_Fint *idx, int ndone, int by_input);
void lt_fcomp_free(struct lt_fcomp *f);
/* the signature of a poll's Fortran requests */
uint64_t lt_sig_freqs(uint64_t h, const MPI_Fint *reqs, int n);
/* "#@ start" for Fortran requests */
char *lt_fext_start(char *p, MPI_Fint *reqs, int count);
#pragma GCC visibility pop

#endif
#endif
