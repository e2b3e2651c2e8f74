/* Timestamp and FIN streams, natural one-way estimates, and the release rule.
 *
 * Timestamps: the sender posts a struct ij_ts on the shadow communicator (tag IJ_TAG_TS) just
 * before the data. All timestamps from one sender on one channel form a single FIFO stream;
 * the receiver pulls them in order and files them by data tag, so the first unassigned entry
 * with tag t is the timestamp of the next message of the (source, t) stream.
 *
 * Release rule for a receive whose transfer MPI completed at t_done (observed by polling),
 * posted at R = t_post, of a message sent at t_s (ij_release):
 *     ow   = t_nat − t_s                  if the receiver was polling when it completed
 *                                         (and, for rendezvous, had posted before t_s):
 *                                         the natural send → receive time, measured exactly
 *          = min(ow_hat(s), t_done − t_s) otherwise (estimate from the exact measurements;
 *                                         the message was there by t_done at the latest)
 *     eager (s ≤ S):                 release = max(t_done, t_s + ow + ΔL)
 *     rendezvous, receiver waiting:  release = t_nat + 2ΔL + max(0, a + ΔL − max(R, a))
 *                                    with a = t_s + a₀, a₀ = ow_hat(small) the RTS's one-way
 *     rendezvous, not seen waiting:  release = max(t_done, t_s + ow + 3ΔL)
 * where t_nat = t_done for a waiting loop, and t_done − gap/2 when the application polled
 * (MPI_Test) with work between polls gap > IJ_TIGHT_POLL_NS apart: the transfer completed
 * somewhere in that gap, and holding from the poll that saw it added gap/2 per message.
 * each plus w, the injector's own work on a receive (see "own work" below). At ΔL = 0 every
 * rule gives t_done + w: a message is never held past its natural completion.
 * "Waiting" for a rendezvous (ij.h, ij_req.c how_seen): a poll closely following an
 * unsuccessful one; the first poll right after the posting call returned, or in the waiting
 * loop that posted it (IJ_AT_POST: its data cannot move before the receive is posted, and MPI
 * moves it inside the posting call or the first poll when the RTS was already there; without
 * this the rule lost the time from t_s to the posting: the self-check measured 3ΔL − 3.5 µs
 * for 8 KiB); a later poll of the loop that saw it incomplete (IJ_IN_LOOP), however long an
 * iteration took: Open MPI's shared-memory single copy moves a 2 MiB message inside one
 * progress call, made while polling another request of the loop.
 * With natural t_done = max(R, t_s + a₀) + rest (R the posting time, a₀ the RTS arrival,
 * ow = a₀ + rest) the rendezvous rule is max(R, t_s + a₀ + ΔL) + rest + 2ΔL: the handshake
 * protocol's h + 2o + 2L + b(s)·G with L = L₀ + ΔL. The eager rule is the model's
 * max(R, a) + o with the arrival a moved by ΔL.
 *
 * ow_hat(s): the exact samples (receives above, and FINs seen by a sender waiting for them,
 * ij_req.c) are kept per power-of-two size class (the last 32 of each);
 * between the classes' median points (size, one-way) it interpolates linearly; above the
 * largest class it extrapolates with the slope b of LATITUDE_INJECT_OW, below the smallest it
 * takes that class's value (linear from a when that class is a rendezvous size); with no
 * sample at all it is a + b·s from LATITUDE_INJECT_OW.
 */
#include "ij.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small sends (timestamps, FINs) that complete in the background ----
 * Buffers of pending sends never move: they come from chunks on a free list; only the
 * (request, buffer) pairs are compacted. */
struct slot {
    unsigned char data[24];
};
static MPI_Request *sreqs;
static struct slot **sptr, **freel;
static int nslots, capslots, nfree, capfree;

static void give_back(struct slot *s)
{
    if (nfree == capfree) {
        capfree = capfree ? capfree * 2 : 256;
        freel = realloc(freel, sizeof *freel * (size_t)capfree);
        if (!freel)
            ij_fatal("out of memory");
    }
    freel[nfree++] = s;
}

void ij_reap(int all)
{
    if (!nslots)
        return;
    if (all) {
        PMPI_Waitall(nslots, sreqs, MPI_STATUSES_IGNORE);
    } else {
        /* the oldest ones complete first; testing a window keeps this O(1) per send */
        int idx[64], got, w = nslots < 64 ? nslots : 64;
        PMPI_Testsome(w, sreqs, &got, idx, MPI_STATUSES_IGNORE);
        if (got == MPI_UNDEFINED || got == 0)
            return;
    }
    int n = 0;
    for (int i = 0; i < nslots; i++) {
        if (sreqs[i] == MPI_REQUEST_NULL) {
            give_back(sptr[i]);
            continue;
        }
        sreqs[n] = sreqs[i];
        sptr[n++] = sptr[i];
    }
    nslots = n;
}

int ij_small_pending(void) { return nslots; }

void ij_post_small(const void *data, int bytes, int dst, int tag, MPI_Comm comm)
{
    if (nslots >= 16)
        ij_reap(0);
    if (!nfree) {
        struct slot *chunk = malloc(sizeof *chunk * 256);
        if (!chunk)
            ij_fatal("out of memory");
        for (int i = 0; i < 256; i++)
            give_back(&chunk[i]);
    }
    if (nslots == capslots) {
        capslots = capslots ? capslots * 2 : 256;
        sreqs = realloc(sreqs, sizeof *sreqs * (size_t)capslots);
        sptr = realloc(sptr, sizeof *sptr * (size_t)capslots);
        if (!sreqs || !sptr)
            ij_fatal("out of memory");
    }
    struct slot *s = freel[--nfree];
    memcpy(s->data, data, (size_t)bytes);
    sptr[nslots] = s;
    PMPI_Isend(s->data, bytes, MPI_BYTE, dst, tag, comm, &sreqs[nslots]);
    nslots++;
}

/* ---- timestamp streams ---- */
void ij_send_ts(struct ij_comm *c, int chan, int dst, int tag, uint64_t bytes, uint64_t t_send,
                uint32_t *seq)
{
    struct ij_peer *p = ij_peer(c, dst);
    struct ij_ts ts = {t_send, bytes, tag, p->send_seq[chan]++};
    *seq = ts.seq;
    ij_post_small(&ts, sizeof ts, dst, IJ_TAG_TS(chan), c->shadow);
}

/* Cancelled sends. The timestamp of a send goes out before the data, so when MPI cancels the
 * send the receiver holds a timestamp for a message that never comes, and every later message
 * of its (source, tag) stream would take its predecessor's timestamp. The sender retracts it
 * once it sees the cancellation (ij_req.c); the receiver drops the first entry of that tag
 * with seq >= the retracted one. If a message of the stream took the orphan before the
 * retraction arrived, the entry it would have taken is the one dropped, which realigns the
 * stream (that one message is released by the cancelled message's send time). */
void ij_send_retract(struct ij_comm *c, int chan, int dst, int tag, uint32_t seq)
{
    struct ij_ts ts = {0, IJ_TS_RETRACT, tag, seq};
    ij_post_small(&ts, sizeof ts, dst, IJ_TAG_TS(chan), c->shadow);
}

static int at_or_after(const struct ij_ts *e, const struct ij_ts *retract)
{
    return e->tag == retract->tag && (int32_t)(e->seq - retract->seq) >= 0;
}

static void tsq_remove(struct ij_tsq *q, size_t i)
{
    memmove(q->e + i, q->e + i + 1, (q->n - i - 1) * sizeof *q->e);
    memmove(q->probe_rel + i, q->probe_rel + i + 1, (q->n - i - 1) * sizeof *q->probe_rel);
    q->n--;
}

static void tsq_retract(struct ij_tsq *q, const struct ij_ts *r)
{
    for (size_t i = 0; i < q->n; i++)
        if (at_or_after(&q->e[i], r)) {
            tsq_remove(q, i);
            return;
        }
    if (q->ndrop == q->capdrop) {
        q->capdrop = q->capdrop ? q->capdrop * 2 : 4;
        q->drop = realloc(q->drop, q->capdrop * sizeof *q->drop);
        if (!q->drop)
            ij_fatal("out of memory");
    }
    q->drop[q->ndrop++] = *r;
}

static void tsq_push(struct ij_tsq *q, const struct ij_ts *e)
{
    for (size_t i = 0; i < q->ndrop; i++)
        if (at_or_after(e, &q->drop[i])) {
            q->drop[i] = q->drop[--q->ndrop];
            return;
        }
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 16;
        q->e = realloc(q->e, q->cap * sizeof *q->e);
        q->probe_rel = realloc(q->probe_rel, q->cap * sizeof *q->probe_rel);
        if (!q->e || !q->probe_rel)
            ij_fatal("out of memory");
    }
    q->e[q->n] = *e;
    q->probe_rel[q->n] = 0;
    q->n++;
}

/* index of the first entry with data tag `tag`, pulling more from the stream as needed */
static size_t tsq_find(struct ij_comm *c, int chan, int src, int tag)
{
    struct ij_tsq *q = &ij_peer(c, src)->ts[chan];
    size_t i = 0;
    for (;;) {
        for (; i < q->n; i++)
            if (q->e[i].tag == tag)
                return i;
        struct ij_ts e;
        PMPI_Recv(&e, sizeof e, MPI_BYTE, src, IJ_TAG_TS(chan), c->shadow, MPI_STATUS_IGNORE);
        if (e.bytes == IJ_TS_RETRACT) {
            tsq_retract(q, &e);
            i = 0;
        } else {
            tsq_push(q, &e);
        }
    }
}

void ij_ts_take(struct ij_comm *c, int chan, int src, int tag, struct ij_ts *out,
                uint64_t *probe_rel)
{
    struct ij_tsq *q = &ij_peer(c, src)->ts[chan];
    size_t i = tsq_find(c, chan, src, tag);
    *out = q->e[i];
    if (probe_rel)
        *probe_rel = q->probe_rel[i];
    tsq_remove(q, i);
}

struct ij_ts *ij_ts_peek(struct ij_comm *c, int chan, int src, int tag, uint64_t **probe_rel)
{
    struct ij_tsq *q = &ij_peer(c, src)->ts[chan];
    size_t i = tsq_find(c, chan, src, tag);
    *probe_rel = &q->probe_rel[i];
    return &q->e[i];
}

/* ---- FIN streams ---- */
void ij_send_fin(struct ij_comm *c, int chan, int dst, uint32_t seq, uint64_t t_release, uint64_t hold)
{
    struct ij_fin f = {t_release, ij_now(), seq, hold < UINT32_MAX ? (uint32_t)hold : UINT32_MAX};
    ij_post_small(&f, sizeof f, dst, IJ_TAG_FIN(chan), c->shadow);
    ij.n_fin++;
}

int ij_fin_take(struct ij_comm *c, int chan, int peer, uint32_t seq, struct ij_fin *out,
                int *fresh)
{
    struct ij_finq *q = &ij_peer(c, peer)->fin[chan];
    size_t had = q->n;
    for (;;) {
        for (size_t i = 0; i < q->n; i++)
            if (q->e[i].seq == seq) {
                *fresh = i >= had;
                *out = q->e[i];
                q->e[i] = q->e[--q->n];
                return 1;
            }
        int flag;
        PMPI_Iprobe(peer, IJ_TAG_FIN(chan), c->shadow, &flag, MPI_STATUS_IGNORE);
        if (!flag)
            return 0;
        if (q->n == q->cap) {
            q->cap = q->cap ? q->cap * 2 : 8;
            q->e = realloc(q->e, q->cap * sizeof *q->e);
            if (!q->e)
                ij_fatal("out of memory");
        }
        PMPI_Recv(&q->e[q->n], sizeof *q->e, MPI_BYTE, peer, IJ_TAG_FIN(chan), c->shadow,
                  MPI_STATUS_IGNORE);
        q->n++;
    }
}

/* ---- natural one-way time estimates ---- */
#define NCLASS 64
#define KEEP 32
/* The last KEEP samples of a class in arrival order (ring) and the same values kept sorted,
 * so that a sample costs O(KEEP) moves and a median O(1). ij_ow_hat runs on the path of
 * every rendezvous sender right after its FIN's sample (ij_req.c): re-sorting the class
 * there (qsort of both arrays) cost 2.1 µs per message, on the critical path at ΔL = 0 and
 * hidden under the hold at ΔL > 0, so the rendezvous growth fell short of 3·ΔL. */
struct sclass {
    uint64_t ow[KEEP], sz[KEEP];   /* ring */
    uint64_t sow[KEEP], ssz[KEEP]; /* sorted */
    int n, next;
};
static struct sclass cls[NCLASS];

static int class_of(uint64_t bytes)
{
    int k = 0;
    while (bytes > 1 && k < NCLASS - 1) {
        bytes >>= 1;
        k++;
    }
    return k;
}

/* sorted v[0..n): replace one occurrence of `old` (if has_old) by `x`, keeping it sorted */
static void sorted_replace(uint64_t *v, int n, int has_old, uint64_t old, uint64_t x)
{
    if (has_old) {
        int i = 0;
        while (v[i] != old)
            i++;
        memmove(v + i, v + i + 1, sizeof *v * (size_t)(n - i - 1));
        n--;
    }
    int j = n;
    while (j > 0 && v[j - 1] > x) {
        v[j] = v[j - 1];
        j--;
    }
    v[j] = x;
}

void ij_ow_sample(uint64_t bytes, uint64_t ow)
{
    struct sclass *s = &cls[class_of(bytes)];
    int full = s->n == KEEP;
    sorted_replace(s->sow, s->n, full, s->ow[s->next], ow);
    sorted_replace(s->ssz, s->n, full, s->sz[s->next], bytes);
    s->ow[s->next] = ow;
    s->sz[s->next] = bytes;
    s->next = (s->next + 1) % KEEP;
    if (!full)
        s->n++;
    ij.n_exact++;
}

static double median(const uint64_t *t, int n)
{
    return n % 2 ? (double)t[n / 2] : 0.5 * ((double)t[n / 2 - 1] + (double)t[n / 2]);
}

double ij_ow_hat(uint64_t bytes)
{
    double x = (double)bytes;
    int lo = -1, hi = -1;
    double msz[NCLASS];
    for (int k = 0; k < NCLASS; k++) {
        if (!cls[k].n)
            continue;
        msz[k] = median(cls[k].ssz, cls[k].n);
        if (msz[k] <= x)
            lo = k;
        else if (hi < 0)
            hi = k;
    }
    if (lo < 0 && hi < 0)
        return ij.ow_a + ij.ow_b * x;
#define MED_OW(k) median(cls[k].sow, cls[k].n)
    /* below the smallest size measured: that size's one-way if it is an eager message
     * (latency-bound); a rendezvous one is mostly its transfer and says little about a small
     * message (a FIN, an RTS): linear from the fallback's intercept to it. Returning it as
     * it was gave a 24-byte FIN the one-way of a 2 MiB block when only those were measured. */
    if (lo < 0 && msz[hi] <= (double)ij.eager_limit)
        return MED_OW(hi);
    if (lo < 0)
        return ij.ow_a + (MED_OW(hi) - ij.ow_a) * x / msz[hi];
    if (hi < 0)
        return MED_OW(lo) + ij.ow_b * (x - msz[lo]);
    double x0 = msz[lo], x1 = msz[hi], y0 = MED_OW(lo), y1 = MED_OW(hi);
#undef MED_OW
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

/* ---- the injector's own work per observed receive ----
 * From the poll that saw MPI complete a receive (t_done) the injector takes the message's
 * timestamp from its stream, matches it, decides the release and, for a rendezvous message,
 * sends the FIN (ij_req.c, observe_recv). At ΔL = 0 the application sees the message only
 * after that work, so it is part of the natural completion; a hold measured from t_done
 * absorbs it, and the message became visible less than ΔL (3·ΔL) later than it otherwise
 * would (event trace of the 8 KiB pre-posted ping-pong: 0.3 µs to the decision, 0.6 µs
 * with the FIN; the self-check's rendezvous growth fell short of 3·ΔL by about that at
 * ΔL = 1 and 5 µs). Every term of the rule is therefore shifted by that work: the median of
 * the last KEEP receives' (ij_own_work), so that a preemption inside the injector is not
 * followed by another ΔL; the first receive uses its own work up to the decision. */
static struct {
    uint64_t ring[KEEP], sorted[KEEP];
    int n, next;
} work;

void ij_own_work(uint64_t w)
{
    int full = work.n == KEEP;
    sorted_replace(work.sorted, work.n, full, work.ring[work.next], w);
    work.ring[work.next] = w;
    work.next = (work.next + 1) % KEEP;
    if (!full)
        work.n++;
}

/* ---- the release rule (see the top comment) ---- */

/* A rendezvous receive seen completing while the receiver polled (t_nat), posted at R =
 * t_post: naturally t_nat = max(R, a) + rest, a = t_s + a₀ the RTS's arrival (a₀ a small
 * message's one-way); with ΔL, max(R, a + ΔL) + rest + 2ΔL (the handshake of docs/model.md
 * §1). Posted before the RTS arrived that is t_nat + 3ΔL, posted ΔL or more after it
 * t_nat + 2ΔL. The message's whole one-way estimate in place of a₀ (as before) held a
 * receive posted after the send started until t_s + ow_hat(s): hundreds of µs past its
 * natural completion at ΔL = 0 for 2 MiB blocks when ow_hat came from slower samples. */
static uint64_t handshake(const struct ij_ts *ts, uint64_t t_post, uint64_t t_nat, uint64_t delta)
{
    double e = ij_ow_hat(sizeof *ts); /* the RTS travels like the timestamp before it */
    uint64_t a = ts->t_send + (e > 0 ? (uint64_t)e : 0);
    if (a > t_nat)
        a = t_nat;
    uint64_t start = t_post > a ? t_post : a;
    uint64_t late = a + delta > start ? a + delta - start : 0;
    return t_nat + 2 * delta + late;
}

uint64_t ij_release(const struct ij_ts *ts, uint64_t t_post, uint64_t t_done, int waited, uint64_t gap,
                    uint64_t delta, uint64_t *rule_hold)
{
    uint64_t now = ij_now();
    uint64_t shift = work.n ? work.sorted[work.n / 2] : now > t_done ? now - t_done : 0;
    int rndv = ts->bytes > ij.eager_limit;
    /* the natural completion: a poll that came gap ns after the last unsuccessful one, with the
     * application's work in between (MPI_Test in a work loop), saw a transfer that completed
     * anywhere in that gap; its middle is the unbiased estimate. Taking the poll's own time
     * made every polled message gap/2 later than ΔL asks (a hold measured from the poll). */
    uint64_t t_nat = waited == IJ_WAITED && gap > IJ_TIGHT_POLL_NS ? t_done - gap / 2 : t_done;
    /* an eager message may have waited in MPI before the receive was posted: only a poll
     * that followed an unsuccessful one saw it arrive */
    waited = rndv ? waited != IJ_UNSEEN : waited == IJ_WAITED;
    int exact = waited && (!rndv || t_post <= ts->t_send);
    uint64_t ow;
    if (exact) {
        ow = t_nat > ts->t_send ? t_nat - ts->t_send : 0;
        ij_ow_sample(ts->bytes, ow);
    } else {
        double e = ij_ow_hat(ts->bytes);
        ow = e > 0 ? (uint64_t)e : 0;
        /* the message arrived no later than it was seen complete: an estimate beyond that
         * (its samples taken under other conditions: the first calls' slower transfers, cold
         * caches, preemption) held it past its natural completion even at ΔL = 0 */
        uint64_t seen = t_done > ts->t_send ? t_done - ts->t_send : 0;
        if (ow > seen)
            ow = seen;
    }
    uint64_t rel = rndv && waited ? handshake(ts, t_post, t_nat, delta)
                                  : ts->t_send + ow + (rndv ? 3 : 1) * delta;
    if (rel < t_done)
        rel = t_done;
    ij.held_rule_ns += rel - t_done;
    *rule_hold = rel - t_done;
    rel += shift;
    ij.held_ns += rel - t_done;
    if (ij.debug > 0) {
        ij.debug--;
        fprintf(stderr, "inject[%d] recv %llu B sent at %.3f us posted %+.3f us rule-waited %d exact %d "
                "one-way %.3f us done %+.3f us held %.3f us\n", ij.rank, (unsigned long long)ts->bytes,
                (double)(ts->t_send % 1000000000) / 1e3, ((double)t_post - (double)ts->t_send) / 1e3,
                waited, exact, ow / 1e3, ((double)t_done - (double)ts->t_send) / 1e3,
                (double)(rel - t_done) / 1e3);
    }
    if (rndv)
        ij.n_rndv++;
    return rel;
}
