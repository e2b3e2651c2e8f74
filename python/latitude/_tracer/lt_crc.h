/* Latitude PMPI tracer: CRC-32 of gzip (lt_crc.c). Standard C; x86-64's carry-less
 * multiplication where the CPU has it. */
#ifndef LT_CRC_H
#define LT_CRC_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

void lt_crc_init(void); /* once, before lt_crc32 (LATITUDE_TRACE_NO_CLMUL=1: tables only) */
uint32_t lt_crc32(const void *p, size_t n);

#pragma GCC visibility pop
#endif
