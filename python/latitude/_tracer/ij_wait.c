/* Completion calls: the Wait and Test families report a request complete only once it is
 * released (ij_poll). Requests the injector did not create (other communicators, MPI-IO,
 * generalized requests of the application) are checked with MPI_Request_get_status and
 * completed as MPI says.
 *
 * Waits poll every request of the call in a loop (each poll drives MPI's progress), so the
 * moment a transfer completes is observed to within one loop iteration; this is what makes
 * the measured one-way times of ij_release exact.
 */
#include "ij.h"

#include <stdlib.h>

/* 1 when entry i may be reported complete; null requests count as complete */
static int ready(MPI_Request h, struct ij_req *r)
{
    if (h == MPI_REQUEST_NULL)
        return 1;
    if (r)
        return ij_poll(r);
    int flag;
    PMPI_Request_get_status(h, &flag, MPI_STATUS_IGNORE);
    return flag;
}

/* an entry Waitany/Waitsome/Testany/Testsome must skip: null or an inactive persistent one */
static int inactive(MPI_Request h, struct ij_req *r)
{
    return h == MPI_REQUEST_NULL || (r && r->persistent && !r->active);
}

static int finish(MPI_Request *h, struct ij_req *r, MPI_Status *st)
{
    if (r) {
        ij_req_finish(r, h, st);
        return MPI_SUCCESS;
    }
    return PMPI_Wait(h, st);
}

/* a Test-family call that found nothing to report: counted, and MPI progressed */
static void unsuccessful(void)
{
    ij.n_unsuccessful++;
    ij_progress();
}

static MPI_Status *status_at(MPI_Status *sts, int i)
{
    return sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
}

#define MAXREC 256
/* records of up to MAXREC requests on the stack, more on the heap */
struct recs {
    struct ij_req *stack[MAXREC], **r;
};

static struct ij_req **lookup(struct recs *rs, int n, const MPI_Request *hs)
{
    rs->r = n <= MAXREC ? rs->stack : malloc(sizeof *rs->r * (size_t)n);
    if (!rs->r)
        ij_fatal("out of memory");
    if (n == 1) { /* the oldest record of the handle (HPCC's RandomAccess: one Testany per
                   * generated update; claiming cost a fifth of the injector's work on it) */
        rs->r[0] = ij.active ? ij_req_find(hs[0]) : NULL;
        return rs->r;
    }
    uint64_t epoch = ij_req_epoch();
    for (int i = 0; i < n; i++)
        rs->r[i] = ij.active ? ij_req_claim(hs[i], epoch) : NULL;
    return rs->r;
}

static void done_recs(struct recs *rs)
{
    if (rs->r != rs->stack)
        free(rs->r);
}

int MPI_Wait(MPI_Request *h, MPI_Status *st)
{
    struct ij_req *r = ij.active ? ij_req_find(*h) : NULL;
    if (!r)
        return PMPI_Wait(h, st);
    ij_wait_one(r);
    return finish(h, r, st);
}

int MPI_Waitall(int n, MPI_Request hs[], MPI_Status sts[])
{
    if (!ij.active)
        return PMPI_Waitall(n, hs, sts);
    struct recs rs;
    struct ij_req **r = lookup(&rs, n, hs);
    uint64_t outer = ij_loop_enter();
    for (;;) {
        int all = 1;
        for (int i = 0; i < n; i++)
            all &= ready(hs[i], r[i]);
        if (all)
            break;
        ij_progress();
    }
    ij_loop_leave(outer);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        int e = finish(&hs[i], r[i], status_at(sts, i));
        if (e != MPI_SUCCESS)
            rc = e;
    }
    done_recs(&rs);
    return rc;
}

/* first released entry, -1 if none yet, MPI_UNDEFINED if every entry is inactive */
static int first_ready(int n, MPI_Request hs[], struct ij_req **r)
{
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (inactive(hs[i], r[i]))
            continue;
        any = 1;
        if (ready(hs[i], r[i]))
            return i;
    }
    return any ? -1 : MPI_UNDEFINED;
}

int MPI_Waitany(int n, MPI_Request hs[], int *index, MPI_Status *st)
{
    if (!ij.active)
        return PMPI_Waitany(n, hs, index, st);
    struct recs rs;
    struct ij_req **r = lookup(&rs, n, hs);
    int i, rc = MPI_SUCCESS;
    uint64_t outer = ij_loop_enter();
    while ((i = first_ready(n, hs, r)) == -1)
        ij_progress();
    ij_loop_leave(outer);
    *index = i;
    if (i == MPI_UNDEFINED) {
        MPI_Request null = MPI_REQUEST_NULL;
        PMPI_Wait(&null, st); /* the empty status */
    } else {
        rc = finish(&hs[i], r[i], st);
    }
    done_recs(&rs);
    return rc;
}

/* complete every released entry; returns their number, or MPI_UNDEFINED if all inactive */
static int some(int n, MPI_Request hs[], struct ij_req **r, int idx[], MPI_Status sts[])
{
    int got = 0, any = 0;
    for (int i = 0; i < n; i++) {
        if (inactive(hs[i], r[i]))
            continue;
        any = 1;
        if (ready(hs[i], r[i])) {
            finish(&hs[i], r[i], status_at(sts, got));
            idx[got++] = i;
        }
    }
    return any ? got : MPI_UNDEFINED;
}

int MPI_Waitsome(int n, MPI_Request hs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (!ij.active)
        return PMPI_Waitsome(n, hs, outcount, idx, sts);
    struct recs rs;
    struct ij_req **r = lookup(&rs, n, hs);
    uint64_t outer = ij_loop_enter();
    while ((*outcount = some(n, hs, r, idx, sts)) == 0)
        ij_progress();
    ij_loop_leave(outer);
    done_recs(&rs);
    return MPI_SUCCESS;
}

int MPI_Test(MPI_Request *h, int *flag, MPI_Status *st)
{
    struct ij_req *r = ij.active ? ij_req_find(*h) : NULL;
    if (!r)
        return PMPI_Test(h, flag, st);
    *flag = ij_poll(r);
    if (!*flag) {
        unsuccessful();
        return MPI_SUCCESS;
    }
    return finish(h, r, st);
}

int MPI_Testall(int n, MPI_Request hs[], int *flag, MPI_Status sts[])
{
    if (!ij.active)
        return PMPI_Testall(n, hs, flag, sts);
    struct recs rs;
    struct ij_req **r = lookup(&rs, n, hs);
    int all = 1;
    for (int i = 0; i < n; i++)
        all &= ready(hs[i], r[i]);
    *flag = all;
    if (all)
        for (int i = 0; i < n; i++)
            finish(&hs[i], r[i], status_at(sts, i));
    else
        unsuccessful();
    done_recs(&rs);
    return MPI_SUCCESS;
}

int MPI_Testany(int n, MPI_Request hs[], int *index, int *flag, MPI_Status *st)
{
    if (!ij.active)
        return PMPI_Testany(n, hs, index, flag, st);
    struct recs rs;
    struct ij_req **r = lookup(&rs, n, hs);
    int i = first_ready(n, hs, r);
    *flag = i != -1;
    *index = i == -1 ? MPI_UNDEFINED : i;
    if (i == MPI_UNDEFINED) {
        MPI_Request null = MPI_REQUEST_NULL;
        PMPI_Wait(&null, st);
    } else if (i >= 0) {
        finish(&hs[i], r[i], st);
    } else {
        unsuccessful();
    }
    done_recs(&rs);
    return MPI_SUCCESS;
}

int MPI_Testsome(int n, MPI_Request hs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (!ij.active)
        return PMPI_Testsome(n, hs, outcount, idx, sts);
    struct recs rs;
    struct ij_req **r = lookup(&rs, n, hs);
    *outcount = some(n, hs, r, idx, sts);
    if (*outcount == 0)
        unsuccessful();
    done_recs(&rs);
    return MPI_SUCCESS;
}
