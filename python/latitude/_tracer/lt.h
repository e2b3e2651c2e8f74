/* Latitude PMPI tracer: shared internals.
 *
 * Every wrapper follows the same shape:
 *     uint64_t t0 = lt_now();  rc = PMPI_X(...);
 *     if (lt_active()) { p = lt_open("MPI_X", t0, extra); p = lt_<field>(p, ...); ...;
 *                        p = lt_end(p); [extension lines]; lt_commit(p); }
 * Records are formatted straight into one per-process buffer, a mapped window of the rank's
 * file (lt_buf.c); lt_core.c opens the file and handles the ways a run ends; lt_track.c and
 * lt_reqs.c keep what the "#@" extension lines need. The end time is taken after the
 * arguments are formatted, so the tracer's own work sits inside [tstart, tend] (which
 * converters treat as MPI time) rather than in the computation gaps between calls.
 *
 * Headers point down: lt_num.h (clock, numbers), lt_state.h (state, lock) and lt_map.h at
 * the bottom; lt_buf.h (buffer, lt_commit) and lt_poll.h (folding) above them; this header,
 * which opens and ends records, on top of those; lt_log.h above it.
 */
#ifndef LT_H
#define LT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_buf.h"
#include "lt_map.h"
#include "lt_num.h"
#include "lt_poll.h"
#include "lt_state.h"

/* The tracer's own functions and state are internal to the library (only the MPI_ and mpi_
 * wrappers are exported): calls between them are direct, not through the PLT. */
#pragma GCC visibility push(hidden)

/* Start a record: name and start time. `extra` bounds the bytes of variable-length lists. */
static inline char *lt_open_locked(const char *name, size_t n, uint64_t t0, size_t extra)
{
    if (lt.cap - lt.used < n + extra + LT_SLACK)
        lt_reserve_locked(n + extra + LT_SLACK);
    char *p = lt.buf + lt.used;
    p = lt_str(p, name, n);
    *p++ = ':';
    return lt_time(p, t0);
}
static inline char *lt_open_n(const char *name, size_t n, uint64_t t0, size_t extra)
{
    lt_lock();
    if (lt.fold)
        lt_fold_close(t0);
    return lt_open_locked(name, n, t0, extra);
}
#define lt_open(name, t0, extra) lt_open_n((name), sizeof(name) - 1, (t0), (extra))
/* the same with a start time from lt_tick (closing a pending fold first keeps times in order) */
static inline char *lt_open_tick_n(const char *name, size_t n, uint64_t tick, size_t extra)
{
    lt_lock();
    uint64_t t0 = lt_tick_ns(tick);
    if (lt.fold)
        lt_fold_close(t0);
    return lt_open_locked(name, n, t0, extra);
}
#define lt_open_tick(name, tick, extra) lt_open_tick_n((name), sizeof(name) - 1, (tick), (extra))

/* Finish the call line with its end time (taken now). */
static inline char *lt_end(char *p)
{
    *p++ = ':';
    lt.tlast = lt_now();
    p = lt_time(p, lt.tlast);
    *p++ = '\n';
    return p;
}
/* One record whose fields are formatted by the statements in FIELDS (using `p`). */
#define LT_REC(name, t0, FIELDS)                                                              \
    do {                                                                                      \
        if (lt_active()) {                                                                    \
            char *p = lt_open(name, (t0), 0);                                                 \
            FIELDS;                                                                           \
            lt_commit(lt_end(p));                                                             \
        }                                                                                     \
    } while (0)

/* ---- fields (each starts with ':') ---- */
static inline char *lt_int(char *p, int64_t v)
{
    *p++ = ':';
    return lt_i64(p, v);
}
static inline char *lt_ptr(char *p, const void *a)
{
    *p++ = ':';
    return lt_u64(p, (uint64_t)(uintptr_t)a);
}
static inline char *lt_raw(char *p, uint64_t v)
{
    *p++ = ':';
    return lt_u64(p, v);
}
#define lt_hdl(p, h) lt_raw((p), LT_HANDLE(h))
char *lt_dtype(char *p, MPI_Datatype dt);         /* :code,size,extent */
char *lt_dtype_unused(char *p, MPI_Datatype dt);  /* argument MPI ignores here: :handle,0,0 */
char *lt_comm(char *p, MPI_Comm c);               /* :handle,rank,size */
char *lt_op(char *p, MPI_Op op);                  /* :code */
/* :address:c0,c1,...,c(n-1); zeros when counts is NULL (argument not significant here). */
char *lt_list(char *p, const int *counts, int n);
#define LT_LIST_BYTES(n) ((size_t)(n) * 12u + LT_NUM)

/* ---- outstanding requests (lt_reqs.c) ----
 * Requests are named in the trace by the index of the call record that created them
 * (0 = MPI_Init's record), so "#@ done 17,18" is exact however the application stores its
 * request handles. Handles alone are ambiguous: MPI implementations hand out one shared
 * pre-completed handle for MPI_PROC_NULL and self operations. */
struct lt_req;
/* The record being written created request h, returned in *slot. wild_comm: the receive's
 * communicator if it uses MPI_ANY_SOURCE/MPI_ANY_TAG (else MPI_COMM_NULL); idup: the
 * MPI_Comm_idup output. */
void lt_req_new(MPI_Request h, const void *slot, int persistent, MPI_Comm wild_comm,
                MPI_Comm *idup);
/* The traced request held in *slot with handle h (NULL if unknown), claimed so that a second
 * slot with the same shared handle in the same call resolves to a different request. */
struct lt_req *lt_req_claim(MPI_Request h, const void *slot);
/* the request's completion needs its status (wildcard receive, cancelled request) */
int lt_req_needs_status(const struct lt_req *r);
/* outstanding requests whose completion needs a status: if any, completion calls hand MPI
 * statuses of their own where the application ignores them */
extern int lt_reqs_status_needed;
/* MPI_Cancel was called on the request: its completion says whether it was cancelled */
void lt_req_cancel(struct lt_req *r);
/* Done with a claimed request: `completed` frees non-persistent ones, `drop` frees any. */
void lt_req_release(struct lt_req *r, int completed, int drop);
/* Lines a completed request needs: "#@ cancelled <k>" if its cancellation succeeded, else
 * "#@ status" (wildcard receive) or "#@ comm" (MPI_Comm_idup) */
char *lt_ext_completed(char *p, struct lt_req *r, const MPI_Status *st);
/* "#@ <key> k1,k2,..." (call indices) or "#@ <key> -" */
char *lt_ext_calls(char *p, const char *key, struct lt_req *const *rs, const int *idx, int n);

int lt_is_wild(int src, int tag);
/* "#@ status [call=<k> ]src=<world rank> tag=<t> bytes=<n>"; call < 0 for blocking calls */
char *lt_ext_status(char *p, int64_t call, MPI_Comm comm, const MPI_Status *st);

/* communicator creation: lt_comm_new registers a communicator just created (numbering it)
 * and returns the bytes its line needs; lt_ext_comm writes
 * "#@ comm <handle> seq=<k> world=<list> [remote=<list>]" */
size_t lt_comm_new(MPI_Comm c);
char *lt_ext_comm(char *p, MPI_Comm c);
void lt_comm_forget(MPI_Comm c);

/* ---- core (lt_core.c) ---- */
void lt_start(int thread_multiple); /* open the file, write the header, arm exit paths */
void lt_finish(const char *reason);
void lt_header_ext(void);

/* entries of a "v" count list over comm (the remote group for intercommunicators) */
int lt_comm_peers(MPI_Comm c);

#pragma GCC visibility pop
#endif
