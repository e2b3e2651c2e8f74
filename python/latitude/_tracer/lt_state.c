/* The tracer's per-process state and its lock (lt_state.h). */
#define _GNU_SOURCE
#include "lt_state.h"

#include <pthread.h>

struct lt_state lt = {.fd = -1};

/* recursive: tracking tables lock too, also while a record is open */
static pthread_mutex_t mtx = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void lt_lock_mt(void) { pthread_mutex_lock(&mtx); }

void lt_unlock_mt(void) { pthread_mutex_unlock(&mtx); }
