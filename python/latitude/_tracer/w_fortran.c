/* Fortran wrappers, part 1: environment, point-to-point, completion (see lt_fortran.h). */
#define _GNU_SOURCE
#include "lt_fortran.h"

#ifdef LT_FORTRAN
#include <dlfcn.h>
/* gcc cannot see that the small on-stack arrays are filled before use */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <stdio.h>
#include <stdlib.h>

typedef MPI_Fint F;

lt_ffn lt_fsym(const char *name)
{
    lt_ffn fn = (lt_ffn)dlsym(RTLD_NEXT, name);
    if (!fn) {
        fprintf(stderr, "latitude-trace: %s not found in the MPI Fortran library\n", name);
        abort();
    }
    return fn;
}

static const void *sentinel(const char *name)
{
    return dlsym(RTLD_DEFAULT, name); /* Open MPI's Fortran common blocks, in libmpi */
}

const void *lt_fbuf(const void *buf)
{
    static const void *in_place, *bottom;
    static int init;
    if (!init) {
        in_place = sentinel("mpi_fortran_in_place_");
        bottom = sentinel("mpi_fortran_bottom_");
        init = 1;
    }
    if (buf && buf == in_place)
        return MPI_IN_PLACE;
    if (buf && buf == bottom)
        return MPI_BOTTOM;
    return buf;
}

int lt_fstatus_ignored(const F *st)
{
    static const void *ign;
    if (!ign)
        ign = sentinel("mpi_fortran_status_ignore_");
    return (const void *)st == ign;
}

int lt_fstatuses_ignored(const F *st)
{
    static const void *ign;
    if (!ign)
        ign = sentinel("mpi_fortran_statuses_ignore_");
    return (const void *)st == ign;
}

F *lt_fcomp_begin(struct lt_fcomp *f, F *reqs, int n, F *st, int many)
{
    f->on = lt_active();
    f->ust = f->fst = st;
    if (!f->on)
        return st;
    f->n = n;
    f->many = many;
    f->h = n <= LT_SMALL ? f->hsmall : malloc(sizeof(MPI_Request) * (size_t)n);
    f->slots = n <= LT_SMALL ? f->ssmall : malloc(sizeof(void *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        f->h[i] = PMPI_Request_f2c(reqs[i]);
        f->slots[i] = &reqs[i];
    }
    lt_comp_begin(&f->c, f->h, f->slots, n);
    if (f->c.wild && (many ? lt_fstatuses_ignored(st) : lt_fstatus_ignored(st)))
        f->fst = malloc(sizeof(F) * LT_F_STATUS * (size_t)(many && n ? n : 1));
    return f->fst;
}

char *lt_fcomp_end(char *p, struct lt_fcomp *f, const F *idx, int ndone, int by_input)
{
    int small[LT_SMALL], *cidx = NULL;
    if (idx) { /* Fortran indices are 1-based */
        cidx = ndone <= LT_SMALL ? small : malloc(sizeof(int) * (size_t)(ndone ? ndone : 1));
        for (int k = 0; k < ndone; k++)
            cidx[k] = idx[k] - 1;
    }
    MPI_Status *cst = NULL;
    if (f->c.wild) {
        int ns = f->many ? f->n : 1;
        cst = malloc(sizeof(MPI_Status) * (size_t)ns);
        for (int i = 0; i < ns; i++)
            PMPI_Status_f2c(f->fst + (size_t)i * LT_F_STATUS, &cst[i]);
        f->c.st = cst;
    }
    p = lt_comp_end(p, &f->c, cidx, ndone, by_input);
    f->c.st = NULL;
    lt_comp_free(&f->c, NULL);
    free(cst);
    if (cidx != small)
        free(cidx);
    if (f->h != f->hsmall)
        free(f->h);
    if (f->slots != f->ssmall)
        free(f->slots);
    if (f->fst != f->ust)
        free(f->fst);
    return p;
}

/* ---- environment ---- */
void mpi_init_(F *ierr)
{
    REAL(pmpi_init_)(ierr);
    if (*ierr == MPI_SUCCESS)
        lt_log_init(0, NULL, NULL, 0, NULL, 0);
}
F_ALIASES(init, MPI_INIT)

void mpi_init_thread_(F *required, F *provided, F *ierr)
{
    REAL(pmpi_init_thread_)(required, provided, ierr);
    if (*ierr == MPI_SUCCESS)
        lt_log_init(1, NULL, NULL, *required, provided, *provided);
}
F_ALIASES(init_thread, MPI_INIT_THREAD)

void mpi_finalize_(F *ierr)
{
    lt_log_finalize(lt_now());
    REAL(pmpi_finalize_)(ierr);
}
F_ALIASES(finalize, MPI_FINALIZE)

void mpi_abort_(F *comm, F *code, F *ierr)
{
    lt_log_abort(lt_now(), FC(comm), *code);
    REAL(pmpi_abort_)(comm, code, ierr);
}
F_ALIASES(abort, MPI_ABORT)

#define COMM_Q(low, UP, NAME)                                                                  \
    void mpi_##low##_(F *comm, F *out, F *ierr)                                                \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        REAL(pmpi_##low##_)(comm, out, ierr);                                                  \
        LT_REC(NAME, t0, p = lt_comm(p, FC(comm)); p = lt_ptr(p, out));                        \
    }                                                                                          \
    F_ALIASES(low, UP)
COMM_Q(comm_rank, MPI_COMM_RANK, "MPI_Comm_rank")
COMM_Q(comm_size, MPI_COMM_SIZE, "MPI_Comm_size")

/* ---- point to point ---- */
#define SEND(low, UP, NAME)                                                                    \
    void mpi_##low##_(void *buf, F *count, F *dt, F *dest, F *tag, F *comm, F *ierr)           \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        REAL(pmpi_##low##_)(buf, count, dt, dest, tag, comm, ierr);                           \
        if (lt_active())                                                                       \
            lt_log_send(LT_NAME(NAME), t0, buf, *count, FT(dt), *dest, *tag, FC(comm));        \
    }                                                                                          \
    F_ALIASES(low, UP)
SEND(send, MPI_SEND, "MPI_Send")
SEND(ssend, MPI_SSEND, "MPI_Ssend")
SEND(bsend, MPI_BSEND, "MPI_Bsend")
SEND(rsend, MPI_RSEND, "MPI_Rsend")

#define ISEND(low, UP, NAME, PERSISTENT)                                                       \
    void mpi_##low##_(void *buf, F *count, F *dt, F *dest, F *tag, F *comm, F *req, F *ierr)   \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        REAL(pmpi_##low##_)(buf, count, dt, dest, tag, comm, req, ierr);                      \
        if (lt_active())                                                                       \
            lt_log_isend(LT_NAME(NAME), t0, buf, *count, FT(dt), *dest, *tag, FC(comm), req,   \
                         FR(req), PERSISTENT);                                                 \
    }                                                                                          \
    F_ALIASES(low, UP)
ISEND(isend, MPI_ISEND, "MPI_Isend", 0)
ISEND(issend, MPI_ISSEND, "MPI_Issend", 0)
ISEND(ibsend, MPI_IBSEND, "MPI_Ibsend", 0)
ISEND(irsend, MPI_IRSEND, "MPI_Irsend", 0)
ISEND(send_init, MPI_SEND_INIT, "MPI_Send_init", 1)
ISEND(ssend_init, MPI_SSEND_INIT, "MPI_Ssend_init", 1)
ISEND(bsend_init, MPI_BSEND_INIT, "MPI_Bsend_init", 1)
ISEND(rsend_init, MPI_RSEND_INIT, "MPI_Rsend_init", 1)

#define IRECV(low, UP, NAME, PERSISTENT)                                                       \
    void mpi_##low##_(void *buf, F *count, F *dt, F *src, F *tag, F *comm, F *req, F *ierr)    \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        REAL(pmpi_##low##_)(buf, count, dt, src, tag, comm, req, ierr);                       \
        if (lt_active())                                                                       \
            lt_log_irecv(LT_NAME(NAME), t0, buf, *count, FT(dt), *src, *tag, FC(comm), req,    \
                         FR(req), PERSISTENT);                                                 \
    }                                                                                          \
    F_ALIASES(low, UP)
IRECV(irecv, MPI_IRECV, "MPI_Irecv", 0)
IRECV(recv_init, MPI_RECV_INIT, "MPI_Recv_init", 1)

/* the status to hand to MPI: ours if the user ignores it but a wildcard must be resolved */
#define F_STATUS(wild, st, tmp) ((wild) && lt_fstatus_ignored(st) ? (tmp) : (st))
#define C_STATUS(wild, fst, cst) ((wild) ? (PMPI_Status_f2c((fst), &(cst)), &(cst)) : NULL)

void mpi_recv_(void *buf, F *count, F *dt, F *src, F *tag, F *comm, F *st, F *ierr)
{
    uint64_t t0 = lt_now();
    int wild = lt_active() && lt_is_wild(*src, *tag);
    F tmp[LT_F_STATUS], *fst = F_STATUS(wild, st, tmp);
    MPI_Status cst;
    REAL(pmpi_recv_)(buf, count, dt, src, tag, comm, fst, ierr);
    if (lt_active())
        lt_log_recv(t0, buf, *count, FT(dt), *src, *tag, FC(comm), st, C_STATUS(wild, fst, cst));
}
F_ALIASES(recv, MPI_RECV)

void mpi_sendrecv_(void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount,
                   F *rtype, F *src, F *rtag, F *comm, F *st, F *ierr)
{
    uint64_t t0 = lt_now();
    int wild = lt_active() && lt_is_wild(*src, *rtag);
    F tmp[LT_F_STATUS], *fst = F_STATUS(wild, st, tmp);
    MPI_Status cst;
    REAL(pmpi_sendrecv_)(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm,
                         fst, ierr);
    if (lt_active())
        lt_log_sendrecv(t0, sbuf, *scount, FT(stype), *dest, *stag, rbuf, *rcount, FT(rtype),
                        *src, *rtag, FC(comm), st, C_STATUS(wild, fst, cst));
}
F_ALIASES(sendrecv, MPI_SENDRECV)

void mpi_sendrecv_replace_(void *buf, F *count, F *dt, F *dest, F *stag, F *src, F *rtag,
                           F *comm, F *st, F *ierr)
{
    uint64_t t0 = lt_now();
    int wild = lt_active() && lt_is_wild(*src, *rtag);
    F tmp[LT_F_STATUS], *fst = F_STATUS(wild, st, tmp);
    MPI_Status cst;
    REAL(pmpi_sendrecv_replace_)(buf, count, dt, dest, stag, src, rtag, comm, fst, ierr);
    if (lt_active())
        lt_log_sendrecv_replace(t0, buf, *count, FT(dt), *dest, *stag, *src, *rtag, FC(comm), st,
                                C_STATUS(wild, fst, cst));
}
F_ALIASES(sendrecv_replace, MPI_SENDRECV_REPLACE)

void mpi_probe_(F *src, F *tag, F *comm, F *st, F *ierr)
{
    uint64_t t0 = lt_now();
    int wild = lt_active() && lt_is_wild(*src, *tag);
    F tmp[LT_F_STATUS], *fst = F_STATUS(wild, st, tmp);
    MPI_Status cst;
    REAL(pmpi_probe_)(src, tag, comm, fst, ierr);
    if (lt_active())
        lt_log_probe(t0, *src, *tag, FC(comm), st, C_STATUS(wild, fst, cst));
}
F_ALIASES(probe, MPI_PROBE)

void mpi_iprobe_(F *src, F *tag, F *comm, F *flag, F *st, F *ierr)
{
    uint64_t t0 = lt_now();
    int wild = lt_active() && lt_is_wild(*src, *tag);
    F tmp[LT_F_STATUS], *fst = F_STATUS(wild, st, tmp);
    MPI_Status cst;
    REAL(pmpi_iprobe_)(src, tag, comm, flag, fst, ierr);
    if (lt_active())
        lt_log_iprobe(t0, *src, *tag, FC(comm), flag, *flag,
                      st, C_STATUS(wild && *flag, fst, cst));
}
F_ALIASES(iprobe, MPI_IPROBE)

/* ---- completion ---- */
void mpi_wait_(F *req, F *st, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_fcomp f;
    F *fst = lt_fcomp_begin(&f, req, 1, st, 0);
    REAL(pmpi_wait_)(req, fst, ierr);
    if (!f.on)
        return;
    char *p = lt_open("MPI_Wait", t0, 0);
    p = lt_ptr(p, req);
    p = lt_ptr(p, st);
    lt_commit(lt_fcomp_end(lt_end(p), &f, NULL, 1, 1));
}
F_ALIASES(wait, MPI_WAIT)

void mpi_waitall_(F *count, F *reqs, F *sts, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_fcomp f;
    F *fst = lt_fcomp_begin(&f, reqs, *count, sts, 1);
    REAL(pmpi_waitall_)(count, reqs, fst, ierr);
    if (!f.on)
        return;
    char *p = lt_open("MPI_Waitall", t0, 0);
    p = lt_int(p, *count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, sts);
    lt_commit(lt_fcomp_end(lt_end(p), &f, NULL, *count, 1));
}
F_ALIASES(waitall, MPI_WAITALL)

void mpi_waitany_(F *count, F *reqs, F *index, F *st, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_fcomp f;
    F *fst = lt_fcomp_begin(&f, reqs, *count, st, 0);
    REAL(pmpi_waitany_)(count, reqs, index, fst, ierr);
    if (!f.on)
        return;
    char *p = lt_open("MPI_Waitany", t0, 0);
    p = lt_int(p, *count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, index);
    p = lt_ptr(p, st);
    lt_commit(lt_fcomp_end(lt_end(p), &f, index, *index == MPI_UNDEFINED ? 0 : 1, 0));
}
F_ALIASES(waitany, MPI_WAITANY)

void mpi_waitsome_(F *incount, F *reqs, F *outcount, F *indices, F *sts, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_fcomp f;
    F *fst = lt_fcomp_begin(&f, reqs, *incount, sts, 1);
    REAL(pmpi_waitsome_)(incount, reqs, outcount, indices, fst, ierr);
    if (!f.on)
        return;
    char *p = lt_open("MPI_Waitsome", t0, 0);
    p = lt_int(p, *incount);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, outcount);
    p = lt_ptr(p, indices);
    p = lt_ptr(p, sts);
    int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    lt_commit(lt_fcomp_end(lt_end(p), &f, indices, n, 0));
}
F_ALIASES(waitsome, MPI_WAITSOME)

void mpi_test_(F *req, F *flag, F *st, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_fcomp f;
    F *fst = lt_fcomp_begin(&f, req, 1, st, 0);
    REAL(pmpi_test_)(req, flag, fst, ierr);
    if (!f.on)
        return;
    char *p = lt_open("MPI_Test", t0, 0);
    p = lt_ptr(p, req);
    p = lt_ptr(p, flag);
    p = lt_ptr(p, st);
    lt_commit(lt_fcomp_end(lt_end(p), &f, NULL, *flag ? 1 : 0, 1));
}
F_ALIASES(test, MPI_TEST)

void mpi_testall_(F *count, F *reqs, F *flag, F *sts, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_fcomp f;
    F *fst = lt_fcomp_begin(&f, reqs, *count, sts, 1);
    REAL(pmpi_testall_)(count, reqs, flag, fst, ierr);
    if (!f.on)
        return;
    char *p = lt_open("MPI_Testall", t0, 0);
    p = lt_int(p, *count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, flag);
    p = lt_ptr(p, sts);
    lt_commit(lt_fcomp_end(lt_end(p), &f, NULL, *flag ? *count : 0, 1));
}
F_ALIASES(testall, MPI_TESTALL)

void mpi_testany_(F *count, F *reqs, F *index, F *flag, F *st, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_fcomp f;
    F *fst = lt_fcomp_begin(&f, reqs, *count, st, 0);
    REAL(pmpi_testany_)(count, reqs, index, flag, fst, ierr);
    if (!f.on)
        return;
    char *p = lt_open("MPI_Testany", t0, 0);
    p = lt_int(p, *count);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, index);
    p = lt_ptr(p, flag);
    p = lt_ptr(p, st);
    int n = *flag && *index != MPI_UNDEFINED ? 1 : 0;
    lt_commit(lt_fcomp_end(lt_end(p), &f, index, n, 0));
}
F_ALIASES(testany, MPI_TESTANY)

void mpi_testsome_(F *incount, F *reqs, F *outcount, F *indices, F *sts, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_fcomp f;
    F *fst = lt_fcomp_begin(&f, reqs, *incount, sts, 1);
    REAL(pmpi_testsome_)(incount, reqs, outcount, indices, fst, ierr);
    if (!f.on)
        return;
    char *p = lt_open("MPI_Testsome", t0, 0);
    p = lt_int(p, *incount);
    p = lt_ptr(p, reqs);
    p = lt_ptr(p, outcount);
    p = lt_ptr(p, indices);
    p = lt_ptr(p, sts);
    int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    lt_commit(lt_fcomp_end(lt_end(p), &f, indices, n, 0));
}
F_ALIASES(testsome, MPI_TESTSOME)

/* ---- persistent requests ---- */
static void start_common(const char *name, size_t n, uint64_t t0, int all, int count, F *reqs)
{
    MPI_Request hsmall[LT_SMALL], *h = hsmall;
    const void *ssmall[LT_SMALL], **slots = ssmall;
    if (count > LT_SMALL) {
        h = malloc(sizeof(*h) * (size_t)count);
        slots = malloc(sizeof(void *) * (size_t)count);
    }
    for (int i = 0; i < count; i++) {
        h[i] = PMPI_Request_f2c(reqs[i]);
        slots[i] = &reqs[i];
    }
    lt_log_start(name, n, t0, all, count, reqs, h, slots);
    if (h != hsmall)
        free(h);
    if (slots != ssmall)
        free(slots);
}

void mpi_start_(F *req, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_start_)(req, ierr);
    if (lt_active())
        start_common(LT_NAME("MPI_Start"), t0, 0, 1, req);
}
F_ALIASES(start, MPI_START)

void mpi_startall_(F *count, F *reqs, F *ierr)
{
    uint64_t t0 = lt_now();
    REAL(pmpi_startall_)(count, reqs, ierr);
    if (lt_active())
        start_common(LT_NAME("MPI_Startall"), t0, 1, *count, reqs);
}
F_ALIASES(startall, MPI_STARTALL)

void mpi_request_free_(F *req, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_req *r = lt_active() ? lt_req_claim(FR(req), req) : NULL;
    REAL(pmpi_request_free_)(req, ierr);
    lt_log_request_gone(LT_NAME("MPI_Request_free"), "free", t0, req, r, 1);
}
F_ALIASES(request_free, MPI_REQUEST_FREE)

void mpi_cancel_(F *req, F *ierr)
{
    uint64_t t0 = lt_now();
    struct lt_req *r = lt_active() ? lt_req_claim(FR(req), req) : NULL;
    REAL(pmpi_cancel_)(req, ierr);
    lt_log_request_gone(LT_NAME("MPI_Cancel"), "cancel", t0, req, r, 0);
}
F_ALIASES(cancel, MPI_CANCEL)

double mpi_wtime_(void)
{
    uint64_t t0 = lt_now();
    static double (*real)(void);
    if (!real)
        real = (double (*)(void))(void (*)(void))lt_fsym("pmpi_wtime_");
    double t = real();
    LT_REC("MPI_Wtime", t0, );
    return t;
}
F_ALIASES(wtime, MPI_WTIME)
#endif
