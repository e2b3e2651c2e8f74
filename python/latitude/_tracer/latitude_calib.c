/* latitude-calib: LogGP measurements between ranks 0 and 1 (Netgauge/OSU style), for
 * `latitude calibrate`. Other ranks only initialise and finalise. Rank 0 prints CSV lines
 * (times in µs; every timed interval has the cost of one clock read subtracted):
 *
 *   timer,<ns>                        cost of one clock read (median of back-to-back pairs)
 *   probe,<ns>                        the machine-state probe (lt_probe.h), taken first: 8 B
 *                                     half round trip through PMPI, as `latitude trace` records
 *   pingpong,<bytes>,<min_us>,<median_us>,<mean_us>,<batches>
 *                                     half round trip: per batch the median of its round trips
 *                                     (each timed on its own), then over the batches
 *   o_send,<bytes>,<median_us>        time inside MPI_Isend (eager)
 *   o_recv,<bytes>,<median_us>        time inside MPI_Recv once the message is there (Probe)
 *   stream,<bytes>,<us_per_message>   back-to-back sends (the gap g + (s-1)·G when > o)
 *   concurrent,<bytes>,<one_us>,<two_us>  one MPI_Isend, and two at once, to pre-posted
 *                                     receives, until both ranks know they arrived (fastest of
 *                                     the repetitions): two ≈ 2 × one when a rank's messages
 *                                     share its bandwidth (NIC serialization), ≈ one when not
 *   eager,<bytes>                     largest size MPI_Send completes before the receive is posted
 *   copy,<bytes>,<median_us>          memcpy of <bytes> with cold caches (the copy cost C):
 *                                     per batch the median of its copies, then over the batches
 *   coll,<name>,<bytes>,<median_us>   mean time per call of back-to-back MPI calls (the cost K of
 *                                     a collective call beyond its messages), name one of
 *                                     exchange (MPI_Sendrecv of <bytes> with the peer, 0 and 8),
 *                                     barrier (MPI_Barrier, 0) or allreduce (MPI_Allreduce of
 *                                     one double, 8): per batch the mean of its calls, then the
 *                                     median over the batches; only with exactly 2 ranks
 *   samples,<kind>,<bytes>,<v>;<v>;...  the values behind pingpong (per-batch medians), o_send
 *                                     and o_recv (every call), copy (per-batch medians) and
 *                                     coll (kinds coll_exchange, coll_barrier, coll_allreduce:
 *                                     per-batch means, batch i of each kind measured in the
 *                                     same round): saved by `latitude calibrate`
 *   selfcheck,<bytes>,<delta_us>,<block>,<median_us>,<min_us>,<mean_us>,<iters>
 *                                     injector self-check: half round trips of one block at ΔL
 *
 * Medians of calls timed one by one, because preemption (another process on the core) only
 * ever adds time to a call: a batch mean takes in every preemption, a median does not.
 * The collective calls are too short to time one by one against their clock reads, so they
 * are timed in batches and the median is taken over the batches instead.
 *
 * usage: latitude-calib [--sizes 0,8,...] [--batches N] [--iters N] [--what LIST]
 *                       [--deltas 0,1,5,...] [--copy-sizes 65536,...] [--copy-pool MiB]
 *   --what    comma list of pingpong,overhead,stream,concurrent,eager,copy,coll (default all), or selfcheck
 *   --copy-sizes  bytes per memcpy (default 64 KiB to 4 MiB)
 *   --copy-pool   MiB each rank's copies rotate through (default twice the last-level cache,
 *                 64 MiB to 1 GiB)
 *   --deltas  selfcheck: ΔL values in µs, set in the latency injector with MPI_Pcontrol
 *   --preposted 1  selfcheck: every receive posted before its message is sent (bounce_pre)
 *
 * selfcheck (bench/injector_selfcheck.py, run under `latitude inject`): per size, --batches
 * blocks; in each block, every ΔL of --deltas in turn (the order reversed every other block)
 * with --iters round trips, each timed on its own. One process measures every ΔL, in blocks
 * a few ms apart, so ΔL = 0 and ΔL = x are compared as pairs of the same block: a large
 * message's half round trip differs between processes (memory placement of the buffers) by
 * more than the bound of the check, and drifts within a run. Each round trip is timed on its
 * own and a block reports its median and its fastest one: a batch mean takes in every
 * preemption of a rank (2 spinning ranks fill a 2-core machine), and a longer batch (larger
 * ΔL) takes in more of them, which biased the growth upwards with ΔL.
 * --preposted 1: every receive is posted before its message is sent (bounce_pre).
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lt_probe.h"

/* the injector's MPI_Pcontrol level that sets ΔL (ns, a double): tracer/ij.h */
#define IJ_PCONTROL_DELTA_L 7001

static int rank;
static char *buf, *rbuf; /* rbuf: pre-posted receives (selfcheck --preposted) */
static MPI_Comm comm; /* ranks 0 and 1 */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* the cost of one clock read (µs): subtracted from every interval timed with now_us */
static double timer_us;

static void measure_timer(void)
{
    enum { N = 1001 };
    double d[N];
    for (int i = 0; i < N; i++) {
        double t0 = now_us();
        d[i] = now_us() - t0;
    }
    timer_us = median(d, N);
    if (rank == 0)
        printf("timer,%.1f\n", timer_us * 1e3);
}

static void print_samples(const char *kind, long s, const double *v, int n)
{
    printf("samples,%s,%ld,", kind, s);
    for (int i = 0; i < n; i++)
        printf(i ? ";%.4f" : "%.4f", v[i]);
    printf("\n");
}

/* Busy for `us` while driving MPI's progress without matching anything (probes of a tag
 * nobody sends): an eager message is then taken in, a rendezvous one waits for its receive. */
static void progress_us(double us)
{
    double t = now_us() + us;
    int flag;
    while (now_us() < t)
        MPI_Iprobe(MPI_ANY_SOURCE, 99, comm, &flag, MPI_STATUS_IGNORE);
}

/* n round trips of s bytes. Untimed: the callers read the clock around it with now_us, never
 * MPI_Wtime, which the tracer records like any MPI call (a record per read would be paid
 * inside every timed round trip under --under-tracer, ~80 ns each here, but by no program
 * that times whole loops). */
static void bounce(long s, int n)
{
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(buf, (int)s, MPI_BYTE, 1, 1, comm);
            MPI_Recv(buf, (int)s, MPI_BYTE, 1, 1, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)s, MPI_BYTE, 0, 1, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)s, MPI_BYTE, 0, 1, comm);
        }
    }
}

/* per batch: the median of `iters` round trips each timed on its own, as a half round trip */
static void pingpong(long s, int batches, int iters)
{
    double *half = malloc(sizeof *half * (size_t)batches), *rt = malloc(sizeof *rt * (size_t)iters);
    double sum = 0, lo = 1e30;
    bounce(s, iters / 10 + 2); /* warm up */
    for (int b = 0; b < batches; b++) {
        for (int i = 0; i < iters; i++) {
            double t0 = now_us();
            bounce(s, 1);
            rt[i] = (now_us() - t0 - timer_us) / 2;
        }
        half[b] = median(rt, iters);
        sum += half[b];
        lo = half[b] < lo ? half[b] : lo;
    }
    if (rank == 0)
        print_samples("pingpong", s, half, batches);
    double mean = sum / batches, med = median(half, batches);
    if (rank == 0)
        printf("pingpong,%ld,%.4f,%.4f,%.4f,%d\n", s, lo, med, mean, batches);
    free(half);
    free(rt);
}

/* Round trips with every receive posted before its message is sent: rank 0 posts the pong's
 * receive before it sends the ping, rank 1 keeps the next ping's receive posted (*pending)
 * while it sends the pong. In the blocking ping-pong a message above MPI's own eager limit
 * delays its sender until the receiver has taken the data, so at ΔL = 0 the sender posts its
 * next receive after the partner's reply has arrived, which a hold of ΔL hides: the growth
 * then falls short of ΔL by that posting delay (the model's max(R, a) does the same), which
 * is MPI's protocol, not the injector. Pre-posted, every half round trip is a message's
 * one-way time from send to receive. */
static void bounce_pre(long s, int n, MPI_Request *pending)
{
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Request r;
            MPI_Irecv(rbuf, (int)s, MPI_BYTE, 1, 1, comm, &r);
            MPI_Send(buf, (int)s, MPI_BYTE, 1, 1, comm);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            if (*pending == MPI_REQUEST_NULL)
                MPI_Irecv(rbuf, (int)s, MPI_BYTE, 0, 1, comm, pending);
            MPI_Wait(pending, MPI_STATUS_IGNORE);
            MPI_Irecv(rbuf, (int)s, MPI_BYTE, 0, 1, comm, pending);
            MPI_Send(buf, (int)s, MPI_BYTE, 0, 1, comm);
        }
    }
}

/* See the top comment. Rank 0 switches ΔL after its receive of a block's last round trip
 * returned, rank 1 after its send did: each message is observed under its own block's ΔL on
 * both sides. The first 2 round trips after a switch are not counted: with the rendezvous
 * rule the receive of the first one is posted when the previous block's FIN (its ΔL)
 * arrived. */
static void selfcheck(long s, int blocks, int iters, const double *deltas, int nd, int pre)
{
    double *half = malloc(sizeof *half * (size_t)iters);
    MPI_Request pending = MPI_REQUEST_NULL;
#define BOUNCE(n) (pre ? bounce_pre(s, n, &pending) : bounce(s, n))
    MPI_Pcontrol(IJ_PCONTROL_DELTA_L, 0.0);
    BOUNCE(10); /* warm up */
    for (int b = 0; b < blocks; b++) {
        for (int j = 0; j < nd; j++) {
            int k = b % 2 ? nd - 1 - j : j;
            MPI_Pcontrol(IJ_PCONTROL_DELTA_L, deltas[k] * 1e3);
            BOUNCE(2);
            double sum = 0, lo = 1e30;
            for (int i = 0; i < iters; i++) {
                double t0 = now_us();
                BOUNCE(1);
                half[i] = (now_us() - t0) / 2;
                sum += half[i];
                lo = half[i] < lo ? half[i] : lo;
            }
            if (rank == 0)
                printf("selfcheck,%ld,%g,%d,%.4f,%.4f,%.4f,%d\n", s, deltas[k], b,
                       median(half, iters), lo, sum / iters, iters);
        }
    }
    MPI_Pcontrol(IJ_PCONTROL_DELTA_L, 0.0);
    if (pending != MPI_REQUEST_NULL) /* rank 1's receive for a ping that never comes: send it */
        MPI_Wait(&pending, MPI_STATUS_IGNORE);
    else if (pre)
        MPI_Send(buf, (int)s, MPI_BYTE, 1, 1, comm);
#undef BOUNCE
    free(half);
}

/* The calls' own time per eager message, each call timed on its own:
 * o_send: inside MPI_Isend (the sender's work before the message is on its way; what follows
 *   in MPI_Wait overlaps the transfer, and under the latency injector it is most of a
 *   blocking MPI_Send);
 * o_recv: inside MPI_Recv after MPI_Probe saw the message (MPI has taken it in; the receive
 *   copies and completes it). A pre-posted receive's MPI_Wait after the arrival was tried
 *   instead: in Open MPI it includes polling the shared-memory queue, which the ping-pong's
 *   waiting receiver does while the message travels, and it made L come out negative. */
static void overhead(long s, int n)
{
    double *os = malloc(sizeof *os * (size_t)n), *orv = malloc(sizeof *orv * (size_t)n);
    for (int i = 0; i < n + 5; i++) {
        if (rank == 0) {
            MPI_Request r;
            double t = now_us();
            MPI_Isend(buf, (int)s, MPI_BYTE, 1, 2, comm, &r);
            if (i >= 5)
                os[i - 5] = now_us() - t - timer_us;
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Probe(0, 2, comm, MPI_STATUS_IGNORE);
            double t = now_us();
            MPI_Recv(buf, (int)s, MPI_BYTE, 0, 2, comm, MPI_STATUS_IGNORE);
            if (i >= 5)
                orv[i - 5] = now_us() - t - timer_us;
            MPI_Send(NULL, 0, MPI_BYTE, 0, 3, comm);
        }
    }
    if (rank == 1)
        MPI_Send(orv, n, MPI_DOUBLE, 0, 4, comm);
    else
        MPI_Recv(orv, n, MPI_DOUBLE, 1, 4, comm, MPI_STATUS_IGNORE);
    if (rank == 0) {
        print_samples("o_send", s, os, n);
        print_samples("o_recv", s, orv, n);
        printf("o_send,%ld,%.4f\n", s, median(os, n));
        printf("o_recv,%ld,%.4f\n", s, median(orv, n));
    }
    free(os);
    free(orv);
}

/* n back-to-back sends, the receiver pre-posts them all; minus one empty round trip */
static void stream(long s, int n)
{
    MPI_Request *r = malloc(sizeof *r * (size_t)n);
    char *rb = rank == 1 ? malloc((size_t)(s > 0 ? s : 1) * (size_t)n) : NULL;
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        if (rank == 1)
            for (int i = 0; i < n; i++)
                MPI_Irecv(rb + (size_t)i * (size_t)s, (int)s, MPI_BYTE, 0, 5, comm, &r[i]);
        MPI_Barrier(comm);
        double t0 = now_us();
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                MPI_Send(buf, (int)s, MPI_BYTE, 1, 5, comm);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 6, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 6, comm);
        }
        double t = now_us() - t0;
        if (t < best)
            best = t;
    }
    double t0 = now_us();
    bounce(0, 200);
    double rtt = (now_us() - t0) / 200;
    if (rank == 0)
        printf("stream,%ld,%.4f\n", s, (best - rtt) / n);
    free(r);
    free(rb);
}

/* k nonblocking sends of s bytes at once from rank 0 to receives rank 1 posted beforehand,
 * then an empty message back: the fastest of `reps` (preemption only adds time). */
static double in_flight(long s, int k, int reps)
{
    MPI_Request r[2];
    double best = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        if (rank == 1)
            for (int i = 0; i < k; i++)
                MPI_Irecv(rbuf + (size_t)i * (size_t)s, (int)s, MPI_BYTE, 0, 7 + i, comm, &r[i]);
        MPI_Barrier(comm);
        double t0 = now_us();
        if (rank == 0) {
            for (int i = 0; i < k; i++)
                MPI_Isend(buf + (size_t)i * (size_t)s, (int)s, MPI_BYTE, 1, 7 + i, comm, &r[i]);
            MPI_Waitall(k, r, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 9, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Waitall(k, r, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 9, comm);
        }
        double t = now_us() - t0 - timer_us;
        if (t < best)
            best = t;
    }
    return best;
}

/* Whether two messages of one rank in flight at once share its bandwidth: one and two at
 * once, interleaved so a drift of the machine state moves both alike. */
static void concurrent(long s)
{
    int reps = s > 262144 ? 10 : 40;
    double one = 1e30, two = 1e30;
    for (int round = 0; round < 3; round++) {
        double a = in_flight(s, 1, reps), b = in_flight(s, 2, reps);
        one = a < one ? a : one;
        two = b < two ? b : two;
    }
    if (rank == 0)
        printf("concurrent,%ld,%.4f,%.4f\n", s, one, two);
}

/* Local memory copies with cold caches, for the copy parameter C (the per-byte cost of a
 * collective's copy of a rank's own block). Per size, `batches` batches of COPIES memcpy
 * calls, each timed on its own; a batch reports its median (preemption only adds time).
 * Source and destination rotate through a pool of `pool` bytes, touched once beforehand
 * (no page faults in the timed copies) and larger than the last-level cache: a byte is
 * used again only after `pool` bytes of other copies, so every copy reads and writes memory
 * that is no longer cached, as after an eviction sweep, without the sweep's cost. Both
 * ranks copy at once (a barrier before each copy), as every rank of a collective copies its
 * own block at the same time and they share the memory bandwidth. */
enum { COPIES = 9 };

static long copy_pool_bytes(long mib)
{
    if (mib > 0)
        return mib << 20;
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE), pool = llc > 0 ? 2 * llc : 0;
    return pool < 64L << 20 ? 64L << 20 : pool > 1L << 30 ? 1L << 30 : pool;
}

static void copies(const long *sizes, int n, int batches, long pool_mib)
{
    long pool = copy_pool_bytes(pool_mib), pos = 0;
    for (int i = 0; i < n; i++)
        if (2 * sizes[i] > pool)
            pool = 2 * sizes[i];
    char *mem = malloc((size_t)pool);
    double *med = malloc(sizeof *med * (size_t)batches), t[COPIES];
    if (!mem || !med) {
        fprintf(stderr, "latitude-calib: cannot allocate the %ld MiB copy pool\n", pool >> 20);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(mem, 1, (size_t)pool);
    if (rank == 0)
        printf("# copies rotate through %ld MiB per rank\n", pool >> 20);
    for (int i = 0; i < n; i++) {
        long s = sizes[i];
        for (int b = 0; b < batches; b++) {
            for (int k = 0; k < COPIES; k++) {
                if (pos + 2 * s > pool)
                    pos = 0;
                MPI_Barrier(comm);
                double t0 = now_us();
                memcpy(mem + pos + s, mem + pos, (size_t)s);
                t[k] = now_us() - t0 - timer_us;
                pos += 2 * s;
            }
            med[b] = median(t, COPIES);
        }
        if (rank == 0)
            print_samples("copy", s, med, batches);
        double m = median(med, batches);
        if (rank == 0)
            printf("copy,%ld,%.4f\n", s, m);
    }
    free(mem);
    free(med);
}

/* The software cost of a collective call beyond its messages (the parameter K), with exactly
 * 2 ranks. In a 2-rank MPI_Barrier the library exchanges one 0-byte message with the peer,
 * and a recursive-doubling MPI_Allreduce of one double is one 8-byte exchange plus the
 * reduction: each collective minus MPI_Sendrecv of the same bytes with the peer is what the
 * collective call costs beyond its point-to-point messages. Per batch, `iters` back-to-back
 * calls of each kind in turn (COLLS: the pairs side by side, so a change of machine state
 * falls on all four alike), timed together on rank 0 as a mean per call; the kinds' batch i
 * share a round (the fit pairs them). The collectives run on MPI_COMM_WORLD, the exchanges on
 * the pair's communicator (the same two ranks). */
enum { N_COLLS = 4 };
static const struct {
    const char *name;
    int bytes;
} COLLS[N_COLLS] = {{"exchange", 0}, {"barrier", 0}, {"exchange", 8}, {"allreduce", 8}};

static void coll_call(int k, int peer)
{
    double x = 1.0, y;
    switch (k) {
    case 1:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case 3:
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    default: /* 0, 2: the exchange */
        MPI_Sendrecv(buf, COLLS[k].bytes, MPI_BYTE, peer, 8, rbuf, COLLS[k].bytes, MPI_BYTE, peer, 8,
                     comm, MPI_STATUS_IGNORE);
    }
}

static void collectives(int batches, int iters)
{
    int peer = 1 - rank;
    double *mean[N_COLLS];
    for (int k = 0; k < N_COLLS; k++) {
        mean[k] = malloc(sizeof *mean[k] * (size_t)batches);
        for (int i = 0; i < 10; i++) /* warm up */
            coll_call(k, peer);
    }
    for (int b = 0; b < batches; b++)
        for (int k = 0; k < N_COLLS; k++) {
            MPI_Barrier(MPI_COMM_WORLD); /* both ranks start the batch together */
            double t0 = now_us();
            for (int i = 0; i < iters; i++)
                coll_call(k, peer);
            mean[k][b] = (now_us() - t0 - timer_us) / iters;
        }
    for (int k = 0; k < N_COLLS; k++) {
        char kind[32];
        snprintf(kind, sizeof kind, "coll_%s", COLLS[k].name);
        if (rank == 0)
            print_samples(kind, COLLS[k].bytes, mean[k], batches);
        double m = median(mean[k], batches);
        if (rank == 0)
            printf("coll,%s,%d,%.4f\n", COLLS[k].name, COLLS[k].bytes, m);
        free(mean[k]);
    }
}

/* Does MPI_Send of s bytes return before the receiver posts its receive (300 µs later,
 * progressing MPI meanwhile)? */
static int is_eager(long s)
{
    const double delay_us = 300;
    int eager = 0;
    MPI_Barrier(comm);
    if (rank == 0) {
        double t = now_us();
        MPI_Send(buf, (int)s, MPI_BYTE, 1, 7, comm);
        eager = now_us() - t < delay_us / 2;
    } else {
        progress_us(delay_us);
        MPI_Recv(buf, (int)s, MPI_BYTE, 0, 7, comm, MPI_STATUS_IGNORE);
    }
    MPI_Bcast(&eager, 1, MPI_INT, 0, comm);
    return eager;
}

/* Eager if one of three tries returns early: preemption only ever makes a send look slow
 * (two of two tries had to be fast before, and under load S came out 2-4 KiB for 4 KiB). */
static int eager_at(long s)
{
    for (int k = 0; k < 3; k++)
        if (is_eager(s))
            return 1;
    return 0;
}

/* the largest eager size: powers of two up to the limit, then bisection */
static void eager_limit(long max)
{
    long lo = 0, hi = -1;
    for (long s = 1; s <= max; s *= 2) {
        if (eager_at(s))
            lo = s;
        else {
            hi = s;
            break;
        }
    }
    if (hi < 0) {
        if (rank == 0)
            printf("eager,inf\n");
        return;
    }
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if (eager_at(mid))
            lo = mid;
        else
            hi = mid;
    }
    if (rank == 0)
        printf("eager,%ld\n", lo);
}

static const char *arg(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return argv[i + 1];
    return dflt;
}

/* A comma list of at most 64 byte counts in [lo, hi] into out: how many, or -1 after `what
 * was expected` on stderr. */
static int byte_counts(const char *p, long lo, long hi, const char *expected, long *out)
{
    int n = 0;
    while (*p && n < 64) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < lo || v > hi) {
            fprintf(stderr, "latitude-calib: %s\n", expected);
            return -1;
        }
        out[n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *list = arg(argc, argv, "--sizes",
                           "0,8,64,128,256,512,1024,2048,4096,8192,16384,65536,262144,1048576");
    int batches = atoi(arg(argc, argv, "--batches", "11"));
    int iters = atoi(arg(argc, argv, "--iters", "200"));
    const char *what = arg(argc, argv, "--what", "pingpong,overhead,stream,concurrent,eager,copy,coll");
    const char *dlist = arg(argc, argv, "--deltas", "0,1,5,20,100,500");
    const char *clist = arg(argc, argv, "--copy-sizes", "65536,262144,1048576,2097152,4194304");
    long pool_mib = atol(arg(argc, argv, "--copy-pool", "0"));
    int pre = atoi(arg(argc, argv, "--preposted", "0"));
    long sizes[64], csizes[64], maxs = 1;
    double deltas[64];
    int nd = 0;
    int nc = byte_counts(clist, 1, 1L << 30,
                         "--copy-sizes: expected a comma list of byte counts (1 B to 1 GiB)", csizes);
    if (nc < 0)
        return 2;
    for (const char *p = dlist; *p && nd < 64;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || v < 0) {
            fprintf(stderr, "latitude-calib: --deltas: expected a comma list of µs\n");
            return 2;
        }
        deltas[nd++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    int ns = byte_counts(list, 0, LONG_MAX, "--sizes: expected a comma list of byte counts", sizes);
    if (ns < 0)
        return 2;
    for (int i = 0; i < ns; i++)
        if (sizes[i] > maxs)
            maxs = sizes[i];
    if (batches < 1 || iters < 1) {
        fprintf(stderr, "latitude-calib: --batches and --iters must be positive\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "latitude-calib: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bufsize = maxs > 4 << 20 ? maxs : 4 << 20;
    buf = calloc((size_t)bufsize, 1);
    rbuf = calloc((size_t)bufsize, 1);
    double probe = lt_probe_ns(); /* before anything else, as the tracer takes it in MPI_Init */
    if (rank == 0)
        printf("# latitude-calib 1, %d ranks\nprobe,%.1f\n", size, probe);
    /* ranks 2.. have nothing to measure */
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (pair == MPI_COMM_NULL) {
        MPI_Finalize();
        return 0;
    }
    comm = pair;
    measure_timer();
    for (int i = 0; i < ns && strstr(what, "selfcheck"); i++)
        selfcheck(sizes[i], batches, iters, deltas, nd, pre);
    for (int i = 0; i < ns && strstr(what, "pingpong"); i++)
        pingpong(sizes[i], batches, iters);
    for (int i = 0; i < ns && strstr(what, "overhead"); i++)
        overhead(sizes[i], 101);
    for (int i = 0; i < ns && strstr(what, "stream"); i++)
        stream(sizes[i], sizes[i] > 65536 ? 20 : 200);
    for (int i = 0; i < ns && strstr(what, "concurrent"); i++)
        if (sizes[i] >= 65536 && 2 * sizes[i] <= bufsize)
            concurrent(sizes[i]);
    if (strstr(what, "eager"))
        eager_limit(maxs > 4 << 20 ? maxs : 4 << 20);
    if (strstr(what, "copy"))
        copies(csizes, nc, batches, pool_mib);
    if (strstr(what, "coll") && size == 2) /* other sizes: no coll lines (no K) */
        collectives(batches, iters);
    fflush(stdout);
    MPI_Finalize();
    free(buf);
    free(rbuf);
    return 0;
}
