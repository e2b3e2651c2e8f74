/* decay: does a block of computation take longer when its rank waited before it?
 *
 * The model prices every computation block at its traced duration, whatever ΔL does to the
 * waits around it. On a machine whose caches other work takes over while a rank waits (a
 * virtual machine sharing its host's cores and caches with other guests), the block after a
 * longer wait starts with colder caches and takes longer — and a run with more latency has
 * longer waits. This program measures that, without any communication: every rank sweeps a
 * 5-point stencil over its own working set of --kib KiB (two arrays, as halo2d's), then
 * spins on the clock for a gap, and times each sweep. The gaps are interleaved in blocks
 * (every gap gets --sweeps sweeps per block, the order reversed every other block), so a
 * change of the machine's state during the run falls on all gaps alike.
 *
 * Prints, per gap, the median sweep time over all blocks of every rank:
 *   "decay kib=<K> gap_us=<g> sweep_us=<median> ratio=<median / median at the first gap>"
 * (stdout, rank 0). MPI is used only to start the ranks together and gather their medians. */
#include "common.h"

static const char *usage =
    "usage: decay [--kib K] [--gaps-us G1,G2,...] [--sweeps N] [--blocks N]\n"
    "  --kib K       working set per rank, KiB (default 4096: two arrays of K/2 each)\n"
    "  --gaps-us G   spins between sweeps, µs, comma-separated (default 0,50,200,1000,3000);\n"
    "                ratios are against the first\n"
    "  --sweeps N    sweeps per gap per block (default 20)\n"
    "  --blocks N    blocks (default 15)\n";

#define MAX_GAPS 16

struct field {
    int rows, cols; /* interior; the arrays have a halo of 1 */
    double *u, *v;
};

static void field_init(struct field *f, long kib)
{
    f->cols = 1024;
    f->rows = (int)(kib * 1024 / 2 / sizeof(double) / (f->cols + 2)) - 2;
    if (f->rows < 1)
        f->rows = 1;
    size_t n = (size_t)(f->rows + 2) * (f->cols + 2);
    f->u = calloc(n, sizeof(double));
    f->v = calloc(n, sizeof(double));
    if (!f->u || !f->v) {
        fprintf(stderr, "decay: cannot allocate %ld KiB\n", kib);
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        f->u[i] = (double)(i % 97) * 0.01;
}

/* one stencil sweep u -> v, then swap; returns its duration in µs */
static double sweep_us(struct field *f, double *sink)
{
    size_t w = (size_t)f->cols + 2;
    double t0 = now_s(), res = 0;
    for (int i = 1; i <= f->rows; i++)
        for (int j = 1; j <= f->cols; j++) {
            double nv = 0.25 * (f->u[(i - 1) * w + j] + f->u[(i + 1) * w + j] +
                                f->u[i * w + j - 1] + f->u[i * w + j + 1]);
            double d = nv - f->u[i * w + j];
            res += d * d;
            f->v[i * w + j] = nv;
        }
    double *t = f->u;
    f->u = f->v;
    f->v = t;
    *sink += res;
    return (now_s() - t0) * 1e6;
}

static int parse_gaps(const char *s, double *gaps)
{
    int n = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        double g = strtod(tok, &end);
        if (n == MAX_GAPS || *end || end == tok || g < 0) {
            fprintf(stderr, "decay: --gaps-us: up to %d non-negative numbers, not '%s'\n",
                    MAX_GAPS, s);
            exit(2);
        }
        gaps[n++] = g;
    }
    free(copy);
    return n;
}

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    app_args(argc, argv, usage);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    long kib = arg_int("--kib", 4096);
    int sweeps = (int)arg_int("--sweeps", 20), blocks = (int)arg_int("--blocks", 15);
    double gaps[MAX_GAPS];
    int ngaps = parse_gaps(arg_str("--gaps-us", "0,50,200,1000,3000"), gaps);
    if (kib < 16 || sweeps < 1 || blocks < 1) {
        fprintf(stderr, "%s", usage);
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    struct field f;
    field_init(&f, kib);
    double sink = 0;
    for (int i = 0; i < 3; i++)
        sweep_us(&f, &sink); /* first touch of the pages */

    /* times[g][b * sweeps + s] */
    int per_gap = blocks * sweeps;
    double *times = malloc(sizeof(double) * (size_t)ngaps * per_gap);
    C(MPI_Barrier)(MPI_COMM_WORLD);
    for (int b = 0; b < blocks; b++)
        for (int k = 0; k < ngaps; k++) {
            int g = b % 2 ? ngaps - 1 - k : k;
            for (int s = 0; s < sweeps; s++) {
                spin_ns(1e3 * gaps[g]);
                times[(size_t)g * per_gap + b * sweeps + s] = sweep_us(&f, &sink);
            }
        }

    double med[MAX_GAPS];
    for (int g = 0; g < ngaps; g++) {
        double *t = times + (size_t)g * per_gap;
        qsort(t, (size_t)per_gap, sizeof(double), cmp_double);
        med[g] = t[per_gap / 2];
    }
    double *all = rank == 0 ? malloc(sizeof(double) * MAX_GAPS * (size_t)size) : NULL;
    C(MPI_Gather)(med, MAX_GAPS, MPI_DOUBLE, all, MAX_GAPS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double base = 0;
        for (int g = 0; g < ngaps; g++) {
            double col[size];
            for (int r = 0; r < size; r++)
                col[r] = all[(size_t)r * MAX_GAPS + g];
            qsort(col, (size_t)size, sizeof(double), cmp_double);
            double m = size % 2 ? col[size / 2] : 0.5 * (col[size / 2 - 1] + col[size / 2]);
            if (g == 0)
                base = m;
            printf("decay kib=%ld gap_us=%g sweep_us=%.2f ratio=%.4f\n", kib, gaps[g], m,
                   m / base);
        }
    }
    if (sink == 12345.678)
        fprintf(stderr, "%g\n", sink); /* keeps the sweeps from being optimised away */
    free(times);
    free(all);
    C(MPI_Finalize)();
    return 0;
}
