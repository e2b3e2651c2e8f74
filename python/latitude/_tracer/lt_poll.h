/* Latitude PMPI tracer: folding unsuccessful polls, and the cheap clock that times them
 * (lt_poll.c). */
#ifndef LT_POLL_H
#define LT_POLL_H

#include "lt_state.h"

#pragma GCC visibility push(hidden)

/* ---- folded polls (lt_poll.c) ----
 * Consecutive unsuccessful MPI_Test/Testany/Testsome/Testall/Iprobe calls are folded into one
 * record: the first is formatted but left pending after `used`; the repeats only count; the
 * record is completed ("#@ polls" line) and committed before any other record is written. */
void lt_fold_close(uint64_t end); /* lock held; end: ns the polling stopped */
/* an unsuccessful poll with signature sig, started at tick t0 (0: not timed): 1 if folded
 * into the pending record (nothing to write), 0 if it must be written (then lt_poll_first) */
int lt_poll_again(uint64_t sig, const char *name, uint64_t t0);
/* the start tick of a poll that was not timed but must be written: now less a mean poll */
uint64_t lt_poll_start(void);
/* the poll record just formatted (its ":TEND" at offset tend in the record, its end at end)
 * starts a fold: it stays pending instead of lt_commit */
void lt_poll_first(size_t tend, char *end, uint64_t sig, const char *name, uint64_t t0);
/* A cheap clock for polls: the TSC where the kernel uses it as its clock source, else
 * CLOCK_MONOTONIC; lt_tick_ns converts to the trace's clock (ns), lt_ticks_ns a duration. */
uint64_t lt_tick(void);
uint64_t lt_tick_ns(uint64_t t);
uint64_t lt_ticks_ns(uint64_t d);
void lt_tick_init(void);
/* A poll's start tick. While a fold is open most polls are not timed at all (0): they only
 * count, and 1 in 16 is timed to estimate the time inside them; a clock read costs more
 * than an unsuccessful MPI_Test. */
static inline uint64_t lt_poll_t0(void) { return lt.fold && (++lt.poll_skip & 15) ? 0 : lt_tick(); }

#pragma GCC visibility pop
#endif
