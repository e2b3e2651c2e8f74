/* The records of the calls that start and end tracing: MPI_Init/MPI_Init_thread (after the
 * real initialisation), MPI_Finalize and MPI_Abort (before the real call). */
#include "lt_log.h"
#include "lt_probe.h"

#include <stdio.h>
#include <string.h>

/* The trace starts after the real initialisation, so the start time is "-"; thread != 0
 * writes the MPI_Init_thread fields and its "#@ thread" line. */
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

/* The machine-state probe again at the end of the run, after MPI_Finalize's start (outside
 * the run's time), as "#@ probe_end" on rank 0: the state can change during a launch, and the
 * two probes bracket it. Every message of the program is complete by MPI_Finalize. */
static void probe_at_end(void)
{
    if (!lt.probe_on)
        return;
    double ns = lt_probe_ns();
    if (ns <= 0)
        return;
    char line[96];
    int n = snprintf(line, sizeof line, "#@ probe_end half_rt_ns=%.1f bytes=8 rounds=%d\n", ns,
                     LT_PROBE_ROUNDS);
    lt_lock();
    lt_reserve_locked((size_t)n + LT_SLACK);
    memcpy(lt.buf + lt.used, line, (size_t)n);
    lt.used += (size_t)n;
    lt_unlock();
}

/* The record is complete before the real finalisation: "MPI_Finalize:<tstart>:-". */
void lt_log_finalize(uint64_t t0)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Finalize", t0, 0);
    p = LT_LIT(p, ":-\n");
    lt_commit(p);
    probe_at_end();
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
