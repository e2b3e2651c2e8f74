/* The machine-state probe: the median half round trip of 8-byte messages between world ranks
 * 0 and 1, through PMPI so no tracer or injector work is in it. The tracer takes it inside
 * MPI_Init (before the run's time starts) and writes it into rank 0's header ("#@ probe");
 * latitude-calib takes the same in each measurement run. Some machines (a VM whose virtual
 * CPUs the host moves) run a whole process launch about twice as fast or slow as another;
 * comparing the two probes tells whether a traced run saw the calibration's machine state.
 * Header-only: built into both the tracer and latitude-calib. */
#ifndef LT_PROBE_H
#define LT_PROBE_H

#include <mpi.h>
#include <stdlib.h>
#include <time.h>

enum { LT_PROBE_ROUNDS = 200, LT_PROBE_WARMUP = 20, LT_PROBE_TAG = 32767 /* ≤ MPI_TAG_UB */ };

static int lt_probe_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double lt_probe_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Ranks 0 and 1 of MPI_COMM_WORLD exchange LT_PROBE_WARMUP + LT_PROBE_ROUNDS round trips;
 * rank 0 returns the median half round trip (ns), every other rank (and a world of one) -1.
 * Safe before the program's first call: each side's receives name the other rank and a tag,
 * and both sides finish their probe messages before sending anything else. */
static double lt_probe_ns(void)
{
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || rank > 1)
        return -1;
    char b[8] = {0};
    double rt[LT_PROBE_ROUNDS];
    for (int i = -LT_PROBE_WARMUP; i < LT_PROBE_ROUNDS; i++) {
        double t0 = lt_probe_clock_ns();
        if (rank == 0) {
            PMPI_Send(b, 8, MPI_BYTE, 1, LT_PROBE_TAG, MPI_COMM_WORLD);
            PMPI_Recv(b, 8, MPI_BYTE, 1, LT_PROBE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            PMPI_Recv(b, 8, MPI_BYTE, 0, LT_PROBE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            PMPI_Send(b, 8, MPI_BYTE, 0, LT_PROBE_TAG, MPI_COMM_WORLD);
        }
        if (i >= 0)
            rt[i] = lt_probe_clock_ns() - t0;
    }
    if (rank != 0)
        return -1;
    qsort(rt, LT_PROBE_ROUNDS, sizeof rt[0], lt_probe_cmp);
    return 0.25 * (rt[LT_PROBE_ROUNDS / 2 - 1] + rt[LT_PROBE_ROUNDS / 2]);
}

#endif
