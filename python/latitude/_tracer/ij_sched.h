/* Collective schedules: one rank's part of a collective as a small dependency graph of
 * sends, receives and local steps (reductions, copies), the same shape as the `Prog` of the
 * collective library in latitude-core (collectives/prog.rs) that `latitude schedule` uses
 * to model it. An op starts when every op it depends on has finished; sends and receives are
 * injected transfers on the communicator's shadow (channel IJ_COLL), so each collective
 * message gets ΔL exactly like a point-to-point one. Local steps take no modelled time
 * (the model, like Schedgen and LLAMP, charges nothing for reductions).
 *
 * Blocking collectives run their schedule to completion (ij_sched_run); nonblocking ones
 * return a generalized request and advance in every waiting loop (ij_sched_start).
 */
#ifndef IJ_SCHED_H
#define IJ_SCHED_H

#include "ij.h"

enum { IJ_OP_SEND, IJ_OP_RECV, IJ_OP_LOCAL };
enum { IJ_LOC_NOP, IJ_LOC_REDUCE, IJ_LOC_REDUCE_REV, IJ_LOC_COPY, IJ_LOC_FN };

struct ij_op {
    int kind, state; /* state: 0 waiting, 1 running, 2 finished */
    int peer;
    void *buf;
    int count;
    MPI_Datatype dt;
    /* local steps: REDUCE buf = in op buf; REDUCE_REV buf = buf op in (via in); COPY in -> buf */
    int loc;
    void *in;
    int icount;
    MPI_Datatype idt;
    MPI_Op op;
    void (*fn)(void *);
    void *arg;
    int dep0, ndep;
    struct ij_req rq;
};

struct ij_sched {
    struct ij_comm *c;
    int tag, p, r;          /* payload tag, communicator size, my rank */
    struct ij_op *ops;
    int nops, capops, ndone, first;
    int *deps;
    int ndeps, capdeps;
    void **mem;             /* freed with the schedule */
    int nmem, capmem;
    MPI_Datatype *types;    /* derived types freed with the schedule */
    int ntypes, captypes;
    MPI_Request greq;       /* nonblocking: the application's request */
    struct ij_sched *next;  /* active nonblocking schedules */
    int completed;
};

/* at most two ops a step waits for (a Sendrecv round); IJ_JOIN makes one of more */
typedef struct {
    int id[2], n;
} ij_front;
#define IJ_NONE ((ij_front){{0, 0}, 0})
static inline ij_front ij_one(int id) { return (ij_front){{id, 0}, 1}; }
static inline ij_front ij_two(int a, int b) { return (ij_front){{a, b}, 2}; }

struct ij_sched *ij_sched_new(struct ij_comm *c);
void ij_sched_free(struct ij_sched *s);
int ij_sched_run(struct ij_sched *s);                     /* blocking */
int ij_sched_start(struct ij_sched *s, MPI_Request *req); /* nonblocking */

int ij_send(struct ij_sched *s, ij_front after, int peer, const void *buf, int count,
            MPI_Datatype dt);
int ij_recv(struct ij_sched *s, ij_front after, int peer, void *buf, int count, MPI_Datatype dt);
ij_front ij_sendrecv(struct ij_sched *s, ij_front after, int to, const void *sbuf, int scount,
                     MPI_Datatype sdt, int from, void *rbuf, int rcount, MPI_Datatype rdt);
/* inout = in op inout (rev = 0) or inout op in (rev = 1; `in` is overwritten) */
int ij_reduce(struct ij_sched *s, ij_front after, void *in, void *inout, int count,
              MPI_Datatype dt, MPI_Op op, int rev);
int ij_copy_op(struct ij_sched *s, ij_front after, const void *src, int scount,
               MPI_Datatype sdt, void *dst, int dcount, MPI_Datatype ddt);
int ij_fn(struct ij_sched *s, ij_front after, void (*fn)(void *), void *arg);
int ij_join(struct ij_sched *s, const int *ids, int n);

/* memory and types that live as long as the schedule */
void *ij_mem(struct ij_sched *s, size_t bytes);
void *ij_elems(struct ij_sched *s, int count, MPI_Datatype dt); /* room for count elements */
MPI_Datatype ij_keep_type(struct ij_sched *s, MPI_Datatype t);  /* commits, frees later */

/* copy now (before any message of the schedule is issued) */
void ij_copy(const void *src, int scount, MPI_Datatype sdt, void *dst, int dcount,
             MPI_Datatype ddt);
MPI_Aint ij_extent(MPI_Datatype dt);
int ij_commutative(MPI_Op op);

/* ---- algorithms (ij_coll_a.c, ij_coll_b.c); return 0, or -1 when they cannot run (the
 * caller passes the call to MPI) ---- */
void ij_barrier_dissemination(struct ij_sched *s);
int ij_bcast_binomial(struct ij_sched *s, void *buf, int count, MPI_Datatype dt, int root);
int ij_bcast_scatter_allgather(struct ij_sched *s, void *buf, int count, MPI_Datatype dt,
                               int root);
int ij_reduce_binomial(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                       MPI_Datatype dt, MPI_Op op, int root);
int ij_reduce_rabenseifner(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                           MPI_Datatype dt, MPI_Op op, int root);
int ij_allreduce_recdoub(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                         MPI_Datatype dt, MPI_Op op);
int ij_allreduce_rabenseifner(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                              MPI_Datatype dt, MPI_Op op);
int ij_scan_recdoub(struct ij_sched *s, const void *sbuf, void *rbuf, int count,
                    MPI_Datatype dt, MPI_Op op, int exclusive);

/* blocks of a buffer: block i is `counts[i]` elements at element `displs[i]` (v-variants) or
 * `count` elements at i·count */
struct ij_blocks {
    char *base;
    MPI_Datatype dt;
    MPI_Aint ext;
    int count;
    const int *counts, *displs;
};
enum { IJ_AG_RECDOUB, IJ_AG_BRUCK, IJ_AG_RING };
enum { IJ_A2A_LINEAR, IJ_A2A_PAIRWISE, IJ_A2A_BRUCK };
int ij_allgather(struct ij_sched *s, int alg, const void *sbuf, int scount, MPI_Datatype sdt,
                 const struct ij_blocks *rb);
int ij_alltoall(struct ij_sched *s, int alg, const struct ij_blocks *sb,
                const MPI_Datatype *stypes, const struct ij_blocks *rb,
                const MPI_Datatype *rtypes);
int ij_gather_binomial(struct ij_sched *s, const void *sbuf, int scount, MPI_Datatype sdt,
                       void *rbuf, int rcount, MPI_Datatype rdt, int root);
int ij_scatter_binomial(struct ij_sched *s, const void *sbuf, int scount, MPI_Datatype sdt,
                        void *rbuf, int rcount, MPI_Datatype rdt, int root);
int ij_gatherv_linear(struct ij_sched *s, const void *sbuf, int scount, MPI_Datatype sdt,
                      const struct ij_blocks *rb, int root);
int ij_scatterv_linear(struct ij_sched *s, const struct ij_blocks *sb, void *rbuf, int rcount,
                       MPI_Datatype rdt, int root);
int ij_reduce_scatter(struct ij_sched *s, int ring, const void *sbuf, void *rbuf,
                      const int *counts, MPI_Datatype dt, MPI_Op op);

static inline int ij_pof2_floor(int p)
{
    int k = 1;
    while (k * 2 <= p)
        k *= 2;
    return k;
}
static inline int ij_lowbit(int v) { return v & -v; }
static inline int ij_mod(int a, int p) { return ((a % p) + p) % p; }

#endif
