/* Latitude PMPI tracer: a hash map uint64 -> uint64 (lt_map.c), shared with the injector. */
#ifndef LT_MAP_H
#define LT_MAP_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* ---- hash map uint64 -> uint64 (lt_map.c) ---- */
struct lt_map {
    uint64_t *key, *val;
    unsigned char *full;
    size_t cap, n;
};
uint64_t *lt_map_get(struct lt_map *m, uint64_t k); /* NULL if absent */
void lt_map_put(struct lt_map *m, uint64_t k, uint64_t v);
void lt_map_del(struct lt_map *m, uint64_t k);

#pragma GCC visibility pop
#endif
