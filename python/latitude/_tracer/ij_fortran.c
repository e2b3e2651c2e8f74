/* Fortran bindings, part 1: conversions, environment, point-to-point, completion and
 * communicator creation (see ij_fortran.h). Each wrapper calls the injector's C wrapper. */
#define _GNU_SOURCE
#include "ij_fortran.h"

#ifdef IJ_FORTRAN
#include <stdlib.h>

/* ---- conversions ---- */
MPI_Status *ij_fstatus_in(struct ij_fstatus *s, F *f)
{
    s->f = fs_status_ignored(f) ? NULL : f;
    return s->f ? &s->c : MPI_STATUS_IGNORE;
}

void ij_fstatus_out(struct ij_fstatus *s)
{
    if (s->f)
        PMPI_Status_c2f(&s->c, s->f);
}

MPI_Request *ij_farray_in(struct ij_farray *a, int n, F *freqs, F *fsts)
{
    a->n = n;
    a->freqs = freqs;
    a->fsts = fsts && !fs_statuses_ignored(fsts) ? fsts : NULL;
    int big = n > 16;
    a->reqs = big ? malloc(sizeof *a->reqs * (size_t)n) : a->small;
    a->sts = big && a->fsts ? malloc(sizeof *a->sts * (size_t)n) : a->ssmall;
    if (!a->reqs || !a->sts)
        ij_fatal("out of memory");
    for (int i = 0; i < n; i++)
        a->reqs[i] = PMPI_Request_f2c(freqs[i]);
    return a->reqs;
}

MPI_Status *ij_farray_statuses(struct ij_farray *a)
{
    return a->fsts ? a->sts : MPI_STATUSES_IGNORE;
}

void ij_farray_out(struct ij_farray *a, int nst)
{
    /* Open MPI's Fortran status is its C MPI_Status in Fortran integers */
    const size_t fsize = (sizeof(MPI_Status) + sizeof(F) - 1) / sizeof(F);
    for (int i = 0; i < a->n; i++)
        a->freqs[i] = PMPI_Request_c2f(a->reqs[i]);
    for (int i = 0; a->fsts && i < nst; i++)
        PMPI_Status_c2f(&a->sts[i], a->fsts + (size_t)i * fsize);
    if (a->reqs != a->small)
        free(a->reqs);
    if (a->sts != a->ssmall)
        free(a->sts);
}

int *ij_flogicals(const F *f, int n, int *small, int nsmall)
{
    int *c = n <= nsmall ? small : malloc(sizeof *c * (size_t)(n > 0 ? n : 1));
    if (!c)
        ij_fatal("out of memory");
    for (int i = 0; i < n; i++)
        c[i] = f[i] != 0;
    return c;
}

/* ---- environment ---- */
void mpi_init_(F *ierr)
{
    int argc = 0;
    char **argv = NULL;
    *ierr = MPI_Init(&argc, &argv);
}
F_ALIASES(init, MPI_INIT)

void mpi_init_thread_(F *required, F *provided, F *ierr)
{
    int argc = 0, prov = 0;
    char **argv = NULL;
    *ierr = MPI_Init_thread(&argc, &argv, *required, &prov);
    *provided = prov;
}
F_ALIASES(init_thread, MPI_INIT_THREAD)

void mpi_finalize_(F *ierr) { *ierr = MPI_Finalize(); }
F_ALIASES(finalize, MPI_FINALIZE)

/* ---- point to point ---- */
#define SEND(low, UP, fn)                                                                      \
    void mpi_##low##_(void *buf, F *count, F *dt, F *dest, F *tag, F *comm, F *ierr)          \
    {                                                                                          \
        *ierr = fn(ij_fbuf(buf), *count, FT(dt), *dest, *tag, FC(comm));                       \
    }                                                                                          \
    F_ALIASES(low, UP)
SEND(send, MPI_SEND, MPI_Send)
SEND(ssend, MPI_SSEND, MPI_Ssend)
SEND(bsend, MPI_BSEND, MPI_Bsend)
SEND(rsend, MPI_RSEND, MPI_Rsend)

/* immediate sends and persistent requests: same arguments plus the new request */
#define START(low, UP, fn)                                                                     \
    void mpi_##low##_(void *buf, F *count, F *dt, F *peer, F *tag, F *comm, F *req, F *ierr)  \
    {                                                                                          \
        MPI_Request r;                                                                         \
        *ierr = fn(ij_fbuf(buf), *count, FT(dt), *peer, *tag, FC(comm), &r);                   \
        *req = ij_freq(r);                                                                     \
    }                                                                                          \
    F_ALIASES(low, UP)
START(isend, MPI_ISEND, MPI_Isend)
START(issend, MPI_ISSEND, MPI_Issend)
START(ibsend, MPI_IBSEND, MPI_Ibsend)
START(irsend, MPI_IRSEND, MPI_Irsend)
START(irecv, MPI_IRECV, MPI_Irecv)
START(send_init, MPI_SEND_INIT, MPI_Send_init)
START(ssend_init, MPI_SSEND_INIT, MPI_Ssend_init)
START(bsend_init, MPI_BSEND_INIT, MPI_Bsend_init)
START(rsend_init, MPI_RSEND_INIT, MPI_Rsend_init)
START(recv_init, MPI_RECV_INIT, MPI_Recv_init)

void mpi_recv_(void *buf, F *count, F *dt, F *src, F *tag, F *comm, F *st, F *ierr)
{
    struct ij_fstatus s;
    *ierr = MPI_Recv(ij_fbuf(buf), *count, FT(dt), *src, *tag, FC(comm), ij_fstatus_in(&s, st));
    ij_fstatus_out(&s);
}
F_ALIASES(recv, MPI_RECV)

void mpi_sendrecv_(void *sbuf, F *scount, F *sdt, F *dest, F *stag, void *rbuf, F *rcount,
                   F *rdt, F *src, F *rtag, F *comm, F *st, F *ierr)
{
    struct ij_fstatus s;
    *ierr = MPI_Sendrecv(ij_fbuf(sbuf), *scount, FT(sdt), *dest, *stag, ij_fbuf(rbuf), *rcount,
                         FT(rdt), *src, *rtag, FC(comm), ij_fstatus_in(&s, st));
    ij_fstatus_out(&s);
}
F_ALIASES(sendrecv, MPI_SENDRECV)

void mpi_sendrecv_replace_(void *buf, F *count, F *dt, F *dest, F *stag, F *src, F *rtag,
                           F *comm, F *st, F *ierr)
{
    struct ij_fstatus s;
    *ierr = MPI_Sendrecv_replace(ij_fbuf(buf), *count, FT(dt), *dest, *stag, *src, *rtag,
                                 FC(comm), ij_fstatus_in(&s, st));
    ij_fstatus_out(&s);
}
F_ALIASES(sendrecv_replace, MPI_SENDRECV_REPLACE)

void mpi_probe_(F *src, F *tag, F *comm, F *st, F *ierr)
{
    struct ij_fstatus s;
    *ierr = MPI_Probe(*src, *tag, FC(comm), ij_fstatus_in(&s, st));
    ij_fstatus_out(&s);
}
F_ALIASES(probe, MPI_PROBE)

void mpi_iprobe_(F *src, F *tag, F *comm, F *flag, F *st, F *ierr)
{
    struct ij_fstatus s;
    int f = 0;
    *ierr = MPI_Iprobe(*src, *tag, FC(comm), &f, ij_fstatus_in(&s, st));
    *flag = ij_flogical(f);
    if (f)
        ij_fstatus_out(&s);
}
F_ALIASES(iprobe, MPI_IPROBE)

void mpi_start_(F *req, F *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*req);
    *ierr = MPI_Start(&r);
}
F_ALIASES(start, MPI_START)

void mpi_startall_(F *n, F *reqs, F *ierr)
{
    struct ij_farray a;
    *ierr = MPI_Startall(*n, ij_farray_in(&a, *n, reqs, NULL));
    ij_farray_out(&a, 0);
}
F_ALIASES(startall, MPI_STARTALL)

void mpi_request_free_(F *req, F *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*req);
    *ierr = MPI_Request_free(&r);
    *req = ij_freq(r);
}
F_ALIASES(request_free, MPI_REQUEST_FREE)

void mpi_request_get_status_(F *req, F *flag, F *st, F *ierr)
{
    struct ij_fstatus s;
    int f = 0;
    *ierr = MPI_Request_get_status(PMPI_Request_f2c(*req), &f, ij_fstatus_in(&s, st));
    *flag = ij_flogical(f);
    if (f)
        ij_fstatus_out(&s);
}
F_ALIASES(request_get_status, MPI_REQUEST_GET_STATUS)

/* ---- completion ---- */
void mpi_wait_(F *req, F *st, F *ierr)
{
    struct ij_fstatus s;
    MPI_Request r = PMPI_Request_f2c(*req);
    *ierr = MPI_Wait(&r, ij_fstatus_in(&s, st));
    *req = ij_freq(r);
    ij_fstatus_out(&s);
}
F_ALIASES(wait, MPI_WAIT)

void mpi_test_(F *req, F *flag, F *st, F *ierr)
{
    struct ij_fstatus s;
    MPI_Request r = PMPI_Request_f2c(*req);
    int f = 0;
    *ierr = MPI_Test(&r, &f, ij_fstatus_in(&s, st));
    *flag = ij_flogical(f);
    if (f) {
        *req = ij_freq(r);
        ij_fstatus_out(&s);
    }
}
F_ALIASES(test, MPI_TEST)

void mpi_waitall_(F *n, F *reqs, F *sts, F *ierr)
{
    struct ij_farray a;
    MPI_Request *r = ij_farray_in(&a, *n, reqs, sts);
    *ierr = MPI_Waitall(*n, r, ij_farray_statuses(&a));
    ij_farray_out(&a, *n);
}
F_ALIASES(waitall, MPI_WAITALL)

void mpi_testall_(F *n, F *reqs, F *flag, F *sts, F *ierr)
{
    struct ij_farray a;
    int f = 0;
    MPI_Request *r = ij_farray_in(&a, *n, reqs, sts);
    *ierr = MPI_Testall(*n, r, &f, ij_farray_statuses(&a));
    *flag = ij_flogical(f);
    ij_farray_out(&a, f ? *n : 0);
}
F_ALIASES(testall, MPI_TESTALL)

/* Waitany/Testany: one status; the index is 1-based in Fortran */
static void any_out(struct ij_farray *a, int idx, F *index, struct ij_fstatus *s)
{
    *index = idx >= 0 && idx != MPI_UNDEFINED ? idx + 1 : idx;
    ij_farray_out(a, 0);
    ij_fstatus_out(s);
}

void mpi_waitany_(F *n, F *reqs, F *index, F *st, F *ierr)
{
    struct ij_farray a;
    struct ij_fstatus s;
    int idx;
    MPI_Request *r = ij_farray_in(&a, *n, reqs, NULL);
    *ierr = MPI_Waitany(*n, r, &idx, ij_fstatus_in(&s, st));
    any_out(&a, idx, index, &s);
}
F_ALIASES(waitany, MPI_WAITANY)

void mpi_testany_(F *n, F *reqs, F *index, F *flag, F *st, F *ierr)
{
    struct ij_farray a;
    struct ij_fstatus s;
    int idx, f = 0;
    MPI_Request *r = ij_farray_in(&a, *n, reqs, NULL);
    *ierr = MPI_Testany(*n, r, &idx, &f, ij_fstatus_in(&s, st));
    *flag = ij_flogical(f);
    if (!f)
        s.f = NULL; /* the status is undefined: leave the user's alone */
    any_out(&a, idx, index, &s);
}
F_ALIASES(testany, MPI_TESTANY)

/* Waitsome/Testsome: outcount statuses, 1-based indices */
static void some_out(struct ij_farray *a, int out, F *outcount, F *idx)
{
    *outcount = out;
    for (int i = 0; out != MPI_UNDEFINED && i < out; i++)
        idx[i] += 1;
    ij_farray_out(a, out == MPI_UNDEFINED ? 0 : out);
}

void mpi_waitsome_(F *n, F *reqs, F *outcount, F *idx, F *sts, F *ierr)
{
    struct ij_farray a;
    int out;
    MPI_Request *r = ij_farray_in(&a, *n, reqs, sts);
    *ierr = MPI_Waitsome(*n, r, &out, idx, ij_farray_statuses(&a));
    some_out(&a, out, outcount, idx);
}
F_ALIASES(waitsome, MPI_WAITSOME)

void mpi_testsome_(F *n, F *reqs, F *outcount, F *idx, F *sts, F *ierr)
{
    struct ij_farray a;
    int out;
    MPI_Request *r = ij_farray_in(&a, *n, reqs, sts);
    *ierr = MPI_Testsome(*n, r, &out, idx, ij_farray_statuses(&a));
    some_out(&a, out, outcount, idx);
}
F_ALIASES(testsome, MPI_TESTSOME)

/* ---- communicators (each gets its shadow) ---- */
void mpi_comm_dup_(F *comm, F *newcomm, F *ierr)
{
    MPI_Comm c;
    *ierr = MPI_Comm_dup(FC(comm), &c);
    *newcomm = ij_fcomm(c);
}
F_ALIASES(comm_dup, MPI_COMM_DUP)

void mpi_comm_dup_with_info_(F *comm, F *info, F *newcomm, F *ierr)
{
    MPI_Comm c;
    *ierr = MPI_Comm_dup_with_info(FC(comm), FI(info), &c);
    *newcomm = ij_fcomm(c);
}
F_ALIASES(comm_dup_with_info, MPI_COMM_DUP_WITH_INFO)

void mpi_comm_idup_(F *comm, F *newcomm, F *req, F *ierr)
{
    MPI_Comm c;
    MPI_Request r;
    *ierr = MPI_Comm_idup(FC(comm), &c, &r);
    *newcomm = ij_fcomm(c);
    *req = ij_freq(r);
}
F_ALIASES(comm_idup, MPI_COMM_IDUP)

void mpi_comm_split_(F *comm, F *color, F *key, F *newcomm, F *ierr)
{
    MPI_Comm c;
    *ierr = MPI_Comm_split(FC(comm), *color, *key, &c);
    *newcomm = ij_fcomm(c);
}
F_ALIASES(comm_split, MPI_COMM_SPLIT)

void mpi_comm_split_type_(F *comm, F *type, F *key, F *info, F *newcomm, F *ierr)
{
    MPI_Comm c;
    *ierr = MPI_Comm_split_type(FC(comm), *type, *key, FI(info), &c);
    *newcomm = ij_fcomm(c);
}
F_ALIASES(comm_split_type, MPI_COMM_SPLIT_TYPE)

void mpi_comm_create_(F *comm, F *group, F *newcomm, F *ierr)
{
    MPI_Comm c;
    *ierr = MPI_Comm_create(FC(comm), FG(group), &c);
    *newcomm = ij_fcomm(c);
}
F_ALIASES(comm_create, MPI_COMM_CREATE)

void mpi_comm_create_group_(F *comm, F *group, F *tag, F *newcomm, F *ierr)
{
    MPI_Comm c;
    *ierr = MPI_Comm_create_group(FC(comm), FG(group), *tag, &c);
    *newcomm = ij_fcomm(c);
}
F_ALIASES(comm_create_group, MPI_COMM_CREATE_GROUP)

void mpi_cart_create_(F *comm, F *ndims, F *dims, F *periods, F *reorder, F *newcomm, F *ierr)
{
    MPI_Comm c;
    int small[8], *p = ij_flogicals(periods, *ndims, small, 8);
    *ierr = MPI_Cart_create(FC(comm), *ndims, dims, p, *reorder != 0, &c);
    *newcomm = ij_fcomm(c);
    if (p != small)
        free(p);
}
F_ALIASES(cart_create, MPI_CART_CREATE)

void mpi_cart_sub_(F *comm, F *remain, F *newcomm, F *ierr)
{
    MPI_Comm c, cart = FC(comm);
    int nd = 0, small[8];
    PMPI_Cartdim_get(cart, &nd);
    int *rem = ij_flogicals(remain, nd, small, 8);
    *ierr = MPI_Cart_sub(cart, rem, &c);
    *newcomm = ij_fcomm(c);
    if (rem != small)
        free(rem);
}
F_ALIASES(cart_sub, MPI_CART_SUB)

void mpi_graph_create_(F *comm, F *nnodes, F *index, F *edges, F *reorder, F *newcomm, F *ierr)
{
    MPI_Comm c;
    *ierr = MPI_Graph_create(FC(comm), *nnodes, index, edges, *reorder != 0, &c);
    *newcomm = ij_fcomm(c);
}
F_ALIASES(graph_create, MPI_GRAPH_CREATE)

void mpi_intercomm_create_(F *local, F *lleader, F *peer, F *rleader, F *tag, F *newcomm,
                           F *ierr)
{
    MPI_Comm c;
    *ierr = MPI_Intercomm_create(FC(local), *lleader, FC(peer), *rleader, *tag, &c);
    *newcomm = ij_fcomm(c);
}
F_ALIASES(intercomm_create, MPI_INTERCOMM_CREATE)

void mpi_intercomm_merge_(F *inter, F *high, F *newcomm, F *ierr)
{
    MPI_Comm c;
    *ierr = MPI_Intercomm_merge(FC(inter), *high != 0, &c);
    *newcomm = ij_fcomm(c);
}
F_ALIASES(intercomm_merge, MPI_INTERCOMM_MERGE)

void mpi_comm_free_(F *comm, F *ierr)
{
    MPI_Comm c = FC(comm);
    *ierr = MPI_Comm_free(&c);
    *comm = ij_fcomm(c);
}
F_ALIASES(comm_free, MPI_COMM_FREE)
#endif
