/* Completion (Wait/Test families), persistent requests, freeing and cancelling.
 * Before the real call each input request is resolved to the call that created it (MPI
 * overwrites completed handles with MPI_REQUEST_NULL); afterwards "#@ done <calls>" names the
 * completed ones, followed by a "#@ status" line for each completed wildcard receive and a
 * "#@ comm" line for each completed MPI_Comm_idup. */
#include "lt_log.h"

#include <stdlib.h>

#define SMALL LT_SMALL

/* Resolve the n requests in reqs[] (slots: where each lives; Fortran passes its own). */
void lt_comp_begin(struct lt_completion *c, const MPI_Request *reqs, const void *const *slots,
                   int n)
{
    c->n = n;
    c->wild = 0;
    c->st = NULL;
    c->rs = n <= SMALL ? c->small : malloc(sizeof(*c->rs) * (size_t)n);
    for (int i = 0; i < n; i++) {
        c->rs[i] = lt_req_claim(reqs[i], slots ? slots[i] : &reqs[i]);
        c->wild |= lt_req_wild(c->rs[i]);
    }
}

/* The statuses to hand to MPI: the user's, or ours when the user ignores them but a
 * wildcard receive may complete. */
static MPI_Status *comp_statuses(struct lt_completion *c, MPI_Status *user_st, int many)
{
    c->st = user_st;
    if (c->wild && user_st == (many ? MPI_STATUSES_IGNORE : MPI_STATUS_IGNORE))
        c->st = !many || c->n <= SMALL ? c->sts : malloc(sizeof(MPI_Status) * (size_t)c->n);
    return c->st;
}

/* Lines for the completed requests (idx[k] for k < ndone, or the first ndone inputs when idx
 * is NULL); statuses are indexed by input position (by_input) or by k. Releases them all. */
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

void lt_comp_free(struct lt_completion *c, MPI_Status *user_st)
{
    if (c->rs != c->small)
        free(c->rs);
    if (c->st != user_st && c->st != c->sts)
        free(c->st);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Wait(req, status);
    struct lt_completion c;
    lt_comp_begin(&c, req, NULL, 1);
    comp_statuses(&c, status, 0);
    int rc = PMPI_Wait(req, c.st);
    char *p = lt_open("MPI_Wait", t0, 0);
    p = lt_ptr(p, req);
    p = lt_ptr(p, status);
    lt_commit(lt_comp_end(lt_end(p), &c, NULL, 1, 1));
    lt_comp_free(&c, status);
    return rc;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Waitall(count, reqs, statuses);
    struct lt_completion c;
    lt_comp_begin(&c, reqs, NULL, count);
    comp_statuses(&c, statuses, 1);
    int rc = PMPI_Waitall(count, reqs, c.st);
    char *p = lt_open("MPI_Waitall", t0, 0);
    p = lt_int(p, count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, statuses);
    lt_commit(lt_comp_end(lt_end(p), &c, NULL, count, 1));
    lt_comp_free(&c, statuses);
    return rc;
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Waitany(count, reqs, index, status);
    struct lt_completion c;
    lt_comp_begin(&c, reqs, NULL, count);
    comp_statuses(&c, status, 0);
    int rc = PMPI_Waitany(count, reqs, index, c.st);
    char *p = lt_open("MPI_Waitany", t0, 0);
    p = lt_int(p, count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, index);
    p = lt_ptr(p, status);
    int n = *index == MPI_UNDEFINED ? 0 : 1;
    lt_commit(lt_comp_end(lt_end(p), &c, index, n, 0));
    lt_comp_free(&c, status);
    return rc;
}

/* MPI_Waitsome and MPI_Testsome: same arguments, same record; only the call differs. */
typedef int (*some_fn)(int, MPI_Request[], int *, int[], MPI_Status[]);
static int some(const char *name, some_fn pmpi, int incount, MPI_Request reqs[], int *outcount,
                int indices[], MPI_Status statuses[])
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return pmpi(incount, reqs, outcount, indices, statuses);
    struct lt_completion c;
    lt_comp_begin(&c, reqs, NULL, incount);
    comp_statuses(&c, statuses, 1);
    int rc = pmpi(incount, reqs, outcount, indices, c.st);
    char *p = lt_open_n(name, strlen(name), t0, 0); /* lt_open needs a literal */
    p = lt_int(p, incount);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, outcount);
    p = lt_ptr(p, indices);
    p = lt_ptr(p, statuses);
    int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    lt_commit(lt_comp_end(lt_end(p), &c, indices, n, 0));
    lt_comp_free(&c, statuses);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    return some("MPI_Waitsome", PMPI_Waitsome, incount, reqs, outcount, indices, statuses);
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Test(req, flag, status);
    struct lt_completion c;
    lt_comp_begin(&c, req, NULL, 1);
    comp_statuses(&c, status, 0);
    int rc = PMPI_Test(req, flag, c.st);
    char *p = lt_open("MPI_Test", t0, 0);
    p = lt_ptr(p, req);
    p = lt_ptr(p, flag);
    p = lt_ptr(p, status);
    lt_commit(lt_comp_end(lt_end(p), &c, NULL, *flag ? 1 : 0, 1));
    lt_comp_free(&c, status);
    return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Testall(count, reqs, flag, statuses);
    struct lt_completion c;
    lt_comp_begin(&c, reqs, NULL, count);
    comp_statuses(&c, statuses, 1);
    int rc = PMPI_Testall(count, reqs, flag, c.st);
    char *p = lt_open("MPI_Testall", t0, 0);
    p = lt_int(p, count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, flag);
    p = lt_ptr(p, statuses);
    lt_commit(lt_comp_end(lt_end(p), &c, NULL, *flag ? count : 0, 1));
    lt_comp_free(&c, statuses);
    return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Testany(count, reqs, index, flag, status);
    struct lt_completion c;
    lt_comp_begin(&c, reqs, NULL, count);
    comp_statuses(&c, status, 0);
    int rc = PMPI_Testany(count, reqs, index, flag, c.st);
    char *p = lt_open("MPI_Testany", t0, 0);
    p = lt_int(p, count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, index);
    p = lt_ptr(p, flag);
    p = lt_ptr(p, status);
    int n = *flag && *index != MPI_UNDEFINED ? 1 : 0;
    lt_commit(lt_comp_end(lt_end(p), &c, index, n, 0));
    lt_comp_free(&c, status);
    return rc;
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    return some("MPI_Testsome", PMPI_Testsome, incount, reqs, outcount, indices, statuses);
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Request_get_status(req, flag, status);
    LT_REC("MPI_Request_get_status", t0, p = lt_hdl(p, req); p = lt_ptr(p, flag);
           p = lt_ptr(p, status));
    return rc;
}

/* ---- persistent requests, freeing, cancelling: "#@ start|free|cancel <calls>" ---- */
void lt_log_start(const char *name, size_t n, uint64_t t0, int all, int count,
                  const void *reqs_addr, const MPI_Request *reqs, const void *const *slots)
{
    if (!lt_active())
        return;
    struct lt_req *small[SMALL], **rs = small;
    if (count > SMALL)
        rs = malloc(sizeof(*rs) * (size_t)count);
    for (int i = 0; i < count; i++)
        rs[i] = lt_req_claim(reqs[i], slots ? slots[i] : &reqs[i]);
    char *p = lt_open_n(name, n, t0, 0);
    if (all)
        p = lt_int(p, count);
    p = lt_ptr(p, reqs_addr);
    p = lt_ext_calls(lt_end(p), "start", rs, NULL, count);
    for (int i = 0; i < count; i++)
        lt_req_release(rs[i], 0, 0);
    lt_commit(p);
    if (rs != small)
        free(rs);
}

void lt_log_request_gone(const char *name, size_t n, const char *key, uint64_t t0,
                         const void *reqaddr, struct lt_req *r, int drop)
{
    if (!lt_active())
        return;
    char *p = lt_open_n(name, n, t0, 0);
    p = lt_ptr(p, reqaddr);
    p = lt_ext_calls(lt_end(p), key, &r, NULL, 1);
    lt_req_release(r, 0, drop);
    lt_commit(p);
}

int MPI_Start(MPI_Request *req)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Start(req);
    lt_log_start(LT_NAME("MPI_Start"), t0, 0, 1, req, req, NULL);
    return rc;
}

int MPI_Startall(int count, MPI_Request reqs[])
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Startall(count, reqs);
    lt_log_start(LT_NAME("MPI_Startall"), t0, 1, count, reqs, reqs, NULL);
    return rc;
}

int MPI_Request_free(MPI_Request *req)
{
    uint64_t t0 = lt_now();
    struct lt_req *r = lt_active() ? lt_req_claim(*req, req) : NULL;
    int rc = PMPI_Request_free(req);
    lt_log_request_gone(LT_NAME("MPI_Request_free"), "free", t0, req, r, 1);
    return rc;
}

int MPI_Cancel(MPI_Request *req)
{
    uint64_t t0 = lt_now();
    struct lt_req *r = lt_active() ? lt_req_claim(*req, req) : NULL;
    int rc = PMPI_Cancel(req);
    lt_log_request_gone(LT_NAME("MPI_Cancel"), "cancel", t0, req, r, 0);
    return rc;
}
