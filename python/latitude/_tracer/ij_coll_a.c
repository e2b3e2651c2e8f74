/* Collective algorithms, part 1: barrier, bcast, reduce, allreduce, scan, exscan.
 *
 * Each function is the data-moving twin of the function of the same name in latitude-core's
 * collectives/ (barrier.rs, bcast.rs, reduce.rs, allreduce.rs, halving.rs, scan.rs): the same
 * peers, message order, sizes and dependencies, so the graph `latitude schedule` builds for
 * a collective is the graph of what the injected run does. Vectors are split into chunks of
 * whole elements where the model splits bytes (a difference of less than one element per
 * chunk). Reductions: in = what arrived, inout = the local partial result; for
 * non-commutative operations the lower rank's data always goes on the left.
 */
#include "ij_sched.h"

#include <stdlib.h>

/* ---- barrier ---- */
void ij_barrier_dissemination(struct ij_sched *s)
{
    int p = s->p, r = s->r;
    ij_front f = IJ_NONE;
    for (int d = 1; d < p; d *= 2)
        f = ij_sendrecv(s, f, (r + d) % p, NULL, 0, MPI_BYTE, ij_mod(r - d, p), NULL, 0,
                        MPI_BYTE);
}

/* ---- bcast ---- */
static int top_mask(int p)
{
    int m = 1;
    if (p <= 1)
        return 0;
    while (m * 2 < p)
        m *= 2;
    return m;
}

int ij_bcast_binomial(struct ij_sched *s, void *buf, int count, MPI_Datatype dt, int root)
{
    int p = s->p, v = ij_mod(s->r - root, p);
    ij_front f = IJ_NONE;
    int mask = v == 0 ? top_mask(p) : ij_lowbit(v) >> 1;
    if (v != 0)
        f = ij_one(ij_recv(s, f, (v - ij_lowbit(v) + root) % p, buf, count, dt));
    for (; mask > 0; mask >>= 1)
        if (v + mask < p)
            f = ij_one(ij_send(s, f, (v + mask + root) % p, buf, count, dt));
    return 0;
}

struct unpack_arg {
    void *packed, *buf;
    int size, count;
    MPI_Datatype dt;
    MPI_Comm comm;
};

static void unpack_fn(void *a)
{
    struct unpack_arg *u = a;
    int pos = 0;
    PMPI_Unpack(u->packed, u->size, &pos, u->buf, u->count, u->dt, u->comm);
}

/* bytes of chunks [lo, hi) of an n-byte vector in `chunk`-byte pieces */
static long chunk_bytes(long n, long chunk, long lo, long hi)
{
    long a = lo * chunk < n ? lo * chunk : n, b = hi * chunk < n ? hi * chunk : n;
    return b - a;
}

int ij_bcast_scatter_allgather(struct ij_sched *s, void *buf, int count, MPI_Datatype dt,
                               int root)
{
    int p = s->p, v = ij_mod(s->r - root, p);
    /* MPICH's long bcast works on bytes: pack when the type is not contiguous bytes */
    int size = 0;
    PMPI_Pack_size(count, dt, s->c->shadow, &size);
    char *B = ij_mem(s, (size_t)size);
    long n = size;
    if (v == 0) {
        int pos = 0;
        PMPI_Pack(buf, count, dt, B, size, &pos, s->c->shadow);
    }
    long chunk = (n + p - 1) / p;
    if (chunk < 1)
        chunk = 1;
#define SUB(w) ((w) == 0 ? p : (ij_lowbit(w) < p - (w) ? ij_lowbit(w) : p - (w)))
#define OFF(j) ((j) * chunk < n ? (j) * chunk : n)
    ij_front f = IJ_NONE;
    int mask = v == 0 ? top_mask(p) : ij_lowbit(v) >> 1;
    if (v != 0) {
        long b = chunk_bytes(n, chunk, v, v + SUB(v));
        if (b > 0)
            f = ij_one(ij_recv(s, f, (v - ij_lowbit(v) + root) % p, B + OFF(v), (int)b, MPI_BYTE));
    }
    for (; mask > 0; mask >>= 1) {
        int w = v + mask;
        if (w < p) {
            long b = chunk_bytes(n, chunk, w, w + SUB(w));
            if (b > 0)
                f = ij_one(ij_send(s, f, (w + root) % p, B + OFF(w), (int)b, MPI_BYTE));
        }
    }
    for (int i = 1; i < p; i++) {
        int sc = ij_mod(v - i + 1, p), rc = ij_mod(v - i, p);
        f = ij_sendrecv(s, f, (v + 1 + root) % p, B + OFF(sc),
                        (int)chunk_bytes(n, chunk, sc, sc + 1), MPI_BYTE,
                        (ij_mod(v - 1, p) + root) % p, B + OFF(rc),
                        (int)chunk_bytes(n, chunk, rc, rc + 1), MPI_BYTE);
    }
#undef SUB
#undef OFF
    if (v != 0) {
        struct unpack_arg *u = ij_mem(s, sizeof *u);
        *u = (struct unpack_arg){B, buf, size, count, dt, s->c->shadow};
        ij_fn(s, f, unpack_fn, u);
    }
    return 0;
}

/* ---- fold of p ranks onto p' = 2^⌊log₂ p⌋ (halving.rs: Group) ---- */
struct group {
    int pof2, rem, even_leaves;
};

static struct group group_of(int p, int even_leaves)
{
    struct group g = {ij_pof2_floor(p), 0, even_leaves};
    g.rem = p - g.pof2;
    return g;
}
static int g_leaves(const struct group *g, int v)
{
    return v < 2 * g->rem && ((v % 2 == 0) == g->even_leaves);
}
static int g_newrank(const struct group *g, int v) { return v < 2 * g->rem ? v / 2 : v - g->rem; }
static int g_real(const struct group *g, int q)
{
    return q < g->rem ? 2 * q + (g->even_leaves ? 1 : 0) : q + g->rem;
}

/* chunk prefix sums of `count` elements over k chunks (the first count mod k one larger) */
static int *uniform_chunks(struct ij_sched *s, int count, int k)
{
    int *pre = ij_mem(s, sizeof *pre * (size_t)(k + 1));
    for (int i = 0; i < k; i++)
        pre[i + 1] = pre[i] + count / k + (i < count % k);
    return pre;
}

/* Recursive halving over chunks (Halving::reduce_scatter): x keeps the lower half iff bit m
 * is clear. acc holds the partial result, tmp receives. map: new rank -> comm rank. */
struct halving {
    struct ij_sched *s;
    const int *pre;
    char *acc, *tmp;
    MPI_Aint ext;
    MPI_Datatype dt;
    MPI_Op op;
    const struct group *g;
    int root; /* relative ranks: comm rank = (real + root) mod p */
};

static int hv_rank(const struct halving *h, int q) { return (g_real(h->g, q) + h->root) % h->s->p; }
static char *hv_at(const struct halving *h, char *base, int chunk)
{
    return base + (MPI_Aint)h->pre[chunk] * h->ext;
}
static int hv_len(const struct halving *h, int lo, int hi) { return h->pre[hi] - h->pre[lo]; }

static ij_front hv_reduce_scatter(struct halving *h, ij_front f, int x, const int *masks, int nm,
                                  int *plo, int *phi)
{
    int lo = 0, hi = h->g->pof2;
    int commut = ij_commutative(h->op);
    for (int i = 0; i < nm; i++) {
        int m = masks[i], q = hv_rank(h, x ^ m), mid = lo + (hi - lo) / 2;
        int klo = x & m ? mid : lo, khi = x & m ? hi : mid;
        int glo = x & m ? lo : mid, ghi = x & m ? mid : hi;
        f = ij_sendrecv(h->s, f, q, hv_at(h, h->acc, glo), hv_len(h, glo, ghi), h->dt, q,
                        hv_at(h, h->tmp, klo), hv_len(h, klo, khi), h->dt);
        int rev = !commut && (x ^ m) > x; /* partner's data goes right */
        f = ij_one(ij_reduce(h->s, f, hv_at(h, h->tmp, klo), hv_at(h, h->acc, klo),
                             hv_len(h, klo, khi), h->dt, h->op, rev));
        lo = klo;
        hi = khi;
    }
    *plo = lo;
    *phi = hi;
    return f;
}

static void sibling(int x, int m, int lo, int hi, int *slo, int *shi)
{
    int len = hi - lo;
    *slo = x & m ? lo - len : hi;
    *shi = x & m ? lo : hi + len;
}

/* Recursive-doubling allgather undoing hv_reduce_scatter (masks in reverse order). */
static ij_front hv_allgather(struct halving *h, ij_front f, int x, const int *masks, int nm,
                             int lo, int hi)
{
    for (int i = 0; i < nm; i++) {
        int m = masks[i], q = hv_rank(h, x ^ m), slo, shi;
        sibling(x, m, lo, hi, &slo, &shi);
        f = ij_sendrecv(h->s, f, q, hv_at(h, h->acc, lo), hv_len(h, lo, hi), h->dt, q,
                        hv_at(h, h->acc, slo), hv_len(h, slo, shi), h->dt);
        lo = lo < slo ? lo : slo;
        hi = hi > shi ? hi : shi;
    }
    return f;
}

/* Binomial gather of the pieces to new rank 0. */
static void hv_gather_to_zero(struct halving *h, ij_front f, int x, const int *masks, int nm,
                              int lo, int hi)
{
    for (int i = 0; i < nm; i++) {
        int m = masks[i], q = hv_rank(h, x ^ m), slo, shi;
        if (x & m) {
            ij_send(h->s, f, q, hv_at(h, h->acc, lo), hv_len(h, lo, hi), h->dt);
            return;
        }
        sibling(x, m, lo, hi, &slo, &shi);
        f = ij_one(ij_recv(h->s, f, q, hv_at(h, h->acc, slo), hv_len(h, slo, shi), h->dt));
        lo = lo < slo ? lo : slo;
        hi = hi > shi ? hi : shi;
    }
}

static int masks_up(int pof2, int *m)
{
    int n = 0;
    for (int k = 1; k < pof2; k *= 2)
        m[n++] = k;
    return n;
}
static int masks_down(int pof2, int *m)
{
    int n = masks_up(pof2, m);
    for (int i = 0; i < n / 2; i++) {
        int t = m[i];
        m[i] = m[n - 1 - i];
        m[n - 1 - i] = t;
    }
    return n;
}

/* the local vector a reduction starts from: rbuf (or a temporary) holding sbuf's data */
static char *start_vector(struct ij_sched *s, const void *sbuf, void *rbuf, int use_rbuf,
                          int count, MPI_Datatype dt)
{
    char *acc = use_rbuf ? rbuf : ij_elems(s, count, dt);
    if (sbuf != MPI_IN_PLACE)
        ij_copy(sbuf, count, dt, acc, count, dt);
    else if (acc != rbuf)
        ij_copy(rbuf, count, dt, acc, count, dt);
    return acc;
}

/* ---- reduce ---- */
int ij_reduce_binomial(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                       MPI_Datatype dt, MPI_Op op, int root)
{
    int p = s->p, v = ij_mod(s->r - root, p), commut = ij_commutative(op);
    if (!commut && root != 0)
        return -1; /* relative ranks would reorder the operands */
    char *acc = start_vector(s, sbuf, rbuf, s->r == root, count, dt);
    char *tmp = ij_elems(s, count, dt);
    ij_front f = IJ_NONE;
    for (int mask = 1; mask < p; mask *= 2) {
        if (v & mask) {
            ij_send(s, f, (v - mask + root) % p, acc, count, dt);
            return 0;
        }
        if (v + mask < p) {
            int rcv = ij_recv(s, f, (v + mask + root) % p, tmp, count, dt);
            f = ij_one(ij_reduce(s, ij_one(rcv), tmp, acc, count, dt, op, !commut));
        }
    }
    return 0;
}

int ij_reduce_rabenseifner(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                           MPI_Datatype dt, MPI_Op op, int root)
{
    int p = s->p, v = ij_mod(s->r - root, p);
    if (!ij_commutative(op))
        return -1;
    struct group g = group_of(p, 0); /* odd ranks hand over: relative 0 (the root) stays */
    char *acc = start_vector(s, sbuf, rbuf, s->r == root, count, dt);
    char *tmp = ij_elems(s, count, dt);
    ij_front f = IJ_NONE;
    if (v < 2 * g.rem) {
        int q = ((v ^ 1) + root) % p;
        if (g_leaves(&g, v)) {
            ij_send(s, f, q, acc, count, dt);
            return 0;
        }
        int rcv = ij_recv(s, f, q, tmp, count, dt);
        f = ij_one(ij_reduce(s, ij_one(rcv), tmp, acc, count, dt, op, 0));
    }
    struct halving h = {s, uniform_chunks(s, count, g.pof2), acc, tmp, ij_extent(dt), dt, op,
                        &g, root};
    int x = g_newrank(&g, v), m[32] = {0}, lo, hi;
    int nm = masks_up(g.pof2, m);
    f = hv_reduce_scatter(&h, f, x, m, nm, &lo, &hi);
    masks_down(g.pof2, m);
    hv_gather_to_zero(&h, f, x, m, nm, lo, hi);
    return 0;
}

/* ---- allreduce ---- */

/* fold (even ranks of the first 2·rem hand their vector to r + 1) and the matching unfold */
static int fold_in(struct ij_sched *s, const struct group *g, char *acc, char *tmp, int count,
                   MPI_Datatype dt, MPI_Op op, ij_front *f, int *fold_send)
{
    int r = s->r;
    *fold_send = -1;
    if (r >= 2 * g->rem)
        return 1;
    if (g_leaves(g, r)) {
        *fold_send = ij_send(s, *f, r + 1, acc, count, dt);
        return 0;
    }
    int rcv = ij_recv(s, *f, r - 1, tmp, count, dt);
    *f = ij_one(ij_reduce(s, ij_one(rcv), tmp, acc, count, dt, op, 0));
    return 1;
}

static void unfold(struct ij_sched *s, const struct group *g, char *acc, int count,
                   MPI_Datatype dt, ij_front f, int fold_send)
{
    int r = s->r;
    if (r >= 2 * g->rem)
        return;
    if (fold_send >= 0)
        ij_recv(s, ij_one(fold_send), r + 1, acc, count, dt);
    else
        ij_send(s, f, r - 1, acc, count, dt);
}

int ij_allreduce_recdoub(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                         MPI_Datatype dt, MPI_Op op)
{
    struct group g = group_of(s->p, 1);
    int commut = ij_commutative(op), fs;
    char *acc = start_vector(s, sbuf, rbuf, 1, count, dt);
    char *tmp = ij_elems(s, count, dt);
    ij_front f = IJ_NONE;
    if (fold_in(s, &g, acc, tmp, count, dt, op, &f, &fs)) {
        int x = g_newrank(&g, s->r);
        for (int m = 1; m < g.pof2; m *= 2) {
            int q = g_real(&g, x ^ m);
            f = ij_sendrecv(s, f, q, acc, count, dt, q, tmp, count, dt);
            f = ij_one(ij_reduce(s, f, tmp, acc, count, dt, op, !commut && q > s->r));
        }
    }
    unfold(s, &g, acc, count, dt, f, fs);
    return 0;
}

int ij_allreduce_rabenseifner(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                              MPI_Datatype dt, MPI_Op op)
{
    struct group g = group_of(s->p, 1);
    int fs;
    char *acc = start_vector(s, sbuf, rbuf, 1, count, dt);
    char *tmp = ij_elems(s, count, dt);
    ij_front f = IJ_NONE;
    if (fold_in(s, &g, acc, tmp, count, dt, op, &f, &fs)) {
        struct halving h = {s, uniform_chunks(s, count, g.pof2), acc, tmp, ij_extent(dt), dt,
                            op, &g, 0};
        int x = g_newrank(&g, s->r), m[32] = {0}, lo, hi;
        int nm = masks_up(g.pof2, m);
        f = hv_reduce_scatter(&h, f, x, m, nm, &lo, &hi);
        masks_down(g.pof2, m);
        f = hv_allgather(&h, f, x, m, nm, lo, hi);
    }
    unfold(s, &g, acc, count, dt, f, fs);
    return 0;
}

/* ---- scan and exscan (MPICH's recursive doubling) ---- */
int ij_scan_recdoub(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                    MPI_Datatype dt, MPI_Op op, int exclusive)
{
    int p = s->p, r = s->r, commut = ij_commutative(op), have = 0;
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    char *partial = ij_elems(s, count, dt), *tmp = ij_elems(s, count, dt);
    ij_copy(src, count, dt, partial, count, dt);
    if (!exclusive && sbuf != MPI_IN_PLACE)
        ij_copy(sbuf, count, dt, rbuf, count, dt);
    ij_front f = IJ_NONE;
    for (int mask = 1; mask < p; mask *= 2) {
        int q = r ^ mask;
        if (q >= p)
            continue;
        f = ij_sendrecv(s, f, q, partial, count, dt, q, tmp, count, dt);
        if (r > q) {
            f = ij_one(ij_reduce(s, f, tmp, partial, count, dt, op, 0));
            if (!exclusive)
                f = ij_one(ij_reduce(s, f, tmp, rbuf, count, dt, op, 0));
            else if (!have)
                f = ij_one(ij_copy_op(s, f, tmp, count, dt, rbuf, count, dt));
            else
                f = ij_one(ij_reduce(s, f, tmp, rbuf, count, dt, op, 0));
            have = 1;
        } else {
            f = ij_one(ij_reduce(s, f, tmp, partial, count, dt, op, !commut));
        }
    }
    return 0;
}
