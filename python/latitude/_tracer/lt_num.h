/* Latitude PMPI tracer: the clock and number formatting every record is made of (lt_num.c),
 * at the bottom of the tracer's headers: it uses nothing else of the tracer. */
#ifndef LT_NUM_H
#define LT_NUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#pragma GCC visibility push(hidden)

/* ---- clock ---- */
static inline uint64_t lt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- number formatting (no printf on the hot path) ---- */
#define LT_NUM 24 /* upper bound on one formatted number incl. separator: writers may fill it */
char *lt_u64(char *p, uint64_t v);
char *lt_us(char *p, uint64_t us); /* the same for timestamps (us), whose high digits repeat */
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
    p = lt_us(p, ns / 1000u);
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

/* ---- extension lines ("#@ ...") ---- */
static inline char *lt_ext(char *p, const char *s, size_t n)
{
    p = LT_LIT(p, "#@ ");
    return lt_str(p, s, n);
}
#define LT_EXT(p, s) lt_ext((p), (s), sizeof(s) - 1)

static inline uint64_t lt_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}

#pragma GCC visibility pop
#endif
