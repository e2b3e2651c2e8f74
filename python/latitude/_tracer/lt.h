/* Latitude PMPI tracer: shared internals.
 *
 * Every wrapper follows the same shape:
 *     uint64_t t0 = lt_now();  rc = PMPI_X(...);
 *     if (lt_active()) { p = lt_open("MPI_X", t0, extra); p = lt_<field>(p, ...); ...;
 *                        p = lt_end(p); [extension lines]; lt_commit(p); }
 * Records are formatted straight into one per-process buffer, a mapped window of the rank's
 * file (lt_buf.c); lt_core.c opens the file and handles the ways a run ends; lt_track.c and
 * lt_reqs.c keep what the "#@" extension lines need. The end time is taken after the
 * arguments are formatted,
 * so the tracer's own work sits inside [tstart, tend] (which converters treat as MPI time)
 * rather than in the computation gaps between calls.
 */
#ifndef LT_H
#define LT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* The tracer's own functions and state are internal to the library (only the MPI_ and mpi_
 * wrappers are exported): calls between them are direct, not through the PLT. */
#pragma GCC visibility push(hidden)

#define LT_SLACK 1024 /* bytes reserved per record beyond its variable-length lists */
#define LT_NUM 24     /* upper bound on one formatted number incl. separator */

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
    uint64_t tlast;     /* the last end time written (ns): converted tick times never go below */
};
extern struct lt_state lt;

/* ---- clock ---- */
static inline uint64_t lt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- number formatting (no printf on the hot path) ---- */
char *lt_u64(char *p, uint64_t v);
static inline char *lt_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return lt_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return lt_u64(p, (uint64_t)v);
}
/* ns -> "<us>.<3 digits>" */
static inline char *lt_time(char *p, uint64_t ns)
{
    uint64_t frac = ns % 1000u;
    p = lt_u64(p, ns / 1000u);
    *p++ = '.';
    p[0] = (char)('0' + frac / 100);
    p[1] = (char)('0' + frac / 10 % 10);
    p[2] = (char)('0' + frac % 10);
    return p + 3;
}
static inline char *lt_str(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}
#define LT_LIT(p, s) lt_str((p), (s), sizeof(s) - 1)

/* Raw bits of an MPI handle (pointer for Open MPI, int for MPICH) as an unsigned number. */
#define LT_HANDLE(h) lt_handle_bits(&(h), sizeof(h))
static inline uint64_t lt_handle_bits(const void *h, size_t n)
{
    uint64_t v = 0;
    if (n == 4) {
        uint32_t u;
        memcpy(&u, h, 4);
        v = u;
    } else {
        memcpy(&v, h, n < 8 ? n : 8);
    }
    return v;
}

/* ---- records ---- */
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
void lt_flush_locked(void);
void lt_reserve_locked(size_t need);
char *lt_ensure(char *p, size_t more); /* room for `more` bytes inside an open record */
int lt_buf_open(size_t size);            /* after lt.fd is open */
void lt_buf_end(const char *reason, size_t n); /* "#@ end <reason>", final size, close */

static inline int lt_active(void) { return lt.active; }

/* ---- folded polls (lt_poll.c) ----
 * Consecutive unsuccessful MPI_Test/Testany/Testsome/Testall/Iprobe calls are folded into one
 * record: the first is formatted but left pending after `used`; the repeats only count; the
 * record is completed ("#@ polls" line) and committed before any other record is written. */
void lt_fold_close(uint64_t end); /* lock held; end: ns the polling stopped */
/* an unsuccessful poll with signature sig, started at tick t0 (0: not timed): 1 if folded
 * into the pending record (nothing to write), 0 if it must be written (then lt_poll_first) */
int lt_poll_again(uint64_t sig, const char *name, uint64_t t0);
/* the start tick of a poll that was not timed but must be written: now less a mean poll */
uint64_t lt_poll_start(void);
/* the poll record just formatted (its ":TEND" at offset tend in the record, its end at end)
 * starts a fold: it stays pending instead of lt_commit */
void lt_poll_first(size_t tend, char *end, uint64_t sig, const char *name, uint64_t t0);
static inline uint64_t lt_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}
/* A cheap clock for polls: the TSC where the kernel uses it as its clock source, else
 * CLOCK_MONOTONIC; lt_tick_ns converts to the trace's clock (ns), lt_ticks_ns a duration. */
uint64_t lt_tick(void);
uint64_t lt_tick_ns(uint64_t t);
uint64_t lt_ticks_ns(uint64_t d);
void lt_tick_init(void);
/* A poll's start tick. While a fold is open most polls are not timed at all (0): they only
 * count, and 1 in 16 is timed to estimate the time inside them; a clock read costs more
 * than an unsuccessful MPI_Test. */
static inline uint64_t lt_poll_t0(void) { return lt.fold && (++lt.poll_skip & 15) ? 0 : lt_tick(); }

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
/* Make the record (and any extension lines after it) visible to flushes. */
static inline void lt_commit(char *p)
{
    lt.used = (size_t)(p - lt.buf);
    lt.nrec++;
    lt_unlock();
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

/* ---- extension lines ("#@ ...") ---- */
static inline char *lt_ext(char *p, const char *s, size_t n)
{
    p = LT_LIT(p, "#@ ");
    return lt_str(p, s, n);
}
#define LT_EXT(p, s) lt_ext((p), (s), sizeof(s) - 1)

/* ---- hash map uint64 -> uint64 (lt_map.c) ---- */
struct lt_map {
    uint64_t *key, *val;
    unsigned char *full;
    size_t cap, n;
};
uint64_t *lt_map_get(struct lt_map *m, uint64_t k); /* NULL if absent */
void lt_map_put(struct lt_map *m, uint64_t k, uint64_t v);
void lt_map_del(struct lt_map *m, uint64_t k);

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
