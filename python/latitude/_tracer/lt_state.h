/* Latitude PMPI tracer: the per-process state (lt_state.c) and the lock that serialises
 * records under MPI_THREAD_MULTIPLE. */
#ifndef LT_STATE_H
#define LT_STATE_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

struct lt_state {
    char *buf;          /* record buffer */
    size_t cap;         /* its size */
    volatile size_t used; /* committed bytes (a signal handler may flush them) */
    volatile int active; /* between MPI_Init and MPI_Finalize/Abort */
    int fd;             /* trace file */
    int mt;             /* MPI_THREAD_MULTIPLE: serialize records with a lock */
    int rank, size;
    int padded;         /* liballprof-style zero-padded file names */
    int gz;             /* compressed trace (".txt.gz", lt_buf.c) */
    int64_t nrec;       /* call records committed so far = index of the record being written */
    int pid;            /* the process that opened the file (not a forked child) */
    int fold;           /* a folded poll record is pending after `used` (lt_poll.c) */
    unsigned poll_skip; /* polls since the last one timed while a fold is open */
    int probe_on;       /* LATITUDE_TRACE_PROBE=1: ranks 0 and 1 probe in MPI_Init and MPI_Finalize */
    double probe_ns;    /* the machine-state probe (lt_probe.h), < 0: not taken */
    uint64_t tlast;     /* the last end time written (ns): converted tick times never go below */
};
extern struct lt_state lt;

void lt_lock_mt(void);
void lt_unlock_mt(void);
/* serialise records only under MPI_THREAD_MULTIPLE */
static inline void lt_lock(void)
{
    if (lt.mt)
        lt_lock_mt();
}
static inline void lt_unlock(void)
{
    if (lt.mt)
        lt_unlock_mt();
}

static inline int lt_active(void) { return lt.active; }

#pragma GCC visibility pop
#endif
