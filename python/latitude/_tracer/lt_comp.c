/* Completion (Wait/Test families), persistent starts, freeing and cancelling.
 * Before the real call each input request is resolved to the call that created it (MPI
 * overwrites completed handles with MPI_REQUEST_NULL); afterwards "#@ done <calls>" names the
 * completed ones, followed by a "#@ status" line for each completed wildcard receive and a
 * "#@ comm" line for each completed MPI_Comm_idup. */
#include "lt_log.h"

#include <stdlib.h>

/* gcc cannot see that the small on-stack arrays are filled before use */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define SMALL LT_SMALL

void lt_comp_init(struct lt_completion *c, const MPI_Request *handles, const void *const *slots,
                  int n)
{
    c->n = n;
    c->wild = 0;
    c->st = NULL;
    c->h = handles;
    c->where = NULL;
    c->slots = slots;
    c->rs = NULL;
}

MPI_Status *lt_comp_save(struct lt_completion *c, const MPI_Request *reqs, int n,
                         MPI_Status *user_st, int many)
{
    MPI_Request *h = c->hsmall;
    if (n > SMALL)
        h = malloc(sizeof(*h) * (size_t)n);
    for (int i = 0; i < n; i++) /* mostly one or two: no library call */
        h[i] = reqs[i];
    lt_comp_init(c, h, NULL, n);
    c->where = reqs;
    c->st = user_st;
    if (lt_reqs_status_needed && user_st == (many ? MPI_STATUSES_IGNORE : MPI_STATUS_IGNORE))
        c->st = !many || n <= SMALL ? c->sts : malloc(sizeof(MPI_Status) * (size_t)n);
    return c->st;
}

void lt_comp_claim(struct lt_completion *c)
{
    c->rs = c->n <= SMALL ? c->small : malloc(sizeof(*c->rs) * (size_t)c->n);
    for (int i = 0; i < c->n; i++) {
        const void *slot = c->slots ? c->slots[i] : (const void *)&c->where[i];
        c->rs[i] = lt_req_claim(c->h[i], slot);
        c->wild |= lt_req_needs_status(c->rs[i]);
    }
}

char *lt_comp_end(char *p, struct lt_completion *c, const int *idx, int ndone, int by_input)
{
    p = lt_ext_calls(p, "done", c->rs, idx, ndone);
    for (int k = 0; k < ndone; k++) {
        int i = idx ? idx[k] : k;
        if (!c->rs[i])
            continue;
        const MPI_Status *st = c->wild && c->st ? &c->st[by_input ? i : k] : NULL;
        p = lt_ext_completed(p, c->rs[i], st);
        lt_req_release(c->rs[i], 1, 0);
        c->rs[i] = NULL;
    }
    for (int i = 0; i < c->n; i++)
        lt_req_release(c->rs[i], 0, 0);
    return p;
}

void lt_comp_free_more(struct lt_completion *c, MPI_Status *user_st)
{
    if (c->rs && c->rs != c->small)
        free(c->rs);
    if (c->h != c->hsmall && !c->slots)
        free((void *)c->h);
    if (c->st != user_st && c->st != c->sts)
        free(c->st);
}


char *lt_ext_start(char *p, const MPI_Request *reqs, const void *const *slots, int count)
{
    struct lt_req *small[SMALL], **rs = small;
    if (count > SMALL)
        rs = malloc(sizeof(*rs) * (size_t)count);
    for (int i = 0; i < count; i++)
        rs[i] = lt_req_claim(reqs[i], slots ? slots[i] : &reqs[i]);
    p = lt_ext_calls(p, "start", rs, NULL, count);
    for (int i = 0; i < count; i++)
        lt_req_release(rs[i], 0, 0);
    if (rs != small)
        free(rs);
    return p;
}

char *lt_ext_gone(char *p, const char *key, struct lt_req *r, int drop)
{
    p = lt_ext_calls(p, key, &r, NULL, 1);
    if (!drop)
        lt_req_cancel(r);
    lt_req_release(r, 0, drop);
    return p;
}
