/* Open MPI's Fortran sentinels -> their C meaning, shared by the tracer and the injector.
 *
 * Open MPI's Fortran MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are
 * common blocks in libmpi: a Fortran wrapper recognises them by address (found once with
 * dlsym) before it hands a buffer or a status to C. Only built for Open MPI (MPICH's Fortran
 * bindings call the C functions, whose wrappers see C sentinels). */
#ifndef FSENTINEL_H
#define FSENTINEL_H

#include <mpi.h>

#if defined(OPEN_MPI) && OPEN_MPI
#pragma GCC visibility push(hidden)
const void *fs_buf(const void *buf);       /* MPI_IN_PLACE / MPI_BOTTOM, else buf */
int fs_status_ignored(const void *st);     /* st is MPI_STATUS_IGNORE */
int fs_statuses_ignored(const void *st);   /* st is MPI_STATUSES_IGNORE */
#pragma GCC visibility pop
#endif

#endif
