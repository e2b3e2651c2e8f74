/* cold_calls: the time inside MPI calls right after a sweep of the caches, against the same
 * calls warm. latitude-calib times its calls in tight loops, where the library's state stays
 * in the caches; an application calls MPI after its own computation has evicted it. Per
 * sweep size (per rank, MiB read and written between the calls; 0 = warm) it prints the
 * medians over 2000 iterations of: MPI_Irecv (4 KiB, posted), MPI_Isend (4 KiB), the
 * MPI_Waitall of the exchange, an 8 B MPI_Allreduce after a sweep (includes the partner's
 * skew) and one right after it (warm).
 *
 *   mpicc -O2 -o /tmp/cold_calls bench/cold_calls.c
 *   flock -x /work/.quiet.lock mpirun -np 2 /tmp/cold_calls
 *
 * Development VM, 2026-12-07 (Open MPI 4.1, shared memory; 1 MiB L2 per core, 32 MiB L3):
 * Irecv 0.05 µs warm, 0.2 after 1-4 MiB, 1.2 after 16 MiB, 4.0 after 64 MiB; Isend 0.12,
 * 0.2, 1.6, 4.1 µs. CG (n = 512, 2 ranks) traces 1.6-1.7 µs for each. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static volatile double sink;

/* read and write every cache line of the first `bytes` of p */
static void sweep(double *p, size_t bytes)
{
    double s = 0;
    for (size_t i = 0; i < bytes / sizeof *p; i += 8) {
        p[i] += 1.0;
        s += p[i];
    }
    sink = s;
}

int main(int argc, char **argv)
{
    enum { N = 2000, KINDS = 5 };
    const size_t mib[] = {0, 1, 4, 16, 64};
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    double *big = calloc(64u << 20, 1);
    char *sb = calloc(4096, 1), *rb = calloc(4096, 1);
    double *t[KINDS];
    for (int k = 0; k < KINDS; k++)
        t[k] = malloc(sizeof(double) * N);
    if (rank == 0)
        printf("sweep_mib,irecv_us,isend_us,waitall_us,allreduce_cold_us,allreduce_warm_us\n");
    for (size_t m = 0; m < sizeof mib / sizeof *mib; m++) {
        for (int i = 0; i < N; i++) {
            MPI_Request r[2];
            double x = 1, y;
            MPI_Barrier(MPI_COMM_WORLD);
            sweep(big, mib[m] << 20);
            double t0 = now_us();
            MPI_Irecv(rb, 4096, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &r[0]);
            double t1 = now_us();
            MPI_Isend(sb, 4096, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &r[1]);
            double t2 = now_us();
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            double t3 = now_us();
            sweep(big, mib[m] << 20);
            double t4 = now_us();
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            double t5 = now_us();
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            double t6 = now_us();
            t[0][i] = t1 - t0, t[1][i] = t2 - t1, t[2][i] = t3 - t2, t[3][i] = t5 - t4, t[4][i] = t6 - t5;
        }
        if (rank == 0)
            printf("%zu,%.3f,%.3f,%.3f,%.3f,%.3f\n", mib[m], median(t[0], N), median(t[1], N), median(t[2], N),
                   median(t[3], N), median(t[4], N));
    }
    MPI_Finalize();
    return 0;
}
