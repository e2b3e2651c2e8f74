/* Completion (Wait/Test families), persistent requests, freeing and cancelling.
 * The handles of the input requests are captured before the call because MPI overwrites
 * completed ones with MPI_REQUEST_NULL; "#@ done" then names exactly the requests the call
 * completed, independent of where the application keeps its request variables. */
#include "lt_log.h"

#include <stdlib.h>

#define SMALL 64

static uint64_t *capture(const MPI_Request *reqs, int n, uint64_t *small)
{
    uint64_t *ids = n <= SMALL ? small : malloc(sizeof(uint64_t) * (size_t)n);
    for (int i = 0; i < n; i++)
        ids[i] = lt_req_id(reqs[i]);
    return ids;
}

static void release(uint64_t *ids, uint64_t *small)
{
    if (ids != small)
        free(ids);
}

int lt_any_wild(const uint64_t *ids, int n)
{
    if (!lt_wild_count())
        return 0;
    for (int i = 0; i < n; i++)
        if (lt_wild_has(ids[i]))
            return 1;
    return 0;
}

/* "#@ done ...", then a "#@ status" line for each completed wildcard receive and a
 * "#@ comm" line for each completed MPI_Comm_idup. */
char *lt_ext_completed(char *p, const struct lt_done *d)
{
    p = lt_ensure(p, LT_REQ_BYTES(d->n));
    p = lt_ext_done(p, d->ids, d->idx, d->n);
    if (!lt_wild_count())
        return p;
    for (int k = 0; k < d->n; k++) {
        int i = d->idx ? d->idx[k] : k;
        MPI_Comm comm, *newcomm;
        if (!d->ids[i] || !lt_wild_take(d->ids[i], &comm, &newcomm))
            continue;
        if (newcomm && *newcomm != MPI_COMM_NULL) {
            p = lt_ensure(p, lt_comm_ext_bytes(*newcomm));
            p = lt_ext_comm(p, *newcomm);
        } else if (!newcomm && d->st) {
            p = lt_ensure(p, 160);
            p = lt_ext_status(p, d->ids[i], comm, &d->st[d->st_by_input ? i : k]);
        }
    }
    return p;
}

/* statuses for MPI: a local array when the user ignores them but a wildcard may complete */
static MPI_Status *statuses_for(MPI_Status *user, int wild, int n, MPI_Status *small)
{
    if (!wild || user != MPI_STATUSES_IGNORE)
        return user;
    return n <= SMALL ? small : malloc(sizeof(MPI_Status) * (size_t)n);
}

static void statuses_release(MPI_Status *st, MPI_Status *user, MPI_Status *small)
{
    if (st != user && st != small)
        free(st);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    uint64_t id = lt_req_id(*req);
    int wild = lt_active() && lt_any_wild(&id, 1);
    MPI_Status tmp, *st = wild && status == MPI_STATUS_IGNORE ? &tmp : status;
    int rc = PMPI_Wait(req, st);
    if (lt_active()) {
        char *p = lt_open("MPI_Wait", t0, 0);
        p = lt_ptr(p, req);
        p = lt_ptr(p, status);
        struct lt_done d = {&id, NULL, 1, wild ? st : NULL, 1};
        lt_commit(lt_ext_completed(lt_end(p), &d));
    }
    return rc;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Waitall(count, reqs, statuses);
    uint64_t small[SMALL], *ids = capture(reqs, count, small);
    MPI_Status sts[SMALL];
    int wild = lt_any_wild(ids, count);
    MPI_Status *st = statuses_for(statuses, wild, count, sts);
    int rc = PMPI_Waitall(count, reqs, st);
    char *p = lt_open("MPI_Waitall", t0, 0);
    p = lt_int(p, count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, statuses);
    struct lt_done d = {ids, NULL, count, wild ? st : NULL, 1};
    lt_commit(lt_ext_completed(lt_end(p), &d));
    statuses_release(st, statuses, sts);
    release(ids, small);
    return rc;
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Waitany(count, reqs, index, status);
    uint64_t small[SMALL], *ids = capture(reqs, count, small);
    int wild = lt_any_wild(ids, count);
    MPI_Status tmp, *st = wild && status == MPI_STATUS_IGNORE ? &tmp : status;
    int rc = PMPI_Waitany(count, reqs, index, st);
    char *p = lt_open("MPI_Waitany", t0, 0);
    p = lt_int(p, count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, index);
    p = lt_ptr(p, status);
    struct lt_done d = {ids, index, *index == MPI_UNDEFINED ? 0 : 1, wild ? st : NULL, 0};
    lt_commit(lt_ext_completed(lt_end(p), &d));
    release(ids, small);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
    uint64_t small[SMALL], *ids = capture(reqs, incount, small);
    MPI_Status sts[SMALL];
    int wild = lt_any_wild(ids, incount);
    MPI_Status *st = statuses_for(statuses, wild, incount, sts);
    int rc = PMPI_Waitsome(incount, reqs, outcount, indices, st);
    char *p = lt_open("MPI_Waitsome", t0, 0);
    p = lt_int(p, incount);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, outcount);
    p = lt_ptr(p, indices);
    p = lt_ptr(p, statuses);
    int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    struct lt_done d = {ids, indices, n, wild ? st : NULL, 0};
    lt_commit(lt_ext_completed(lt_end(p), &d));
    statuses_release(st, statuses, sts);
    release(ids, small);
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    uint64_t id = lt_req_id(*req);
    int wild = lt_active() && lt_any_wild(&id, 1);
    MPI_Status tmp, *st = wild && status == MPI_STATUS_IGNORE ? &tmp : status;
    int rc = PMPI_Test(req, flag, st);
    if (lt_active()) {
        char *p = lt_open("MPI_Test", t0, 0);
        p = lt_ptr(p, req);
        p = lt_ptr(p, flag);
        p = lt_ptr(p, status);
        struct lt_done d = {&id, NULL, *flag ? 1 : 0, wild ? st : NULL, 1};
        lt_commit(lt_ext_completed(lt_end(p), &d));
    }
    return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Testall(count, reqs, flag, statuses);
    uint64_t small[SMALL], *ids = capture(reqs, count, small);
    MPI_Status sts[SMALL];
    int wild = lt_any_wild(ids, count);
    MPI_Status *st = statuses_for(statuses, wild, count, sts);
    int rc = PMPI_Testall(count, reqs, flag, st);
    char *p = lt_open("MPI_Testall", t0, 0);
    p = lt_int(p, count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, flag);
    p = lt_ptr(p, statuses);
    struct lt_done d = {ids, NULL, *flag ? count : 0, wild ? st : NULL, 1};
    lt_commit(lt_ext_completed(lt_end(p), &d));
    statuses_release(st, statuses, sts);
    release(ids, small);
    return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Testany(count, reqs, index, flag, status);
    uint64_t small[SMALL], *ids = capture(reqs, count, small);
    int wild = lt_any_wild(ids, count);
    MPI_Status tmp, *st = wild && status == MPI_STATUS_IGNORE ? &tmp : status;
    int rc = PMPI_Testany(count, reqs, index, flag, st);
    char *p = lt_open("MPI_Testany", t0, 0);
    p = lt_int(p, count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, index);
    p = lt_ptr(p, flag);
    p = lt_ptr(p, status);
    int n = *flag && *index != MPI_UNDEFINED ? 1 : 0;
    struct lt_done d = {ids, index, n, wild ? st : NULL, 0};
    lt_commit(lt_ext_completed(lt_end(p), &d));
    release(ids, small);
    return rc;
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    uint64_t t0 = lt_now();
    if (!lt_active())
        return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
    uint64_t small[SMALL], *ids = capture(reqs, incount, small);
    MPI_Status sts[SMALL];
    int wild = lt_any_wild(ids, incount);
    MPI_Status *st = statuses_for(statuses, wild, incount, sts);
    int rc = PMPI_Testsome(incount, reqs, outcount, indices, st);
    char *p = lt_open("MPI_Testsome", t0, 0);
    p = lt_int(p, incount);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, outcount);
    p = lt_ptr(p, indices);
    p = lt_ptr(p, statuses);
    int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    struct lt_done d = {ids, indices, n, wild ? st : NULL, 0};
    lt_commit(lt_ext_completed(lt_end(p), &d));
    statuses_release(st, statuses, sts);
    release(ids, small);
    return rc;
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Request_get_status(req, flag, status);
    LT_REC("MPI_Request_get_status", t0, p = lt_raw(p, lt_req_id(req)); p = lt_ptr(p, flag);
           p = lt_ptr(p, status));
    return rc;
}

/* ---- persistent requests, freeing, cancelling ---- */
void lt_log_start(uint64_t t0, const void *reqaddr, MPI_Request req)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Start", t0, 0);
    p = lt_ptr(p, reqaddr);
    lt_commit(lt_ext_reqs(lt_end(p), &req, 1));
}

void lt_log_startall(uint64_t t0, int count, const void *reqs_addr, const MPI_Request *reqs)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Startall", t0, LT_REQ_BYTES(count));
    p = lt_int(p, count);
    p = lt_ptr(p, reqs_addr);
    lt_commit(lt_ext_reqs(lt_end(p), reqs, count));
}

void lt_log_request_free(uint64_t t0, const void *reqaddr, uint64_t id)
{
    lt_wild_forget(id);
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Request_free", t0, 0);
    p = lt_ptr(p, reqaddr);
    p = lt_end(p);
    p = LT_EXT(p, "req ");
    p = lt_u64(p, id);
    *p++ = '\n';
    lt_commit(p);
}

int MPI_Start(MPI_Request *req)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Start(req);
    lt_log_start(t0, req, *req);
    return rc;
}

int MPI_Startall(int count, MPI_Request reqs[])
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Startall(count, reqs);
    lt_log_startall(t0, count, reqs, reqs);
    return rc;
}

int MPI_Request_free(MPI_Request *req)
{
    uint64_t t0 = lt_now();
    uint64_t id = lt_req_id(*req);
    int rc = PMPI_Request_free(req);
    lt_log_request_free(t0, req, id);
    return rc;
}

int MPI_Cancel(MPI_Request *req)
{
    uint64_t t0 = lt_now();
    MPI_Request r = *req;
    int rc = PMPI_Cancel(req);
    if (lt_active()) {
        char *p = lt_open("MPI_Cancel", t0, 0);
        p = lt_ptr(p, req);
        lt_commit(lt_ext_reqs(lt_end(p), &r, 1));
    }
    return rc;
}
