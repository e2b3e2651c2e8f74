/* The schedule executor and builder (see ij_sched.h). */
#include "ij_sched.h"

#include <stdlib.h>
#include <string.h>

static struct ij_sched *active; /* nonblocking schedules in flight */

struct ij_sched *ij_sched_new(struct ij_comm *c)
{
    struct ij_sched *s = calloc(1, sizeof *s);
    if (!s)
        ij_fatal("out of memory");
    s->c = c;
    s->p = c->size;
    s->r = c->rank;
    s->tag = IJ_TAG_COLL0 + (int)(c->coll_seq++ % IJ_COLL_TAGS);
    s->greq = MPI_REQUEST_NULL;
    ij.n_coll++;
    return s;
}

void ij_sched_free(struct ij_sched *s)
{
    for (int i = 0; i < s->nmem; i++)
        free(s->mem[i]);
    for (int i = 0; i < s->ntypes; i++)
        PMPI_Type_free(&s->types[i]);
    free(s->mem);
    free(s->types);
    free(s->ops);
    free(s->deps);
    free(s);
}

static void *grow(void *p, int *cap, size_t elem)
{
    *cap = *cap ? *cap * 2 : 16;
    p = realloc(p, elem * (size_t)*cap);
    if (!p)
        ij_fatal("out of memory");
    return p;
}

void *ij_mem(struct ij_sched *s, size_t bytes)
{
    if (s->nmem == s->capmem)
        s->mem = grow(s->mem, &s->capmem, sizeof *s->mem);
    void *m = calloc(1, bytes ? bytes : 1);
    if (!m)
        ij_fatal("out of memory");
    s->mem[s->nmem++] = m;
    return m;
}

MPI_Aint ij_extent(MPI_Datatype dt)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(dt, &lb, &ext);
    return ext;
}

void *ij_elems(struct ij_sched *s, int count, MPI_Datatype dt)
{
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(dt, &lb, &ext);
    PMPI_Type_get_true_extent(dt, &tlb, &text);
    MPI_Aint span = count > 0 ? (MPI_Aint)(count - 1) * ext + text : 0;
    char *m = ij_mem(s, (size_t)(span > 0 ? span : 1));
    return m - tlb; /* element 0 starts at the type's true lower bound */
}

MPI_Datatype ij_keep_type(struct ij_sched *s, MPI_Datatype t)
{
    PMPI_Type_commit(&t);
    if (s->ntypes == s->captypes)
        s->types = grow(s->types, &s->captypes, sizeof *s->types);
    s->types[s->ntypes++] = t;
    return t;
}

int ij_commutative(MPI_Op op)
{
    int c = 1;
    PMPI_Op_commutative(op, &c);
    return c;
}

static int contiguous(MPI_Datatype dt)
{
    MPI_Aint lb, ext, tlb, text;
    int size;
    PMPI_Type_get_extent(dt, &lb, &ext);
    PMPI_Type_get_true_extent(dt, &tlb, &text);
    PMPI_Type_size(dt, &size);
    return lb == 0 && tlb == 0 && ext == size && text == size;
}

void ij_copy(const void *src, int scount, MPI_Datatype sdt, void *dst, int dcount,
             MPI_Datatype ddt)
{
    if (src == dst && scount == dcount && sdt == ddt)
        return;
    if (sdt == ddt && scount == dcount && contiguous(sdt)) {
        memmove(dst, src, (size_t)ij_type_bytes(scount, sdt));
        return;
    }
    PMPI_Sendrecv(src, scount, sdt, 0, 0, dst, dcount, ddt, 0, 0, MPI_COMM_SELF,
                  MPI_STATUS_IGNORE);
}

/* ---- building ---- */
static int add(struct ij_sched *s, int kind, ij_front after)
{
    if (s->nops == s->capops)
        s->ops = grow(s->ops, &s->capops, sizeof *s->ops);
    while (s->ndeps + after.n > s->capdeps)
        s->deps = grow(s->deps, &s->capdeps, sizeof *s->deps);
    struct ij_op *o = &s->ops[s->nops];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->dep0 = s->ndeps;
    o->ndep = after.n;
    for (int i = 0; i < after.n; i++)
        s->deps[s->ndeps++] = after.id[i];
    return s->nops++;
}

int ij_send(struct ij_sched *s, ij_front after, int peer, const void *buf, int count,
            MPI_Datatype dt)
{
    int id = add(s, IJ_OP_SEND, after);
    struct ij_op *o = &s->ops[id];
    o->peer = peer;
    o->buf = (void *)buf;
    o->count = count;
    o->dt = dt;
    return id;
}

int ij_recv(struct ij_sched *s, ij_front after, int peer, void *buf, int count, MPI_Datatype dt)
{
    int id = add(s, IJ_OP_RECV, after);
    struct ij_op *o = &s->ops[id];
    o->peer = peer;
    o->buf = buf;
    o->count = count;
    o->dt = dt;
    return id;
}

ij_front ij_sendrecv(struct ij_sched *s, ij_front after, int to, const void *sbuf, int scount,
                     MPI_Datatype sdt, int from, void *rbuf, int rcount, MPI_Datatype rdt)
{
    int a = ij_send(s, after, to, sbuf, scount, sdt);
    int b = ij_recv(s, after, from, rbuf, rcount, rdt);
    return ij_two(a, b);
}

static int local(struct ij_sched *s, ij_front after, int loc)
{
    int id = add(s, IJ_OP_LOCAL, after);
    s->ops[id].loc = loc;
    return id;
}

int ij_reduce(struct ij_sched *s, ij_front after, void *in, void *inout, int count,
              MPI_Datatype dt, MPI_Op op, int rev)
{
    int id = local(s, after, rev ? IJ_LOC_REDUCE_REV : IJ_LOC_REDUCE);
    struct ij_op *o = &s->ops[id];
    o->in = in;
    o->buf = inout;
    o->count = count;
    o->dt = dt;
    o->op = op;
    return id;
}

int ij_copy_op(struct ij_sched *s, ij_front after, const void *src, int scount,
               MPI_Datatype sdt, void *dst, int dcount, MPI_Datatype ddt)
{
    int id = local(s, after, IJ_LOC_COPY);
    struct ij_op *o = &s->ops[id];
    o->in = (void *)src;
    o->icount = scount;
    o->idt = sdt;
    o->buf = dst;
    o->count = dcount;
    o->dt = ddt;
    return id;
}

int ij_fn(struct ij_sched *s, ij_front after, void (*fn)(void *), void *arg)
{
    int id = local(s, after, IJ_LOC_FN);
    s->ops[id].fn = fn;
    s->ops[id].arg = arg;
    return id;
}

int ij_join(struct ij_sched *s, const int *ids, int n)
{
    int id = local(s, IJ_NONE, IJ_LOC_NOP);
    for (int i = 0; i < n; i++) {
        if (s->ndeps == s->capdeps)
            s->deps = grow(s->deps, &s->capdeps, sizeof *s->deps);
        s->deps[s->ndeps++] = ids[i];
    }
    /* the join's dependencies follow the ones add() reserved (none) */
    s->ops[id].dep0 = s->ndeps - n;
    s->ops[id].ndep = n;
    return id;
}

/* ---- executing ---- */
static int ready(const struct ij_sched *s, const struct ij_op *o)
{
    for (int i = 0; i < o->ndep; i++)
        if (s->ops[s->deps[o->dep0 + i]].state != 2)
            return 0;
    return 1;
}

static void run_local(struct ij_op *o)
{
    switch (o->loc) {
    case IJ_LOC_REDUCE:
        PMPI_Reduce_local(o->in, o->buf, o->count, o->dt, o->op);
        break;
    case IJ_LOC_REDUCE_REV: /* buf = buf op in: reduce into `in`, then move it back */
        PMPI_Reduce_local(o->buf, o->in, o->count, o->dt, o->op);
        ij_copy(o->in, o->count, o->dt, o->buf, o->count, o->dt);
        break;
    case IJ_LOC_COPY:
        ij_copy(o->in, o->icount, o->idt, o->buf, o->count, o->dt);
        break;
    case IJ_LOC_FN:
        o->fn(o->arg);
        break;
    default:
        break;
    }
}

static void start(struct ij_sched *s, struct ij_op *o)
{
    struct ij_comm *c = s->c;
    o->rq.mreq = MPI_REQUEST_NULL;
    if (o->kind == IJ_OP_SEND)
        ij_send_begin(&o->rq, c, IJ_COLL, o->buf, o->count, o->dt, o->peer, c->shadow, s->tag,
                      IJ_MODE_STD);
    else
        ij_recv_begin(&o->rq, c, IJ_COLL, o->buf, o->count, o->dt, o->peer, c->shadow, s->tag);
    o->state = 1;
}

/* Start what is ready, finish what is released; 1 when every op has finished. */
static int step(struct ij_sched *s)
{
    int changed;
    do {
        changed = 0;
        for (int i = s->first; i < s->nops; i++) {
            struct ij_op *o = &s->ops[i];
            if (o->state == 0 && ready(s, o)) {
                if (o->kind == IJ_OP_LOCAL) {
                    run_local(o);
                    o->state = 2;
                    s->ndone++;
                    changed = 1;
                    continue;
                }
                start(s, o);
            }
            if (o->state == 1 && ij_poll(&o->rq)) {
                ij_unlist(&o->rq);
                PMPI_Wait(&o->rq.mreq, MPI_STATUS_IGNORE);
                o->state = 2;
                s->ndone++;
                changed = 1;
            }
        }
        while (s->first < s->nops && s->ops[s->first].state == 2)
            s->first++;
    } while (changed && s->ndone < s->nops);
    return s->ndone == s->nops;
}

int ij_sched_run(struct ij_sched *s)
{
    uint64_t outer = ij_loop_enter();
    while (!step(s))
        ij_progress();
    ij_loop_leave(outer);
    ij_sched_free(s);
    return MPI_SUCCESS;
}

/* ---- nonblocking: a generalized request the Wait/Test wrappers recognise ---- */
static int query_fn(void *extra, MPI_Status *st)
{
    (void)extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void progress_all(void);
static int coll_poll(struct ij_req *r);

int ij_sched_start(struct ij_sched *s, MPI_Request *req)
{
    ij_req_hooks = (struct ij_req_hooks){.poll = coll_poll, .progress = progress_all};
    PMPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &s->greq);
    struct ij_req *r = ij_req_new();
    r->kind = IJ_COLLREQ;
    r->active = 1;
    r->mreq = s->greq;
    r->sched = s;
    ij_req_track(r);
    s->next = active;
    active = s;
    step(s);
    *req = s->greq;
    return MPI_SUCCESS;
}

static void deactivate(struct ij_sched *s)
{
    for (struct ij_sched **pp = &active; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            return;
        }
}

static void progress_all(void)
{
    for (struct ij_sched *s = active; s; s = s->next)
        if (!s->completed && step(s)) {
            s->completed = 1;
            PMPI_Grequest_complete(s->greq);
        }
}

static int coll_poll(struct ij_req *r)
{
    struct ij_sched *s = r->sched;
    if (!s)
        return 1;
    if (!s->completed && step(s)) {
        s->completed = 1;
        PMPI_Grequest_complete(s->greq);
    }
    if (!s->completed)
        return 0;
    deactivate(s);
    ij_sched_free(s);
    r->sched = NULL;
    return 1;
}
