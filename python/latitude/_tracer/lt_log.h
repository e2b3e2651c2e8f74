/* The hand-written runtime the generated wrappers (lt_gen.py, wrappers.tbl) call beyond the
 * field writers of lt.h: the environment calls' records, completions, request bookkeeping
 * and extension lines. C values throughout; the Fortran side is in lt_fortran.h. */
#ifndef LT_LOG_H
#define LT_LOG_H

#include "lt.h"

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

/* completion calls (lt_comp.c) */
#define LT_SMALL 64
struct lt_completion {
    struct lt_req *small[LT_SMALL], **rs;
    int n, wild;
    MPI_Status sts[LT_SMALL], *st; /* statuses handed to MPI */
};
/* Resolve the input requests (slots: where each lives, NULL = &reqs[i]). */
void lt_comp_begin(struct lt_completion *c, const MPI_Request *reqs, const void *const *slots,
                   int n);
/* The statuses to hand to MPI: the user's, or ours when the user ignores them but the trace
 * needs them (a wildcard receive may complete). */
MPI_Status *lt_comp_statuses(struct lt_completion *c, MPI_Status *user_st, int many);
/* "#@ done" and the lines completed requests need; idx: completed input positions (NULL: the
 * first ndone); statuses indexed by input position (by_input) or by completion order. */
char *lt_comp_end(char *p, struct lt_completion *c, const int *idx, int ndone, int by_input);
void lt_comp_free(struct lt_completion *c, MPI_Status *user_st);
/* "#@ start <calls>" for MPI_Start/Startall */
char *lt_ext_start(char *p, const MPI_Request *reqs, const void *const *slots, int count);
/* "#@ free|cancel <call>" for a request claimed before the call; drop forgets it */
char *lt_ext_gone(char *p, const char *key, struct lt_req *r, int drop);

#endif
