/* Point-to-point wrappers: sends, receives, Sendrecv, probes, persistent requests.
 *
 * Every transfer on a communicator with a shadow becomes an injected one (ij_req.c):
 * blocking calls are the nonblocking transfer plus a polling loop that returns at the
 * release time; nonblocking calls return MPI's own request handle, which the Wait/Test
 * wrappers (ij_wait.c) recognise. MPI_PROC_NULL peers and communicators without a shadow
 * pass straight to MPI.
 */
#include "ij.h"

#include <stdlib.h>

/* the communicator's injector state, or NULL to pass the call through */
static struct ij_comm *app_comm(MPI_Comm comm)
{
    if (!ij.active)
        return NULL;
    struct ij_comm *c = ij_comm_get(comm);
    if (!c)
        ij_warn_once("unknown-comm", "a communicator created by a call the injector does not "
                     "wrap is used: its messages are not delayed");
    return c;
}

static int send_blocking(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm, int mode)
{
    struct ij_comm *c = app_comm(comm);
    if (!c || dest == MPI_PROC_NULL) {
        switch (mode) {
        case IJ_MODE_SYNC:
            return PMPI_Ssend(buf, count, dt, dest, tag, comm);
        case IJ_MODE_BUF:
            return PMPI_Bsend(buf, count, dt, dest, tag, comm);
        case IJ_MODE_READY:
            return PMPI_Rsend(buf, count, dt, dest, tag, comm);
        default:
            return PMPI_Send(buf, count, dt, dest, tag, comm);
        }
    }
    struct ij_req r = {0};
    ij_send_begin(&r, c, IJ_APP, buf, count, dt, dest, comm, tag, mode);
    ij_wait_one(&r);
    return PMPI_Wait(&r.mreq, MPI_STATUS_IGNORE);
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, dt, dest, tag, comm, IJ_MODE_STD);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, dt, dest, tag, comm, IJ_MODE_SYNC);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, dt, dest, tag, comm, IJ_MODE_BUF);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, dt, dest, tag, comm, IJ_MODE_READY);
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    struct ij_comm *c = app_comm(comm);
    if (!c || src == MPI_PROC_NULL)
        return PMPI_Recv(buf, count, dt, src, tag, comm, status);
    struct ij_req r = {0};
    uint64_t outer = ij_loop_enter(); /* posted inside the waiting loop */
    ij_recv_begin(&r, c, IJ_APP, buf, count, dt, src, comm, tag);
    ij_wait_one(&r);
    ij_loop_leave(outer);
    ij_unlist(&r);
    return PMPI_Wait(&r.mreq, status);
}

static int send_nonblocking(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                            MPI_Comm comm, MPI_Request *req, int mode)
{
    struct ij_comm *c = app_comm(comm);
    if (!c || dest == MPI_PROC_NULL) {
        switch (mode) {
        case IJ_MODE_SYNC:
            return PMPI_Issend(buf, count, dt, dest, tag, comm, req);
        case IJ_MODE_BUF:
            return PMPI_Ibsend(buf, count, dt, dest, tag, comm, req);
        case IJ_MODE_READY:
            return PMPI_Irsend(buf, count, dt, dest, tag, comm, req);
        default:
            return PMPI_Isend(buf, count, dt, dest, tag, comm, req);
        }
    }
    struct ij_req *r = ij_req_new();
    ij_send_begin(r, c, IJ_APP, buf, count, dt, dest, comm, tag, mode);
    ij_req_track(r);
    *req = r->mreq;
    return MPI_SUCCESS;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    return send_nonblocking(buf, count, dt, dest, tag, comm, req, IJ_MODE_STD);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    return send_nonblocking(buf, count, dt, dest, tag, comm, req, IJ_MODE_SYNC);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    return send_nonblocking(buf, count, dt, dest, tag, comm, req, IJ_MODE_BUF);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    return send_nonblocking(buf, count, dt, dest, tag, comm, req, IJ_MODE_READY);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    struct ij_comm *c = app_comm(comm);
    if (!c || src == MPI_PROC_NULL)
        return PMPI_Irecv(buf, count, dt, src, tag, comm, req);
    struct ij_req *r = ij_req_new();
    ij_recv_begin(r, c, IJ_APP, buf, count, dt, src, comm, tag);
    ij_req_track(r);
    *req = r->mreq;
    return MPI_SUCCESS;
}

/* Sendrecv(_replace): the send is posted before the receive, as the model has them (two
 * concurrent operations, docs/model.md). Posted receive-first, a rank that enters the call
 * after its peer's rendezvous RTS arrived does the whole transfer inside MPI_Irecv (Open MPI
 * moves a shared-memory rendezvous message with one single-copy read in the call that matches
 * it) before its own RTS goes out, and the peer's transfer starts only after it: the two
 * transfers ran one after the other. At ΔL > 0 the ranks leave each exchange up to ΔL apart
 * (a receiver's 3·ΔL against a sender's 4th, as in the model), so every call of a 2 MiB
 * Sendrecv loop paid a second transfer (548 against 325 + 80 µs per call at ΔL = 20 µs,
 * docs/injector.md).
 *
 * send and receive concurrently; both released */
static void pair(struct ij_req *s, struct ij_req *r)
{
    uint64_t outer = ij_loop_enter();
    for (;;) {
        int a = ij_poll(s), b = ij_poll(r);
        if (a && b)
            break;
        ij_progress();
    }
    ij_loop_leave(outer);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag,
                 void *rbuf, int rcount, MPI_Datatype rdt, int src, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    struct ij_comm *c = app_comm(comm);
    if (!c)
        return PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm,
                             status);
    struct ij_req s = {0}, r = {0};
    uint64_t outer = ij_loop_enter(); /* posted inside the waiting loop */
    ij_send_begin(&s, c, IJ_APP, sbuf, scount, sdt, dest, comm, stag, IJ_MODE_STD);
    ij_recv_begin(&r, c, IJ_APP, rbuf, rcount, rdt, src, comm, rtag);
    pair(&s, &r);
    ij_loop_leave(outer);
    ij_unlist(&r);
    PMPI_Wait(&s.mreq, MPI_STATUS_IGNORE);
    return PMPI_Wait(&r.mreq, status);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src,
                         int rtag, MPI_Comm comm, MPI_Status *status)
{
    struct ij_comm *c = app_comm(comm);
    if (!c)
        return PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status);
    /* the outgoing data is packed first: the receive overwrites buf while it travels */
    int size = 0, pos = 0;
    PMPI_Pack_size(count, dt, comm, &size);
    void *tmp = malloc(size > 0 ? (size_t)size : 1);
    if (!tmp)
        ij_fatal("out of memory");
    PMPI_Pack(buf, count, dt, tmp, size, &pos, comm);
    struct ij_req s = {0}, r = {0};
    uint64_t outer = ij_loop_enter();
    ij_send_begin(&s, c, IJ_APP, tmp, pos, MPI_PACKED, dest, comm, stag, IJ_MODE_STD);
    ij_recv_begin(&r, c, IJ_APP, buf, count, dt, src, comm, rtag);
    pair(&s, &r);
    ij_loop_leave(outer);
    ij_unlist(&r);
    PMPI_Wait(&s.mreq, MPI_STATUS_IGNORE);
    int rc = PMPI_Wait(&r.mreq, status);
    free(tmp);
    return rc;
}

/* ---- probes: a message becomes visible at its release time ---- */

/* One probe; `waiting`: time of the previous unsuccessful probe of a blocking MPI_Probe
 * (0: none), which makes the first sighting the natural arrival. */
static int probe_once(struct ij_comm *c, int src, int tag, int *flag, MPI_Status *st,
                      uint64_t waiting)
{
    int rc = PMPI_Iprobe(src, tag, c->app, flag, st);
    if (!*flag || st->MPI_SOURCE == MPI_PROC_NULL)
        return rc;
    uint64_t now = ij_now();
    /* earlier receives that MPI already completed take their timestamps first */
    ij_observe_matching(c, IJ_APP, st->MPI_SOURCE, st->MPI_TAG, UINT64_MAX);
    uint64_t *rel;
    struct ij_ts *e = ij_ts_peek(c, IJ_APP, st->MPI_SOURCE, st->MPI_TAG, &rel);
    if (!*rel) {
        /* the envelope: a rendezvous message's RTS travels like a small eager message */
        uint64_t sz = e->bytes > ij.eager_limit ? 0 : e->bytes;
        double ow = waiting && now - waiting < 5000 ? (double)(now - e->t_send) : ij_ow_hat(sz);
        if (ow > (double)now - (double)e->t_send) /* it is here now: arrived by now at the latest */
            ow = (double)now - (double)e->t_send;
        uint64_t r = e->t_send + (uint64_t)(ow > 0 ? ow : 0) + ij_delta(c, st->MPI_SOURCE);
        *rel = r > now ? r : now;
        ij.n_probe++;
    }
    if (now < *rel)
        *flag = 0;
    return rc;
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    struct ij_comm *c = app_comm(comm);
    if (!c)
        return PMPI_Iprobe(src, tag, comm, flag, status);
    MPI_Status st;
    int rc = probe_once(c, src, tag, flag, &st, 0);
    if (!*flag)
        ij_progress();
    else if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status)
{
    struct ij_comm *c = app_comm(comm);
    if (!c)
        return PMPI_Probe(src, tag, comm, status);
    MPI_Status st;
    int flag = 0, rc;
    uint64_t last = 0, t0 = ij_loop ? 0 : ij_ticks(); /* a wait of its own (busy time) */
    for (;;) {
        rc = probe_once(c, src, tag, &flag, &st, last);
        if (flag)
            break;
        last = ij_now();
        ij_progress();
    }
    if (t0)
        ij_wait_ticks += ij_ticks() - t0;
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

/* Matched probes hand a message to a receive the injector cannot see: refuse them. */
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    ij_fatal("MPI_Mprobe is not supported by the latency injector");
    return PMPI_Mprobe(source, tag, comm, message, status);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    ij_fatal("MPI_Improbe is not supported by the latency injector");
    return PMPI_Improbe(source, tag, comm, flag, message, status);
}

/* ---- persistent requests ---- */
static int persistent(int kind, int mode, void *buf, int count, MPI_Datatype dt, int peer,
                      int tag, MPI_Comm comm, MPI_Request *req)
{
    struct ij_comm *c = app_comm(comm);
    int rc;
    if (kind == IJ_RECV)
        rc = PMPI_Recv_init(buf, count, dt, peer, tag, comm, req);
    else if (mode == IJ_MODE_SYNC)
        rc = PMPI_Ssend_init(buf, count, dt, peer, tag, comm, req);
    else if (mode == IJ_MODE_BUF)
        rc = PMPI_Bsend_init(buf, count, dt, peer, tag, comm, req);
    else if (mode == IJ_MODE_READY)
        rc = PMPI_Rsend_init(buf, count, dt, peer, tag, comm, req);
    else
        rc = PMPI_Send_init(buf, count, dt, peer, tag, comm, req);
    if (rc != MPI_SUCCESS || !c || peer == MPI_PROC_NULL)
        return rc;
    struct ij_req *r = ij_req_new();
    ij_req_describe(r, kind, c, IJ_APP, peer, tag, count, dt);
    r->persistent = 1;
    r->mreq = *req;
    ij_req_track(r);
    return rc;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                  MPI_Comm comm, MPI_Request *req)
{
    return persistent(IJ_SEND, IJ_MODE_STD, (void *)buf, count, dt, dest, tag, comm, req);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm, MPI_Request *req)
{
    return persistent(IJ_SEND, IJ_MODE_SYNC, (void *)buf, count, dt, dest, tag, comm, req);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm, MPI_Request *req)
{
    return persistent(IJ_SEND, IJ_MODE_BUF, (void *)buf, count, dt, dest, tag, comm, req);
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm, MPI_Request *req)
{
    return persistent(IJ_SEND, IJ_MODE_READY, (void *)buf, count, dt, dest, tag, comm, req);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    return persistent(IJ_RECV, IJ_MODE_STD, buf, count, dt, src, tag, comm, req);
}

int MPI_Start(MPI_Request *req)
{
    struct ij_req *r = ij.active ? ij_req_find(*req) : NULL;
    if (r && r->kind == IJ_SEND)
        ij_send_restart(r); /* the timestamp goes first */
    else if (r && r->kind == IJ_RECV)
        ij_recv_restart(r);
    int rc = PMPI_Start(req);
    if (r && r->kind == IJ_RECV && r->bytes > ij.eager_limit)
        r->t_posted = ij_ticks(); /* the data may move inside PMPI_Start (ij_recv_begin) */
    return rc;
}

int MPI_Startall(int n, MPI_Request reqs[])
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = MPI_Start(&reqs[i]);
    return rc;
}

int MPI_Request_free(MPI_Request *req)
{
    struct ij_req *r = ij.active ? ij_req_find(*req) : NULL;
    if (r) {
        if (r->kind == IJ_RECV && r->active && !r->done)
            ij_warn_once("free-recv", "MPI_Request_free on an active receive: later messages "
                         "of its stream may be released at the wrong time");
        ij_req_untrack(r);
        ij_req_free(r);
    }
    return PMPI_Request_free(req);
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    struct ij_req *r = ij.active ? ij_req_find(req) : NULL;
    if (!r)
        return PMPI_Request_get_status(req, flag, status);
    *flag = ij_poll(r);
    if (!*flag) {
        ij_progress();
        return MPI_SUCCESS;
    }
    return PMPI_Request_get_status(req, flag, status);
}
