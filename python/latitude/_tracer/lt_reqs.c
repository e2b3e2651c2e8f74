/* Outstanding requests: handle -> the call that created it (see lt.h). A handle maps to a
 * chain of requests, oldest first; more than one only for the shared pre-completed handles
 * (Open MPI's empty request, MPICH's builtin complete requests). Within a chain the request
 * created into the same variable wins, else the oldest: both choices are exact for the
 * handles MPI libraries actually share, which complete at creation. */
#include "lt.h"

#include <stdlib.h>

struct lt_req {
    uint64_t handle;
    const void *slot;      /* the MPI_Request variable it was created into */
    int64_t call;          /* index of the creating record */
    MPI_Comm wild_comm;    /* wildcard receive: its communicator */
    MPI_Comm *idup;        /* MPI_Comm_idup: where the new communicator appears */
    unsigned char persistent, wild, claimed;
    unsigned char cancelled; /* MPI_Cancel called on its current activation */
    struct lt_req *next;
};

static struct lt_map reqs; /* handle -> struct lt_req * (chain head) */
static struct lt_req *pool; /* free list */
int lt_reqs_status_needed;  /* outstanding requests with needs_status() */

static int needs_status(const struct lt_req *r) { return r->wild || r->cancelled; }

static struct lt_req *req_alloc(void)
{
    struct lt_req *r = pool;
    if (r) {
        pool = r->next;
        return r;
    }
    r = malloc(sizeof *r);
    if (!r)
        abort();
    return r;
}

int lt_is_wild(int src, int tag) { return src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG; }

void lt_req_new(MPI_Request h, const void *slot, int persistent, MPI_Comm wild_comm,
                MPI_Comm *idup)
{
    if (h == MPI_REQUEST_NULL)
        return;
    struct lt_req *r = req_alloc();
    r->handle = LT_HANDLE(h);
    r->slot = slot;
    r->call = lt.nrec;
    r->wild_comm = wild_comm;
    r->wild = wild_comm != MPI_COMM_NULL;
    r->idup = idup;
    r->persistent = (unsigned char)persistent;
    r->claimed = 0;
    r->cancelled = 0;
    r->next = NULL;
    lt_lock();
    lt_reqs_status_needed += r->wild;
    uint64_t *head = lt_map_get(&reqs, r->handle);
    if (!head) {
        lt_map_put(&reqs, r->handle, (uint64_t)(uintptr_t)r);
    } else {
        struct lt_req *q = (struct lt_req *)(uintptr_t)*head;
        while (q->next)
            q = q->next;
        q->next = r;
    }
    lt_unlock();
}

struct lt_req *lt_req_claim(MPI_Request h, const void *slot)
{
    if (h == MPI_REQUEST_NULL)
        return NULL;
    lt_lock();
    uint64_t *head = lt_map_get(&reqs, LT_HANDLE(h));
    struct lt_req *pick = NULL;
    for (struct lt_req *q = head ? (struct lt_req *)(uintptr_t)*head : NULL; q; q = q->next) {
        if (q->claimed)
            continue;
        if (q->slot == slot) {
            pick = q;
            break;
        }
        if (!pick)
            pick = q;
    }
    if (pick)
        pick->claimed = 1;
    lt_unlock();
    return pick;
}

int lt_req_needs_status(const struct lt_req *r) { return r && needs_status(r); }

void lt_req_cancel(struct lt_req *r)
{
    if (!r || r->cancelled)
        return;
    lt_lock();
    lt_reqs_status_needed += !needs_status(r);
    r->cancelled = 1;
    lt_unlock();
}

static void unlink_req(struct lt_req *r)
{
    lt_reqs_status_needed -= needs_status(r);
    uint64_t *head = lt_map_get(&reqs, r->handle);
    struct lt_req *q = head ? (struct lt_req *)(uintptr_t)*head : NULL;
    if (q == r) {
        if (r->next)
            *head = (uint64_t)(uintptr_t)r->next;
        else
            lt_map_del(&reqs, r->handle);
    } else {
        while (q && q->next != r)
            q = q->next;
        if (q)
            q->next = r->next;
    }
    r->next = pool;
    pool = r;
}

void lt_req_release(struct lt_req *r, int completed, int drop)
{
    if (!r)
        return;
    lt_lock();
    r->claimed = 0;
    if (drop || (completed && !r->persistent))
        unlink_req(r);
    lt_unlock();
}

/* "#@ cancelled <k>" */
static char *ext_cancelled(char *p, const struct lt_req *r)
{
    p = lt_ensure(p, 64);
    p = LT_EXT(p, "cancelled ");
    p = lt_i64(p, r->call);
    *p++ = '\n';
    return p;
}

char *lt_ext_completed(char *p, struct lt_req *r, const MPI_Status *st)
{
    if (!r)
        return p;
    if (r->cancelled) { /* this activation is over: a persistent request may be started again */
        int flag = 0;
        if (st)
            PMPI_Test_cancelled(st, &flag);
        lt_lock();
        r->cancelled = 0;
        lt_reqs_status_needed -= !needs_status(r);
        lt_unlock();
        if (flag)
            return ext_cancelled(p, r);
    }
    if (r->idup && *r->idup != MPI_COMM_NULL) {
        p = lt_ensure(p, lt_comm_new(*r->idup));
        p = lt_ext_comm(p, *r->idup);
    } else if (r->wild && st) {
        p = lt_ensure(p, 160);
        p = lt_ext_status(p, r->call, r->wild_comm, st);
    }
    return p;
}

char *lt_ext_calls(char *p, const char *key, struct lt_req *const *rs, const int *idx, int n)
{
    int any = 0;
    p = lt_ensure(p, (size_t)n * 21u + 64u);
    p = LT_EXT(p, "");
    p = lt_str(p, key, strlen(key));
    *p++ = ' ';
    for (int k = 0; k < n; k++) {
        const struct lt_req *r = rs[idx ? idx[k] : k];
        if (!r)
            continue;
        if (any++)
            *p++ = ',';
        p = lt_i64(p, r->call);
    }
    if (!any)
        *p++ = '-';
    *p++ = '\n';
    return p;
}
