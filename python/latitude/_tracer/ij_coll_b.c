/* Collective algorithms, part 2: allgather(v), alltoall(v/w), gather(v), scatter(v),
 * reduce_scatter(_block) — twins of latitude-core's allgather.rs, alltoall.rs, rooted.rs and
 * reduce_scatter.rs (same peers, order, sizes, dependencies).
 *
 * A set of blocks of a buffer travels as one message: a single block or a run of equal
 * consecutive blocks directly, anything else through an indexed datatype (so a recursive-
 * doubling step is still one message of the model's size).
 */
#include "ij_sched.h"

#include <stdlib.h>

static char *blk(const struct ij_blocks *b, int i)
{
    return b->base + (MPI_Aint)(b->counts ? b->displs[i] : i * b->count) * b->ext;
}
static int blk_count(const struct ij_blocks *b, int i) { return b->counts ? b->counts[i] : b->count; }

/* The blocks idx[0..n) of b as one (buffer, count, type). */
static void blockset(struct ij_sched *s, const struct ij_blocks *b, const int *idx, int n,
                     void **buf, int *count, MPI_Datatype *dt)
{
    int run = 1;
    for (int i = 1; i < n && run; i++)
        run = idx[i] == idx[i - 1] + 1;
    if (n == 1 || (run && !b->counts)) {
        *buf = blk(b, idx[0]);
        *count = n * blk_count(b, idx[0]);
        *dt = b->dt;
        return;
    }
    int *lens = ij_mem(s, sizeof *lens * (size_t)n), *disp = ij_mem(s, sizeof *disp * (size_t)n);
    for (int i = 0; i < n; i++) {
        lens[i] = blk_count(b, idx[i]);
        disp[i] = b->counts ? b->displs[idx[i]] : idx[i] * b->count;
    }
    MPI_Datatype t;
    PMPI_Type_indexed(n, lens, disp, b->dt, &t);
    *buf = b->base;
    *count = 1;
    *dt = ij_keep_type(s, t);
}

/* ---- allgather(v) ---- */
static ij_front ag_sendrecv(struct ij_sched *s, ij_front f, const struct ij_blocks *b, int to,
                            const int *si, int sn, int from, const int *ri, int rn)
{
    void *sb, *rb;
    int sc, rc;
    MPI_Datatype st, rt;
    blockset(s, b, si, sn, &sb, &sc, &st);
    blockset(s, b, ri, rn, &rb, &rc, &rt);
    return ij_sendrecv(s, f, to, sb, sc, st, from, rb, rc, rt);
}

/* blocks held by new rank y before the doubling: y and its extra y + p' */
static int held(int y, int pof2, int rem, int *out)
{
    out[0] = y;
    if (y < rem) {
        out[1] = y + pof2;
        return 2;
    }
    return 1;
}

static int group_blocks(int x, int m, int pof2, int rem, int *out)
{
    int n = 0, lo = x & ~(m - 1);
    for (int y = lo; y < lo + m; y++)
        n += held(y, pof2, rem, out + n);
    return n;
}

static void ag_recdoub(struct ij_sched *s, const struct ij_blocks *b)
{
    int p = s->p, r = s->r, pof2 = ij_pof2_floor(p), rem = p - pof2;
    int *ri = ij_mem(s, sizeof *ri * (size_t)p);
    for (int i = 0; i < p; i++)
        ri[i] = i;
    ij_front f = IJ_NONE;
    if (r >= pof2) {
        int snd = ij_send(s, f, r - pof2, blk(b, r), blk_count(b, r), b->dt);
        void *ab;
        int ac;
        MPI_Datatype at;
        blockset(s, b, ri, p, &ab, &ac, &at);
        ij_recv(s, ij_one(snd), r - pof2, ab, ac, at);
        return;
    }
    if (r < rem)
        f = ij_one(ij_recv(s, f, r + pof2, blk(b, r + pof2), blk_count(b, r + pof2), b->dt));
    for (int m = 1; m < pof2; m *= 2) {
        int q = r ^ m;
        int *mine = ij_mem(s, sizeof *mine * (size_t)p), *theirs = ij_mem(s, sizeof *theirs * (size_t)p);
        int nm = group_blocks(r, m, pof2, rem, mine), nt = group_blocks(q, m, pof2, rem, theirs);
        f = ag_sendrecv(s, f, b, q, mine, nm, q, theirs, nt);
    }
    if (r < rem) {
        void *ab;
        int ac;
        MPI_Datatype at;
        blockset(s, b, ri, p, &ab, &ac, &at);
        ij_send(s, f, r + pof2, ab, ac, at);
    }
}

static void ag_bruck(struct ij_sched *s, const struct ij_blocks *b)
{
    int p = s->p, r = s->r;
    ij_front f = IJ_NONE;
    for (int d = 1; d < p; d *= 2) {
        int cnt = d < p - d ? d : p - d, from = (r + d) % p;
        int *si = ij_mem(s, sizeof *si * (size_t)cnt), *ri = ij_mem(s, sizeof *ri * (size_t)cnt);
        for (int i = 0; i < cnt; i++) {
            si[i] = (r + i) % p;
            ri[i] = (from + i) % p;
        }
        f = ag_sendrecv(s, f, b, ij_mod(r - d, p), si, cnt, from, ri, cnt);
    }
}

static void ag_ring(struct ij_sched *s, const struct ij_blocks *b)
{
    int p = s->p, r = s->r;
    ij_front f = IJ_NONE;
    for (int i = 1; i < p; i++) {
        int sb = ij_mod(r - i + 1, p), rb = ij_mod(r - i, p);
        f = ij_sendrecv(s, f, (r + 1) % p, blk(b, sb), blk_count(b, sb), b->dt, ij_mod(r - 1, p),
                        blk(b, rb), blk_count(b, rb), b->dt);
    }
}

int ij_allgather(struct ij_sched *s, int alg, const void *sbuf, int scount, MPI_Datatype sdt,
                 const struct ij_blocks *rb)
{
    if (sbuf != MPI_IN_PLACE)
        ij_copy(sbuf, scount, sdt, blk(rb, s->r), blk_count(rb, s->r), rb->dt);
    if (alg == IJ_AG_RECDOUB)
        ag_recdoub(s, rb);
    else if (alg == IJ_AG_BRUCK)
        ag_bruck(s, rb);
    else
        ag_ring(s, rb);
    return 0;
}

/* ---- alltoall(v/w) ---- */
struct bruck_arg {
    char *tmp;
    int bsz, p, r;
    const struct ij_blocks *rb;
    MPI_Comm comm;
};

static void bruck_unpack(void *a)
{
    struct bruck_arg *u = a;
    for (int i = 0; i < u->p; i++) {
        int j = ij_mod(u->r - i, u->p), pos = 0;
        PMPI_Unpack(u->tmp + (size_t)i * u->bsz, u->bsz, &pos, blk(u->rb, j),
                    blk_count(u->rb, j), u->rb->dt, u->comm);
    }
}

/* MPICH's Bruck: rotate, exchange the blocks whose index has bit d set, rotate back. */
static void a2a_bruck(struct ij_sched *s, const struct ij_blocks *sb, const struct ij_blocks *rb)
{
    int p = s->p, r = s->r, bsz = 0;
    MPI_Comm comm = s->c->shadow;
    PMPI_Pack_size(sb->count, sb->dt, comm, &bsz);
    char *tmp = ij_mem(s, (size_t)bsz * (size_t)p), *in = ij_mem(s, (size_t)bsz * (size_t)p);
    for (int i = 0; i < p; i++) {
        int pos = 0;
        PMPI_Pack(blk(sb, (r + i) % p), sb->count, sb->dt, tmp + (size_t)i * bsz, bsz, &pos, comm);
    }
    ij_front f = IJ_NONE;
    for (int d = 1; d < p; d *= 2) {
        int n = 0, *lens = ij_mem(s, sizeof(int) * (size_t)p), *disp = ij_mem(s, sizeof(int) * (size_t)p);
        for (int j = 0; j < p; j++)
            if (j & d) {
                lens[n] = bsz;
                disp[n++] = j * bsz;
            }
        MPI_Datatype t;
        PMPI_Type_indexed(n, lens, disp, MPI_BYTE, &t);
        t = ij_keep_type(s, t);
        f = ij_sendrecv(s, f, (r + d) % p, tmp, 1, t, ij_mod(r - d, p), in, 1, t);
        f = ij_one(ij_copy_op(s, f, in, 1, t, tmp, 1, t));
    }
    struct bruck_arg *u = ij_mem(s, sizeof *u);
    *u = (struct bruck_arg){tmp, bsz, p, r, rb, comm};
    ij_fn(s, f, bruck_unpack, u);
}

int ij_alltoall(struct ij_sched *s, int alg, const struct ij_blocks *sb,
                const MPI_Datatype *stypes, const struct ij_blocks *rb,
                const MPI_Datatype *rtypes)
{
    int p = s->p, r = s->r;
#define STYPE(i) (stypes ? stypes[i] : sb->dt)
#define RTYPE(i) (rtypes ? rtypes[i] : rb->dt)
    ij_copy(blk(sb, r), blk_count(sb, r), STYPE(r), blk(rb, r), blk_count(rb, r), RTYPE(r));
    if (alg == IJ_A2A_BRUCK) {
        a2a_bruck(s, sb, rb);
        return 0;
    }
    ij_front f = IJ_NONE;
    int pof2 = (p & (p - 1)) == 0;
    for (int i = 1; i < p; i++) {
        int to = alg == IJ_A2A_PAIRWISE && pof2 ? r ^ i : (r + i) % p;
        int from = alg == IJ_A2A_PAIRWISE && pof2 ? r ^ i : ij_mod(r - i, p);
        ij_front g = ij_sendrecv(s, alg == IJ_A2A_PAIRWISE ? f : IJ_NONE, to, blk(sb, to),
                                 blk_count(sb, to), STYPE(to), from, blk(rb, from),
                                 blk_count(rb, from), RTYPE(from));
        if (alg == IJ_A2A_PAIRWISE)
            f = g;
    }
#undef STYPE
#undef RTYPE
    return 0;
}

/* ---- gather and scatter ---- */
static int subtree(int v, int p)
{
    if (v == 0)
        return p;
    return ij_lowbit(v) < p - v ? ij_lowbit(v) : p - v;
}

struct rot_arg {
    char *tmp;
    int bsz, p, root, count;
    void *buf;
    MPI_Datatype dt;
    MPI_Comm comm;
    int pack; /* 1: buf -> tmp (scatter root), 0: tmp -> buf (gather root) */
};

/* relative block j of tmp <-> block (j + root) mod p of buf */
static void rotate(struct rot_arg *u, int skip_own)
{
    for (int j = 0; j < u->p; j++) {
        if (skip_own && j == 0)
            continue;
        char *b = (char *)u->buf + (MPI_Aint)((j + u->root) % u->p) * u->count * ij_extent(u->dt);
        int pos = 0;
        if (u->pack)
            PMPI_Pack(b, u->count, u->dt, u->tmp + (size_t)j * u->bsz, u->bsz, &pos, u->comm);
        else
            PMPI_Unpack(u->tmp + (size_t)j * u->bsz, u->bsz, &pos, b, u->count, u->dt, u->comm);
    }
}
static void unrotate_fn(void *a) { rotate(a, 1); }

int ij_gather_binomial(struct ij_sched *s, const void *sbuf, int scount, MPI_Datatype sdt,
                       void *rbuf, int rcount, MPI_Datatype rdt, int root)
{
    int p = s->p, v = ij_mod(s->r - root, p), bsz = 0, pos = 0;
    MPI_Comm comm = s->c->shadow;
    int at_root = v == 0;
    if (at_root && sbuf == MPI_IN_PLACE) {
        sbuf = (char *)rbuf + (MPI_Aint)root * rcount * ij_extent(rdt);
        scount = rcount;
        sdt = rdt;
    }
    PMPI_Pack_size(scount, sdt, comm, &bsz);
    char *tmp = ij_mem(s, (size_t)bsz * (size_t)subtree(v, p));
    PMPI_Pack(sbuf, scount, sdt, tmp, bsz, &pos, comm);
    ij_front f = IJ_NONE;
    for (int mask = 1; mask < p; mask *= 2) {
        if (v & mask) {
            ij_send(s, f, (v - mask + root) % p, tmp, bsz * subtree(v, p), MPI_BYTE);
            return 0;
        }
        if (v + mask < p)
            f = ij_one(ij_recv(s, f, (v + mask + root) % p, tmp + (size_t)mask * bsz,
                               bsz * subtree(v + mask, p), MPI_BYTE));
    }
    struct rot_arg *u = ij_mem(s, sizeof *u);
    *u = (struct rot_arg){tmp, bsz, p, root, rcount, rbuf, rdt, comm, 0};
    if (sbuf != (char *)rbuf + (MPI_Aint)root * rcount * ij_extent(rdt))
        ij_copy(sbuf, scount, sdt, (char *)rbuf + (MPI_Aint)root * rcount * ij_extent(rdt),
                rcount, rdt);
    ij_fn(s, f, unrotate_fn, u);
    return 0;
}

struct unpack1 {
    char *tmp;
    int bsz, count;
    void *buf;
    MPI_Datatype dt;
    MPI_Comm comm;
};
static void unpack1_fn(void *a)
{
    struct unpack1 *u = a;
    int pos = 0;
    PMPI_Unpack(u->tmp, u->bsz, &pos, u->buf, u->count, u->dt, u->comm);
}

int ij_scatter_binomial(struct ij_sched *s, const void *sbuf, int scount, MPI_Datatype sdt,
                        void *rbuf, int rcount, MPI_Datatype rdt, int root)
{
    int p = s->p, v = ij_mod(s->r - root, p), bsz = 0;
    MPI_Comm comm = s->c->shadow;
    if (v == 0)
        PMPI_Pack_size(scount, sdt, comm, &bsz);
    else
        PMPI_Pack_size(rcount, rdt, comm, &bsz);
    char *tmp = ij_mem(s, (size_t)bsz * (size_t)subtree(v, p));
    ij_front f = IJ_NONE;
    int mask;
    if (v == 0) {
        struct rot_arg u = {tmp, bsz, p, root, scount, (void *)sbuf, sdt, comm, 1};
        rotate(&u, 0);
        for (mask = 1; mask * 2 < p; mask *= 2)
            ;
        if (p <= 1)
            mask = 0;
    } else {
        f = ij_one(ij_recv(s, f, (v - ij_lowbit(v) + root) % p, tmp, bsz * subtree(v, p), MPI_BYTE));
        mask = ij_lowbit(v) >> 1;
    }
    for (; mask > 0; mask >>= 1)
        if (v + mask < p)
            f = ij_one(ij_send(s, f, (v + mask + root) % p, tmp + (size_t)mask * bsz,
                               bsz * subtree(v + mask, p), MPI_BYTE));
    if (!(v == 0 && rbuf == MPI_IN_PLACE)) {
        struct unpack1 *u = ij_mem(s, sizeof *u);
        *u = (struct unpack1){tmp, bsz, v == 0 ? scount : rcount, rbuf, v == 0 ? sdt : rdt, comm};
        if (v == 0) { /* the root's own block, with the receive type */
            u->count = rcount;
            u->dt = rdt;
        }
        ij_fn(s, f, unpack1_fn, u);
    }
    return 0;
}

int ij_gatherv_linear(struct ij_sched *s, const void *sbuf, int scount, MPI_Datatype sdt,
                      const struct ij_blocks *rb, int root)
{
    int p = s->p;
    if (s->r != root) {
        ij_send(s, IJ_NONE, root, sbuf, scount, sdt);
        return 0;
    }
    if (sbuf != MPI_IN_PLACE)
        ij_copy(sbuf, scount, sdt, blk(rb, root), blk_count(rb, root), rb->dt);
    for (int w = 1; w < p; w++) {
        int i = (w + root) % p;
        ij_recv(s, IJ_NONE, i, blk(rb, i), blk_count(rb, i), rb->dt);
    }
    return 0;
}

int ij_scatterv_linear(struct ij_sched *s, const struct ij_blocks *sb, void *rbuf, int rcount,
                       MPI_Datatype rdt, int root)
{
    int p = s->p;
    if (s->r != root) {
        ij_recv(s, IJ_NONE, root, rbuf, rcount, rdt);
        return 0;
    }
    if (rbuf != MPI_IN_PLACE)
        ij_copy(blk(sb, root), blk_count(sb, root), sb->dt, rbuf, rcount, rdt);
    for (int w = 1; w < p; w++) {
        int i = (w + root) % p;
        ij_send(s, IJ_NONE, i, blk(sb, i), blk_count(sb, i), sb->dt);
    }
    return 0;
}

/* ---- reduce_scatter: ring, or recursive halving after a fold (commutative ops) ---- */
int ij_reduce_scatter(struct ij_sched *s, int ring, const void *sbuf, void *rbuf,
                      const int *counts, MPI_Datatype dt, MPI_Op op)
{
    int p = s->p, r = s->r;
    if (!ij_commutative(op))
        return -1;
    int *disp = ij_mem(s, sizeof *disp * (size_t)(p + 1));
    for (int i = 0; i < p; i++)
        disp[i + 1] = disp[i] + counts[i];
    int n = disp[p];
    MPI_Aint ext = ij_extent(dt);
    char *acc = ij_elems(s, n, dt), *tmp = ij_elems(s, n, dt);
    ij_copy(sbuf == MPI_IN_PLACE ? rbuf : sbuf, n, dt, acc, n, dt);
#define AT(b, i) ((b) + (MPI_Aint)disp[i] * ext)
    ij_front f = IJ_NONE;
    if (ring) {
        for (int st = 0; st + 1 < p; st++) {
            int sb = ij_mod(r - st - 1, p), rb = ij_mod(r - st - 2, p);
            f = ij_sendrecv(s, f, (r + 1) % p, AT(acc, sb), counts[sb], dt, ij_mod(r - 1, p),
                            AT(tmp, rb), counts[rb], dt);
            f = ij_one(ij_reduce(s, f, AT(tmp, rb), AT(acc, rb), counts[rb], dt, op, 0));
        }
        ij_copy_op(s, f, AT(acc, r), counts[r], dt, rbuf, counts[r], dt);
        return 0;
    }
    int pof2 = ij_pof2_floor(p), rem = p - pof2;
    if (r < 2 * rem && r % 2 == 0) { /* hand the vector to r + 1, get my block back */
        int snd = ij_send(s, f, r + 1, acc, n, dt);
        ij_recv(s, ij_one(snd), r + 1, rbuf, counts[r], dt);
        return 0;
    }
    if (r < 2 * rem) {
        int rcv = ij_recv(s, f, r - 1, tmp, n, dt);
        f = ij_one(ij_reduce(s, ij_one(rcv), tmp, acc, n, dt, op, 0));
    }
    /* chunk q of the p' new ranks: blocks 2q, 2q+1 (q < rem) or block q + rem */
    int *pre = ij_mem(s, sizeof *pre * (size_t)(pof2 + 1));
    for (int q = 0; q < pof2; q++)
        pre[q + 1] = q < rem ? disp[2 * q + 2] : disp[q + rem + 1];
    int x = r < 2 * rem ? r / 2 : r - rem, lo = 0, hi = pof2;
    for (int m = pof2 / 2; m > 0; m /= 2) {
        int qn = x ^ m, q = qn < rem ? 2 * qn + 1 : qn + rem, mid = lo + (hi - lo) / 2;
        int klo = x & m ? mid : lo, khi = x & m ? hi : mid;
        int glo = x & m ? lo : mid, ghi = x & m ? mid : hi;
        f = ij_sendrecv(s, f, q, acc + (MPI_Aint)pre[glo] * ext, pre[ghi] - pre[glo], dt, q,
                        tmp + (MPI_Aint)pre[klo] * ext, pre[khi] - pre[klo], dt);
        f = ij_one(ij_reduce(s, f, tmp + (MPI_Aint)pre[klo] * ext, acc + (MPI_Aint)pre[klo] * ext,
                             pre[khi] - pre[klo], dt, op, 0));
        lo = klo;
        hi = khi;
    }
    if (r < 2 * rem)
        ij_send(s, f, r - 1, AT(acc, r - 1), counts[r - 1], dt);
    ij_copy_op(s, f, AT(acc, r), counts[r], dt, rbuf, counts[r], dt);
#undef AT
    return 0;
}
