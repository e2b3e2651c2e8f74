/* CRC-32 of gzip (RFC 1952) for the tracer's DEFLATE encoder (lt_zip.c): with carry-less
 * multiplication where the CPU has it (x86-64's PCLMULQDQ), else eight bytes per step with
 * tables. */
#include "lt_crc.h"

#include <stdlib.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_CLMUL 1
#endif

static uint32_t tab[8][256]; /* tab[k][b]: byte b followed by k zero bytes */
static int clmul;            /* crc_clmul can run here */

void lt_crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        tab[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++)
            tab[k][i] = (tab[k - 1][i] >> 8) ^ tab[0][tab[k - 1][i] & 0xff];
#ifdef HAVE_CLMUL
    clmul = __builtin_cpu_supports("pclmul") && !getenv("LATITUDE_TRACE_NO_CLMUL");
#endif
}

/* CRC-32 of gzip (RFC 1952), the register before and after its final inversion: eight bytes
 * per step with tables */
static uint32_t crc_tables(uint32_t c, const unsigned char *p, size_t n)
{
    for (; n >= 8; p += 8, n -= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        c = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^ tab[5][(lo >> 16) & 0xff] ^
            tab[4][lo >> 24] ^ tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
            tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
    }
    while (n--)
        c = tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    return c;
}

#ifdef HAVE_CLMUL
/* The same 64 bytes at a time with carry-less multiplication (x86's PCLMULQDQ), ~20x faster
 * than the tables: four 128-bit lanes are folded forward over the data, then into one lane,
 * which a Barrett reduction turns into the 32-bit register (the method of Gopal et al., "Fast
 * CRC computation for generic polynomials using PCLMULQDQ", Intel 2009; the constants are
 * powers of x modulo the bit-reflected gzip polynomial). n >= 64 and a multiple of 16. */
__attribute__((target("pclmul,sse2"))) static uint32_t crc_clmul(uint32_t c, const unsigned char *p, size_t n)
{
    const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4), k3k4 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
    const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124), poly = _mm_set_epi64x(0x1f7011641, 0x1db710641);
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)c));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16)), x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
#define FOLD(x, k, data) \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), data)
    for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
        x0 = FOLD(x0, k1k2, _mm_loadu_si128((const __m128i *)p));
        x1 = FOLD(x1, k1k2, _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = FOLD(x2, k1k2, _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = FOLD(x3, k1k2, _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    x0 = FOLD(x0, k3k4, x1);
    x0 = FOLD(x0, k3k4, x2);
    x0 = FOLD(x0, k3k4, x3);
    for (; n >= 16; p += 16, n -= 16)
        x0 = FOLD(x0, k3k4, _mm_loadu_si128((const __m128i *)p));
#undef FOLD
    /* 128 -> 64 bits, then 64 -> 32 */
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, k3k4, 0x10), _mm_srli_si128(x0, 8));
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, low32), k5, 0x00), _mm_srli_si128(x0, 4));
    /* Barrett reduction */
    __m128i q = _mm_clmulepi64_si128(_mm_and_si128(x0, low32), poly, 0x10);
    q = _mm_clmulepi64_si128(_mm_and_si128(q, low32), poly, 0x00);
    return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(_mm_xor_si128(q, x0), 4));
}
#endif

uint32_t lt_crc32(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint32_t c = 0xffffffffu;
#ifdef HAVE_CLMUL
    if (clmul && n >= 64) {
        size_t m = n & ~(size_t)15;
        c = crc_clmul(c, p, m);
        p += m;
        n -= m;
    }
#endif
    return ~crc_tables(c, p, n);
}
