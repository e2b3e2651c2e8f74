/* Injected transfers: starting sends and receives, observing their completion, and deciding
 * when the application may see it (ij_poll).
 *
 * A receive is observed complete by polling MPI_Request_get_status (which leaves the request
 * alive, so a Test can still report "not yet"). On observation it takes its message's
 * timestamp and gets its release time (ij_release). Timestamps are assigned per
 * (source, tag) stream in message order, which equals posting order among the receives that
 * consume the stream: before a receive takes a timestamp, every earlier-posted receive on
 * the same communicator that could have matched the same stream is checked and, if MPI has
 * completed it, observed first (ij_observe_matching).
 *
 * A rendezvous receive (s > S) sends a FIN carrying its release time (and what the rule
 * added to it) to the sender as soon as it is observed; the sender's request completes at
 * max(natural completion, min(t_release + one-way + ΔL, natural completion + added + ΔL)),
 * i.e. when the FIN, sent at the release, would arrive — or, when the receiver observed its
 * receive late, its own completion moved as much as ΔL moved the receive, plus the FIN's ΔL
 * (both are 0 past the natural completion at ΔL = 0). Receives
 * that may be rendezvous (capacity > S) are observed by ij_progress from every waiting loop,
 * so a sender blocked on its FIN never waits for its receiver to call Wait.
 */
#include "ij.h"
#include "lt.h" /* struct lt_map */

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a poll this soon after the previous one that found the transfer incomplete means the
 * receiver was waiting: the completion time is the natural one */
#define WAITING_GAP_NS 5000

static struct ij_req *head, *tail; /* outstanding receives in posting order */
static uint64_t post_counter;
static int n_rndv_recvs;           /* listed receives whose capacity exceeds S */
static struct lt_map reqs;         /* app request handle -> record */
static int open_sends;             /* sends whose release time is not known yet */

static void send_open(struct ij_req *r)
{
    if (!r->open) {
        r->open = 1;
        open_sends++;
    }
}

static void send_close(struct ij_req *r)
{
    if (r->open) {
        r->open = 0;
        open_sends--;
    }
}

/* a send's release time is known (its completion, or its FIN's) */
static void send_known(struct ij_req *r)
{
    r->known = 1;
    send_close(r);
}

/* ---- records ---- */
struct ij_req *ij_req_new(void)
{
    struct ij_req *r = calloc(1, sizeof *r);
    if (!r)
        ij_fatal("out of memory");
    r->heap = 1;
    return r;
}

void ij_req_describe(struct ij_req *r, int kind, struct ij_comm *c, int chan, int peer, int tag,
                     int count, MPI_Datatype dt)
{
    r->kind = kind;
    r->chan = chan;
    r->c = c;
    r->peer = peer;
    r->tag = tag;
    r->bytes = ij_type_bytes(count, dt);
}

void ij_req_free(struct ij_req *r)
{
    ij_unlist(r);
    send_close(r); /* freed before its completion was observed (MPI_Request_free) */
    if (r->heap)
        free(r);
}

struct ij_req *ij_req_find(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL || !reqs.n)
        return NULL;
    uint64_t *v = lt_map_get(&reqs, LT_HANDLE(h));
    return v ? (struct ij_req *)(uintptr_t)*v : NULL;
}

uint64_t ij_req_epoch(void)
{
    static uint64_t epoch;
    return ++epoch;
}

struct ij_req *ij_req_claim(MPI_Request h, uint64_t epoch)
{
    struct ij_req *r = ij_req_find(h);
    while (r && r->claim == epoch)
        r = r->same;
    if (r)
        r->claim = epoch;
    return r;
}

/* A handle that is already tracked belongs to several live requests (see ij.h): the new
 * record joins the end of its chain instead of replacing the entry, which left the older
 * record unreachable and let a Waitall over both handles finish (and free) the younger one
 * twice (HPCC's b_eff ring: two inline 8-byte Isends in one Waitall). */
void ij_req_track(struct ij_req *r)
{
    r->same = NULL;
    if (r->mreq == MPI_REQUEST_NULL)
        return;
    struct ij_req *q = ij_req_find(r->mreq);
    if (!q) {
        lt_map_put(&reqs, LT_HANDLE(r->mreq), (uint64_t)(uintptr_t)r);
        return;
    }
    while (q->same)
        q = q->same;
    q->same = r;
}

void ij_req_untrack(struct ij_req *r)
{
    if (r->mreq == MPI_REQUEST_NULL)
        return;
    uint64_t *v = lt_map_get(&reqs, LT_HANDLE(r->mreq));
    if (!v)
        return;
    struct ij_req *q = (struct ij_req *)(uintptr_t)*v;
    if (q == r) {
        if (r->same)
            *v = (uint64_t)(uintptr_t)r->same;
        else
            lt_map_del(&reqs, LT_HANDLE(r->mreq));
    } else {
        while (q->same && q->same != r)
            q = q->same;
        if (q->same == r)
            q->same = r->same;
    }
    r->same = NULL;
}

/* ---- the list of outstanding receives ---- */
static void list_add(struct ij_req *r)
{
    r->order = ++post_counter;
    r->prev = tail;
    r->next = NULL;
    if (tail)
        tail->next = r;
    else
        head = r;
    tail = r;
    r->listed = 1;
    if (r->bytes > ij.eager_limit)
        n_rndv_recvs++;
}

void ij_unlist(struct ij_req *r)
{
    if (!r->listed)
        return;
    if (r->prev)
        r->prev->next = r->next;
    else
        head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        tail = r->prev;
    r->listed = 0;
    if (r->bytes > ij.eager_limit)
        n_rndv_recvs--;
}

/* ---- starting transfers ---- */
static void reset(struct ij_req *r)
{
    r->done = r->known = 0;
    r->t_seen = r->t_fin_seen = r->t_done = r->t_release = 0;
    r->active = 1;
}

void ij_send_begin(struct ij_req *r, struct ij_comm *c, int chan, const void *buf, int count,
                   MPI_Datatype dt, int dst, MPI_Comm dcomm, int dtag, int mode)
{
    ij_req_describe(r, IJ_SEND, c, chan, dst, dtag, count, dt);
    reset(r);
    r->t_post = ij_now();
    if (dst == MPI_PROC_NULL) {
        r->active = 0; /* nothing to delay */
        PMPI_Isend(buf, count, dt, dst, dtag, dcomm, &r->mreq);
        return;
    }
    ij_send_ts(c, chan, dst, dtag, r->bytes, r->t_post, &r->seq);
    ij.n_send++;
    send_open(r);
    switch (mode) {
    case IJ_MODE_SYNC:
        PMPI_Issend(buf, count, dt, dst, dtag, dcomm, &r->mreq);
        break;
    case IJ_MODE_BUF:
        PMPI_Ibsend(buf, count, dt, dst, dtag, dcomm, &r->mreq);
        break;
    case IJ_MODE_READY:
        PMPI_Irsend(buf, count, dt, dst, dtag, dcomm, &r->mreq);
        break;
    default:
        PMPI_Isend(buf, count, dt, dst, dtag, dcomm, &r->mreq);
    }
}

void ij_recv_begin(struct ij_req *r, struct ij_comm *c, int chan, void *buf, int count,
                   MPI_Datatype dt, int src, MPI_Comm dcomm, int dtag)
{
    ij_req_describe(r, IJ_RECV, c, chan, src, dtag, count, dt);
    reset(r);
    r->t_post = ij_now();
    PMPI_Irecv(buf, count, dt, src, dtag, dcomm, &r->mreq);
    /* a rendezvous message whose RTS is already here moves inside MPI_Irecv (Open MPI's
     * single copy: 2 MiB take hundreds of µs), so the first poll is judged from the end of
     * the posting call (in ticks, as the polls are timed) */
    r->t_posted = ij_ticks();
    r->seen_loop = ij_loop;
    if (src == MPI_PROC_NULL)
        r->active = 0;
    else
        list_add(r);
}

void ij_send_restart(struct ij_req *r)
{
    reset(r);
    r->t_post = ij_now();
    ij_send_ts(r->c, r->chan, r->peer, r->tag, r->bytes, r->t_post, &r->seq);
    ij.n_send++;
    send_open(r);
}

void ij_recv_restart(struct ij_req *r)
{
    reset(r);
    r->t_post = ij_now();
    r->t_posted = ij_ticks();
    r->seen_loop = ij_loop;
    list_add(r);
}

/* ---- observing completion ---- */
static int may_match(const struct ij_req *q, int src, int tag)
{
    return (q->peer == MPI_ANY_SOURCE || q->peer == src) &&
           (q->tag == MPI_ANY_TAG || q->tag == tag);
}

static void observe_recv(struct ij_req *r, uint64_t now, const MPI_Status *st, int waited,
                         uint64_t gap);

void ij_observe_matching(struct ij_comm *c, int chan, int src, int tag, uint64_t before)
{
    struct ij_req *q = head;
    while (q && q->order < before) {
        if (q->c == c && q->chan == chan && may_match(q, src, tag)) {
            int flag;
            MPI_Status st;
            PMPI_Request_get_status(q->mreq, &flag, &st);
            if (flag) {
                observe_recv(q, ij_now(), &st, 0, 0);
                q = head; /* observing unlists receives: start again */
                continue;
            }
            q->t_seen = ij_ticks();
            q->seen_loop = ij_loop;
        }
        q = q->next;
    }
}

/* waited (IJ_WAITED): the poll that saw the completion followed one that did not by less
 * than WAITING_GAP_NS, so MPI completed the transfer while we were polling: it arrived within
 * the `gap` between the two polls, and `now` is its natural completion time to within that
 * gap (ij_release takes the gap's middle when the application worked between the polls).
 * IJ_AT_POST: the first poll, less than WAITING_GAP_NS after the posting call returned or
 * in the waiting loop that posted it, saw it complete; IJ_IN_LOOP: a later poll of the loop
 * whose earlier poll found it incomplete (both exact for a rendezvous message only, see
 * ij.h and ij_stream.c). */
static void observe_recv(struct ij_req *r, uint64_t now, const MPI_Status *st, int waited,
                         uint64_t gap)
{
    r->done = 1;
    ij.recv_ns += now - r->t_post;
    r->t_done = now;
    r->st = *st;
    uint64_t order = r->order;
    ij_unlist(r);
    int cancelled = 0;
    PMPI_Test_cancelled(st, &cancelled);
    if (cancelled || st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0) {
        r->t_release = now;
        r->known = 1;
        return;
    }
    ij_observe_matching(r->c, r->chan, st->MPI_SOURCE, st->MPI_TAG, order);
    struct ij_ts ts;
    uint64_t probe_rel;
    ij_ts_take(r->c, r->chan, st->MPI_SOURCE, st->MPI_TAG, &ts, &probe_rel);
    uint64_t hold;
    r->t_release = ij_release(&ts, r->t_post, now, waited, gap, ij_delta(r->c, st->MPI_SOURCE), &hold);
    r->known = 1;
    ij.n_recv++;
    if (ts.bytes > ij.eager_limit)
        ij_send_fin(r->c, r->chan, st->MPI_SOURCE, ts.seq, r->t_release, hold);
    ij_own_work(ij_now() - now);
}

/* A poll that asked MPI about a transfer in flight drove MPI's progress (get_status of an
 * incomplete request makes one progress pass, Open MPI and MPICH alike): the kick of the
 * ij_progress that follows it is then a second pass for nothing. last_poll: when it started
 * (ticks; 0: not known), ij_progress's time for the rendezvous receives without a read of its
 * own. */
static int drove_mpi;
static uint64_t last_poll;

/* how the poll starting at t0 that found r complete saw it (the enum in ij.h) */
static int how_seen(const struct ij_req *r, uint64_t t0)
{
    int same_loop = ij_loop && r->seen_loop == ij_loop;
    if (!r->t_seen)
        return ij_tick_ns(t0 - r->t_posted) <= WAITING_GAP_NS || same_loop ? IJ_AT_POST : IJ_UNSEEN;
    if (ij_tick_ns(t0 - r->t_seen) <= WAITING_GAP_NS)
        return IJ_WAITED;
    return same_loop ? IJ_IN_LOOP : IJ_UNSEEN;
}

static int poll_recv(struct ij_req *r)
{
    if (!r->done) {
        int flag;
        MPI_Status st;
        /* the gap is measured between the starts of two polls: the poll itself may do the
         * copy (and an unsuccessful poll reads the clock once) */
        uint64_t t0 = ij_ticks();
        PMPI_Request_get_status(r->mreq, &flag, &st);
        drove_mpi = 1;
        last_poll = t0;
        if (!flag) {
            r->t_seen = t0;
            r->seen_loop = ij_loop;
            return 0;
        }
        uint64_t now = ij_now();
        int waited = how_seen(r, t0);
        observe_recv(r, now, &st, waited, waited == IJ_WAITED ? ij_tick_ns(t0 - r->t_seen) : 0);
    }
    return ij_now() >= r->t_release;
}

static int poll_send(struct ij_req *r)
{
    if (!r->done) {
        int flag;
        last_poll = ij_ticks();
        PMPI_Request_get_status(r->mreq, &flag, &r->st);
        drove_mpi = 1;
        if (!flag)
            return 0;
        uint64_t now = ij_now();
        r->done = 1;
        r->t_done = now;
        ij.send_ns += now - r->t_post;
        int cancelled = 0;
        PMPI_Test_cancelled(&r->st, &cancelled);
        if (cancelled) { /* no message, no FIN: withdraw its timestamp */
            ij_send_retract(r->c, r->chan, r->peer, r->tag, r->seq);
            r->t_release = now;
            send_known(r);
            return 1;
        }
        if (ij.debug > 0) {
            ij.debug--;
            fprintf(stderr, "inject[%d] send %llu B started at %.3f us completed after %.3f us\n",
                    ij.rank, (unsigned long long)r->bytes, (double)(r->t_post % 1000000000) / 1e3,
                    (double)(now - r->t_post) / 1e3);
        }
        if (r->bytes <= ij.eager_limit || r->peer == MPI_PROC_NULL) {
            r->t_release = now;
            send_known(r);
        }
    }
    if (!r->known) {
        struct ij_fin fin;
        int fresh;
        uint64_t t0 = ij_now();
        int got = ij_fin_take(r->c, r->chan, r->peer, r->seq, &fin, &fresh);
        drove_mpi = 1; /* its MPI_Iprobe made a progress pass */
        last_poll = 0;   /* (t0 is a clock reading, not ticks) */
        if (!got) {
            r->t_fin_seen = t0; /* polls are timed from their starts, as receives' */
            return 0;
        }
        /* The FIN reaches the sender one natural small-message one-way after its release;
         * that one-way is measured here when the sender was polling for the FIN as it
         * arrived (a FIN is sent when the receive is observed, so it is physically there
         * long before the release it carries). Without samples ow_hat of a FIN was 0 when
         * the application sends no small messages, and the sender completed ΔL after the
         * release instead of L + ΔL, so its next receive was posted early by L (the
         * self-check's rendezvous growth fell short by ~0.4 µs). */
        if (fresh && r->t_fin_seen && t0 - r->t_fin_seen <= WAITING_GAP_NS && ij_now() > fin.t_sent)
            ij_ow_sample(sizeof fin, ij_now() - fin.t_sent);
        /* The FIN's arrival at the receiver's release (absolute), or the sender's own natural
         * completion moved by what the rule added to the receive and the FIN's ΔL (relative),
         * whichever is earlier: both grow by 3–4·ΔL, but the absolute one also waits for the
         * receiver to observe its receive — which it may do only after a transfer of its own
         * (one MPI progress call moves a 2 MiB block), so at ΔL = 0 a 2 MiB alltoall's
         * senders waited up to 0.5 ms per call that plain MPI does not. */
        double ow = ij_ow_hat(sizeof fin);
        uint64_t dl = ij_delta(r->c, r->peer);
        uint64_t rel = fin.t_release + (uint64_t)(ow > 0 ? ow : 0) + dl;
        uint64_t own = r->t_done + fin.hold + dl;
        if (own < rel)
            rel = own;
        r->t_release = rel > r->t_done ? rel : r->t_done;
        send_known(r);
        ij.send_held_ns += r->t_release - r->t_done;
        if (ij.debug > 0) {
            ij.debug--;
            fprintf(stderr, "inject[%d] send %llu B started at %.3f us: FIN seen %+.3f us, "
                    "released %+.3f us\n", ij.rank, (unsigned long long)r->bytes,
                    (double)(r->t_post % 1000000000) / 1e3, ((double)ij_now() - (double)r->t_post) / 1e3,
                    ((double)r->t_release - (double)r->t_post) / 1e3);
        }
    }
    return ij_now() >= r->t_release;
}

struct ij_req_hooks ij_req_hooks;

int ij_poll(struct ij_req *r)
{
    if (!r->active)
        return 1;
    switch (r->kind) {
    case IJ_RECV:
        return poll_recv(r);
    case IJ_SEND:
        return poll_send(r);
    default:
        return ij_req_hooks.poll ? ij_req_hooks.poll(r) : 1;
    }
}

/* ---- background work ---- */
/* Waiting inside MPI lets MPI progress its own transfers (a rendezvous acknowledgement, the
 * next fragment): while the injector holds a message it keeps doing so with a probe that
 * matches nothing, or the held process would stall its peers' transfers as well. */
static void kick(void)
{
    static MPI_Comm world = MPI_COMM_NULL;
    int flag;
    if (world == MPI_COMM_NULL) {
        struct ij_comm *c = ij_comm_get(MPI_COMM_WORLD);
        if (!c)
            return;
        world = c->shadow;
    }
    PMPI_Iprobe(MPI_ANY_SOURCE, IJ_TAG_NEVER, world, &flag, MPI_STATUS_IGNORE);
}

/* Nothing of this rank's needs MPI's progress: every send's release time is known and every
 * timestamp and FIN reaped; a rendezvous receive still in flight is polled below (which drives
 * progress), an eager one only waits for data its sender delivers without us. A loop that polls
 * now waits for a release time (a hold) or for a message still to come. The kick would then
 * only take in what arrives: a peer's next rendezvous RTS, which on a network with ΔL more
 * latency would still be on its way. Taken in during the hold it sat in MPI's unexpected queue,
 * and the application's next MPI_Irecv matched it and did the whole single-copy transfer
 * inside the call, before the MPI_Isend after it went out: in a receive-first exchange loop
 * with less work than ΔL between calls the rank released ΔL later (the sender's 4th ΔL)
 * copied first and its peer only after, two transfers one after the other (a 2 MiB exchange
 * grew by 435 µs per iteration at ΔL = 20 µs against the model's 80). Left in MPI's queues,
 * the RTS is matched by the first progress call after the Isend, and both transfers run at
 * once, as in the model. */
static int quiet(void) { return !open_sends && !ij_small_pending(); }

/* the waiting loop of one request (MPI_Wait, blocking sends and receives) */
void ij_wait_one(struct ij_req *r)
{
    uint64_t outer = ij_loop_enter();
    while (!ij_poll(r))
        ij_progress();
    ij_loop_leave(outer);
}

void ij_progress(void)
{
    ij_reap(0);
    /* an unsuccessful MPI_Test of a polling loop (HPCC's RandomAccess: one per generated
     * update) cost 2.3× MPI's own (183 against 80 ns), half of it this second pass */
    int drove = drove_mpi;
    if (!drove && !quiet())
        kick();
    else if (!drove && ij.oversubscribed)
        sched_yield(); /* what MPI's idle progress does on an oversubscribed node (Open MPI's
                        * mpi_yield_when_idle): a rank spinning through a hold without it kept
                        * its core from the peer it waits for for a whole time slice */
    drove_mpi = 0;
    if (n_rndv_recvs) {
        /* A receive polled less than IJ_TIGHT_POLL_NS ago — by the call that brought us here,
         * or by the application's own polling loop — is not polled again: HPCC's RandomAccess
         * polls its 8 KiB ANY_SOURCE receive (rendezvous-sized with S = 4 KiB) with MPI_Testany
         * once per generated update, and each unsuccessful Testany polled it a second time
         * here, with two more clock reads: 3 reads (31 ns each on the development VM) and two
         * progress passes per poll where MPI makes one pass, the injected RandomAccess sections
         * taking twice their plain time. Receives the loop does not poll are still polled
         * here, at most once per IJ_TIGHT_POLL_NS, so their FIN leaves as promptly. */
        uint64_t pass = drove && last_poll ? last_poll : ij_ticks();
        uint64_t tight = IJ_TIGHT_POLL_NS * ij_ticks_per_us / 1000;
        struct ij_req *q = head;
        while (q) {
            if (q->bytes > ij.eager_limit && q->t_seen + tight < pass) {
                poll_recv(q);
                if (q->done)
                    return; /* let the waiting loop see it at once (the time from the
                             * completion to that is the injector's own, ij_own_work) */
            }
            q = q->next;
        }
    }
    if (ij_req_hooks.progress)
        ij_req_hooks.progress();
}

void ij_req_finish(struct ij_req *r, MPI_Request *h, MPI_Status *st)
{
    MPI_Status tmp;
    if (r->persistent) {
        r->active = 0;
        PMPI_Wait(h, &tmp); /* completes the persistent request; the handle stays */
    } else {
        ij_req_untrack(r);
        PMPI_Wait(h, &tmp);
        *h = MPI_REQUEST_NULL;
    }
    if (st != MPI_STATUS_IGNORE)
        *st = tmp; /* a completed request's status, as get_status saw it */
    if (!r->persistent)
        ij_req_free(r);
}
