/* Latitude latency injector: shared internals.
 *
 * The injector adds ΔL to the network latency seen by an unmodified MPI application (LLAMP
 * paper §III-A, Fig. 8d): every message becomes visible to its receiver ΔL later than it
 * otherwise would, and eager senders are never delayed. It works entirely above MPI (PMPI
 * interposition, no root rights, no patched MPI):
 *
 *  - Every data message is preceded by a timestamp message (struct ij_ts: the sender's clock
 *    at the start of its call, the size, the data tag and a sequence number) on a private
 *    "shadow" duplicate of the communicator. Timestamps of one sender form one FIFO stream;
 *    the receiver files them by data tag. MPI's non-overtaking rule makes the k-th message
 *    a receiver completes for (source, tag, communicator) the k-th one sent, provided the
 *    completions are handled in posting order (ij_req.c takes care of that).
 *  - A receive is reported complete (Wait/Test families, Recv, Probe) only at its release
 *    time (ij_stream.c, ij_release): max(natural completion, t_send + one-way + k·ΔL) plus
 *    the injector's own work on a receive (median of the last 32), where
 *    one-way is the message's natural send-start → receive-complete time (measured exactly
 *    when the receiver was already waiting, estimated from such measurements otherwise) and
 *    k = 1 for eager messages (s ≤ S). Rendezvous messages (s > S) follow the handshake
 *    protocol of the LLAMP paper's App. B (docs/model.md, model.rs): the receiver completes
 *    3·ΔL later (RTS, read request, data) and the sender completes when a FIN message that
 *    the receiver sends at its release time reaches it (a 4th ΔL; no later than its own
 *    natural completion plus what ΔL added to the receive and a 4th ΔL, ij_req.c).
 *  - ΔL may differ per pair of ranks (emulated nodes, LATITUDE_INJECT_PAIR_DELTA): every rule
 *    above uses the pair's ΔL, ij_delta(comm, peer) = ΔL + the pair's extra (ij_comm.c).
 *  - All ranks of a node read one clock (CLOCK_MONOTONIC); ranks on other nodes correct
 *    theirs by an offset measured at MPI_Init (ij_core.c).
 *  - Collectives are re-implemented over point-to-point on the shadow communicator with the
 *    algorithms `latitude schedule` assumes by default (ij_coll*.c), reductions with
 *    MPI_Reduce_local, so every collective message gets its ΔL and model and run agree on
 *    the algorithm.
 */
#ifndef IJ_H
#define IJ_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---- configuration and counters ---- */
struct ij_state {
    uint64_t delta;         /* ΔL, ns */
    uint64_t *pair_delta;   /* extra ΔL to each world rank (emulated nodes), or NULL */
    uint64_t eager_limit;   /* S: messages of more bytes use the rendezvous rule */
    double ow_a, ow_b;      /* fallback one-way model a + b·s (ns), used before any sample */
    int64_t clock_offset;   /* added to CLOCK_MONOTONIC: the reference node's clock */
    int coll;               /* re-implement collectives (LATITUDE_INJECT_COLL=0: pass through) */
    int debug;              /* LATITUDE_INJECT_DEBUG=n: print the first n release decisions */
    int active;             /* between MPI_Init and MPI_Finalize */
    int oversubscribed;     /* more ranks on this node than online CPUs */
    int rank, size;
    uint64_t t_init_end, t_fin_start;
    /* counters for the report */
    uint64_t n_recv, n_send, n_rndv, n_fin, n_coll, n_probe, n_exact;
    uint64_t held_ns;       /* total time receives were held beyond their natural completion */
    uint64_t held_rule_ns;  /* the part of it the release rule decided, without the injector's
                             * own work: 0 at ΔL = 0 (a message is never held past its natural
                             * completion by the rule itself) */
    uint64_t send_held_ns;  /* rendezvous senders held past MPI's completion for their FIN */
    uint64_t send_ns, recv_ns; /* total time from start to natural completion */
    uint64_t n_fallback;    /* collectives passed to MPI unchanged */
    uint64_t n_unsuccessful; /* Test-family calls that reported nothing complete (polls) */
};
extern struct ij_state ij;

static inline uint64_t ij_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + ij.clock_offset);
}

/* Ticks time the gap between two polls of one request (an interval, never a point in time):
 * the TSC where the kernel's own clock is the TSC (x86-64; 13 ns a read on the development VM
 * against clock_gettime's 31), else ij_now(). An unsuccessful MPI_Test takes one (HPCC's
 * RandomAccess makes one per generated update, ~2 M per rank and section); ij_tick_ns converts
 * a difference of ticks to ns (ij_core.c calibrates the TSC against the clock at MPI_Init). */
extern int ij_tsc;
extern double ij_ns_per_tick;
extern uint64_t ij_ticks_per_us; /* 1000 without the TSC */
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
static inline uint64_t ij_ticks(void)
{
#if defined(__x86_64__)
    if (ij_tsc)
        return __rdtsc();
#endif
    return ij_now();
}
static inline uint64_t ij_tick_ns(uint64_t ticks)
{
    return ij_tsc ? (uint64_t)((double)ticks * ij_ns_per_tick) : ticks;
}

/* MPI_Pcontrol(IJ_PCONTROL_DELTA_L, (double)ns): set ΔL at run time (ij_core.c) */
#define IJ_PCONTROL_DELTA_L 7001

void ij_warn_once(const char *key, const char *fmt, ...);
void ij_fatal(const char *fmt, ...);

/* ---- channels and tags on the shadow communicator ---- */
enum { IJ_APP = 0, IJ_COLL = 1 };
#define IJ_TAG_TS(ch) (1 + 2 * (ch))  /* timestamp stream of a channel */
#define IJ_TAG_FIN(ch) (2 + 2 * (ch)) /* FIN stream (rendezvous completion) */
#define IJ_TAG_COLL0 16               /* collective payload: 16 + instance mod IJ_COLL_TAGS */
#define IJ_COLL_TAGS 16384
#define IJ_TAG_NEVER 15               /* probed to drive MPI's progress; never sent */

/* wire formats */
struct ij_ts {
    uint64_t t_send;  /* sender's clock at the start of its call */
    uint64_t bytes;   /* message size */
    int32_t tag;      /* data tag */
    uint32_t seq;     /* sender's message number for (peer, channel) */
};
struct ij_fin {
    uint64_t t_release; /* when the receiver released the message */
    uint64_t t_sent;    /* when the FIN was sent (its natural one-way, ij_req.c) */
    uint32_t seq;
    uint32_t hold;      /* what the release rule added to the receive (ns, saturated): 0 at
                         * ΔL = 0, 2–3·ΔL for a rendezvous */
};

/* A timestamp with bytes = IJ_TS_RETRACT withdraws message `seq`: its send was cancelled. */
#define IJ_TS_RETRACT UINT64_MAX

/* received timestamps not yet assigned to a receive, in arrival order */
struct ij_tsq {
    struct ij_ts *e;
    uint64_t *probe_rel; /* release time a probe gave the entry (0: none) */
    size_t n, cap;
    struct ij_ts *drop;  /* retractions whose entry has not arrived yet (ij_stream.c) */
    size_t ndrop, capdrop;
};
struct ij_finq {
    struct ij_fin *e;
    size_t n, cap;
};
struct ij_peer {
    uint32_t send_seq[2];
    struct ij_tsq ts[2];
    struct ij_finq fin[2];
};

/* ---- communicators (ij_comm.c) ---- */
struct ij_comm {
    MPI_Comm app, shadow;
    int rank, size;       /* in the local group */
    int remote;           /* number of peers p2p addresses (remote group for intercomms) */
    int inter;
    struct ij_peer *peers; /* [remote], allocated on first use */
    int *world;            /* world rank of each peer (with pair_delta only) */
    uint32_t coll_seq;
};
struct ij_comm *ij_comm_get(MPI_Comm c); /* NULL: not known (created by an unwrapped call) */
struct ij_peer *ij_peer(struct ij_comm *c, int peer);
void ij_comm_register(MPI_Comm c);       /* collective over c: creates its shadow */
void ij_comm_forget(MPI_Comm c);
void ij_comm_free_all(void);
/* ΔL of a message between this rank and `peer` of c: ΔL plus the pair's extra (emulated nodes) */
uint64_t ij_delta(const struct ij_comm *c, int peer);

/* ---- waiting loops (ij_state.c) ----
 * A loop that polls until its requests are released (the Wait family, blocking sends,
 * receives and Sendrecv, a blocking collective's schedule) runs with ij_loop set to an id of
 * its own (an inner loop keeps the outer one's); the application works only outside them.
 * A receive seen incomplete and later complete by polls of one loop completed inside it,
 * however long an iteration took: MPI may move a whole rendezvous message inside one
 * progress call made for another request (Open MPI's shared-memory single copy), which
 * made the gap between two polls of the receive far longer than a waiting loop's. */
extern uint64_t ij_loop;
/* ticks spent inside outermost waiting loops: the rest of a rank's span is its computation
 * and the calls that do not wait (reported as wait_ns; latitude validate compares it between
 * ΔL, since the model keeps computation fixed) */
extern uint64_t ij_wait_ticks;
uint64_t ij_loop_enter(void);         /* returns what ij_loop_leave restores */
void ij_loop_leave(uint64_t outer);

/* ---- timestamp/FIN streams, one-way estimates, release rule (ij_stream.c) ---- */
void ij_post_small(const void *data, int bytes, int dst, int tag, MPI_Comm comm);
void ij_reap(int all);
int ij_small_pending(void);             /* timestamps and FINs not yet reaped */
void ij_send_ts(struct ij_comm *c, int chan, int dst, int tag, uint64_t bytes, uint64_t t_send,
                uint32_t *seq);
void ij_send_retract(struct ij_comm *c, int chan, int dst, int tag, uint32_t seq);
/* the oldest unassigned timestamp from src with data tag `tag`; waits for it */
void ij_ts_take(struct ij_comm *c, int chan, int src, int tag, struct ij_ts *out,
                uint64_t *probe_rel);
struct ij_ts *ij_ts_peek(struct ij_comm *c, int chan, int src, int tag, uint64_t **probe_rel);
/* the FIN of message `seq` from peer, if it has arrived; *fresh: it arrived in this call */
int ij_fin_take(struct ij_comm *c, int chan, int peer, uint32_t seq, struct ij_fin *out, int *fresh);
void ij_send_fin(struct ij_comm *c, int chan, int dst, uint32_t seq, uint64_t t_release, uint64_t hold);
void ij_ow_sample(uint64_t bytes, uint64_t ow);
double ij_ow_hat(uint64_t bytes);
/* how a receive's completion time t_done was observed (ij_req.c, poll_recv) */
enum {
    IJ_UNSEEN = 0,  /* not while waiting: MPI may have completed it any time before */
    IJ_WAITED = 1,  /* by a poll that closely followed one that found it incomplete */
    IJ_AT_POST = 2, /* by the first poll, right after posting (or in the loop that posted it):
                     * exact for a rendezvous */
    IJ_IN_LOOP = 3, /* by a later poll of the waiting loop whose earlier poll found it
                     * incomplete, after a long iteration: exact for a rendezvous (the receiver
                     * moves the data in its own progress calls), not for an eager message
                     * (which may have arrived anywhere in that iteration) */
};
/* gap: for IJ_WAITED, the time from the last poll that found the transfer incomplete to the
 * one that found it complete (the arrival lies in between) */
/* *rule_hold: what the rule added beyond t_done, without the injector's own work */
uint64_t ij_release(const struct ij_ts *ts, uint64_t t_post, uint64_t t_done, int waited, uint64_t gap,
                    uint64_t delta, uint64_t *rule_hold);
/* polls closer than this are a waiting loop: the completing poll's time is the completion */
#define IJ_TIGHT_POLL_NS 1000
/* the injector's work on one observed receive, t_done to its end (shifts releases) */
void ij_own_work(uint64_t ns);

/* ---- requests (ij_req.c) ---- */
enum { IJ_SEND = 1, IJ_RECV, IJ_COLLREQ };
enum { IJ_MODE_STD, IJ_MODE_SYNC, IJ_MODE_BUF, IJ_MODE_READY };
struct ij_sched;
struct ij_req {
    int kind, chan;
    struct ij_comm *c;
    MPI_Request mreq;     /* MPI's request for the data (the app's handle for app requests) */
    int peer, tag;        /* send: destination; recv: source and tag as posted */
    uint64_t bytes;       /* send: message size; recv: capacity */
    int persistent, active, heap;
    uint64_t t_post;      /* send: its start time; recv: posting time */
    uint64_t order;       /* recv: posting order */
    uint32_t seq;         /* send: message number (echoed by the FIN) */
    int done;             /* MPI has completed the transfer (observed) */
    int known;            /* t_release is known */
    int open;             /* send: counted among the sends whose release is not known yet */
    uint64_t t_seen;      /* recv: last poll that found the transfer incomplete (ticks; 0: none) */
    uint64_t seen_loop;   /* recv: the waiting loop (ij_loop) of that poll, or of the posting */
    uint64_t t_posted;    /* recv: end of the posting call (ticks; MPI may move the data inside it) */
    uint64_t t_fin_seen;  /* rendezvous send: last poll that found no FIN (0: none) */
    uint64_t t_done, t_release;
    MPI_Status st;
    struct ij_req *prev, *next; /* outstanding receives in posting order */
    int listed;
    struct ij_req *same;  /* the next (younger) record tracked under the same handle */
    uint64_t claim;       /* the array call that last took this record (ij_req_claim) */
    struct ij_sched *sched;     /* IJ_COLLREQ */
};

/* dcomm/dtag: where the data travels (the app's communicator and tag, or the shadow and a
 * collective payload tag) */
void ij_send_begin(struct ij_req *r, struct ij_comm *c, int chan, const void *buf, int count,
                   MPI_Datatype dt, int dst, MPI_Comm dcomm, int dtag, int mode);
void ij_recv_begin(struct ij_req *r, struct ij_comm *c, int chan, void *buf, int count,
                   MPI_Datatype dt, int src, MPI_Comm dcomm, int dtag);
void ij_send_restart(struct ij_req *r); /* MPI_Start of a persistent send */
void ij_recv_restart(struct ij_req *r);
int ij_poll(struct ij_req *r);          /* 1 when the request may be reported complete */
void ij_unlist(struct ij_req *r);
void ij_observe_matching(struct ij_comm *c, int chan, int src, int tag, uint64_t before);
void ij_progress(void);                 /* background work of every waiting loop */
void ij_wait_one(struct ij_req *r);     /* poll until released, in a waiting loop of its own */

struct ij_req *ij_req_new(void);
/* what the request is: kind, channel, peer, tag and size (shared by immediate and persistent) */
void ij_req_describe(struct ij_req *r, int kind, struct ij_comm *c, int chan, int peer, int tag,
                     int count, MPI_Datatype dt);
void ij_req_free(struct ij_req *r);
/* MPI may give one handle to several live requests (Open MPI returns its static completed
 * request for every small Isend it sent inline, MPICH a builtin completed one): the records of
 * a handle form a chain, oldest first. ij_req_find gives the oldest; in one call over an array
 * (epoch from ij_req_epoch) ij_req_claim gives the k-th occurrence of a handle the k-th record. */
struct ij_req *ij_req_find(MPI_Request h);
uint64_t ij_req_epoch(void);
struct ij_req *ij_req_claim(MPI_Request h, uint64_t epoch);
void ij_req_track(struct ij_req *r);    /* app handle r->mreq -> r */
void ij_req_untrack(struct ij_req *r);
/* Complete a released app request for the application: frees it (or deactivates a
 * persistent one), fills *st, sets *h. */
void ij_req_finish(struct ij_req *r, MPI_Request *h, MPI_Status *st);

/* A request the injector does not transfer itself (a nonblocking collective's, IJ_COLLREQ)
 * is polled, and its owner's work progressed, through hooks the owner (ij_sched.c) sets when
 * it starts one: the request layer stays below the collective schedules built on it. */
struct ij_req_hooks {
    int (*poll)(struct ij_req *r); /* 1: complete */
    void (*progress)(void);       /* every schedule in flight, a step each */
};
extern struct ij_req_hooks ij_req_hooks;

static inline uint64_t ij_type_bytes(int count, MPI_Datatype dt)
{
    int sz = 0;
    PMPI_Type_size(dt, &sz);
    return count > 0 ? (uint64_t)count * (uint64_t)sz : 0;
}

#endif
