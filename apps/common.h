/* Shared by the motif apps: argument parsing, MPI call counting, reporting.
 *
 * Every MPI call an app makes goes through C(): `C(MPI_Send)(buf, ...)` counts the call and
 * then makes it, so `--report-calls` can print exactly what the app did and tests can compare
 * it with a trace. Deterministic results go to stdout; timings go to stderr. */
#ifndef APPS_COMMON_H
#define APPS_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *call_names[] = {
    "MPI_Init", "MPI_Finalize", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Abort",
    "MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Recv", "MPI_Isend", "MPI_Issend",
    "MPI_Ibsend", "MPI_Irsend", "MPI_Irecv", "MPI_Sendrecv", "MPI_Sendrecv_replace",
    "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall",
    "MPI_Testany", "MPI_Testsome", "MPI_Probe", "MPI_Iprobe", "MPI_Get_count",
    "MPI_Send_init", "MPI_Ssend_init", "MPI_Recv_init", "MPI_Start", "MPI_Startall",
    "MPI_Request_free", "MPI_Cancel", "MPI_Buffer_attach", "MPI_Buffer_detach",
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv",
    "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
    "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
    "MPI_Scan", "MPI_Exscan", "MPI_Ibarrier", "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce",
    "MPI_Igather", "MPI_Igatherv", "MPI_Iscatter", "MPI_Iscatterv", "MPI_Iallgather",
    "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ireduce_scatter",
    "MPI_Ireduce_scatter_block", "MPI_Iscan", "MPI_Iexscan", "MPI_Comm_dup", "MPI_Comm_idup",
    "MPI_Comm_split", "MPI_Comm_create", "MPI_Comm_free", "MPI_Comm_group", "MPI_Group_incl",
    "MPI_Group_free", "MPI_Group_translate_ranks", "MPI_Dims_create", "MPI_Cart_create",
    "MPI_Cart_shift", "MPI_Cart_sub", "MPI_Type_vector", "MPI_Type_contiguous",
    "MPI_Type_commit", "MPI_Type_free", "MPI_Wtime", "MPI_Test_cancelled",
};
#define NCALLS (int)(sizeof(call_names) / sizeof(call_names[0]))
static long call_counts[NCALLS];

static inline int count_call(const char *name)
{
    for (int i = 0; i < NCALLS; i++)
        if (!strcmp(call_names[i], name)) {
            call_counts[i]++;
            return 0;
        }
    fprintf(stderr, "common.h: %s is not in call_names\n", name);
    abort();
}

/* C(MPI_Send)(args...): count, then call */
#define C(fn) (count_call(#fn), fn)

/* ---- arguments ---- */
static int app_argc;
static char **app_argv;

static inline const char *arg_str(const char *name, const char *dflt)
{
    for (int i = 1; i + 1 < app_argc; i++)
        if (!strcmp(app_argv[i], name))
            return app_argv[i + 1];
    return dflt;
}

static inline long arg_int(const char *name, long dflt)
{
    const char *s = arg_str(name, NULL);
    if (!s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end) {
        fprintf(stderr, "%s: expected an integer, got '%s'\n", name, s);
        exit(2);
    }
    return v;
}

static inline int arg_flag(const char *name)
{
    for (int i = 1; i < app_argc; i++)
        if (!strcmp(app_argv[i], name))
            return 1;
    return 0;
}

/* Prints usage and exits before MPI_Init when --help is given. */
static inline void app_args(int argc, char **argv, const char *usage)
{
    app_argc = argc;
    app_argv = argv;
    if (arg_flag("--help") || arg_flag("-h")) {
        printf("%s", usage);
        printf("common options:\n"
               "  --report-calls   rank 0 prints the MPI calls every rank made (\"calls\" lines)\n"
               "  --help           this text\n");
        exit(0);
    }
}

/* qsort's comparison of doubles, ascending */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Wall clock without an MPI call (so --report-calls counts stay what the trace holds). */
static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Work of a fixed duration whatever the machine's speed or load: a spin on the clock that
 * keeps the core busy and touches no memory (as MPI's progress loop does while it waits). */
static inline void spin_ns(double ns)
{
    if (ns <= 0)
        return;
    double end = now_s() + 1e-9 * ns;
    while (now_s() < end)
        ;
}

static double app_t0;

/* Start of the timed region (after setup); every rank calls it. */
static inline void app_timer_start(MPI_Comm comm)
{
    C(MPI_Barrier)(comm);
    app_t0 = C(MPI_Wtime)();
}

/* End of the timed region: rank 0 prints "elapsed_s <t>" to stderr. */
static inline void app_timer_stop(MPI_Comm comm, int rank)
{
    C(MPI_Barrier)(comm);
    double t = C(MPI_Wtime)() - app_t0;
    if (rank == 0)
        fprintf(stderr, "elapsed_s %.6f\n", t);
}

/* With --report-calls rank 0 prints one "calls rank=<r> MPI_X=<n> ..." line per rank. The
 * gather that collects the counts and the MPI_Finalize that follows are counted in advance,
 * so the lines equal what a trace of the whole run contains. Then MPI_Finalize. */
static inline void app_finish(MPI_Comm comm, int rank, int size)
{
    if (arg_flag("--report-calls")) {
        count_call("MPI_Gather");
        count_call("MPI_Finalize");
        long *all = rank == 0 ? malloc(sizeof(long) * NCALLS * (size_t)size) : NULL;
        long mine[NCALLS];
        memcpy(mine, call_counts, sizeof mine);
        MPI_Gather(mine, NCALLS, MPI_LONG, all, NCALLS, MPI_LONG, 0, comm);
        for (int r = 0; rank == 0 && r < size; r++) {
            printf("calls rank=%d", r);
            for (int i = 0; i < NCALLS; i++)
                if (all[(size_t)r * NCALLS + i])
                    printf(" %s=%ld", call_names[i], all[(size_t)r * NCALLS + i]);
            printf("\n");
        }
        free(all);
        fflush(stdout);
        MPI_Finalize();
        return;
    }
    C(MPI_Finalize)();
}

#endif
