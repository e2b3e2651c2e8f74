/* A small open-addressing hash map uint64 -> uint64 (linear probing, backward-shift delete),
 * for the tracer's tables of communicators and outstanding requests. */
#include "lt_map.h"

#include <stdlib.h>

static size_t slot(const struct lt_map *m, uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (m->cap - 1);
}

uint64_t *lt_map_get(struct lt_map *m, uint64_t k)
{
    if (!m->n)
        return NULL;
    for (size_t i = slot(m, k);; i = (i + 1) & (m->cap - 1)) {
        if (!m->full[i])
            return NULL;
        if (m->key[i] == k)
            return &m->val[i];
    }
}

static void map_grow(struct lt_map *m)
{
    struct lt_map old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->n = 0;
    m->key = calloc(m->cap, sizeof *m->key);
    m->val = calloc(m->cap, sizeof *m->val);
    m->full = calloc(m->cap, 1);
    if (!m->key || !m->val || !m->full)
        abort();
    for (size_t i = 0; i < old.cap; i++)
        if (old.full[i])
            lt_map_put(m, old.key[i], old.val[i]);
    free(old.key);
    free(old.val);
    free(old.full);
}

void lt_map_put(struct lt_map *m, uint64_t k, uint64_t v)
{
    uint64_t *e = lt_map_get(m, k);
    if (e) {
        *e = v;
        return;
    }
    if (2 * (m->n + 1) > m->cap)
        map_grow(m);
    size_t i = slot(m, k);
    while (m->full[i])
        i = (i + 1) & (m->cap - 1);
    m->full[i] = 1;
    m->key[i] = k;
    m->val[i] = v;
    m->n++;
}

void lt_map_del(struct lt_map *m, uint64_t k)
{
    if (!m->n)
        return;
    size_t i = slot(m, k);
    while (m->full[i] && m->key[i] != k)
        i = (i + 1) & (m->cap - 1);
    if (!m->full[i])
        return;
    m->full[i] = 0;
    m->n--;
    /* re-place the rest of the probe run so lookups never stop early */
    for (size_t j = (i + 1) & (m->cap - 1); m->full[j]; j = (j + 1) & (m->cap - 1)) {
        uint64_t k2 = m->key[j], v2 = m->val[j];
        m->full[j] = 0;
        m->n--;
        lt_map_put(m, k2, v2);
    }
}

