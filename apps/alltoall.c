/* alltoall: the transpose pattern of distributed 2D FFTs. An n x n matrix is distributed by
 * rows; each iteration transforms the local rows (a fast Walsh-Hadamard transform stands in
 * for the FFT: same O(n log n) butterflies), transposes globally with an all-to-all,
 * transforms again and transposes back. */
#include "common.h"

#include <math.h>

static const char *usage =
    "usage: alltoall [--n N] [--iters N] [--variant alltoall|alltoallv|ialltoall]\n"
    "                [--report-calls]\n"
    "  --n         matrix size, a power of two divisible by the number of ranks (default 512)\n"
    "  --iters     forward+backward transpose pairs (default 10)\n"
    "  --variant   MPI_Alltoall, MPI_Alltoallv (equal counts) or MPI_Ialltoall + MPI_Wait\n"
    "Prints a checksum of the matrix.\n";

static void fwht(double *x, int n)
{
    const double s = 1.0 / sqrt(2.0);
    for (int h = 1; h < n; h *= 2)
        for (int i = 0; i < n; i += 2 * h)
            for (int j = i; j < i + h; j++) {
                double a = x[j], b = x[j + h];
                x[j] = (a + b) * s;
                x[j + h] = (a - b) * s;
            }
}

/* rows x n local block -> blocks of rows x rows per destination, each transposed */
static void pack(const double *a, double *buf, int rows, int n, int p)
{
    for (int d = 0; d < p; d++)
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < rows; j++)
                buf[((size_t)d * rows + j) * rows + i] = a[(size_t)i * n + d * rows + j];
}

static void unpack(const double *buf, double *a, int rows, int n, int p)
{
    for (int s = 0; s < p; s++)
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < rows; j++)
                a[(size_t)i * n + s * rows + j] = buf[((size_t)s * rows + i) * rows + j];
}

static void transpose(double *a, double *sbuf, double *rbuf, int rows, int n, int p,
                      const char *variant, MPI_Comm comm)
{
    int blk = rows * rows;
    pack(a, sbuf, rows, n, p);
    if (!strcmp(variant, "alltoall")) {
        C(MPI_Alltoall)(sbuf, blk, MPI_DOUBLE, rbuf, blk, MPI_DOUBLE, comm);
    } else if (!strcmp(variant, "alltoallv")) {
        int counts[p], displs[p];
        for (int i = 0; i < p; i++) {
            counts[i] = blk;
            displs[i] = i * blk;
        }
        C(MPI_Alltoallv)(sbuf, counts, displs, MPI_DOUBLE, rbuf, counts, displs, MPI_DOUBLE,
                         comm);
    } else {
        MPI_Request req;
        C(MPI_Ialltoall)(sbuf, blk, MPI_DOUBLE, rbuf, blk, MPI_DOUBLE, comm, &req);
        C(MPI_Wait)(&req, MPI_STATUS_IGNORE);
    }
    unpack(rbuf, a, rows, n, p);
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    int n = (int)arg_int("--n", 512), iters = (int)arg_int("--iters", 10);
    const char *variant = arg_str("--variant", "alltoall");
    int ok = n > 0 && (n & (n - 1)) == 0 && n % size == 0 &&
             (!strcmp(variant, "alltoall") || !strcmp(variant, "alltoallv") ||
              !strcmp(variant, "ialltoall"));
    if (!ok) {
        if (rank == 0)
            fprintf(stderr, "alltoall: --n must be a power of two divisible by the ranks; "
                            "--variant alltoall|alltoallv|ialltoall\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    int rows = n / size;
    size_t cells = (size_t)rows * n;
    double *a = malloc(sizeof(double) * cells), *sbuf = malloc(sizeof(double) * cells),
           *rbuf = malloc(sizeof(double) * cells);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < n; j++)
            a[(size_t)i * n + j] = sin(0.001 * ((rank * rows + i) * 7 + j * 3));

    app_timer_start(MPI_COMM_WORLD);
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < rows; i++)
            fwht(&a[(size_t)i * n], n);
        transpose(a, sbuf, rbuf, rows, n, size, variant, MPI_COMM_WORLD);
        for (int i = 0; i < rows; i++)
            fwht(&a[(size_t)i * n], n);
        transpose(a, sbuf, rbuf, rows, n, size, variant, MPI_COMM_WORLD);
    }
    app_timer_stop(MPI_COMM_WORLD, rank);

    double local = 0, total = 0;
    for (size_t i = 0; i < cells; i++)
        local += a[i] * (double)(i % 97 + 1);
    C(MPI_Reduce)(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("alltoall n=%d on %d ranks, %d iterations (%s): checksum %.10e\n", n, size, iters,
               variant, total);
    free(a);
    free(sbuf);
    free(rbuf);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
