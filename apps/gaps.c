/* gaps: one communication pattern, repeated, with a fixed amount of work between repetitions —
 * to compare runs under the latency injector with the model's prediction pattern by pattern
 * (bench/inject_gap.py, docs/injector.md "Where an injected run's time goes").
 *
 * Patterns (every rank takes part; point-to-point ones pair rank r with r ^ 1):
 *   pingpong   blocking MPI_Send / MPI_Recv round trip (even ranks send first)
 *   exchange   MPI_Irecv + MPI_Isend + MPI_Waitall both ways at once
 *   poll       a round trip whose receiver polls MPI_Test with --chunk ns of work between
 *              polls (HPCC's RandomAccess): the reply is sent only once the poll saw it
 *   sendrecv   MPI_Sendrecv both ways at once
 *   allreduce  MPI_Allreduce of --bytes (doubles, sum)
 *   bcast      MPI_Bcast of --bytes from rank 0
 *   alltoall   MPI_Alltoall of --bytes per block
 *   barrier    MPI_Barrier
 *   testcost   not a pattern: what one unsuccessful MPI_Test costs — rank 1 polls a receive
 *              of --bytes that rank 0 satisfies only afterwards, in 20 batches of --iters
 *              calls, and prints the fastest batch's ns per call ("test_ns", stderr); above
 *              the injector's eager limit the receive is one its waiting loops also poll
 *              (HPCC's RandomAccess: 8 KiB)
 * --versus-mpi (exchange, sendrecv, alltoall; under the injector at ΔL = 0): the pattern through
 * the injector against the same calls made straight to MPI (PMPI_, which the injector does not
 * wrap) in the same process, interleaved — what the injector itself adds ("versus_mpi_ratio").
 * The work is a spin on the clock (a fixed duration whatever the machine's speed or load),
 * so the only time that differs between runs is MPI's and the injector's.
 * stdout is deterministic (a checksum); "elapsed_s" (the timed loop) goes to stderr. */
#include "common.h"

#include <stdint.h>

static const char *usage =
    "usage: gaps --pattern P [--iters N] [--bytes B] [--work NS] [--chunk NS]\n"
    "  --pattern P   pingpong, exchange, poll, sendrecv, allreduce, bcast, alltoall or barrier\n"
    "  --iters N     repetitions (default 2000)\n"
    "  --bytes B     message size (default 8)\n"
    "  --work NS     work before each repetition, ns of spinning (default 20000)\n"
    "  --chunk NS    poll: work between two MPI_Test calls, ns (default 1000)\n"
    "  --paired-delta-us X  under the injector: the growth of one repetition from ΔL = 0 to X,\n"
    "                switched inside the run (25 blocks of --iters repetitions per ΔL)\n"
    "  --versus-mpi  under the injector: the pattern (exchange, sendrecv or alltoall) through the\n"
    "                injector against PMPI_ calls (MPI's own), 25 blocks of --iters each\n"
    "  --cold        sweep 32 MiB before each repetition: caches cold, as after an application's\n"
    "                own work on large arrays\n";

static int rank, size;

/* --cold: write one byte per cache line of a buffer larger than the last-level cache */
#define COLD_BYTES (32u << 20)
static unsigned char *cold_buf;
static void make_cold(void)
{
    for (size_t i = 0; cold_buf && i < COLD_BYTES; i += 64)
        cold_buf[i]++;
}

static void poll_until(MPI_Request *r, long chunk)
{
    int done = 0;
    C(MPI_Test)(r, &done, MPI_STATUS_IGNORE);
    while (!done) {
        spin_ns(chunk);
        C(MPI_Test)(r, &done, MPI_STATUS_IGNORE);
    }
}

static void round_trip(char *out, char *in, int n, int peer, int polled, long chunk)
{
    int first = rank % 2 == 0;
    for (int leg = 0; leg < 2; leg++) {
        if ((leg == 0) == first) {
            C(MPI_Send)(out, n, MPI_CHAR, peer, leg, MPI_COMM_WORLD);
        } else if (polled) {
            MPI_Request r;
            C(MPI_Irecv)(in, n, MPI_CHAR, peer, leg, MPI_COMM_WORLD, &r);
            poll_until(&r, chunk);
        } else {
            C(MPI_Recv)(in, n, MPI_CHAR, peer, leg, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
}

static void test_cost(long calls, char *buf, int n)
{
    int token = 0, done = 0;
    MPI_Request r;
    if (rank == 1) {
        C(MPI_Irecv)(buf, n, MPI_CHAR, 0, 99, MPI_COMM_WORLD, &r);
        double best = 1e30;
        for (int b = 0; b < 20; b++) {
            double t0 = now_s();
            for (long i = 0; i < calls && !done; i++)
                C(MPI_Test)(&r, &done, MPI_STATUS_IGNORE);
            double per = (now_s() - t0) / (double)calls * 1e9;
            best = per < best ? per : best;
        }
        fprintf(stderr, "test_ns %.1f\n", best);
        C(MPI_Send)(&token, 1, MPI_INT, 0, 98, MPI_COMM_WORLD);
        C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
        C(MPI_Recv)(&token, 1, MPI_INT, 1, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        C(MPI_Send)(buf, n, MPI_CHAR, 1, 99, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("gaps testcost: %s\n", done ? "a poll completed early" : "ok");
}

/* one repetition: the work, then the pattern; returns a byte of what arrived (checksum) */
static double one_rep(const char *pattern, char *out, char *in, int n, int peer, long work, long chunk,
                      long it)
{
    spin_ns(work);
    if (!strcmp(pattern, "pingpong") || !strcmp(pattern, "poll")) {
        round_trip(out, in, n, peer, pattern[1] == 'o', chunk);
    } else if (!strcmp(pattern, "exchange")) {
        MPI_Request r[2];
        C(MPI_Irecv)(in, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &r[0]);
        C(MPI_Isend)(out, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &r[1]);
        C(MPI_Waitall)(2, r, MPI_STATUSES_IGNORE);
    } else if (!strcmp(pattern, "sendrecv")) {
        C(MPI_Sendrecv)(out, n, MPI_CHAR, peer, 0, in, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE);
    } else if (!strcmp(pattern, "allreduce")) {
        C(MPI_Allreduce)(out, in, n / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(pattern, "bcast")) {
        memcpy(in, out, (size_t)n);
        C(MPI_Bcast)(in, n, MPI_CHAR, 0, MPI_COMM_WORLD);
    } else if (!strcmp(pattern, "alltoall")) {
        C(MPI_Alltoall)(out, n, MPI_CHAR, in, n, MPI_CHAR, MPI_COMM_WORLD);
    } else {
        C(MPI_Barrier)(MPI_COMM_WORLD);
    }
    return (unsigned char)in[it % n];
}

/* one repetition straight to MPI (--versus-mpi): the PMPI_ twins of one_rep's calls */
static double direct_rep(const char *pattern, char *out, char *in, int n, int peer, long work, long it)
{
    spin_ns(work);
    if (!strcmp(pattern, "exchange")) {
        MPI_Request r[2];
        PMPI_Irecv(in, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &r[0]);
        PMPI_Isend(out, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &r[1]);
        PMPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    } else if (!strcmp(pattern, "sendrecv")) {
        PMPI_Sendrecv(out, n, MPI_CHAR, peer, 0, in, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    } else {
        PMPI_Alltoall(out, n, MPI_CHAR, in, n, MPI_CHAR, MPI_COMM_WORLD);
    }
    return (unsigned char)in[it % n];
}

/* --paired-delta-us X (under the injector): 25 blocks, in each --iters repetitions at ΔL = 0
 * and at ΔL = X (order reversed every other block), ΔL switched with MPI_Pcontrol(7001) on
 * every rank at the same point; a block's time per ΔL is the median of its repetitions on rank
 * 0 (not the fastest: in a symmetric exchange the fastest is the one where the peer happened
 * to be ahead, 0.84 ΔL instead of 1), the growth the median over blocks of the difference:
 * what one repetition pays for ΔL, robust to other load now and then and free of differences
 * between processes (bench/injector_selfcheck.py pairs blocks the same way). Prints
 * "paired_growth_us". */
#define BLOCKS 25
static void paired_growth(const char *pattern, char *out, char *in, int n, int peer, long work, long chunk,
                          long iters, double delta_us, double *sum)
{
    double diff[BLOCKS], *t = malloc(sizeof *t * (size_t)iters);
    for (int b = 0; b < BLOCKS; b++) {
        double mid[2];
        for (int k = 0; k < 2; k++) {
            int which = b % 2 ? 1 - k : k;
            C(MPI_Barrier)(MPI_COMM_WORLD);
            MPI_Pcontrol(7001, which ? delta_us * 1e3 : 0.0);
            C(MPI_Barrier)(MPI_COMM_WORLD);
            for (long it = 0; it < iters; it++) {
                make_cold();
                double t0 = now_s();
                *sum += one_rep(pattern, out, in, n, peer, work, chunk, it);
                t[it] = now_s() - t0;
            }
            qsort(t, (size_t)iters, sizeof *t, cmp_double);
            mid[which] = t[iters / 2];
        }
        diff[b] = (mid[1] - mid[0]) * 1e6;
    }
    free(t);
    MPI_Pcontrol(7001, 0.0);
    qsort(diff, BLOCKS, sizeof diff[0], cmp_double);
    if (rank == 0) {
        fprintf(stderr, "paired_growth_us %.3f\n", diff[BLOCKS / 2]);
        printf("gaps %s paired: done\n", pattern);
    }
}

/* --versus-mpi: 25 blocks, in each --iters repetitions through the injector and as many
 * straight to MPI (order reversed every other block); per block each side's median on rank 0,
 * the median over blocks of their ratio — paired like --paired-delta-us, so other load and
 * slow drifts of the machine hit both sides alike. Prints "versus_mpi_ratio" and the medians
 * over blocks, "versus_mpi_us <injector> <MPI>". */
static void versus_mpi(const char *pattern, char *out, char *in, int n, int peer, long work, long iters,
                       double *sum)
{
    double ratio[BLOCKS], us[2][BLOCKS], *t = malloc(sizeof *t * (size_t)iters);
    for (int b = 0; b < BLOCKS; b++) {
        for (int k = 0; k < 2; k++) {
            int direct = b % 2 ? 1 - k : k;
            PMPI_Barrier(MPI_COMM_WORLD);
            for (long it = 0; it < iters; it++) {
                make_cold();
                double t0 = now_s();
                *sum += direct ? direct_rep(pattern, out, in, n, peer, work, it)
                               : one_rep(pattern, out, in, n, peer, work, 0, it);
                t[it] = now_s() - t0;
            }
            qsort(t, (size_t)iters, sizeof *t, cmp_double);
            us[direct][b] = t[iters / 2] * 1e6;
        }
        ratio[b] = us[0][b] / us[1][b];
    }
    free(t);
    qsort(ratio, BLOCKS, sizeof ratio[0], cmp_double);
    qsort(us[0], BLOCKS, sizeof us[0][0], cmp_double);
    qsort(us[1], BLOCKS, sizeof us[1][0], cmp_double);
    if (rank == 0) {
        fprintf(stderr, "versus_mpi_ratio %.3f\nversus_mpi_us %.1f %.1f\n", ratio[BLOCKS / 2],
                us[0][BLOCKS / 2], us[1][BLOCKS / 2]);
        printf("gaps %s versus MPI: done\n", pattern);
    }
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    const char *pattern = arg_str("--pattern", "");
    long iters = arg_int("--iters", 2000), bytes = arg_int("--bytes", 8);
    long work = arg_int("--work", 20000), chunk = arg_int("--chunk", 1000);
    C(MPI_Init)(&argc, &argv);
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    int p2p = strcmp(pattern, "allreduce") && strcmp(pattern, "bcast") && strcmp(pattern, "alltoall") &&
              strcmp(pattern, "barrier");
    static const char *known[] = {"pingpong", "exchange", "poll",    "sendrecv", "allreduce",
                                  "bcast",    "alltoall", "barrier", "testcost"};
    int ok = 0;
    for (int i = 0; i < 9; i++)
        ok |= !strcmp(pattern, known[i]);
    int versus = arg_flag("--versus-mpi");
    if (versus)
        ok &= !strcmp(pattern, "exchange") || !strcmp(pattern, "sendrecv") || !strcmp(pattern, "alltoall");
    if (!ok || iters <= 0 || bytes < 8 || work < 0 || chunk < 0 || (p2p && size % 2)) {
        if (rank == 0)
            fprintf(stderr, "gaps: expected a known --pattern (with --versus-mpi: exchange, sendrecv "
                            "or alltoall), --iters > 0, --bytes >= 8, work >= 0 and (point-to-point) "
                            "an even number of ranks\n%s", usage);
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    size_t blk = (size_t)bytes * (strcmp(pattern, "alltoall") ? 1 : (size_t)size);
    char *out = calloc(blk, 1), *in = calloc(blk, 1);
    int n = (int)bytes;
    for (int i = 0; i < n; i++)
        out[i] = (char)(rank + i);
    double sum = 0;
    if (arg_flag("--cold") && !(cold_buf = calloc(COLD_BYTES, 1))) {
        fprintf(stderr, "gaps: out of memory\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    if (versus) {
        versus_mpi(pattern, out, in, n, peer, work, iters, &sum);
        app_finish(MPI_COMM_WORLD, rank, size);
        return 0;
    }
    if (!strcmp(pattern, "testcost")) {
        test_cost(iters, in, n);
        app_finish(MPI_COMM_WORLD, rank, size);
        return 0;
    }
    double paired = atof(arg_str("--paired-delta-us", "0"));
    if (paired > 0) {
        paired_growth(pattern, out, in, n, peer, work, chunk, iters, paired, &sum);
        app_finish(MPI_COMM_WORLD, rank, size);
        return 0;
    }
    app_timer_start(MPI_COMM_WORLD);
    for (long it = 0; it < iters; it++) {
        make_cold();
        sum += one_rep(pattern, out, in, n, peer, work, chunk, it);
    }
    app_timer_stop(MPI_COMM_WORLD, rank);
    if (rank == 0)
        printf("gaps %s %ld x %ld B: checksum %.0f\n", pattern, iters, bytes, sum);
    free(out);
    free(in);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
