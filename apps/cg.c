/* cg: conjugate gradients for the 2-D Poisson problem (5-point Laplacian, Dirichlet
 * boundary) on a px x py process grid: per iteration one halo exchange (MPI_Irecv/Isend/
 * Waitall, 4 neighbours) for the matrix-vector product and two MPI_Allreduce of one double
 * (the dot products) — the communication pattern of Krylov solvers such as HPCG's CG. */
#include "common.h"

#include <math.h>

static const char *usage =
    "usage: cg [--n N] [--px P] [--py P] [--iters N] [--report-compute] [--report-calls]\n"
    "  --n        global grid is N x N unknowns (default 1024)\n"
    "  --px, --py process grid (default: MPI_Dims_create); px | N, py | N\n"
    "  --iters    CG iterations (default 100; no convergence test, so every run does the same work)\n"
    "  --report-compute  every rank prints \"compute_s rank=<r> <seconds>\": the iterations' time\n"
    "             outside MPI calls (to see whether computation changes under injection)\n"
    "Prints the final residual norm and a checksum of the solution.\n";

/* with --report-compute: the time inside the iterations' MPI calls, which is subtracted
 * from the loop's (without it no clock is read) */
static int report_compute;
static double mpi_s;

struct grid {
    int nx, ny;                    /* local interior */
    int north, south, west, east;  /* neighbours (MPI_PROC_NULL at the boundary) */
    MPI_Datatype column;
};

#define AT(g, a, i, j) ((a)[(size_t)(i) * ((g)->ny + 2) + (j)])

/* fill p's halo from the neighbours (zero outside the domain) */
static void halo(struct grid *g, double *p, MPI_Comm comm)
{
    int w = g->ny + 2;
    MPI_Request r[8];
    double t0 = report_compute ? now_s() : 0;
    C(MPI_Irecv)(&p[(g->nx + 1) * w + 1], g->ny, MPI_DOUBLE, g->south, 0, comm, &r[0]);
    C(MPI_Irecv)(&p[0 * w + 1], g->ny, MPI_DOUBLE, g->north, 1, comm, &r[1]);
    C(MPI_Irecv)(&p[1 * w + g->ny + 1], 1, g->column, g->east, 2, comm, &r[2]);
    C(MPI_Irecv)(&p[1 * w + 0], 1, g->column, g->west, 3, comm, &r[3]);
    C(MPI_Isend)(&p[1 * w + 1], g->ny, MPI_DOUBLE, g->north, 0, comm, &r[4]);
    C(MPI_Isend)(&p[g->nx * w + 1], g->ny, MPI_DOUBLE, g->south, 1, comm, &r[5]);
    C(MPI_Isend)(&p[1 * w + 1], 1, g->column, g->west, 2, comm, &r[6]);
    C(MPI_Isend)(&p[1 * w + g->ny], 1, g->column, g->east, 3, comm, &r[7]);
    C(MPI_Waitall)(8, r, MPI_STATUSES_IGNORE);
    if (report_compute)
        mpi_s += now_s() - t0;
}

/* q = A p on the interior (A = 5-point Laplacian, positive definite) */
static void apply(const struct grid *g, const double *p, double *q)
{
    for (int i = 1; i <= g->nx; i++)
        for (int j = 1; j <= g->ny; j++)
            AT(g, q, i, j) = 4 * AT(g, p, i, j) - AT(g, p, i - 1, j) - AT(g, p, i + 1, j) -
                             AT(g, p, i, j - 1) - AT(g, p, i, j + 1);
}

static double dot(const struct grid *g, const double *a, const double *b, MPI_Comm comm)
{
    double local = 0, global;
    for (int i = 1; i <= g->nx; i++)
        for (int j = 1; j <= g->ny; j++)
            local += AT(g, a, i, j) * AT(g, b, i, j);
    double t0 = report_compute ? now_s() : 0;
    C(MPI_Allreduce)(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm);
    if (report_compute)
        mpi_s += now_s() - t0;
    return global;
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    int n = (int)arg_int("--n", 1024), iters = (int)arg_int("--iters", 100);
    int dims[2] = {(int)arg_int("--px", 0), (int)arg_int("--py", 0)};
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    C(MPI_Dims_create)(size, 2, dims);
    if (dims[0] * dims[1] != size || n % dims[0] || n % dims[1] || iters < 0) {
        if (rank == 0)
            fprintf(stderr, "cg: px*py must equal the number of ranks and divide --n\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    int cx = rank / dims[1], cy = rank % dims[1];
    struct grid g = {n / dims[0], n / dims[1], MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL,
                     MPI_PROC_NULL, MPI_DATATYPE_NULL};
    if (cx > 0) g.north = (cx - 1) * dims[1] + cy;
    if (cx < dims[0] - 1) g.south = (cx + 1) * dims[1] + cy;
    if (cy > 0) g.west = cx * dims[1] + cy - 1;
    if (cy < dims[1] - 1) g.east = cx * dims[1] + cy + 1;
    C(MPI_Type_vector)(g.nx, 1, g.ny + 2, MPI_DOUBLE, &g.column);
    C(MPI_Type_commit)(&g.column);
    size_t cells = (size_t)(g.nx + 2) * (g.ny + 2);
    double *x = calloc(cells, sizeof *x), *r = calloc(cells, sizeof *r);
    double *p = calloc(cells, sizeof *p), *q = calloc(cells, sizeof *q);
    /* right-hand side b = a smooth bump; x0 = 0, so r = p = b */
    for (int i = 1; i <= g.nx; i++)
        for (int j = 1; j <= g.ny; j++) {
            double u = (cx * g.nx + i) / (double)(n + 1), v = (cy * g.ny + j) / (double)(n + 1);
            AT(&g, r, i, j) = AT(&g, p, i, j) = sin(M_PI * u) * sin(2 * M_PI * v) + 0.1;
        }
    double rr = dot(&g, r, r, MPI_COMM_WORLD);
    app_timer_start(MPI_COMM_WORLD);
    report_compute = arg_flag("--report-compute");
    double loop_t0 = now_s();
    mpi_s = 0;
    for (int it = 0; it < iters; it++) {
        halo(&g, p, MPI_COMM_WORLD);
        apply(&g, p, q);
        double alpha = rr / dot(&g, p, q, MPI_COMM_WORLD);
        for (int i = 1; i <= g.nx; i++)
            for (int j = 1; j <= g.ny; j++) {
                AT(&g, x, i, j) += alpha * AT(&g, p, i, j);
                AT(&g, r, i, j) -= alpha * AT(&g, q, i, j);
            }
        double rr_new = dot(&g, r, r, MPI_COMM_WORLD), beta = rr_new / rr;
        rr = rr_new;
        for (int i = 1; i <= g.nx; i++)
            for (int j = 1; j <= g.ny; j++)
                AT(&g, p, i, j) = AT(&g, r, i, j) + beta * AT(&g, p, i, j);
    }
    if (report_compute)
        fprintf(stderr, "compute_s rank=%d %.6f\n", rank, now_s() - loop_t0 - mpi_s);
    app_timer_stop(MPI_COMM_WORLD, rank);
    double sx = dot(&g, x, x, MPI_COMM_WORLD);
    if (rank == 0)
        printf("cg %dx%d on %dx%d ranks, %d iterations: residual %.10e checksum %.10e\n", n, n,
               dims[0], dims[1], iters, sqrt(rr), sqrt(sx));
    C(MPI_Type_free)(&g.column);
    free(x);
    free(r);
    free(p);
    free(q);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
