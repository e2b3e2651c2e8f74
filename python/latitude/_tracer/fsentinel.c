/* Open MPI's Fortran sentinels -> C (see fsentinel.h). */
#define _GNU_SOURCE
#include "fsentinel.h"

#if defined(OPEN_MPI) && OPEN_MPI
#include <dlfcn.h>

static const void *common_block(const char *name)
{
    return dlsym(RTLD_DEFAULT, name); /* Open MPI's Fortran common blocks live in libmpi */
}

const void *fs_buf(const void *buf)
{
    static const void *in_place, *bottom;
    static int init;
    if (!init) {
        in_place = common_block("mpi_fortran_in_place_");
        bottom = common_block("mpi_fortran_bottom_");
        init = 1;
    }
    if (buf && buf == in_place)
        return MPI_IN_PLACE;
    if (buf && buf == bottom)
        return MPI_BOTTOM;
    return buf;
}

int fs_status_ignored(const void *st)
{
    static const void *ign;
    if (!ign)
        ign = common_block("mpi_fortran_status_ignore_");
    return st == ign;
}

int fs_statuses_ignored(const void *st)
{
    static const void *ign;
    if (!ign)
        ign = common_block("mpi_fortran_statuses_ignore_");
    return st == ign;
}
#endif
