/* The hand-written runtime the generated wrappers (lt_gen.py, wrappers.tbl) call beyond the
 * field writers of lt.h: the environment calls' records, completions, request bookkeeping
 * and extension lines. C values throughout; the Fortran side is in lt_fortran.h. */
#ifndef LT_LOG_H
#define LT_LOG_H

#include "lt.h"

#pragma GCC visibility push(hidden)

/* environment (lt_env.c): MPI_Init/Init_thread after the real call, MPI_Finalize/Abort before */
void lt_log_init(int thread, const void *argc, const void *argv, int required,
                 const void *provided_addr, int provided);
void lt_log_finalize(uint64_t t0);
void lt_log_abort(uint64_t t0, MPI_Comm comm, int errorcode);

/* collectives (lt_fields.c): 1 root, 0 other member, -1 not taking part (intercommunicator
 * MPI_PROC_NULL) -- which of a rooted collective's arguments MPI reads on this rank */
int lt_root_role(MPI_Comm comm, int root);
/* "#@ typesizes send=<s0,...> recv=<r0,...>" of MPI_Alltoallw (send sizes 0 unless send_used) */
char *lt_ext_typesizes(char *p, const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int np,
                       int send_used);
/* "#@ comm" line of a communicator just created (nothing for MPI_COMM_NULL) */
char *lt_ext_newcomm(char *p, MPI_Comm c);

/* completion calls (lt_comp.c): the input handles are saved before the call (MPI overwrites
 * completed ones) and resolved after it, only if the record is written (a folded poll is not) */
#define LT_SMALL 64
struct lt_completion {
    struct lt_req *small[LT_SMALL], **rs;
    MPI_Request hsmall[LT_SMALL];
    const MPI_Request *h;      /* the input handles */
    const MPI_Request *where;  /* C: the application's array (request i lives at &where[i]) */
    const void *const *slots;  /* Fortran: where each request lives */
    int n, wild;
    MPI_Status sts[LT_SMALL], *st; /* statuses handed to MPI */
};
/* Before the call: save the n handles of reqs; returns the statuses to hand to MPI (the
 * user's, or ours when the user ignores them but a completion may need one: a wildcard
 * receive or a cancelled request is outstanding). */
MPI_Status *lt_comp_save(struct lt_completion *c, const MPI_Request *reqs, int n,
                         MPI_Status *user_st, int many);
/* the same for handles already converted (Fortran): slots[i] is where request i lives */
void lt_comp_init(struct lt_completion *c, const MPI_Request *handles, const void *const *slots,
                  int n);
/* After the call: resolve the saved handles to the calls that created them. */
void lt_comp_claim(struct lt_completion *c);
/* "#@ done" and the lines completed requests need; idx: completed input positions (NULL: the
 * first ndone); statuses indexed by input position (by_input) or by completion order. */
char *lt_comp_end(char *p, struct lt_completion *c, const int *idx, int ndone, int by_input);
void lt_comp_free_more(struct lt_completion *c, MPI_Status *user_st);
static inline void lt_comp_free(struct lt_completion *c, MPI_Status *user_st)
{
    if ((c->rs && c->rs != c->small) || (c->h != c->hsmall && !c->slots) ||
        (c->st != user_st && c->st != c->sts))
        lt_comp_free_more(c, user_st);
}
/* "#@ start <calls>" for MPI_Start/Startall */
char *lt_ext_start(char *p, const MPI_Request *reqs, const void *const *slots, int count);
/* "#@ free|cancel <call>" for a request claimed before the call; drop forgets it, cancel
 * marks it (its completion then says whether the cancellation succeeded) */
char *lt_ext_gone(char *p, const char *key, struct lt_req *r, int drop);
/* the signature of a poll's requests (which polls fold together) */
static inline uint64_t lt_sig_reqs(uint64_t h, const MPI_Request *reqs, int n)
{
    for (int i = 0; i < n; i++)
        h = lt_mix(h, LT_HANDLE(reqs[i]));
    return h;
}

#pragma GCC visibility pop
#endif
