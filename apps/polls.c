/* polls: the polling, wildcard and cancellation patterns of HPCC, small.
 *
 * --mode test (MPIRandomAccess): every rank keeps one wildcard receive (MPI_ANY_SOURCE,
 * MPI_ANY_TAG) posted and one send in flight to the next rank; between chunks of local work it
 * polls the receive with MPI_Testany and the send with MPI_Test, re-posting each as it
 * completes, until every rank has sent and received --iters messages. Most polls find
 * nothing. Then the pattern of HPCC's ends: the last wildcard receive is cancelled
 * (MPI_Cancel, MPI_Wait, MPI_Test_cancelled), a wildcard persistent receive is started and
 * cancelled, a wildcard receive is cancelled and freed without waiting, and a send nobody
 * receives is cancelled (if the MPI cannot cancel it, the next rank is told so and receives it).
 * --mode iprobe (HPL's panel broadcast): rank 0 polls MPI_Iprobe between chunks of work until
 * a message from any rank arrives, then receives it; the others send one each per round,
 * after rank 0's go for that round.
 * stdout is deterministic; "elapsed_s" (the timed loop) goes to stderr. */
#include "common.h"

#include <stdint.h>

static const char *usage =
    "usage: polls [--mode test|iprobe] [--iters N] [--work W]\n"
    "Polling loops as HPCC makes them (MPI_Testany/MPI_Test or MPI_Iprobe between chunks of\n"
    "W local updates), wildcard receives, and cancelled receives and sends.\n"
    "  --mode MODE   test (default) or iprobe\n"
    "  --iters N     messages each rank sends (default 200)\n"
    "  --work W      local updates between polls (default 200)\n";

static uint64_t table[1024], ran = 1;

/* W updates of a small table, RandomAccess-style: the work between two polls */
static void work(long w)
{
    for (long i = 0; i < w; i++) {
        ran = ran * 6364136223846793005ull + 1442695040888963407ull;
        table[(ran >> 40) & 1023] ^= ran;
    }
}

/* The end of HPCC's RandomAccess: cancel what was left posted. Returns how many of the
 * cancellations succeeded (receives: always; the send: if the MPI can cancel it). */
static int cancellations(MPI_Comm comm, int rank, int size, MPI_Request *inreq, int *rbuf)
{
    int flag = 0, done = 0, ok = 0;
    MPI_Status st;
    C(MPI_Cancel)(inreq); /* the wildcard receive nobody will match */
    C(MPI_Wait)(inreq, &st);
    C(MPI_Test_cancelled)(&st, &flag);
    ok += flag;
    C(MPI_Barrier)(comm); /* no rank sends below before every wildcard ANY_TAG receive is gone */

    MPI_Request p; /* a persistent wildcard receive, started and cancelled */
    C(MPI_Recv_init)(rbuf, 1, MPI_INT, MPI_ANY_SOURCE, 77, comm, &p);
    C(MPI_Start)(&p);
    C(MPI_Cancel)(&p);
    C(MPI_Test)(&p, &done, &st);
    while (!done)
        C(MPI_Test)(&p, &done, &st);
    C(MPI_Test_cancelled)(&st, &flag);
    ok += flag;
    C(MPI_Request_free)(&p);

    MPI_Request q; /* cancelled and freed without waiting: its outcome is never seen */
    C(MPI_Irecv)(rbuf + 1, 1, MPI_INT, MPI_ANY_SOURCE, 78, comm, &q);
    C(MPI_Cancel)(&q);
    C(MPI_Request_free)(&q);

    int right = (rank + 1) % size, left = (rank + size - 1) % size, value = rank, sent, got;
    MPI_Request s; /* a send nobody receives, unless its cancellation fails */
    C(MPI_Isend)(&value, 1, MPI_INT, right, 79, comm, &s);
    C(MPI_Cancel)(&s);
    C(MPI_Wait)(&s, &st);
    C(MPI_Test_cancelled)(&st, &flag);
    sent = !flag;
    C(MPI_Sendrecv)(&sent, 1, MPI_INT, right, 80, &got, 1, MPI_INT, left, 80, comm, MPI_STATUS_IGNORE);
    if (got)
        C(MPI_Recv)(rbuf + 2, 1, MPI_INT, left, 79, comm, MPI_STATUS_IGNORE);
    return ok;
}

/* RandomAccess: poll a wildcard receive and a send between chunks of work. */
static void mode_test(MPI_Comm comm, int rank, int size, long iters, long w)
{
    int right = (rank + 1) % size, rbuf[3] = {0}, sbuf = 0, idx, flag;
    long sent = 0, received = 0, checksum = 0;
    MPI_Request inreq, outreq = MPI_REQUEST_NULL;
    MPI_Status st;
    C(MPI_Irecv)(rbuf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &inreq);
    app_timer_start(comm);
    while (sent < iters || received < iters) {
        work(w);
        C(MPI_Testany)(1, &inreq, &idx, &flag, &st);
        if (flag && idx != MPI_UNDEFINED) {
            checksum += (long)rbuf[0] * (st.MPI_TAG + 1) + st.MPI_SOURCE;
            if (++received < iters)
                C(MPI_Irecv)(rbuf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &inreq);
        }
        if (sent < iters) {
            if (outreq != MPI_REQUEST_NULL)
                C(MPI_Test)(&outreq, &flag, MPI_STATUS_IGNORE);
            if (outreq == MPI_REQUEST_NULL) {
                sbuf = (int)(rank * 1000 + sent);
                C(MPI_Isend)(&sbuf, 1, MPI_INT, right, (int)(sent % 100), comm, &outreq);
                sent++;
            }
        } else if (outreq != MPI_REQUEST_NULL) {
            C(MPI_Test)(&outreq, &flag, MPI_STATUS_IGNORE);
        }
    }
    if (outreq != MPI_REQUEST_NULL)
        C(MPI_Wait)(&outreq, MPI_STATUS_IGNORE);
    app_timer_stop(comm, rank);
    C(MPI_Irecv)(rbuf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &inreq);
    C(MPI_Barrier)(comm); /* every real message has been received: nothing matches inreq */
    int ok = cancellations(comm, rank, size, &inreq, rbuf);
    long all = 0;
    C(MPI_Reduce)(&checksum, &all, 1, MPI_LONG, MPI_SUM, 0, comm);
    if (rank == 0)
        printf("polls test: %d ranks, %ld messages each, checksum %ld, receives cancelled %d\n", size, iters, all, ok);
}

/* HPL: rank 0 polls MPI_Iprobe between chunks of work until a message arrives. Each round
 * starts with rank 0's go to the others, so a sender never runs rounds ahead (on a loaded
 * machine it did, and every probe found its message already there: nothing was polled). */
static void mode_iprobe(MPI_Comm comm, int rank, int size, long iters, long w)
{
    long checksum = 0;
    int flag, v, go = 1;
    MPI_Status st;
    app_timer_start(comm);
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            for (int k = 1; k < size; k++)
                C(MPI_Send)(&go, 1, MPI_INT, k, 6, comm);
            for (int k = 1; k < size; k++) {
                do {
                    work(w);
                    C(MPI_Iprobe)(MPI_ANY_SOURCE, 5, comm, &flag, &st);
                } while (!flag);
                C(MPI_Recv)(&v, 1, MPI_INT, st.MPI_SOURCE, 5, comm, MPI_STATUS_IGNORE);
                checksum += v;
            }
        } else {
            C(MPI_Recv)(&go, 1, MPI_INT, 0, 6, comm, MPI_STATUS_IGNORE);
            work(w * 50); /* the others compute longer: rank 0 polls */
            v = (int)(rank * 1000 + i);
            C(MPI_Send)(&v, 1, MPI_INT, 0, 5, comm);
        }
    }
    app_timer_stop(comm, rank);
    if (rank == 0)
        printf("polls iprobe: %d ranks, %ld rounds, checksum %ld\n", size, iters, checksum);
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    const char *mode = arg_str("--mode", "test");
    long iters = arg_int("--iters", 200), w = arg_int("--work", 200);
    if (strcmp(mode, "test") && strcmp(mode, "iprobe")) {
        fprintf(stderr, "--mode: expected test or iprobe, got '%s'\n", mode);
        return 2;
    }
    int rank, size;
    C(MPI_Init)(&argc, &argv);
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    if (!strcmp(mode, "test"))
        mode_test(MPI_COMM_WORLD, rank, size, iters, w);
    else
        mode_iprobe(MPI_COMM_WORLD, rank, size, iters, w);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
