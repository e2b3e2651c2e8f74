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
                  MPI_Request req, int persistent);
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

/* completion calls (w_req.c) */
#define LT_SMALL 64
struct lt_completion {
    struct lt_req *small[LT_SMALL], **rs;
    int n, wild;
    MPI_Status sts[LT_SMALL], *st; /* statuses handed to MPI */
};
/* Resolve the input requests (slots: where each lives, NULL = &reqs[i]); picks the statuses
 * to hand to MPI (ours when the user ignores them but a wildcard receive may complete). */
void lt_comp_begin(struct lt_completion *c, const MPI_Request *reqs, const void *const *slots,
                   int n, MPI_Status *user_st, int many);
char *lt_comp_end(char *p, struct lt_completion *c, const int *idx, int ndone, int by_input);
void lt_comp_free(struct lt_completion *c, MPI_Status *user_st);
void lt_log_start(const char *name, size_t n, uint64_t t0, int all, int count,
                  const void *reqs_addr, const MPI_Request *reqs, const void *const *slots);
void lt_log_request_gone(const char *name, size_t n, const char *key, uint64_t t0,
                         const void *reqaddr, struct lt_req *r, int drop);

#endif
