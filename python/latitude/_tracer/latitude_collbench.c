/* latitude-collbench: OSU-style timing of one collective, every iteration kept, for
 * `latitude measure-coll`. Which algorithm the MPI library runs is chosen outside, through
 * its own parameters (Open MPI's coll_tuned MCA parameters, MPICH's CVARs) in the ranks'
 * environment; this program only times what the library does.
 *
 * usage: latitude-collbench --coll bcast|reduce|allreduce|alltoall --sizes 4,1024,...
 *                           [--iters N] [--warmup N] [--root R] [--window US]
 *
 * Per size: --warmup untimed calls, then --iters timed ones; each timed call is preceded by
 * an MPI_Barrier and timed on its own on every rank (clock read cost subtracted). Sizes are
 * the bytes per rank: the vector of bcast/reduce/allreduce (MPI_FLOAT, sizes a multiple of 4,
 * as OSU), one block per peer for alltoall (MPI_BYTE). Rank 0 prints CSV lines:
 *
 *   library,<MPI_Get_library_version, first line, commas replaced>
 *   procs,<P>
 *   rank,<r>,<host>,<cpu>          where each rank ran (sched_getcpu at start)
 *   timer,<ns>                     cost of one clock read
 *   samples,<bytes>,<rank>,<v>;<v>;...   that rank's time of each timed call (µs)
 *   starts,<bytes>,<rank>,<v>;<v>;...    when that rank entered each timed call and
 *   ends,<bytes>,<rank>,<v>;<v>;...      when it left (µs since a base time rank 0 broadcast):
 *                                        comparable between ranks only on one host
 *   window,<us>                          the start window used (0: none, ranks on several hosts)
 *
 * Start window (ReproMPI style): when every rank runs on one host (one CLOCK_MONOTONIC),
 * rank 0 broadcasts after the barrier a start time --window µs ahead and every rank spins
 * until then, so all ranks enter the call together instead of as the barrier released them
 * (on a loaded machine that release is skewed by tens of µs, and data a late rank finds
 * already delivered makes its own time meaningless). The call's latency is then the last
 * rank's end minus the common start. Across hosts the clocks differ: no window, and only
 * each rank's own duration is meaningful.
 *
 * Two point-to-point modes feed the composition model of `latitude coll-model`:
 *   --coll p2p     ping-pong between rank 0 and each rank r in turn; `samples,<bytes>,<r>,...`
 *                  holds rank 0's half round trips with peer r (one per iteration)
 *   --coll fanout  rank 0 posts MPI_Isend to ranks 1..k at once and waits for a 0-byte reply
 *                  from each (the report's non-blocking fan-out), k = 1..P-1;
 *                  `samples,<bytes>,<k>,...` holds rank 0's times for fan-out k
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum coll { BCAST, REDUCE, ALLREDUCE, ALLTOALL, P2P, FANOUT };

static int rank, nprocs;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* median of back-to-back clock reads (µs) */
static double timer_cost(void)
{
    enum { N = 1001 };
    static double d[N];
    for (int i = 0; i < N; i++) {
        double t0 = now_us();
        d[i] = now_us() - t0;
    }
    qsort(d, N, sizeof *d, cmp_d);
    return d[N / 2];
}

static void die(const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "latitude-collbench: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static long parse_long(const char *s, const char *what)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0)
        die(what);
    return v;
}

static void call(enum coll c, char *sbuf, char *rbuf, long bytes, int root)
{
    switch (c) {
    case BCAST:
        MPI_Bcast(sbuf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
        break;
    case REDUCE:
        MPI_Reduce(sbuf, rbuf, (int)(bytes / 4), MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD);
        break;
    case ALLREDUCE:
        MPI_Allreduce(sbuf, rbuf, (int)(bytes / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        break;
    default: /* p2p, fanout: p2p_modes */
        break;
    }
}

/* rank 0's half round trips with each peer, or its fan-out times per k (see the top) */
static void p2p_modes(enum coll c, char *buf, long bytes, long iters, long warmup, double tcost, double *t)
{
    for (int k = 1; k < nprocs; k++) {
        for (long i = -warmup; i < iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now_us();
            if (c == P2P) {
                if (rank == 0) {
                    MPI_Send(buf, (int)bytes, MPI_BYTE, k, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, k, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == k) {
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
                }
            } else if (rank == 0) {
                MPI_Request req[k];
                for (int j = 1; j <= k; j++)
                    MPI_Isend(buf, (int)bytes, MPI_BYTE, j, 2, MPI_COMM_WORLD, &req[j - 1]);
                MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
                for (int j = 1; j <= k; j++)
                    MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank <= k) {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
            }
            double dt = now_us() - t0 - tcost;
            if (i >= 0)
                t[i] = (c == P2P ? dt / 2 : dt) > 0 ? (c == P2P ? dt / 2 : dt) : 0;
        }
        if (rank == 0) {
            printf("samples,%ld,%d,", bytes, k);
            for (long i = 0; i < iters; i++)
                printf(i ? ";%.3f" : "%.3f", t[i]);
            printf("\n");
            fflush(stdout);
        }
    }
}

/* every rank's `v` (iters values) printed by rank 0 as `<kind>,<bytes>,<rank>,v;v;...` */
static void print_gathered(const char *kind, double *v, double *all, long bytes, long iters)
{
    MPI_Gather(v, (int)iters, MPI_DOUBLE, all, (int)iters, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    for (int r = 0; r < nprocs; r++) {
        printf("%s,%ld,%d,", kind, bytes, r);
        for (long i = 0; i < iters; i++)
            printf(i ? ";%.3f" : "%.3f", all[(size_t)r * (size_t)iters + (size_t)i]);
        printf("\n");
    }
    fflush(stdout);
}

/* 1 when every rank runs on rank 0's host */
static int print_where(void)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(host, &len);
    for (char *p = host; *p; p++)
        if (*p == ',' || *p == '\n')
            *p = '_';
    int cpu = sched_getcpu();
    char *all = rank == 0 ? malloc((size_t)nprocs * MPI_MAX_PROCESSOR_NAME) : NULL;
    int *cpus = rank == 0 ? malloc((size_t)nprocs * sizeof *cpus) : NULL;
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Gather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n\r")] = '\0';
        for (char *p = lib; *p; p++)
            if (*p == ',')
                *p = ';';
        printf("library,%s\nprocs,%d\n", lib, nprocs);
        for (int r = 0; r < nprocs; r++)
            printf("rank,%d,%s,%d\n", r, all + (size_t)r * MPI_MAX_PROCESSOR_NAME, cpus[r]);
    }
    int one_host = 1;
    if (rank == 0)
        for (int r = 1; r < nprocs; r++)
            one_host &= !strcmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, all);
    free(all);
    free(cpus);
    MPI_Bcast(&one_host, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return one_host;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *coll_name = NULL, *sizes_arg = NULL;
    long iters = 1000, warmup = 100, root = 0, window = 50;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--coll"))
            coll_name = argv[i + 1];
        else if (!strcmp(argv[i], "--sizes"))
            sizes_arg = argv[i + 1];
        else if (!strcmp(argv[i], "--iters"))
            iters = parse_long(argv[i + 1], "--iters: expected a count");
        else if (!strcmp(argv[i], "--warmup"))
            warmup = parse_long(argv[i + 1], "--warmup: expected a count");
        else if (!strcmp(argv[i], "--window"))
            window = parse_long(argv[i + 1], "--window: expected µs");
        else if (!strcmp(argv[i], "--root"))
            root = parse_long(argv[i + 1], "--root: expected a rank");
        else
            die("unknown option");
    }
    enum coll c = BCAST;
    if (!coll_name || !sizes_arg)
        die("usage: latitude-collbench --coll bcast|reduce|allreduce|alltoall --sizes LIST");
    if (!strcmp(coll_name, "bcast"))
        c = BCAST;
    else if (!strcmp(coll_name, "reduce"))
        c = REDUCE;
    else if (!strcmp(coll_name, "allreduce"))
        c = ALLREDUCE;
    else if (!strcmp(coll_name, "alltoall"))
        c = ALLTOALL;
    else if (!strcmp(coll_name, "p2p"))
        c = P2P;
    else if (!strcmp(coll_name, "fanout"))
        c = FANOUT;
    else
        die("--coll: expected bcast, reduce, allreduce, alltoall, p2p or fanout");
    if (root >= nprocs || iters < 1)
        die("--root beyond the communicator or --iters < 1");

    if (!print_where())
        window = 0;
    double tcost = timer_cost();
    if (rank == 0)
        printf("timer,%.1f\nwindow,%ld\n", tcost * 1e3, window);

    double base = now_us();
    MPI_Bcast(&base, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double *t = malloc((size_t)iters * sizeof *t), *st = malloc((size_t)iters * sizeof *st);
    double *en = malloc((size_t)iters * sizeof *en);
    double *all = rank == 0 ? malloc((size_t)iters * (size_t)nprocs * sizeof *all) : NULL;
    char *list = strdup(sizes_arg);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        long bytes = parse_long(tok, "--sizes: expected byte counts");
        if ((c == REDUCE || c == ALLREDUCE) && bytes % 4)
            die("--sizes: reduce and allreduce sizes must be multiples of 4 (MPI_FLOAT)");
        size_t n = (size_t)bytes * (c == ALLTOALL ? (size_t)nprocs : 1) + 1;
        char *sbuf = malloc(n), *rbuf = malloc(n);
        if (!sbuf || !rbuf)
            die("out of memory for the buffers");
        memset(sbuf, 0, n);
        memset(rbuf, 0, n);
        if (c == P2P || c == FANOUT) {
            p2p_modes(c, sbuf, bytes, iters, warmup, tcost, t);
            free(sbuf);
            free(rbuf);
            continue;
        }
        for (long i = 0; i < warmup; i++)
            call(c, sbuf, rbuf, bytes, (int)root);
        for (long i = 0; i < iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (window > 0) {
                double go = now_us() + (double)window;
                MPI_Bcast(&go, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                while (now_us() < go)
                    ;
            }
            double t0 = now_us();
            call(c, sbuf, rbuf, bytes, (int)root);
            double t1 = now_us(), dt = t1 - t0 - tcost;
            st[i] = t0 - base;
            en[i] = t1 - base;
            t[i] = dt > 0 ? dt : 0; /* a call faster than the median clock read */
        }
        print_gathered("samples", t, all, bytes, iters);
        print_gathered("starts", st, all, bytes, iters);
        print_gathered("ends", en, all, bytes, iters);
        free(sbuf);
        free(rbuf);
    }
    free(list);
    free(st);
    free(en);
    free(t);
    free(all);
    MPI_Finalize();
    return 0;
}
