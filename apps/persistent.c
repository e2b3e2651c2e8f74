/* persistent: 1D periodic diffusion with halo exchange through persistent requests
 * (MPI_Send_init/MPI_Recv_init once, MPI_Startall or MPI_Start per iteration). */
#include "common.h"

static const char *usage =
    "usage: persistent [--n N] [--iters N] [--halo H] [--mode startall|start] [--report-calls]\n"
    "  --n       local cells per rank (default 100000)\n"
    "  --iters   iterations (default 200)\n"
    "  --halo    halo width in cells (default 64)\n"
    "  --mode    startall: MPI_Startall + MPI_Waitall;\n"
    "            start: MPI_Start + MPI_Wait per request (default startall)\n"
    "Prints a checksum of the field.\n";

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    int n = (int)arg_int("--n", 100000), iters = (int)arg_int("--iters", 200);
    int h = (int)arg_int("--halo", 64);
    const char *mode = arg_str("--mode", "startall");
    int startall = !strcmp(mode, "startall");
    if (n < 2 * h || h <= 0 || (!startall && strcmp(mode, "start"))) {
        if (rank == 0)
            fprintf(stderr, "persistent: need --n >= 2*--halo > 0, --mode startall|start\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    /* layout: [h left halo][n cells][h right halo]; two fields swap roles every iteration,
     * so two persistent sets are bound, one per field */
    double *f[2];
    MPI_Request set[2][4];
    for (int b = 0; b < 2; b++) {
        f[b] = malloc(sizeof(double) * (size_t)(n + 2 * h));
        for (int i = 0; i < n + 2 * h; i++)
            f[b][i] = (double)((rank * n + i) % 1000) / 1000.0;
        C(MPI_Recv_init)(f[b], h, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &set[b][0]);
        C(MPI_Recv_init)(f[b] + n + h, h, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &set[b][1]);
        C(MPI_Send_init)(f[b] + n, h, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &set[b][2]);
        C(MPI_Send_init)(f[b] + h, h, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &set[b][3]);
    }

    app_timer_start(MPI_COMM_WORLD);
    for (int it = 0; it < iters; it++) {
        double *cur = f[it % 2], *next = f[(it + 1) % 2];
        MPI_Request *r = set[it % 2];
        if (startall)
            C(MPI_Startall)(4, r);
        else
            for (int k = 0; k < 4; k++)
                C(MPI_Start)(&r[k]);
        for (int i = h + 1; i < n + h - 1; i++) /* interior: no halo needed */
            next[i] = cur[i] + 0.25 * (cur[i - 1] - 2 * cur[i] + cur[i + 1]);
        if (startall)
            C(MPI_Waitall)(4, r, MPI_STATUSES_IGNORE);
        else
            for (int k = 0; k < 4; k++)
                C(MPI_Wait)(&r[k], MPI_STATUS_IGNORE);
        for (int i = h; i < n + h; i += n - 1) /* the two cells next to the halos */
            next[i] = cur[i] + 0.25 * (cur[i - 1] - 2 * cur[i] + cur[i + 1]);
    }
    app_timer_stop(MPI_COMM_WORLD, rank);

    double local = 0, total = 0, *fin = f[iters % 2];
    for (int i = h; i < n + h; i++)
        local += fin[i] * (double)(i % 13 + 1);
    C(MPI_Reduce)(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("persistent n=%d halo=%d on %d ranks, %d iterations (%s): checksum %.10e\n", n,
               h, size, iters, mode, total);
    for (int b = 0; b < 2; b++) {
        for (int k = 0; k < 4; k++)
            C(MPI_Request_free)(&set[b][k]);
        free(f[b]);
    }
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
