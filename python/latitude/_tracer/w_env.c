/* Environment management: initialisation, finalisation, abort, clocks, queries. */
#include "lt_log.h"

#include <stdarg.h>

/* MPI_Init/MPI_Init_thread: the trace starts after the real initialisation, so the start
 * time is "-"; thread != 0 writes the MPI_Init_thread fields. */
void lt_log_init(int thread, const void *argc, const void *argv, int required,
                 const void *provided_addr, int provided)
{
    lt_start(thread && provided == MPI_THREAD_MULTIPLE);
    if (!lt_active())
        return;
    lt_lock();
    if (lt.cap - lt.used < LT_SLACK)
        lt_reserve_locked(LT_SLACK);
    char *p = lt.buf + lt.used;
    p = thread ? LT_LIT(p, "MPI_Init_thread:-") : LT_LIT(p, "MPI_Init:-");
    p = lt_ptr(p, argc);
    p = lt_ptr(p, argv);
    if (thread) {
        p = lt_int(p, required);
        p = lt_ptr(p, provided_addr);
    }
    p = lt_end(p);
    if (thread) {
        p = LT_EXT(p, "thread provided=");
        p = lt_i64(p, provided);
        *p++ = '\n';
    }
    lt_commit(p);
}

/* The record is complete before the real finalisation: "MPI_Finalize:<tstart>:-". */
void lt_log_finalize(uint64_t t0)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Finalize", t0, 0);
    p = LT_LIT(p, ":-\n");
    lt_commit(p);
    lt_finish("finalize");
}

/* MPI_Abort does not return: its end time is when the record is written. */
void lt_log_abort(uint64_t t0, MPI_Comm comm, int errorcode)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Abort", t0, 0);
    p = lt_comm(p, comm);
    p = lt_int(p, errorcode);
    lt_commit(lt_end(p));
    char reason[40] = "abort ";
    *lt_i64(reason + 6, errorcode) = 0;
    lt_finish(reason);
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        lt_log_init(0, argc, argv, 0, NULL, 0);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        lt_log_init(1, argc, argv, required, provided, *provided);
    return rc;
}

int MPI_Finalize(void)
{
    lt_log_finalize(lt_now());
    return PMPI_Finalize();
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    lt_log_abort(lt_now(), comm, errorcode);
    return PMPI_Abort(comm, errorcode);
}

double MPI_Wtime(void)
{
    uint64_t t0 = lt_now();
    double t = PMPI_Wtime();
    LT_REC("MPI_Wtime", t0, );
    return t;
}

double MPI_Wtick(void)
{
    uint64_t t0 = lt_now();
    double t = PMPI_Wtick();
    LT_REC("MPI_Wtick", t0, );
    return t;
}

int MPI_Initialized(int *flag)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Initialized(flag);
    LT_REC("MPI_Initialized", t0, p = lt_ptr(p, flag));
    return rc;
}

int MPI_Finalized(int *flag)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Finalized(flag);
    LT_REC("MPI_Finalized", t0, p = lt_ptr(p, flag));
    return rc;
}

int MPI_Query_thread(int *provided)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Query_thread(provided);
    LT_REC("MPI_Query_thread", t0, p = lt_ptr(p, provided));
    return rc;
}

int MPI_Is_thread_main(int *flag)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Is_thread_main(flag);
    LT_REC("MPI_Is_thread_main", t0, p = lt_ptr(p, flag));
    return rc;
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Get_processor_name(name, resultlen);
    LT_REC("MPI_Get_processor_name", t0, p = lt_ptr(p, name); p = lt_ptr(p, resultlen));
    return rc;
}

int MPI_Get_version(int *version, int *subversion)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Get_version(version, subversion);
    LT_REC("MPI_Get_version", t0, p = lt_ptr(p, version); p = lt_ptr(p, subversion));
    return rc;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Get_library_version(version, resultlen);
    LT_REC("MPI_Get_library_version", t0, p = lt_ptr(p, version); p = lt_ptr(p, resultlen));
    return rc;
}

int MPI_Pcontrol(const int level, ...)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Pcontrol(level);
    LT_REC("MPI_Pcontrol", t0, p = lt_int(p, level));
    return rc;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Error_string(errorcode, string, resultlen);
    LT_REC("MPI_Error_string", t0, p = lt_int(p, errorcode); p = lt_ptr(p, string);
           p = lt_ptr(p, resultlen));
    return rc;
}

int MPI_Error_class(int errorcode, int *errorclass)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Error_class(errorcode, errorclass);
    LT_REC("MPI_Error_class", t0, p = lt_int(p, errorcode); p = lt_ptr(p, errorclass));
    return rc;
}

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Alloc_mem(size, info, baseptr);
    LT_REC("MPI_Alloc_mem", t0, p = lt_int(p, size); p = lt_hdl(p, info); p = lt_ptr(p, baseptr));
    return rc;
}

int MPI_Free_mem(void *base)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Free_mem(base);
    LT_REC("MPI_Free_mem", t0, p = lt_ptr(p, base));
    return rc;
}

int MPI_Get_address(const void *location, MPI_Aint *address)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Get_address(location, address);
    LT_REC("MPI_Get_address", t0, p = lt_ptr(p, location); p = lt_ptr(p, address));
    return rc;
}
