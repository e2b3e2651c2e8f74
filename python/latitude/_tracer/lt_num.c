/* Decimal formatting on the hot path (lt_num.h). */
#include "lt_num.h"

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* v < 10^8 written backwards ending at e; returns its first digit */
static inline char *u32_back(char *e, uint32_t v)
{
    while (v >= 100) {
        unsigned i = (v % 100) * 2;
        v /= 100;
        *--e = digit_pairs[i + 1];
        *--e = digit_pairs[i];
    }
    if (v >= 10) {
        *--e = digit_pairs[v * 2 + 1];
        *--e = digit_pairs[v * 2];
    } else {
        *--e = (char)('0' + v);
    }
    return e;
}

static inline int u32_digits(uint32_t v)
{
    return v < 10000 ? (v < 100 ? 1 + (v >= 10) : 3 + (v >= 1000))
                     : (v < 1000000 ? 5 + (v >= 100000) : 7 + (v >= 10000000));
}

/* exactly 8 digits (zero padded) of v < 10^8 at p */
static inline void u32_8(char *p, uint32_t v)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(p, digit_pairs + (hi / 100) * 2, 2);
    memcpy(p + 2, digit_pairs + (hi % 100) * 2, 2);
    memcpy(p + 4, digit_pairs + (lo / 100) * 2, 2);
    memcpy(p + 6, digit_pairs + (lo % 100) * 2, 2);
}

/* Decimal formatting: 32-bit arithmetic in blocks of 8 digits, written in place. */
static char *u64_digits(char *p, uint64_t v)
{
    if (v < 100000000) {
        char *e = p + u32_digits((uint32_t)v);
        u32_back(e, (uint32_t)v);
        return e;
    }
    uint64_t hi = v / 100000000;
    p = u64_digits(p, hi);
    u32_8(p, (uint32_t)(v - hi * 100000000));
    return p + 8;
}

/* Numbers of nine digits and more are mostly addresses and handles (buffers, requests,
 * communicators), which repeat from record to record: the last ones are kept formatted, one
 * per slot of a small table indexed by a hash of the value. Callers hold the record lock, and
 * signal handlers format small numbers only, which do not use the table. */
#define BIG_SLOTS 64
static struct {
    uint64_t v;
    uint32_t len;
    char text[LT_NUM];
} big[BIG_SLOTS];

char *lt_u64(char *p, uint64_t v)
{
    if (v < 100000000) {
        char *e = p + u32_digits((uint32_t)v);
        u32_back(e, (uint32_t)v);
        return e;
    }
    unsigned slot = (unsigned)((v * 0x9E3779B97F4A7C15ull) >> 58);
    if (big[slot].v != v) {
        big[slot].len = (uint32_t)(u64_digits(big[slot].text, v) - big[slot].text);
        big[slot].v = v;
    }
    memcpy(p, big[slot].text, 20); /* the longest uint64_t; p has room for LT_NUM bytes */
    return p + big[slot].len;
}

/* Timestamps (us since boot) keep their digits above the last four for 10 ms at a time. */
static uint64_t us_high = UINT64_MAX;
static char us_text[LT_NUM];
static uint32_t us_len;

char *lt_us(char *p, uint64_t us)
{
    if (us < 10000)
        return lt_u64(p, us);
    uint64_t high = us / 10000;
    uint32_t low = (uint32_t)(us - high * 10000);
    if (high != us_high) {
        us_len = (uint32_t)(u64_digits(us_text, high) - us_text);
        us_high = high;
    }
    memcpy(p, us_text, 16); /* high < 2^64 / 10^4: at most 16 digits */
    p += us_len;
    memcpy(p, digit_pairs + (low / 100) * 2, 2);
    memcpy(p + 2, digit_pairs + (low % 100) * 2, 2);
    return p + 4;
}
