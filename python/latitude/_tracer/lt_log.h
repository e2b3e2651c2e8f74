/* Record writers shared by the C wrappers and the Fortran wrappers (w_fortran.c).
 * Arguments are C values; addresses are what the caller passed (printed as liballprof does). */
#ifndef LT_LOG_H
#define LT_LOG_H

#include "lt.h"

#define LT_NAME(s) (s), (sizeof(s) - 1)

/* environment (w_env.c) */
void lt_log_init(int thread, const void *argc, const void *argv, int required,
                 const void *provided_addr, int provided);
void lt_log_finalize(uint64_t t0);
void lt_log_abort(uint64_t t0, MPI_Comm comm, int errorcode);

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

/* collectives (w_coll.c): reqaddr NULL for blocking ones */
void lt_log_barrier(const char *name, size_t n, uint64_t t0, MPI_Comm comm, const void *reqaddr,
                    MPI_Request req);
void lt_log_bcast(const char *name, size_t n, uint64_t t0, const void *buf, int count,
                  MPI_Datatype dt, int root, MPI_Comm comm, const void *reqaddr, MPI_Request req);
void lt_log_reduce(const char *name, size_t n, uint64_t t0, const void *sbuf, void *rbuf,
                   int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
                   const void *reqaddr, MPI_Request req);
void lt_log_allreduce(const char *name, size_t n, uint64_t t0, const void *sbuf, void *rbuf,
                      int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, const void *reqaddr,
                      MPI_Request req);
void lt_log_reduce_scatter(const char *name, size_t n, uint64_t t0, const void *sbuf, void *rbuf,
                           const int *rcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                           const void *reqaddr, MPI_Request req);
void lt_log_rooted(const char *name, size_t n, uint64_t t0, int scatter, const void *sbuf,
                   int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   int root, MPI_Comm comm, const void *reqaddr, MPI_Request req);
void lt_log_all(const char *name, size_t n, uint64_t t0, const void *sbuf, int scount,
                MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm,
                const void *reqaddr, MPI_Request req);
void lt_log_gatherv(const char *name, size_t n, uint64_t t0, const void *sbuf, int scount,
                    MPI_Datatype stype, void *rbuf, const int *rcounts, const int *displs,
                    MPI_Datatype rtype, int root, MPI_Comm comm, const void *reqaddr,
                    MPI_Request req);
void lt_log_scatterv(const char *name, size_t n, uint64_t t0, const void *sbuf, const int *scounts,
                     const int *displs, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, int root, MPI_Comm comm, const void *reqaddr,
                     MPI_Request req);
void lt_log_allgatherv(const char *name, size_t n, uint64_t t0, const void *sbuf, int scount,
                       MPI_Datatype stype, void *rbuf, const int *rcounts, const int *displs,
                       MPI_Datatype rtype, MPI_Comm comm, const void *reqaddr, MPI_Request req);
void lt_log_alltoallv(const char *name, size_t n, uint64_t t0, const void *sbuf,
                      const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
                      const int *rcounts, const int *rdispls, MPI_Datatype rtype, MPI_Comm comm,
                      const void *reqaddr, MPI_Request req);
void lt_log_alltoallw(const char *name, size_t n, uint64_t t0, const void *sbuf,
                      const int *scounts, const int *sdispls, const MPI_Datatype *stypes,
                      void *rbuf, const int *rcounts, const int *rdispls,
                      const MPI_Datatype *rtypes, MPI_Comm comm, const void *reqaddr,
                      MPI_Request req);

/* completion calls (w_req.c) */
#define LT_SMALL 64
struct lt_completion {
    struct lt_req *small[LT_SMALL], **rs;
    int n, wild;
    MPI_Status sts[LT_SMALL], *st; /* statuses handed to MPI */
};
/* Resolve the input requests (slots: where each lives, NULL = &reqs[i]); c->wild tells
 * whether statuses are needed (then set c->st to them before lt_comp_end). */
void lt_comp_begin(struct lt_completion *c, const MPI_Request *reqs, const void *const *slots,
                   int n);
char *lt_comp_end(char *p, struct lt_completion *c, const int *idx, int ndone, int by_input);
void lt_comp_free(struct lt_completion *c, MPI_Status *user_st);
void lt_log_start(const char *name, size_t n, uint64_t t0, int all, int count,
                  const void *reqs_addr, const MPI_Request *reqs, const void *const *slots);
void lt_log_request_gone(const char *name, size_t n, const char *key, uint64_t t0,
                         const void *reqaddr, struct lt_req *r, int drop);

#endif
