/* Point-to-point: sends, receives, probes. Wildcard receives get a "#@ status" line with the
 * matched source (as a world rank), tag and size; the user's MPI_STATUS_IGNORE is replaced by
 * a local status for that purpose. */
#include "lt_log.h"

/* buf, count, datatype, peer, tag, comm: the common prefix of p2p records */
static char *p2p_fields(char *p, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                        MPI_Comm comm)
{
    p = lt_ptr(p, buf);
    p = lt_int(p, count);
    p = lt_dtype(p, dt);
    p = lt_int(p, peer);
    p = lt_int(p, tag);
    return lt_comm(p, comm);
}

void lt_log_send(const char *name, size_t n, uint64_t t0, const void *buf, int count,
                 MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (!lt_active())
        return;
    char *p = lt_open_n(name, n, t0, 0);
    p = p2p_fields(p, buf, count, dt, dest, tag, comm);
    lt_commit(lt_end(p));
}

void lt_log_isend(const char *name, size_t n, uint64_t t0, const void *buf, int count,
                  MPI_Datatype dt, int dest, int tag, MPI_Comm comm, const void *reqaddr,
                  MPI_Request req, int persistent)
{
    if (!lt_active())
        return;
    char *p = lt_open_n(name, n, t0, 0);
    p = p2p_fields(p, buf, count, dt, dest, tag, comm);
    p = lt_ptr(p, reqaddr);
    lt_req_new(req, reqaddr, persistent, MPI_COMM_NULL, NULL);
    lt_commit(lt_end(p));
}

void lt_log_recv(uint64_t t0, const void *buf, int count, MPI_Datatype dt, int src, int tag,
                 MPI_Comm comm, const void *staddr, const MPI_Status *wild_st)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Recv", t0, 0);
    p = p2p_fields(p, buf, count, dt, src, tag, comm);
    p = lt_ptr(p, staddr);
    p = lt_end(p);
    if (wild_st)
        p = lt_ext_status(p, -1, comm, wild_st);
    lt_commit(p);
}

void lt_log_irecv(const char *name, size_t n, uint64_t t0, const void *buf, int count,
                  MPI_Datatype dt, int src, int tag, MPI_Comm comm, const void *reqaddr,
                  MPI_Request req, int persistent)
{
    if (!lt_active())
        return;
    char *p = lt_open_n(name, n, t0, 0);
    p = p2p_fields(p, buf, count, dt, src, tag, comm);
    p = lt_ptr(p, reqaddr);
    lt_req_new(req, reqaddr, persistent, lt_is_wild(src, tag) ? comm : MPI_COMM_NULL, NULL);
    lt_commit(lt_end(p));
}

void lt_log_sendrecv(uint64_t t0, const void *sbuf, int scount, MPI_Datatype stype, int dest,
                     int stag, const void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                     MPI_Comm comm, const void *staddr, const MPI_Status *wild_st)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Sendrecv", t0, 0);
    p = lt_ptr(p, sbuf);
    p = lt_int(p, scount);
    p = lt_dtype(p, stype);
    p = lt_int(p, dest);
    p = lt_int(p, stag);
    p = p2p_fields(p, rbuf, rcount, rtype, src, rtag, comm);
    p = lt_ptr(p, staddr);
    p = lt_end(p);
    if (wild_st)
        p = lt_ext_status(p, -1, comm, wild_st);
    lt_commit(p);
}

void lt_log_sendrecv_replace(uint64_t t0, const void *buf, int count, MPI_Datatype dt, int dest,
                             int stag, int src, int rtag, MPI_Comm comm, const void *staddr,
                             const MPI_Status *wild_st)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Sendrecv_replace", t0, 0);
    p = lt_ptr(p, buf);
    p = lt_int(p, count);
    p = lt_dtype(p, dt);
    p = lt_int(p, dest);
    p = lt_int(p, stag);
    p = lt_int(p, src);
    p = lt_int(p, rtag);
    p = lt_comm(p, comm);
    p = lt_ptr(p, staddr);
    p = lt_end(p);
    if (wild_st)
        p = lt_ext_status(p, -1, comm, wild_st);
    lt_commit(p);
}

void lt_log_probe(uint64_t t0, int src, int tag, MPI_Comm comm, const void *staddr,
                  const MPI_Status *wild_st)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Probe", t0, 0);
    p = lt_int(p, src);
    p = lt_int(p, tag);
    p = lt_comm(p, comm);
    p = lt_ptr(p, staddr);
    p = lt_end(p);
    if (wild_st)
        p = lt_ext_status(p, -1, comm, wild_st);
    lt_commit(p);
}

void lt_log_iprobe(uint64_t t0, int src, int tag, MPI_Comm comm, const void *flagaddr, int flag,
                   const void *staddr, const MPI_Status *wild_st)
{
    if (!lt_active())
        return;
    char *p = lt_open("MPI_Iprobe", t0, 0);
    p = lt_int(p, src);
    p = lt_int(p, tag);
    p = lt_comm(p, comm);
    p = lt_ptr(p, flagaddr);
    p = lt_ptr(p, staddr);
    p = lt_end(p);
    if (wild_st && flag)
        p = lt_ext_status(p, -1, comm, wild_st);
    lt_commit(p);
}

/* ---- C bindings ---- */
#define SEND(NAME, PNAME)                                                                      \
    int NAME(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)   \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        int rc = PNAME(buf, count, dt, dest, tag, comm);                                      \
        lt_log_send(LT_NAME(#NAME), t0, buf, count, dt, dest, tag, comm);                     \
        return rc;                                                                             \
    }
SEND(MPI_Send, PMPI_Send)
SEND(MPI_Ssend, PMPI_Ssend)
SEND(MPI_Bsend, PMPI_Bsend)
SEND(MPI_Rsend, PMPI_Rsend)

#define ISEND(NAME, PNAME, PERSISTENT)                                                         \
    int NAME(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,   \
             MPI_Request *req)                                                                 \
    {                                                                                          \
        uint64_t t0 = lt_now();                                                                \
        int rc = PNAME(buf, count, dt, dest, tag, comm, req);                                 \
        lt_log_isend(LT_NAME(#NAME), t0, buf, count, dt, dest, tag, comm, req, *req,          \
                     PERSISTENT);                                                              \
        return rc;                                                                             \
    }
ISEND(MPI_Isend, PMPI_Isend, 0)
ISEND(MPI_Issend, PMPI_Issend, 0)
ISEND(MPI_Ibsend, PMPI_Ibsend, 0)
ISEND(MPI_Irsend, PMPI_Irsend, 0)
ISEND(MPI_Send_init, PMPI_Send_init, 1)
ISEND(MPI_Ssend_init, PMPI_Ssend_init, 1)
ISEND(MPI_Bsend_init, PMPI_Bsend_init, 1)
ISEND(MPI_Rsend_init, PMPI_Rsend_init, 1)

/* status to pass to MPI: ours when the user ignores it but the trace needs it */
#define WILD_STATUS(src, tag, status, tmp)                                                     \
    (lt_active() && lt_is_wild(src, tag) && (status) == MPI_STATUS_IGNORE ? &(tmp) : (status))

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    uint64_t t0 = lt_now();
    MPI_Status tmp, *st = WILD_STATUS(src, tag, status, tmp);
    int rc = PMPI_Recv(buf, count, dt, src, tag, comm, st);
    lt_log_recv(t0, buf, count, dt, src, tag, comm, status, lt_is_wild(src, tag) ? st : NULL);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, req);
    lt_log_irecv(LT_NAME("MPI_Irecv"), t0, buf, count, dt, src, tag, comm, req, *req, 0);
    return rc;
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Recv_init(buf, count, dt, src, tag, comm, req);
    lt_log_irecv(LT_NAME("MPI_Recv_init"), t0, buf, count, dt, src, tag, comm, req, *req, 1);
    return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                 void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    uint64_t t0 = lt_now();
    MPI_Status tmp, *st = WILD_STATUS(src, rtag, status, tmp);
    int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm,
                           st);
    lt_log_sendrecv(t0, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm,
                    status, lt_is_wild(src, rtag) ? st : NULL);
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src,
                         int rtag, MPI_Comm comm, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    MPI_Status tmp, *st = WILD_STATUS(src, rtag, status, tmp);
    int rc = PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, st);
    lt_log_sendrecv_replace(t0, buf, count, dt, dest, stag, src, rtag, comm, status,
                            lt_is_wild(src, rtag) ? st : NULL);
    return rc;
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    MPI_Status tmp, *st = WILD_STATUS(src, tag, status, tmp);
    int rc = PMPI_Probe(src, tag, comm, st);
    lt_log_probe(t0, src, tag, comm, status, lt_is_wild(src, tag) ? st : NULL);
    return rc;
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    uint64_t t0 = lt_now();
    MPI_Status tmp, *st = WILD_STATUS(src, tag, status, tmp);
    int rc = PMPI_Iprobe(src, tag, comm, flag, st);
    lt_log_iprobe(t0, src, tag, comm, flag, *flag, status, lt_is_wild(src, tag) ? st : NULL);
    return rc;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Get_count(status, dt, count);
    LT_REC("MPI_Get_count", t0, p = lt_ptr(p, status); p = lt_dtype(p, dt); p = lt_ptr(p, count));
    return rc;
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Get_elements(status, dt, count);
    LT_REC("MPI_Get_elements", t0, p = lt_ptr(p, status); p = lt_dtype(p, dt);
           p = lt_ptr(p, count));
    return rc;
}

int MPI_Buffer_attach(void *buffer, int size)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Buffer_attach(buffer, size);
    LT_REC("MPI_Buffer_attach", t0, p = lt_ptr(p, buffer); p = lt_int(p, size));
    return rc;
}

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Buffer_detach(buffer_addr, size);
    LT_REC("MPI_Buffer_detach", t0, p = lt_ptr(p, buffer_addr); p = lt_ptr(p, size));
    return rc;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    uint64_t t0 = lt_now();
    int rc = PMPI_Test_cancelled(status, flag);
    LT_REC("MPI_Test_cancelled", t0, p = lt_ptr(p, status); p = lt_ptr(p, flag));
    return rc;
}
