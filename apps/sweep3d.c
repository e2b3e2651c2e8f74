/* sweep3d: KBA wavefront transport sweep (the Sweep3D pattern). The nx x ny x nz grid is
 * split over a px x py process grid; each of the 8 octants sweeps the z axis in blocks of kba
 * planes: receive the inflow faces from the upstream x and y neighbours, sweep the block for
 * all angles, send the outflow faces downstream. */
#include "common.h"

static const char *usage =
    "usage: sweep3d [--px P] [--py P] [--nx N] [--ny N] [--nz N] [--kba K] [--angles A]\n"
    "               [--report-calls]\n"
    "  --px, --py    process grid, px * py = number of ranks (default: MPI_Dims_create)\n"
    "  --nx/ny/nz    global grid (default 64 x 64 x 64); px | nx, py | ny\n"
    "  --kba         z planes per pipelined block (default 8); kba | nz\n"
    "  --angles      angles per octant (default 6)\n"
    "Prints a checksum of the scalar flux.\n";

struct sweep {
    int nx, ny, nz, kba, na;  /* local x, y sizes; global z; block depth; angles */
    int px, py, cx, cy;
    double *phi;              /* nx * ny * nz scalar flux */
    double *fx, *fy, *fz;     /* faces: [ny][kba][na], [nx][kba][na], [nx][ny][na] */
};

static int rank_of(const struct sweep *s, int cx, int cy) { return cx * s->py + cy; }

/* one block of kba planes for one octant: psi balances the source and the three inflows */
static void sweep_block(struct sweep *s, int di, int dj, int dk, int k0)
{
    int nx = s->nx, ny = s->ny, na = s->na, kba = s->kba;
    for (int kk = 0; kk < kba; kk++) {
        int k = dk > 0 ? k0 + kk : k0 + kba - 1 - kk;
        for (int ii = 0; ii < nx; ii++) {
            int i = di > 0 ? ii : nx - 1 - ii;
            for (int jj = 0; jj < ny; jj++) {
                int j = dj > 0 ? jj : ny - 1 - jj;
                double *phi = &s->phi[((size_t)k * nx + i) * ny + j];
                for (int a = 0; a < na; a++) {
                    double mu = 0.3 + 0.1 * a, eta = 0.5 - 0.05 * a, xi = 0.2 + 0.02 * a;
                    double *px = &s->fx[((size_t)j * kba + kk) * na + a];
                    double *py = &s->fy[((size_t)i * kba + kk) * na + a];
                    double *pz = &s->fz[((size_t)i * ny + j) * na + a];
                    double psi = (1.0 + mu * *px + eta * *py + xi * *pz) / (1.0 + mu + eta + xi);
                    *px = *py = *pz = psi;
                    *phi += psi / na;
                }
            }
        }
    }
}

static void octant(struct sweep *s, int o, MPI_Comm comm)
{
    int di = o & 1 ? -1 : 1, dj = o & 2 ? -1 : 1, dk = o & 4 ? -1 : 1;
    int upx = s->cx - di, upy = s->cy - dj, downx = s->cx + di, downy = s->cy + dj;
    int nfx = s->ny * s->kba * s->na, nfy = s->nx * s->kba * s->na;
    memset(s->fz, 0, sizeof(double) * (size_t)s->nx * s->ny * s->na);
    for (int b = 0; b < s->nz / s->kba; b++) {
        int k0 = dk > 0 ? b * s->kba : s->nz - (b + 1) * s->kba;
        if (upx >= 0 && upx < s->px)
            C(MPI_Recv)(s->fx, nfx, MPI_DOUBLE, rank_of(s, upx, s->cy), o, comm,
                        MPI_STATUS_IGNORE);
        else
            memset(s->fx, 0, sizeof(double) * (size_t)nfx);
        if (upy >= 0 && upy < s->py)
            C(MPI_Recv)(s->fy, nfy, MPI_DOUBLE, rank_of(s, s->cx, upy), 8 + o, comm,
                        MPI_STATUS_IGNORE);
        else
            memset(s->fy, 0, sizeof(double) * (size_t)nfy);
        sweep_block(s, di, dj, dk, k0);
        if (downx >= 0 && downx < s->px)
            C(MPI_Send)(s->fx, nfx, MPI_DOUBLE, rank_of(s, downx, s->cy), o, comm);
        if (downy >= 0 && downy < s->py)
            C(MPI_Send)(s->fy, nfy, MPI_DOUBLE, rank_of(s, s->cx, downy), 8 + o, comm);
    }
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    int dims[2] = {(int)arg_int("--px", 0), (int)arg_int("--py", 0)};
    int NX = (int)arg_int("--nx", 64), NY = (int)arg_int("--ny", 64);
    struct sweep s = {0};
    s.nz = (int)arg_int("--nz", 64);
    s.kba = (int)arg_int("--kba", 8);
    s.na = (int)arg_int("--angles", 6);
    C(MPI_Dims_create)(size, 2, dims);
    if (dims[0] * dims[1] != size || NX % dims[0] || NY % dims[1] || s.kba <= 0 ||
        s.nz % s.kba || s.na <= 0) {
        if (rank == 0)
            fprintf(stderr, "sweep3d: need px*py = ranks, px | nx, py | ny, kba | nz\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    s.px = dims[0];
    s.py = dims[1];
    s.cx = rank / s.py;
    s.cy = rank % s.py;
    s.nx = NX / s.px;
    s.ny = NY / s.py;
    s.phi = calloc((size_t)s.nx * s.ny * s.nz, sizeof(double));
    s.fx = malloc(sizeof(double) * (size_t)s.ny * s.kba * s.na);
    s.fy = malloc(sizeof(double) * (size_t)s.nx * s.kba * s.na);
    s.fz = malloc(sizeof(double) * (size_t)s.nx * s.ny * s.na);

    app_timer_start(MPI_COMM_WORLD);
    for (int o = 0; o < 8; o++)
        octant(&s, o, MPI_COMM_WORLD);
    app_timer_stop(MPI_COMM_WORLD, rank);

    double local = 0, total = 0;
    for (size_t i = 0; i < (size_t)s.nx * s.ny * s.nz; i++)
        local += s.phi[i];
    C(MPI_Allreduce)(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("sweep3d %dx%dx%d on %dx%d ranks, kba %d, %d angles: checksum %.10e\n", NX, NY,
               s.nz, s.px, s.py, s.kba, s.na, total);
    free(s.phi);
    free(s.fx);
    free(s.fy);
    free(s.fz);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
