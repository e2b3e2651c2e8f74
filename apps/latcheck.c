/* latcheck: checks the latency injector's semantics from inside an application. Run it under
 * `latitude inject --delta-L D --eager-limit S` with `--delta-us D --eager S`; every message
 * carries its send time (CLOCK_MONOTONIC, one clock per node) and its identity, and the
 * receiver checks that the right data arrived and that it became visible no earlier than
 * ΔL after the send (3·ΔL for messages above S):
 *   wildcard receives (ANY_SOURCE/ANY_TAG mixed with specific ones), Probe and Iprobe, Test
 *   loops, persistent requests, Waitany/Waitsome, Sendrecv_replace, rendezvous messages and
 *   the sender's completion (4·ΔL), eager senders not delayed, an Allreduce.
 * Prints "latcheck: ok <n> checks" or one "latcheck: FAIL ..." line per failure (exit 1).
 * Without the injector run it with --delta-us 0. Needs 2 or more ranks (ranks 0-2 work). */
#include "common.h"

#include <stdint.h>
#include <time.h>

static const char *usage =
    "usage: latcheck [--delta-us D] [--eager S] [--rounds N]\n"
    "  --delta-us  the ΔL the injector adds, µs (default 0)\n"
    "  --eager     the injector's eager limit in bytes (default: no rendezvous checks)\n"
    "  --rounds    repetitions (default 3)\n";

static int rank, size, fails, checks;
static double delta_us, slack_us = 2.0;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

struct msg {
    double t_send;
    int src, tag, seq, pad;
};

static void check(int ok, const char *what, double got, double want)
{
    checks++;
    if (!ok) {
        fails++;
        printf("latcheck: FAIL rank %d: %s (got %.3f, expected %.3f)\n", rank, what, got, want);
    }
}

/* the payload is the one sent for (src, tag, seq) and it became visible >= k·ΔL later */
static void got(const struct msg *m, const MPI_Status *st, int want_seq, double seen, double k,
                const char *what)
{
    check(m->src == st->MPI_SOURCE && m->tag == st->MPI_TAG, what, m->src, st->MPI_SOURCE);
    if (want_seq >= 0)
        check(m->seq == want_seq, what, m->seq, want_seq);
    check(seen - m->t_send >= k * delta_us - 0.05, what, seen - m->t_send, k * delta_us);
}

static void send_msg(int dst, int tag, int seq, MPI_Comm comm)
{
    struct msg m = {now_us(), rank, tag, seq, 0};
    C(MPI_Send)(&m, sizeof m, MPI_BYTE, dst, tag, comm);
}

/* Rank 1 receives 3 tags x 2 messages from ranks 0 (and 2): tag 1 through (ANY_SOURCE, 1),
 * tag 2 through (source, 2), tag 3 through (ANY_SOURCE, ANY_TAG) posted last (so MPI must give
 * them exactly the tag-3 messages). MPI matches the messages of one (source, tag) in sending
 * order to the receives in posting order: checked after all have completed. */
static void wildcards(MPI_Comm comm)
{
    int senders = size > 2 ? 2 : 1, from[2] = {0, 2};
    if (rank == 0 || rank == 2) {
        for (int s = 0; s < 2; s++)
            for (int tag = 1; tag <= 3; tag++)
                send_msg(1, tag, s, comm);
    } else if (rank == 1) {
        int n = 6 * senders, k = 0;
        struct msg *m = calloc((size_t)n, sizeof *m);
        MPI_Request *r = malloc(sizeof *r * (size_t)n);
        for (int i = 0; i < 2 * senders; i++) {
            C(MPI_Irecv)(&m[k], sizeof m[k], MPI_BYTE, MPI_ANY_SOURCE, 1, comm, &r[k]);
            k++;
            C(MPI_Irecv)(&m[k], sizeof m[k], MPI_BYTE, from[i % senders], 2, comm, &r[k]);
            k++;
        }
        for (int i = 0; i < 2 * senders; i++, k++)
            C(MPI_Irecv)(&m[k], sizeof m[k], MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r[k]);
        for (int j = 0; j < n; j++) {
            int idx;
            MPI_Status st;
            C(MPI_Waitany)(n, r, &idx, &st);
            got(&m[idx], &st, -1, now_us(), 1, "wildcard receive");
            check(idx < 4 * senders || m[idx].tag == 3, "tag-3 receives get tag 3", m[idx].tag, 3);
        }
        int next[3][4] = {{0}};
        for (int i = 0; i < n; i++) {
            int *s = &next[m[i].src][m[i].tag];
            check(m[i].seq == *s, "non-overtaking order", m[i].seq, *s);
            (*s)++;
        }
        free(m);
        free(r);
    }
}

static void probes(MPI_Comm comm)
{
    if (rank == 0) {
        send_msg(1, 7, 0, comm);
        send_msg(1, 8, 1, comm);
    } else if (rank == 1) {
        MPI_Status st;
        int flag = 0;
        while (!flag)
            C(MPI_Iprobe)(0, 7, comm, &flag, &st);
        double t = now_us();
        struct msg m;
        C(MPI_Recv)(&m, sizeof m, MPI_BYTE, 0, 7, comm, &st);
        got(&m, &st, 0, t, 1, "Iprobe");
        C(MPI_Probe)(0, MPI_ANY_TAG, comm, &st); /* rank 2 may be a round ahead */
        t = now_us();
        C(MPI_Recv)(&m, sizeof m, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, &st);
        got(&m, &st, 1, t, 1, "Probe");
    }
}

static void tests_and_persistent(MPI_Comm comm)
{
    struct msg m;
    MPI_Request r;
    MPI_Status st;
    if (rank == 0) {
        send_msg(1, 9, 0, comm);
        for (int i = 0; i < 3; i++) {
            struct msg p = {now_us(), 0, 10, i, 0};
            C(MPI_Send_init)(&p, sizeof p, MPI_BYTE, 1, 10, comm, &r);
            C(MPI_Start)(&r);
            C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
            C(MPI_Request_free)(&r);
        }
    } else if (rank == 1) {
        int flag = 0;
        C(MPI_Irecv)(&m, sizeof m, MPI_BYTE, 0, 9, comm, &r);
        while (!flag)
            C(MPI_Test)(&r, &flag, &st);
        got(&m, &st, 0, now_us(), 1, "Test loop");
        C(MPI_Recv_init)(&m, sizeof m, MPI_BYTE, 0, 10, comm, &r);
        for (int i = 0; i < 3; i++) {
            C(MPI_Start)(&r);
            C(MPI_Wait)(&r, &st);
            got(&m, &st, i, now_us(), 1, "persistent receive");
        }
        C(MPI_Request_free)(&r);
    }
}

/* eager MPI_Send returns without waiting for ΔL; Sendrecv_replace exchanges correctly */
static void eager_and_replace(MPI_Comm comm)
{
    if (rank > 1)
        return;
    int peer = 1 - rank;
    if (rank == 0) {
        double t = now_us();
        for (int i = 0; i < 8; i++)
            send_msg(1, 11, i, comm);
        double dt = now_us() - t;
        check(delta_us < 20 || dt < delta_us / 2, "eager sends delayed", dt, delta_us / 2);
    } else {
        MPI_Status st;
        struct msg m;
        for (int i = 0; i < 8; i++) {
            C(MPI_Recv)(&m, sizeof m, MPI_BYTE, 0, 11, comm, &st);
            got(&m, &st, i, now_us(), 1, "eager burst");
        }
    }
    struct msg m = {now_us(), rank, 12, 40 + rank, 0};
    MPI_Status st;
    C(MPI_Sendrecv_replace)(&m, sizeof m, MPI_BYTE, peer, 12, peer, 12, comm, &st);
    got(&m, &st, 40 + peer, now_us(), 1, "Sendrecv_replace");
}

/* a message above the eager limit: receiver >= 3ΔL, sender's Send >= 4ΔL */
static void rendezvous(MPI_Comm comm, long eager)
{
    if (rank > 1 || eager <= 0)
        return;
    long n = eager + 1024;
    char *buf = calloc((size_t)n, 1);
    struct msg *m = (struct msg *)buf;
    MPI_Status st;
    if (rank == 0) {
        m->t_send = now_us();
        m->src = 0;
        m->tag = 13;
        C(MPI_Send)(buf, (int)n, MPI_BYTE, 1, 13, comm);
        double dt = now_us() - m->t_send;
        check(dt >= 4 * delta_us - slack_us, "rendezvous sender completion", dt, 4 * delta_us);
    } else {
        C(MPI_Recv)(buf, (int)n, MPI_BYTE, 0, 13, comm, &st);
        got(m, &st, 0, now_us(), 3, "rendezvous receive");
    }
    free(buf);
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    delta_us = atof(arg_str("--delta-us", "0"));
    long eager = arg_int("--eager", 0);
    int rounds = (int)arg_int("--rounds", 3);
    C(MPI_Init)(&argc, &argv);
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "latcheck: needs at least 2 ranks\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    MPI_Comm dup;
    C(MPI_Comm_dup)(MPI_COMM_WORLD, &dup);
    for (int i = 0; i < rounds; i++) {
        MPI_Comm comm = i % 2 ? dup : MPI_COMM_WORLD;
        wildcards(comm);
        C(MPI_Barrier)(comm); /* later messages must not meet the wildcard receives */
        probes(comm);
        tests_and_persistent(comm);
        eager_and_replace(comm);
        rendezvous(comm, eager);
        /* the rank that arrives first waits >= ΔL for the other's message */
        double t = now_us(), x = rank + 1, sum, dt, longest;
        C(MPI_Allreduce)(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
        dt = now_us() - t;
        check(sum == size * (size + 1) / 2.0, "allreduce result", sum, size * (size + 1) / 2.0);
        C(MPI_Allreduce)(&dt, &longest, 1, MPI_DOUBLE, MPI_MAX, comm);
        check(longest >= delta_us - 0.05, "allreduce latency", longest, delta_us);
    }
    int all[2] = {fails, checks}, tot[2];
    C(MPI_Reduce)(all, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && tot[0] == 0)
        printf("latcheck: ok %d checks\n", tot[1]);
    fflush(stdout);
    C(MPI_Comm_free)(&dup);
    app_finish(MPI_COMM_WORLD, rank, size);
    return tot[0] && rank == 0 ? 1 : 0;
}
