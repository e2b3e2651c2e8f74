/* Record writers shared by the C wrappers and the Fortran wrappers (w_fortran.c).
 * Arguments are C values; addresses are what the caller passed (printed as liballprof does). */
#ifndef LT_LOG_H
#define LT_LOG_H

#include "lt.h"

#define LT_NAME(s) (s), (sizeof(s) - 1)

/* point to point */
void lt_log_send(const char *name, size_t n, uint64_t t0, const void *buf, int count,
                 MPI_Datatype dt, int dest, int tag, MPI_Comm comm);
void lt_log_isend(const char *name, size_t n, uint64_t t0, const void *buf, int count,
                  MPI_Datatype dt, int dest, int tag, MPI_Comm comm, const void *reqaddr,
                  MPI_Request req);
void lt_log_recv(uint64_t t0, const void *buf, int count, MPI_Datatype dt, int src, int tag,
                 MPI_Comm comm, const void *staddr, const MPI_Status *wild_st);
void lt_log_irecv(const char *name, size_t n, uint64_t t0, const void *buf, int count,
                  MPI_Datatype dt, int src, int tag, MPI_Comm comm, const void *reqaddr,
                  MPI_Request req, int persistent);
void lt_log_sendrecv(uint64_t t0, const void *sbuf, int scount, MPI_Datatype stype, int dest,
                     int stag, const void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                     MPI_Comm comm, const void *staddr, const MPI_Status *wild_st);
void lt_log_sendrecv_replace(uint64_t t0, const void *buf, int count, MPI_Datatype dt, int dest,
                             int stag, int src, int rtag, MPI_Comm comm, const void *staddr,
                             const MPI_Status *wild_st);
void lt_log_probe(uint64_t t0, int src, int tag, MPI_Comm comm, const void *staddr,
                  const MPI_Status *wild_st);
void lt_log_iprobe(uint64_t t0, int src, int tag, MPI_Comm comm, const void *flagaddr, int flag,
                   const void *staddr, const MPI_Status *wild_st);

/* completion: ids are the request handles captured before the call (lt_req_id) */
struct lt_done {
    const uint64_t *ids; /* input requests */
    const int *idx;      /* completed indices, NULL = every input request */
    int n;               /* number of entries in idx (or of ids if idx is NULL) */
    const MPI_Status *st; /* statuses of the completed requests (indexed like idx), or NULL */
    int st_by_input;      /* st is indexed by input position instead of by completion */
};
char *lt_ext_completed(char *p, const struct lt_done *d);
int lt_any_wild(const uint64_t *ids, int n);
void lt_log_start(uint64_t t0, const void *reqaddr, MPI_Request req);
void lt_log_startall(uint64_t t0, int count, const void *reqs_addr, const MPI_Request *reqs);
void lt_log_request_free(uint64_t t0, const void *reqaddr, uint64_t id);

#endif
