/* Injector lifecycle: configuration from the environment, the shared clock, MPI_Init and
 * MPI_Finalize, and the per-rank report that `latitude inject`/`validate` read.
 *
 * Environment:
 *   LATITUDE_INJECT_DELTA_L      ΔL in ns (default 0)
 *   LATITUDE_INJECT_PAIR_DELTA   file of a P×P matrix (ns, one row per world rank, whitespace
 *                                separated): the extra ΔL of each pair of ranks, added to ΔL
 *                                (emulated nodes: `latitude inject --machine --placement`)
 *   LATITUDE_INJECT_EAGER_LIMIT  S in bytes: larger messages use the rendezvous rule
 *                                (default: every message is eager)
 *   LATITUDE_INJECT_OW           "a,b": one-way time a + b·s ns used until measured (default 0,0)
 *   LATITUDE_INJECT_COLL=0       leave collectives to MPI (no latency added to them)
 *   LATITUDE_INJECT_REPORT       file prefix of the per-rank report (<prefix><rank>.txt)
 *   LATITUDE_INJECT_DEBUG=n      print the first n release decisions of each rank (stderr)
 *   LATITUDE_INJECT_NO_TSC=1     time the gaps between polls with clock_gettime, not the TSC
 *
 * MPI_Pcontrol(IJ_PCONTROL_DELTA_L, (double)ns) sets ΔL from inside the application (the
 * profiling-library control call of the MPI standard; without the injector it does nothing).
 * The injector self-check (latitude-calib --what selfcheck) uses it to measure ΔL = 0 and
 * ΔL = x in alternating blocks of one process: paired measurements, free of the differences
 * between processes (memory placement, core) that dominate a large message's round trip.
 * Both ranks of a transfer must switch at the same point of their message sequence; a message
 * gets the ΔL its receiver (and, for a rendezvous FIN, its sender) has when it is observed.
 *
 * The measured runtime of a rank is MPI_Init's end → MPI_Finalize's start, the span the
 * execution graph of a trace covers.
 *
 * Clock: CLOCK_MONOTONIC is one clock for all processes of a node. Ranks on other nodes add
 * an offset to world rank 0's node, estimated by their node leader with ping-pongs (the
 * minimum-round-trip exchange, Cristian's method) and shared within the node.
 */
#define _GNU_SOURCE
#include "ij.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    double v = strtod(s, &end);
    if (*end || v < 0) {
        fprintf(stderr, "latitude inject: %s: expected a non-negative number, got '%s'\n", name, s);
        exit(2);
    }
    return v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
}

static void read_env(void)
{
    ij.delta = env_u64("LATITUDE_INJECT_DELTA_L", 0);
    ij.eager_limit = env_u64("LATITUDE_INJECT_EAGER_LIMIT", UINT64_MAX);
    const char *ow = getenv("LATITUDE_INJECT_OW");
    if (ow && *ow && sscanf(ow, "%lf,%lf", &ij.ow_a, &ij.ow_b) != 2) {
        fprintf(stderr, "latitude inject: LATITUDE_INJECT_OW: expected 'a,b' (ns, ns/byte), got '%s'\n", ow);
        exit(2);
    }
    ij.debug = (int)env_u64("LATITUDE_INJECT_DEBUG", 0);
    const char *coll = getenv("LATITUDE_INJECT_COLL");
    ij.coll = !(coll && !strcmp(coll, "0"));
}

/* ---- clock offset between nodes ---- */
static int64_t raw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define SYNC_ROUNDS 20

/* Leader of a node (not the reference): offset = reference clock − local clock at the
 * midpoint of the round trip with the smallest duration. */
static int64_t sync_with(MPI_Comm leaders, int ref)
{
    int64_t best_rtt = INT64_MAX, offset = 0;
    for (int i = 0; i < SYNC_ROUNDS; i++) {
        int64_t t0 = raw_now(), tref;
        PMPI_Send(&t0, 1, MPI_INT64_T, ref, 0, leaders);
        PMPI_Recv(&tref, 1, MPI_INT64_T, ref, 0, leaders, MPI_STATUS_IGNORE);
        int64_t t1 = raw_now();
        if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            offset = tref - (t0 + (t1 - t0) / 2);
        }
    }
    return offset;
}

static void sync_clocks(void)
{
    MPI_Comm node, leaders;
    int local, nleaders, lrank;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_rank(node, &local);
    int nlocal;
    PMPI_Comm_size(node, &nlocal);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    ij.oversubscribed = cpus > 0 && nlocal > cpus;
    PMPI_Comm_split(MPI_COMM_WORLD, local == 0 ? 0 : MPI_UNDEFINED, ij.rank, &leaders);
    int64_t offset = 0;
    if (leaders != MPI_COMM_NULL) {
        PMPI_Comm_size(leaders, &nleaders);
        PMPI_Comm_rank(leaders, &lrank);
        /* leader 0 holds world rank 0 (key = world rank): the reference clock */
        for (int l = 1; l < nleaders; l++) {
            if (lrank == l) {
                offset = sync_with(leaders, 0);
            } else if (lrank == 0) {
                for (int i = 0; i < SYNC_ROUNDS; i++) {
                    int64_t t;
                    PMPI_Recv(&t, 1, MPI_INT64_T, l, 0, leaders, MPI_STATUS_IGNORE);
                    t = raw_now();
                    PMPI_Send(&t, 1, MPI_INT64_T, l, 0, leaders);
                }
            }
        }
        PMPI_Comm_free(&leaders);
    }
    PMPI_Bcast(&offset, 1, MPI_INT64_T, 0, node);
    PMPI_Comm_free(&node);
    ij.clock_offset = offset;
}

/* This rank's row of the pair matrix: the extra ΔL to every world rank. */
static void read_pair_delta(void)
{
    const char *path = getenv("LATITUDE_INJECT_PAIR_DELTA");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        ij_fatal("LATITUDE_INJECT_PAIR_DELTA: cannot open %s", path);
    ij.pair_delta = calloc((size_t)ij.size, sizeof *ij.pair_delta);
    if (!ij.pair_delta)
        ij_fatal("out of memory");
    for (long i = 0; i < (long)ij.size * ij.size; i++) {
        double v;
        if (fscanf(f, "%lf", &v) != 1 || v < 0)
            ij_fatal("%s: expected %d×%d non-negative pair delays in ns, value %ld is missing or bad "
                     "(does the --placement map have fewer ranks than the run?)", path, ij.size, ij.size, i + 1);
        if (i / ij.size == ij.rank)
            ij.pair_delta[i % ij.size] = (uint64_t)(v + 0.5);
    }
    double extra;
    if (fscanf(f, "%lf", &extra) == 1)
        ij_fatal("%s: more than %d×%d pair delays (does the --placement map have more ranks than the run?)",
                 path, ij.size, ij.size);
    fclose(f);
}

/* ---- ticks (ij.h) ----
 * The TSC is used only where the kernel keeps its own clock on it (its clocksource is "tsc":
 * constant, and the same on every core); its rate is CLOCK_MONOTONIC's ns over TSC ticks
 * across MPI_Init (at least 2 ms, so that the two clocks' read jitter of ~30 ns is < 2e-5). */
static uint64_t tick0, ns0;

static void ticks_begin(void)
{
#if defined(__x86_64__)
    char cs[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f) {
        if (!fgets(cs, sizeof cs, f))
            cs[0] = 0;
        fclose(f);
    }
    if (strncmp(cs, "tsc", 3) || getenv("LATITUDE_INJECT_NO_TSC"))
        return;
    ns0 = ij_now();
    tick0 = __rdtsc();
#endif
}

static void ticks_end(void)
{
#if defined(__x86_64__)
    if (!tick0)
        return;
    uint64_t ns, tick;
    do {
        ns = ij_now();
        tick = __rdtsc();
    } while (ns - ns0 < 2000000);
    if (tick > tick0) {
        ij_ns_per_tick = (double)(ns - ns0) / (double)(tick - tick0);
        ij_ticks_per_us = (uint64_t)(1000.0 / ij_ns_per_tick + 0.5);
        ij_tsc = 1;
    }
#endif
}

/* ---- start and end ---- */
static void start(int thread_level)
{
    ticks_begin();
    read_env();
    PMPI_Comm_rank(MPI_COMM_WORLD, &ij.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &ij.size);
    read_pair_delta();
    if (thread_level == MPI_THREAD_MULTIPLE)
        ij_warn_once("threads", "MPI_THREAD_MULTIPLE: the injector is not thread-safe; make MPI "
                     "calls from one thread at a time");
    sync_clocks();
    ij_comm_register(MPI_COMM_WORLD);
    ij_comm_register(MPI_COMM_SELF);
    ticks_end();
    ij.active = 1;
    PMPI_Barrier(MPI_COMM_WORLD);
    ij.t_init_end = ij_now();
    ij_wait_ticks = 0;
}

static uint64_t wait_ticks_at_fin; /* the span's waiting (finalize's own reaping excluded) */

static void write_report(void)
{
    const char *prefix = getenv("LATITUDE_INJECT_REPORT");
    if (!prefix || !*prefix)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s%d.txt", prefix, ij.rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "latitude inject: cannot write %s\n", path);
        return;
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    fprintf(f, "latitude-inject 1\nrank %d\nsize %d\nhost %s\ndelta_L_ns %llu\n"
            "eager_limit %llu\ninit_end_ns %llu\nfinalize_start_ns %llu\nspan_ns %llu\n"
            "recvs %llu\nsends %llu\nrendezvous %llu\nfins %llu\ncollectives %llu\n"
            "probes %llu\nexact_one_way %llu\nheld_ns %llu\ncollectives_passed_through %llu\n"
            "clock_offset_ns %lld\nsend_wait_ns %llu\nrecv_wait_ns %llu\npair_delta %d\n"
            "held_rule_ns %llu\nsend_held_ns %llu\nunsuccessful_tests %llu\ntick_ps %llu\n"
            "wait_ns %llu\n",
            ij.rank, ij.size, host, (unsigned long long)ij.delta,
            (unsigned long long)ij.eager_limit, (unsigned long long)ij.t_init_end,
            (unsigned long long)ij.t_fin_start,
            (unsigned long long)(ij.t_fin_start - ij.t_init_end), (unsigned long long)ij.n_recv,
            (unsigned long long)ij.n_send, (unsigned long long)ij.n_rndv,
            (unsigned long long)ij.n_fin, (unsigned long long)ij.n_coll,
            (unsigned long long)ij.n_probe, (unsigned long long)ij.n_exact,
            (unsigned long long)ij.held_ns, (unsigned long long)ij.n_fallback,
            (long long)ij.clock_offset, (unsigned long long)ij.send_ns,
            (unsigned long long)ij.recv_ns, ij.pair_delta != NULL,
            (unsigned long long)ij.held_rule_ns, (unsigned long long)ij.send_held_ns,
            (unsigned long long)ij.n_unsuccessful, (unsigned long long)(ij_ns_per_tick * 1000 + 0.5),
            (unsigned long long)(wait_ticks_at_fin * ij_ns_per_tick + 0.5));
    fclose(f);
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        start(MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        start(*provided);
    return rc;
}

int MPI_Pcontrol(const int level, ...)
{
    if (level == IJ_PCONTROL_DELTA_L) {
        va_list ap;
        va_start(ap, level);
        double ns = va_arg(ap, double);
        va_end(ap);
        if (!(ns >= 0 && ns < 1.8e19))
            ij_fatal("MPI_Pcontrol(%d, ΔL): expected a non-negative number of ns", level);
        ij.delta = (uint64_t)(ns + 0.5);
        return MPI_SUCCESS;
    }
    return PMPI_Pcontrol(level);
}

int MPI_Finalize(void)
{
    if (ij.active) {
        ij.t_fin_start = ij_now();
        wait_ticks_at_fin = ij_wait_ticks;
        ij.active = 0;
        /* every rank's outstanding timestamp/FIN sends must finish before the shadows go */
        ij_reap(1);
        PMPI_Barrier(MPI_COMM_WORLD);
        write_report();
        ij_comm_free_all();
    }
    return PMPI_Finalize();
}
