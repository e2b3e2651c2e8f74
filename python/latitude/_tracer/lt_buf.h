/* Latitude PMPI tracer: the record buffer (lt_buf.c), a mapped window of the trace file or
 * a heap buffer (deflated for compressed traces). A record is formatted after `used` and made
 * visible by lt_commit. */
#ifndef LT_BUF_H
#define LT_BUF_H

#include "lt_num.h"
#include "lt_state.h"

#pragma GCC visibility push(hidden)

#define LT_SLACK 1024 /* bytes reserved per record beyond its variable-length lists */

void lt_flush_locked(void);
void lt_reserve_locked(size_t need);
char *lt_ensure(char *p, size_t more); /* room for `more` bytes inside an open record */
int lt_buf_raw(const char *path);        /* a compressed trace: open "<path>.raw" (before open) */
int lt_buf_open(size_t size);            /* after lt.fd is open */
void lt_buf_end(const char *reason, size_t n); /* "#@ end <reason>", final size, close */

/* Make the record (and any extension lines after it) visible to flushes. */
static inline void lt_commit(char *p)
{
    lt.used = (size_t)(p - lt.buf);
    lt.nrec++;
    lt_unlock();
}

#pragma GCC visibility pop
#endif
