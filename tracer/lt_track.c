/* What plain liballprof v1 loses and our "#@" extension lines restore:
 * communicator membership in world ranks, the requests a call created/started/completed,
 * and the actual source and tag of wildcard receives. See docs/trace-format.md. */
#include "lt.h"

#include <stdlib.h>

/* ---- a small open-addressing map uint64 -> uint64 (linear probing, backward-shift delete) */
struct map {
    uint64_t *key, *val;
    unsigned char *full;
    size_t cap, n;
};

static size_t slot(const struct map *m, uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (m->cap - 1);
}

static uint64_t *map_get(struct map *m, uint64_t k)
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

static void map_put(struct map *m, uint64_t k, uint64_t v);

static void map_grow(struct map *m)
{
    struct map old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->n = 0;
    m->key = calloc(m->cap, sizeof *m->key);
    m->val = calloc(m->cap, sizeof *m->val);
    m->full = calloc(m->cap, 1);
    if (!m->key || !m->val || !m->full)
        abort();
    for (size_t i = 0; i < old.cap; i++)
        if (old.full[i])
            map_put(m, old.key[i], old.val[i]);
    free(old.key);
    free(old.val);
    free(old.full);
}

static void map_put(struct map *m, uint64_t k, uint64_t v)
{
    uint64_t *e = map_get(m, k);
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

static void map_del(struct map *m, uint64_t k)
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
        map_put(m, k2, v2);
    }
}

/* ---- communicators ---- */
struct comm_ent {
    int n, rn;     /* local and remote (intercommunicator) group sizes */
    int *world;    /* world rank of each local rank, then of each remote rank */
    unsigned seq;  /* earlier communicators with the same membership on this rank */
};
static struct map comms; /* handle -> struct comm_ent * */
static struct map seqs;  /* membership hash -> count */

static int *translate(MPI_Group g, int n, int *out)
{
    static MPI_Group world = MPI_GROUP_NULL;
    if (world == MPI_GROUP_NULL)
        PMPI_Comm_group(MPI_COMM_WORLD, &world);
    int *idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    PMPI_Group_translate_ranks(g, n, idx, world, out);
    free(idx);
    return out;
}

static struct comm_ent *comm_build(MPI_Comm c)
{
    struct comm_ent *e = calloc(1, sizeof *e);
    int inter = 0;
    MPI_Group g, rg;
    PMPI_Comm_test_inter(c, &inter);
    PMPI_Comm_group(c, &g);
    PMPI_Group_size(g, &e->n);
    if (inter) {
        PMPI_Comm_remote_group(c, &rg);
        PMPI_Group_size(rg, &e->rn);
    }
    e->world = malloc(sizeof(int) * (size_t)(e->n + e->rn + 1));
    translate(g, e->n, e->world);
    PMPI_Group_free(&g);
    if (inter) {
        translate(rg, e->rn, e->world + e->n);
        PMPI_Group_free(&rg);
    }
    return e;
}

static void comm_drop(uint64_t h)
{
    uint64_t *v = map_get(&comms, h);
    if (v) {
        struct comm_ent *e = (struct comm_ent *)(uintptr_t)*v;
        free(e->world);
        free(e);
        map_del(&comms, h);
    }
}

static struct comm_ent *comm_lookup(MPI_Comm c)
{
    uint64_t h = LT_HANDLE(c);
    uint64_t *v = map_get(&comms, h);
    if (v)
        return (struct comm_ent *)(uintptr_t)*v;
    struct comm_ent *e = comm_build(c);
    map_put(&comms, h, (uint64_t)(uintptr_t)e);
    return e;
}

void lt_comm_forget(MPI_Comm c)
{
    if (c != MPI_COMM_NULL)
        comm_drop(LT_HANDLE(c));
}

/* Register a communicator just created (its handle may be a reused one) and number it. */
static struct comm_ent *comm_new(MPI_Comm c)
{
    comm_drop(LT_HANDLE(c));
    struct comm_ent *e = comm_lookup(c);
    uint64_t hash = 1469598103934665603ULL ^ (uint64_t)e->n;
    for (int i = 0; i < e->n + e->rn; i++)
        hash = (hash ^ (uint64_t)(uint32_t)e->world[i]) * 1099511628211ULL;
    uint64_t *cnt = map_get(&seqs, hash);
    e->seq = cnt ? (unsigned)*cnt : 0;
    map_put(&seqs, hash, (uint64_t)e->seq + 1);
    return e;
}

size_t lt_comm_ext_bytes(MPI_Comm c)
{
    if (c == MPI_COMM_NULL)
        return 0;
    struct comm_ent *e = comm_new(c);
    return (size_t)(e->n + e->rn) * 12u + 128u;
}

/* world=0-3 style: runs of consecutive ranks collapse to lo-hi */
static char *rank_list(char *p, const int *r, int n)
{
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && r[i] >= 0 && r[j + 1] == r[j] + 1)
            j++;
        if (i)
            *p++ = ',';
        p = lt_i64(p, r[i]);
        if (j > i) {
            *p++ = '-';
            p = lt_i64(p, r[j]);
        }
        i = j + 1;
    }
    return p;
}

/* "#@ comm <handle> seq=<k> world=<list> [remote=<list>]"; call lt_comm_ext_bytes first. */
char *lt_ext_comm(char *p, MPI_Comm c)
{
    if (c == MPI_COMM_NULL)
        return p;
    struct comm_ent *e = comm_lookup(c);
    p = LT_EXT(p, "comm ");
    p = lt_u64(p, LT_HANDLE(c));
    p = LT_LIT(p, " seq=");
    p = lt_u64(p, e->seq);
    p = LT_LIT(p, " world=");
    p = rank_list(p, e->world, e->n);
    if (e->rn) {
        p = LT_LIT(p, " remote=");
        p = rank_list(p, e->world + e->n, e->rn);
    }
    *p++ = '\n';
    return p;
}

void lt_header_ext(void)
{
    size_t need = lt_comm_ext_bytes(MPI_COMM_WORLD) + lt_comm_ext_bytes(MPI_COMM_SELF);
    lt_lock();
    lt_reserve_locked(need + 64);
    char *p = lt.buf + lt.used;
    p = lt_ext_comm(p, MPI_COMM_WORLD);
    p = lt_ext_comm(p, MPI_COMM_SELF);
    lt.used = (size_t)(p - lt.buf);
    lt_unlock();
}

int lt_world_rank(MPI_Comm comm, int rank, int remote)
{
    if (rank < 0 || comm == MPI_COMM_NULL)
        return rank; /* MPI_PROC_NULL, MPI_ANY_SOURCE, ... */
    if (comm == MPI_COMM_WORLD)
        return rank;
    struct comm_ent *e = comm_lookup(comm);
    if (remote && e->rn)
        return rank < e->rn ? e->world[e->n + rank] : rank;
    return rank < e->n ? e->world[rank] : rank;
}

/* ---- requests whose completion adds a line: wildcard receives and MPI_Comm_idup ---- */
struct wild {
    MPI_Comm comm;     /* of the receive */
    MPI_Comm *newcomm; /* MPI_Comm_idup: where the new handle appears at completion */
    int persistent;
};
static struct map wilds; /* request id -> struct wild * */

int lt_is_wild(int src, int tag) { return src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG; }

int lt_wild_count(void) { return (int)wilds.n; }

void lt_wild_add(MPI_Request r, MPI_Comm comm, int persistent)
{
    uint64_t id = lt_req_id(r);
    if (!id)
        return;
    lt_wild_forget(id);
    struct wild *w = malloc(sizeof *w);
    w->comm = comm;
    w->newcomm = NULL;
    w->persistent = persistent;
    map_put(&wilds, id, (uint64_t)(uintptr_t)w);
}

void lt_idup_add(MPI_Request r, MPI_Comm *newcomm)
{
    lt_wild_add(r, MPI_COMM_NULL, 0);
    uint64_t *v = map_get(&wilds, lt_req_id(r));
    if (v)
        ((struct wild *)(uintptr_t)*v)->newcomm = newcomm;
}

int lt_wild_has(uint64_t id) { return id && map_get(&wilds, id) != NULL; }

int lt_wild_take(uint64_t id, MPI_Comm *comm, MPI_Comm **newcomm)
{
    uint64_t *v = id ? map_get(&wilds, id) : NULL;
    if (!v)
        return 0;
    struct wild *w = (struct wild *)(uintptr_t)*v;
    *comm = w->comm;
    *newcomm = w->newcomm;
    if (!w->persistent) {
        free(w);
        map_del(&wilds, id);
    }
    return 1;
}

void lt_wild_forget(uint64_t id)
{
    uint64_t *v = id ? map_get(&wilds, id) : NULL;
    if (v) {
        free((struct wild *)(uintptr_t)*v);
        map_del(&wilds, id);
    }
}

/* ---- extension lines about requests ---- */
char *lt_ext_reqs(char *p, const MPI_Request *reqs, int n)
{
    p = LT_EXT(p, "req ");
    for (int i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        p = lt_u64(p, lt_req_id(reqs[i]));
    }
    if (n <= 0)
        *p++ = '-';
    *p++ = '\n';
    return p;
}

char *lt_ext_done(char *p, const uint64_t *ids, const int *idx, int n)
{
    int any = 0;
    p = LT_EXT(p, "done ");
    for (int i = 0; i < n; i++) {
        uint64_t id = ids[idx ? idx[i] : i];
        if (!id)
            continue;
        if (any++)
            *p++ = ',';
        p = lt_u64(p, id);
    }
    if (!any)
        *p++ = '-';
    *p++ = '\n';
    return p;
}

char *lt_ext_status(char *p, uint64_t req, MPI_Comm comm, const MPI_Status *st)
{
    int cancelled = 0, bytes = 0, inter = 0;
    PMPI_Test_cancelled(st, &cancelled);
    if (cancelled || st->MPI_SOURCE == MPI_PROC_NULL)
        return p;
    PMPI_Get_count(st, MPI_BYTE, &bytes);
    if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD)
        PMPI_Comm_test_inter(comm, &inter);
    p = LT_EXT(p, "status ");
    if (req) {
        p = LT_LIT(p, "req=");
        p = lt_u64(p, req);
        *p++ = ' ';
    }
    p = LT_LIT(p, "src=");
    p = lt_i64(p, lt_world_rank(comm, st->MPI_SOURCE, inter));
    p = LT_LIT(p, " tag=");
    p = lt_i64(p, st->MPI_TAG);
    p = LT_LIT(p, " bytes=");
    p = lt_i64(p, bytes);
    *p++ = '\n';
    return p;
}
