/* halo2d: 5-point Jacobi stencil on a px x py process grid with a periodic allreduce of the
 * residual (the communication pattern of CG-like solvers). */
#include "common.h"

#include <math.h>

static const char *usage =
    "usage: halo2d [--nx N] [--ny N] [--px P] [--py P] [--iters N] [--mode blocking|nonblocking]\n"
    "              [--allreduce-every K] [--report-compute] [--report-calls]\n"
    "  --nx, --ny          global grid points (default 512 x 512)\n"
    "  --px, --py          process grid (default: MPI_Dims_create)\n"
    "  --iters             Jacobi iterations (default 100)\n"
    "  --mode              blocking: MPI_Sendrecv per direction;\n"
    "                      nonblocking: 4 MPI_Irecv + 4 MPI_Isend + MPI_Waitall (default)\n"
    "  --allreduce-every   residual MPI_Allreduce every K iterations (default 10; 0 = never)\n"
    "  --report-compute    every rank prints \"compute_s rank=<r> <seconds>\": its time in the\n"
    "                      stencil sweeps (to see whether computation changes under injection)\n"
    "Prints the final residual and a checksum of the grid.\n";

struct grid {
    int nx, ny;        /* local interior size */
    double *u, *v;     /* (nx+2) x (ny+2), row-major, halo of 1 */
    int north, south, west, east;
    MPI_Datatype column;
};

#define AT(g, a, i, j) ((a)[(size_t)(i) * ((g)->ny + 2) + (j)])

static void init_grid(struct grid *g, int x0, int y0)
{
    size_t n = (size_t)(g->nx + 2) * (g->ny + 2);
    g->u = calloc(n, sizeof(double));
    g->v = calloc(n, sizeof(double));
    for (int i = 1; i <= g->nx; i++)
        for (int j = 1; j <= g->ny; j++)
            AT(g, g->u, i, j) = sin(0.01 * (x0 + i)) * cos(0.013 * (y0 + j));
}

/* rows are contiguous (north/south), columns use a vector type (west/east) */
static void exchange_blocking(struct grid *g, MPI_Comm comm)
{
    int w = g->ny + 2;
    double *u = g->u;
    C(MPI_Sendrecv)(&u[1 * w + 1], g->ny, MPI_DOUBLE, g->north, 0, &u[(g->nx + 1) * w + 1],
                    g->ny, MPI_DOUBLE, g->south, 0, comm, MPI_STATUS_IGNORE);
    C(MPI_Sendrecv)(&u[g->nx * w + 1], g->ny, MPI_DOUBLE, g->south, 1, &u[0 * w + 1], g->ny,
                    MPI_DOUBLE, g->north, 1, comm, MPI_STATUS_IGNORE);
    C(MPI_Sendrecv)(&u[1 * w + 1], 1, g->column, g->west, 2, &u[1 * w + g->ny + 1], 1,
                    g->column, g->east, 2, comm, MPI_STATUS_IGNORE);
    C(MPI_Sendrecv)(&u[1 * w + g->ny], 1, g->column, g->east, 3, &u[1 * w + 0], 1, g->column,
                    g->west, 3, comm, MPI_STATUS_IGNORE);
}

static void exchange_nonblocking(struct grid *g, MPI_Comm comm)
{
    int w = g->ny + 2;
    double *u = g->u;
    MPI_Request r[8];
    C(MPI_Irecv)(&u[(g->nx + 1) * w + 1], g->ny, MPI_DOUBLE, g->south, 0, comm, &r[0]);
    C(MPI_Irecv)(&u[0 * w + 1], g->ny, MPI_DOUBLE, g->north, 1, comm, &r[1]);
    C(MPI_Irecv)(&u[1 * w + g->ny + 1], 1, g->column, g->east, 2, comm, &r[2]);
    C(MPI_Irecv)(&u[1 * w + 0], 1, g->column, g->west, 3, comm, &r[3]);
    C(MPI_Isend)(&u[1 * w + 1], g->ny, MPI_DOUBLE, g->north, 0, comm, &r[4]);
    C(MPI_Isend)(&u[g->nx * w + 1], g->ny, MPI_DOUBLE, g->south, 1, comm, &r[5]);
    C(MPI_Isend)(&u[1 * w + 1], 1, g->column, g->west, 2, comm, &r[6]);
    C(MPI_Isend)(&u[1 * w + g->ny], 1, g->column, g->east, 3, comm, &r[7]);
    C(MPI_Waitall)(8, r, MPI_STATUSES_IGNORE);
}

/* one Jacobi sweep; returns the local squared update */
static double sweep(struct grid *g)
{
    double res = 0;
    for (int i = 1; i <= g->nx; i++)
        for (int j = 1; j <= g->ny; j++) {
            double nv = 0.25 * (AT(g, g->u, i - 1, j) + AT(g, g->u, i + 1, j) +
                                AT(g, g->u, i, j - 1) + AT(g, g->u, i, j + 1));
            double d = nv - AT(g, g->u, i, j);
            res += d * d;
            AT(g, g->v, i, j) = nv;
        }
    double *t = g->u;
    g->u = g->v;
    g->v = t;
    return res;
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    int NX = (int)arg_int("--nx", 512), NY = (int)arg_int("--ny", 512);
    int iters = (int)arg_int("--iters", 100), every = (int)arg_int("--allreduce-every", 10);
    const char *mode = arg_str("--mode", "nonblocking");
    int blocking = !strcmp(mode, "blocking");
    int dims[2] = {(int)arg_int("--px", 0), (int)arg_int("--py", 0)};
    if (!blocking && strcmp(mode, "nonblocking")) {
        if (rank == 0)
            fprintf(stderr, "halo2d: --mode must be blocking or nonblocking\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    C(MPI_Dims_create)(size, 2, dims);
    if (dims[0] * dims[1] != size || NX % dims[0] || NY % dims[1]) {
        if (rank == 0)
            fprintf(stderr, "halo2d: %d x %d ranks must divide the %d x %d grid\n", dims[0],
                    dims[1], NX, NY);
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    int cx = rank / dims[1], cy = rank % dims[1];
    struct grid g = {NX / dims[0], NY / dims[1], NULL, NULL, 0, 0, 0, 0, MPI_DATATYPE_NULL};
    g.north = cx > 0 ? rank - dims[1] : MPI_PROC_NULL;
    g.south = cx < dims[0] - 1 ? rank + dims[1] : MPI_PROC_NULL;
    g.west = cy > 0 ? rank - 1 : MPI_PROC_NULL;
    g.east = cy < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL;
    C(MPI_Type_vector)(g.nx, 1, g.ny + 2, MPI_DOUBLE, &g.column);
    C(MPI_Type_commit)(&g.column);
    init_grid(&g, cx * g.nx, cy * g.ny);

    app_timer_start(MPI_COMM_WORLD);
    double res = 0, compute = 0;
    int report_compute = arg_flag("--report-compute");
    for (int it = 1; it <= iters; it++) {
        if (blocking)
            exchange_blocking(&g, MPI_COMM_WORLD);
        else
            exchange_nonblocking(&g, MPI_COMM_WORLD);
        double t0 = report_compute ? now_s() : 0;
        double local = sweep(&g);
        if (report_compute)
            compute += now_s() - t0;
        if (every > 0 && it % every == 0)
            C(MPI_Allreduce)(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    app_timer_stop(MPI_COMM_WORLD, rank);
    if (report_compute)
        fprintf(stderr, "compute_s rank=%d %.6f\n", rank, compute);

    double sum = 0, total = 0;
    for (int i = 1; i <= g.nx; i++)
        for (int j = 1; j <= g.ny; j++)
            sum += AT(&g, g.u, i, j);
    C(MPI_Reduce)(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("halo2d %dx%d on %dx%d ranks, %d iterations (%s): residual %.10e checksum %.10e\n",
               NX, NY, dims[0], dims[1], iters, mode, sqrt(res), total);
    C(MPI_Type_free)(&g.column);
    free(g.u);
    free(g.v);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
