/* Latitude PMPI tracer: a DEFLATE encoder made for trace text (lt_zip.c). It turns a buffer of
 * whole lines into one gzip member, which gunzip, zcat, Python's gzip and Rust's flate2 decode
 * (a file of several members decodes to their texts one after the other). Standard C only: it
 * uses nothing else of the tracer. */
#ifndef LT_ZIP_H
#define LT_ZIP_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

/* Allocate the encoder for inputs of up to max_in bytes; 0 on success. */
int lt_zip_open(size_t max_in);
/* Compress in[0..n) (n <= max_in) into one gzip member; *out points to it (valid until the next
 * call). No allocation, no library call: signal handlers may call it once lt_zip_open returned. */
size_t lt_zip_member(const char *in, size_t n, const unsigned char **out);

#pragma GCC visibility pop
#endif
