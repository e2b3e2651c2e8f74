/* A DEFLATE encoder made for trace text (lt_zip.h): compressed traces are gzip files that every
 * gzip reader decodes, written at a fraction of zlib's cost.
 *
 * Why not zlib. At its fastest level zlib spends 42-46 instructions per byte (hash chains over
 * every position, crc32 on top), ~5 ns per byte and ~0.4 us per record on the CI's VM: as much
 * as formatting the record, and the whole of the compressed trace's extra cost on a code that
 * completes a message every few microseconds. A trace needs far less search, because a line is
 * mostly the line of the same kind before it: the same call name, the same buffer and request
 * addresses, communicator and datatype, timestamps that share their leading digits.
 *
 * Matching. Each line is walked beside a reference line: the latest line of its kind (its bytes
 * up to the first ':' or digit: the call name, "#@ done ", "#@ status call=", ...) within
 * DEFLATE's 32 KiB window, or the one before that if it looks more alike (reference()), else
 * the line before it. Where the two agree for MINM bytes or more
 * a copy (length, distance) is written, elsewhere literals; after a literal both advance by one
 * (a number of the same width that differs in a few digits stays aligned), and a separator that
 * the reference does not have at that place moves the reference to its nearest same separator
 * (a number one digit longer or shorter). There are no hash chains and every copy is checked
 * byte by byte: a poor reference costs bytes, never correctness.
 *
 * Coding. The symbols of a block (BLOCK_SYMS of them, ~100 KiB of text) are counted, and the
 * block is written with Huffman codes made for those counts (a dynamic block, RFC 1951 3.2.7),
 * or stored if that would be smaller. One member: the gzip header, the blocks, an empty final
 * block and the trailer (CRC-32 and size, RFC 1952). */
#include "lt_zip.h"
#include "lt_crc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define WIN 32768u         /* DEFLATE's window: the farthest a copy may reach back */
#define MINM 4u            /* the shortest copy written (a shorter one costs more than literals) */
#define MAXM 258u          /* the longest copy DEFLATE has */
#define BLOCK_SYMS 32768u  /* symbols per DEFLATE block */
#define KINDS 1024u        /* line kinds remembered (a hash of their first bytes) */
#define NLIT 286           /* literal/length symbols: 0-255 bytes, 256 end of block, 257-285 lengths */
#define NDIST 30           /* distance symbols */
#define NCL 19             /* code length symbols */
#define MATCH 0x80000000u  /* a symbol is a copy: MATCH | (length - 3) << 16 | (distance - 1) */

static const uint16_t LBASE[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                   31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t LEXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                   2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t DBASE[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                   33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                   1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t DEXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                   6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
static const uint8_t CL_ORDER[NCL] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

struct code {
    uint16_t bits[NLIT]; /* bit-reversed, as DEFLATE writes Huffman codes */
    uint8_t len[NLIT];
};

static struct {
    uint8_t len_sym[256];           /* length - 3 -> its symbol - 257 */
    uint8_t dist_lo[256], dist_hi[256]; /* distance - 1 -> symbol: below 256, else by (d - 1) >> 7 */
    int ready;
} t;

static struct {
    uint32_t *sym;           /* the current block's symbols */
    unsigned nsym;
    size_t blk_start;        /* input offset of its first symbol */
    uint32_t lf[NLIT], df[NDIST];
    uint32_t kind[KINDS][2]; /* offset + 1 of the latest two lines of each kind in this member */
    unsigned char *out;      /* the member */
    struct bits {            /* bits not yet written, how many, and where they go */
        uint64_t v;
        unsigned n;
        unsigned char *o;
    } b;
} z;

/* ---- tables ---- */
static void tables(void)
{
    for (unsigned s = 0, l = 3; l <= 258; l++) {
        while (s < 28 && l >= LBASE[s + 1])
            s++;
        t.len_sym[l - 3] = (uint8_t)(l == 258 ? 28 : s);
    }
    for (unsigned s = 0, d = 1; d <= 256; d++) {
        while (s < 29 && d >= DBASE[s + 1])
            s++;
        t.dist_lo[d - 1] = (uint8_t)s;
    }
    for (unsigned s = 16, i = 2; i < 256; i++) { /* distances 257..32768, 128 at a time */
        while (s < 29 && (i << 7) + 1 >= DBASE[s + 1])
            s++;
        t.dist_hi[i] = (uint8_t)s;
    }
    lt_crc_init();
    t.ready = 1;
}

static inline unsigned dist_sym(unsigned d1) { return d1 < 256 ? t.dist_lo[d1] : t.dist_hi[d1 >> 7]; }

/* ---- bits ---- */
static inline void put_to(struct bits *b, uint32_t v, unsigned n) /* n <= 32 */
{
    b->v |= (uint64_t)v << b->n;
    b->n += n;
    if (b->n >= 32) {
        unsigned char w[4] = {(unsigned char)b->v, (unsigned char)(b->v >> 8), (unsigned char)(b->v >> 16),
                              (unsigned char)(b->v >> 24)};
        memcpy(b->o, w, 4);
        b->o += 4;
        b->v >>= 32;
        b->n -= 32;
    }
}

static void put(uint32_t v, unsigned n) { put_to(&z.b, v, n); }

static void align(void) /* to the next byte */
{
    for (; z.b.n > 0; z.b.n = z.b.n > 8 ? z.b.n - 8 : 0) {
        *z.b.o++ = (unsigned char)z.b.v;
        z.b.v >>= 8;
    }
    z.b.v = 0;
}

static void put_bytes(const void *p, size_t n)
{
    memcpy(z.b.o, p, n);
    z.b.o += n;
}

static void put_le32(uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put_bytes(b, 4);
}

/* ---- Huffman codes ---- */
struct weight {
    uint32_t w;
    uint16_t sym;
};

static void sort_weights(struct weight *a, unsigned n) /* ascending; n <= NLIT, no library call */
{
    static const unsigned gaps[] = {57, 23, 10, 4, 1};
    for (unsigned g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
        for (unsigned i = gaps[g]; i < n; i++) {
            struct weight x = a[i];
            unsigned j = i;
            for (; j >= gaps[g] && a[j - gaps[g]].w > x.w; j -= gaps[g])
                a[j] = a[j - gaps[g]];
            a[j] = x;
        }
}

/* Code lengths of an optimal prefix code for ascending weights w[0..n) (n >= 2), in place:
 * w[i] becomes the length of item i (Moffat and Katajainen's in-place method). */
static void optimal_lengths(uint32_t *w, int n)
{
    int root = 0, leaf = 2, next;
    w[0] += w[1];
    for (next = 1; next < n - 1; next++) { /* internal nodes: weights, then parent pointers */
        if (leaf >= n || w[root] < w[leaf]) {
            w[next] = w[root];
            w[root++] = (uint32_t)next;
        } else {
            w[next] = w[leaf++];
        }
        if (leaf >= n || (root < next && w[root] < w[leaf])) {
            w[next] += w[root];
            w[root++] = (uint32_t)next;
        } else {
            w[next] += w[leaf++];
        }
    }
    w[n - 2] = 0; /* depths of the internal nodes */
    for (next = n - 3; next >= 0; next--)
        w[next] = w[w[next]] + 1;
    int avail = 1, used = 0;
    uint32_t depth = 0;
    root = n - 2;
    next = n - 1;
    while (avail > 0) { /* depths of the leaves */
        while (root >= 0 && w[root] == depth) {
            used++;
            root--;
        }
        while (avail > used) {
            w[next--] = depth;
            avail--;
        }
        avail = 2 * used;
        depth++;
        used = 0;
    }
}

/* Lengths (at most maxlen bits) and canonical codes for n symbols of frequencies f. */
static void make_code(const uint32_t *f, int n, unsigned maxlen, uint16_t *bits, uint8_t *len)
{
    struct weight a[NLIT];
    uint32_t w[NLIT];
    unsigned count[NLIT + 1] = {0};
    int m = 0;
    for (int i = 0; i < n; i++) {
        len[i] = 0;
        if (f[i]) {
            a[m].w = f[i];
            a[m++].sym = (uint16_t)i;
        }
    }
    if (m == 1)
        len[a[0].sym] = 1;
    if (m >= 2) {
        sort_weights(a, (unsigned)m);
        for (int i = 0; i < m; i++)
            w[i] = a[i].w;
        optimal_lengths(w, m);
        for (int i = 0; i < m; i++)
            count[w[i] < maxlen ? w[i] : maxlen]++;
        /* lengths cut to maxlen over-fill the code: lengthen shorter codes until it fits */
        uint32_t kraft = 0;
        for (unsigned l = 1; l <= maxlen; l++)
            kraft += count[l] << (maxlen - l);
        for (; kraft > 1u << maxlen; kraft--) {
            count[maxlen]--;
            for (unsigned l = maxlen - 1; l > 0; l--)
                if (count[l]) {
                    count[l]--;
                    count[l + 1] += 2;
                    break;
                }
        }
        for (unsigned l = 1, j = (unsigned)m; l <= maxlen; l++) /* shortest to the most frequent */
            for (unsigned c = count[l]; c > 0; c--)
                len[a[--j].sym] = (uint8_t)l;
    }
    unsigned next[16] = {0}, nlen[16] = {0};
    for (int i = 0; i < n; i++)
        nlen[len[i]]++;
    nlen[0] = 0;
    for (unsigned l = 1, c = 0; l < 16; l++)
        next[l] = c = (c + nlen[l - 1]) << 1;
    for (int i = 0; i < n; i++) {
        unsigned c = next[len[i]]++, r = 0;
        for (unsigned k = 0; k < len[i]; k++, c >>= 1)
            r = (r << 1) | (c & 1);
        bits[i] = (uint16_t)r;
    }
}

/* ---- a block ---- */
struct header {
    uint8_t lens[NLIT + NDIST];
    uint8_t sym[NLIT + NDIST], extra[NLIT + NDIST]; /* run-length coded lengths */
    int nsym, hlit, hdist, hclen;
    uint32_t cf[NCL];
    uint16_t cbits[NCL];
    uint8_t clen[NCL];
};

static void run(struct header *h, uint8_t s, uint8_t extra)
{
    h->sym[h->nsym] = s;
    h->extra[h->nsym++] = extra;
    h->cf[s]++;
}

/* The code lengths of both codes, run-length coded (RFC 1951 3.2.7); returns the header's bits. */
static uint64_t make_header(struct header *h, const struct code *lit, const struct code *dist)
{
    memset(h->cf, 0, sizeof h->cf);
    h->nsym = 0;
    for (h->hlit = NLIT; h->hlit > 257 && !lit->len[h->hlit - 1]; h->hlit--)
        ;
    for (h->hdist = NDIST; h->hdist > 1 && !dist->len[h->hdist - 1]; h->hdist--)
        ;
    memcpy(h->lens, lit->len, (size_t)h->hlit);
    memcpy(h->lens + h->hlit, dist->len, (size_t)h->hdist);
    for (int i = 0, total = h->hlit + h->hdist; i < total;) {
        uint8_t v = h->lens[i];
        int n = 1;
        while (i + n < total && h->lens[i + n] == v)
            n++;
        i += n;
        if (v == 0) {
            for (; n >= 11; n -= n < 138 ? n : 138)
                run(h, 18, (uint8_t)((n < 138 ? n : 138) - 11));
            if (n >= 3) {
                run(h, 17, (uint8_t)(n - 3));
                n = 0;
            }
        } else {
            run(h, v, 0);
            for (n--; n >= 3; n -= n < 6 ? n : 6)
                run(h, 16, (uint8_t)((n < 6 ? n : 6) - 3));
        }
        while (n-- > 0)
            run(h, v, 0);
    }
    make_code(h->cf, NCL, 7, h->cbits, h->clen);
    for (h->hclen = NCL; h->hclen > 4 && !h->clen[CL_ORDER[h->hclen - 1]]; h->hclen--)
        ;
    uint64_t bits = 3 + 14 + 3 * (uint64_t)h->hclen;
    for (int i = 0; i < h->nsym; i++)
        bits += h->clen[h->sym[i]] + (h->sym[i] == 16 ? 2 : h->sym[i] == 17 ? 3 : h->sym[i] == 18 ? 7 : 0);
    return bits;
}

static void put_header(const struct header *h)
{
    put(2 << 1, 3); /* not final, dynamic codes */
    put((uint32_t)(h->hlit - 257), 5);
    put((uint32_t)(h->hdist - 1), 5);
    put((uint32_t)(h->hclen - 4), 4);
    for (int i = 0; i < h->hclen; i++)
        put(h->clen[CL_ORDER[i]], 3);
    for (int i = 0; i < h->nsym; i++) {
        uint8_t s = h->sym[i];
        put(h->cbits[s], h->clen[s]);
        if (s >= 16)
            put(h->extra[i], s == 16 ? 2 : s == 17 ? 3 : 7);
    }
}

static void put_symbols(const struct code *lit, const struct code *dist)
{
    struct bits b = z.b; /* in registers */
    uint32_t litc[256], lenc[256]; /* code | bits << 24, the length's extra bits included */
    for (unsigned i = 0; i < 256; i++) {
        unsigned ls = t.len_sym[i], c = 257 + ls;
        litc[i] = lit->bits[i] | (uint32_t)lit->len[i] << 24;
        lenc[i] = (lit->bits[c] | (i + 3 - LBASE[ls]) << lit->len[c]) | (uint32_t)(lit->len[c] + LEXTRA[ls]) << 24;
    }
    for (unsigned i = 0; i < z.nsym; i++) {
        uint32_t s = z.sym[i];
        if (!(s & MATCH)) {
            put_to(&b, litc[s] & 0xffffff, litc[s] >> 24);
            continue;
        }
        uint32_t l = lenc[(s >> 16) & 0xff];
        unsigned d1 = s & 0xffff, ds = dist_sym(d1);
        put_to(&b, l & 0xffffff, l >> 24);
        put_to(&b, dist->bits[ds] | (uint32_t)(d1 + 1 - DBASE[ds]) << dist->len[ds], dist->len[ds] + DEXTRA[ds]);
    }
    put_to(&b, lit->bits[256], lit->len[256]);
    z.b = b;
}

static void put_stored(const unsigned char *p, size_t n)
{
    do {
        size_t k = n < 65535 ? n : 65535;
        put(0, 3); /* not final, stored */
        align();
        unsigned char len[4] = {(unsigned char)k, (unsigned char)(k >> 8), (unsigned char)~k,
                                (unsigned char)(~k >> 8)};
        put_bytes(len, 4);
        put_bytes(p, k);
        p += k;
        n -= k;
    } while (n > 0);
}

/* Write the block of the symbols collected since blk_start, whose text ends at `end`. */
static void end_block(const unsigned char *in, size_t end)
{
    if (z.nsym == 0)
        return;
    static struct code lit, dist;
    static struct header h;
    z.lf[256]++; /* end of block */
    for (int d = 0; d < 2; d++) /* two distance codes at least: a complete code for every decoder */
        z.df[d] += !z.df[d];
    make_code(z.lf, NLIT, 15, lit.bits, lit.len);
    make_code(z.df, NDIST, 15, dist.bits, dist.len);
    uint64_t bits = make_header(&h, &lit, &dist);
    for (int i = 0; i < NLIT; i++)
        bits += (uint64_t)z.lf[i] * (lit.len[i] + (i > 256 ? LEXTRA[i - 257] : 0));
    for (int i = 0; i < NDIST; i++)
        bits += (uint64_t)z.df[i] * (dist.len[i] + DEXTRA[i]);
    size_t n = end - z.blk_start;
    if (bits < 8 * (n + 5 * (n / 65535 + 1))) {
        put_header(&h);
        put_symbols(&lit, &dist);
    } else {
        put_stored(in + z.blk_start, n);
    }
    z.nsym = 0;
    z.blk_start = end;
    memset(z.lf, 0, sizeof z.lf);
    memset(z.df, 0, sizeof z.df);
}

/* ---- matching ---- */
/* bytes a[0..] and b[0..] (b < a) have in common, at most max; a[0..limit) may be read */
static inline unsigned common(const unsigned char *a, const unsigned char *b, unsigned max, const unsigned char *limit)
{
    unsigned n = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; a + n + 8 <= limit; n += 8) {
        uint64_t x, y;
        memcpy(&x, a + n, 8);
        memcpy(&y, b + n, 8);
        if (x != y) {
            n += (unsigned)__builtin_ctzll(x ^ y) >> 3;
            return n < max ? n : max;
        }
        if (n + 8 >= max)
            return max;
    }
#endif
    while (n < max && a[n] == b[n])
        n++;
    return n;
}

/* the separators a reference re-aligns at */
static const unsigned char SEPARATOR[256] = {[' '] = 1, [','] = 1, [':'] = 1, ['='] = 1};

/* the reference position after its separator c nearest to j - 1 (j itself if none near) */
static size_t realign(const unsigned char *in, size_t j, size_t rs, size_t limit, unsigned char c)
{
    for (size_t d = 1; d <= 24; d++) {
        if (j - 1 + d < limit && in[j - 1 + d] == c)
            return j + d;
        if (j - 1 >= rs + d && in[j - 1 - d] == c)
            return j - d;
    }
    return j;
}

/* The kind of the line at p: a hash of its first bytes (at most 16) up to the first ':', digit
 * or newline: the call name, "#@ done ", "#@ status call=", ... */
static unsigned line_kind(const unsigned char *p, const unsigned char *end, const unsigned char *limit)
{
    uint64_t w[2] = {0, 0};
#ifdef __SSE2__
    if (limit - p >= 16) { /* the bytes after a short line's end are not looked at */
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i d = _mm_sub_epi8(v, _mm_set1_epi8('0')); /* ':' is '0' + 10 */
        __m128i stop = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(10)), d),
                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
        unsigned n = (unsigned)__builtin_ctz((unsigned)_mm_movemask_epi8(stop) | 0x10000u);
        __m128i keep = _mm_cmpgt_epi8(_mm_set1_epi8((char)n),
                                      _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        _mm_storeu_si128((__m128i *)w, _mm_and_si128(v, keep));
    } else
#endif
    {
        unsigned char b[16] = {0};
        for (int k = 0; k < 16 && p + k < end && p[k] != ':' && p[k] != '\n' && (unsigned)(p[k] - '0') > 9; k++)
            b[k] = p[k];
        memcpy(w, b, 16);
    }
    uint64_t h = (w[0] * 0x9E3779B97F4A7C15ull) ^ (w[1] * 0xC2B2AE3D27D4EB4Full);
    return (unsigned)(h >> 40) & (KINDS - 1);
}

/* The reference of the line in[ls..le) of kind k: the latest line of its kind within the
 * window, or the one before it if it looks more alike (lines of one kind that alternate, such
 * as sends from two buffers: more equal 8-byte words at the same offsets in the first 80
 * bytes); else the line before (prev). */
static size_t reference(const unsigned char *in, size_t ls, size_t le, unsigned k, size_t prev)
{
    size_t a = z.kind[k][0] - 1, b = z.kind[k][1] - 1;
    if (!z.kind[k][0] || ls - a > WIN)
        return prev;
    if (!z.kind[k][1] || ls - b > WIN)
        return a;
    unsigned like_a = 0, like_b = 0;
    for (size_t w = 0; w + 8 <= le - ls && w < 80; w += 8) {
        uint64_t x, ya, yb;
        memcpy(&x, in + ls + w, 8);
        memcpy(&ya, in + a + w, 8);
        memcpy(&yb, in + b + w, 8);
        like_a += x == ya;
        like_b += x == yb;
    }
    return like_b > like_a ? b : a;
}

/* The line in[ls..le) against the reference line starting at rs (rs == ls: none). */
static void encode_line(const unsigned char *in, size_t ls, size_t le, size_t rs, size_t n)
{
    uint32_t *sym = z.sym; /* the symbol count in a register */
    unsigned nsym = z.nsym;
    for (size_t i = ls, j = rs; i < le;) {
        if (nsym == BLOCK_SYMS) {
            z.nsym = nsym;
            end_block(in, i);
            nsym = 0;
        }
        if (j < i && in[i] == in[j] && i - j <= WIN) {
            size_t room = le - i;
            unsigned m = common(in + i, in + j, room < MAXM ? (unsigned)room : MAXM, in + n);
            if (m >= MINM) { /* a copy */
                unsigned d = (unsigned)(i - j);
                sym[nsym++] = MATCH | (m - 3) << 16 | (d - 1);
                z.lf[257 + t.len_sym[m - 3]]++;
                z.df[dist_sym(d - 1)]++;
                i += m;
                j += m;
                continue;
            }
        }
        unsigned char c = in[i++]; /* a literal */
        sym[nsym++] = c;
        z.lf[c]++;
        if (SEPARATOR[c] && in[j] != c && rs < ls)
            j = realign(in, j + 1, rs, ls, c);
        else
            j++;
    }
    z.nsym = nsym;
}

/* ---- a member ---- */
int lt_zip_open(size_t max_in)
{
    if (!t.ready)
        tables();
    free(z.sym);
    free(z.out);
    /* every block is at most its stored size: its text, 5 bytes per 65535 and 1 to align; a
     * block holds BLOCK_SYMS symbols of a byte or more, so there are at most max_in / BLOCK_SYMS
     * + 1 blocks, and the gzip header, final block and trailer take 20 bytes */
    size_t cap = max_in + 6 * (max_in / BLOCK_SYMS + max_in / 65535 + 2) + 64;
    z.sym = malloc(sizeof(*z.sym) * BLOCK_SYMS);
    z.out = malloc(cap);
    return z.sym && z.out ? 0 : -1;
}

size_t lt_zip_member(const char *text, size_t n, const unsigned char **out)
{
    static const unsigned char gzip_header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    const unsigned char *in = (const unsigned char *)text;
    z.b.o = z.out;
    z.b.v = 0;
    z.b.n = 0;
    z.nsym = 0;
    z.blk_start = 0;
    memset(z.lf, 0, sizeof z.lf);
    memset(z.df, 0, sizeof z.df);
    memset(z.kind, 0, sizeof z.kind);
    put_bytes(gzip_header, sizeof gzip_header);
    size_t prev = 0;
    for (size_t ls = 0; ls < n;) {
        const unsigned char *nl = memchr(in + ls, '\n', n - ls);
        size_t le = nl ? (size_t)(nl - in) + 1 : n;
        unsigned k = line_kind(in + ls, in + le, in + n);
        encode_line(in, ls, le, reference(in, ls, le, k, prev), n);
        z.kind[k][1] = z.kind[k][0];
        z.kind[k][0] = (uint32_t)ls + 1;
        prev = ls;
        ls = le;
    }
    end_block(in, n);
    put(1 | 1 << 1, 3 + 7); /* the final block: empty, fixed codes (end of block is 7 zero bits) */
    align();
    put_le32(lt_crc32(in, n));
    put_le32((uint32_t)n);
    *out = z.out;
    return (size_t)(z.b.o - z.out);
}
