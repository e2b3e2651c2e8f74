/* The injector's process state and its two ways of speaking: a fatal error that stops every
 * rank, and a warning printed once per key. Every other injector unit builds on these (kept
 * apart from the lifecycle in ij_core.c so that no unit calls back up into it). */
#define _GNU_SOURCE
#include "ij.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct ij_state ij = {.eager_limit = UINT64_MAX, .coll = 1};

uint64_t ij_loop;
uint64_t ij_wait_ticks;
static uint64_t loop_start; /* ticks when the outermost waiting loop began */

int ij_tsc;
double ij_ns_per_tick = 1.0;
uint64_t ij_ticks_per_us = 1000;

uint64_t ij_loop_enter(void)
{
    static uint64_t loops;
    uint64_t outer = ij_loop;
    if (!outer) {
        ij_loop = ++loops;
        loop_start = ij_ticks();
    }
    return outer;
}

void ij_loop_leave(uint64_t outer)
{
    if (!outer && ij_loop)
        ij_wait_ticks += ij_ticks() - loop_start;
    ij_loop = outer;
}

void ij_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "latitude inject (rank %d): ", ij.rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    PMPI_Abort(MPI_COMM_WORLD, 3);
    _exit(3);
}

#define MAX_WARN 32
static const char *warned[MAX_WARN];
static int nwarned;

void ij_warn_once(const char *key, const char *fmt, ...)
{
    for (int i = 0; i < nwarned; i++)
        if (!strcmp(warned[i], key))
            return;
    if (nwarned < MAX_WARN)
        warned[nwarned++] = key;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "latitude inject (rank %d): warning: ", ij.rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
