/* motifs: run a job file (docs/workloads.md) for real — StressBench's design: one
 * communicator per job (MPI_Comm_split), three phases separated by barriers on
 * MPI_COMM_WORLD (set-up, perform, clean-up), jobs concurrently on disjoint ranks, each
 * job's motif chain in order, per-motif timings printed as a table by world rank 0.
 *
 * Every motif makes exactly the MPI calls `latitude generate` models, in the same order
 * (crates/latitude-core/src/synth/patterns.rs), so the scheduled trace of a run has the
 * generated graph's messages. All harness traffic (barriers, the timing gather) is on
 * MPI_COMM_WORLD; all motif traffic on the job communicators. */
#include "common.h"
#include "plan.h"

#include <math.h>

static const char *usage =
    "usage: motifs [--seed N] [--check] [--report-calls] PLAN\n"
    "  PLAN        a job file's plan: `latitude generate --check JOBFILE > PLAN` (jobs, rank\n"
    "              lists, motif chains, every value resolved; docs/workloads.md); the MPI world\n"
    "              must have at least 1 + the largest listed rank (others only join the barriers)\n"
    "  --seed N    seed of the compute motifs' distributions (default 1, as latitude generate)\n"
    "  --check     read only (no MPI): print the plan as read; errors as `motifs: PLAN:LINE: what`\n"
    "Prints one row per job and motif: repeats, slowest rank's total and mean time per repeat.\n";

enum { TAG_PINGPONG = 1, TAG_INCAST = 2, TAG_HALO = 10, TAG_SWEEP_X = 20, TAG_SWEEP_Y = 21 };

/* ---- seeded durations (synth/dist.rs) ---- */
static u64 sm_next(u64 *s)
{
    u64 z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static u64 sm_mix(u64 h, u64 x)
{
    u64 s = (h ^ x) ^ 0x9E3779B97F4A7C15ULL;
    return sm_next(&s);
}

static u64 draw(const struct motif *m, u64 seed, u64 job, u64 motif, u64 rank, u64 call)
{
    if (m->dist == D_CONST)
        return m->time;
    u64 h = seed;
    h = sm_mix(h, job);
    h = sm_mix(h, motif);
    h = sm_mix(h, rank);
    h = sm_mix(h, m->vary_rank ? 0 : call);
    u64 s = h ^ 0x9E3779B97F4A7C15ULL;
    double u1 = (double)(sm_next(&s) >> 11) / 9007199254740992.0;
    double u2 = (double)(sm_next(&s) >> 11) / 9007199254740992.0;
    double t = (double)m->time, x;
    double z = sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * 3.14159265358979323846 * u2);
    switch (m->dist) {
    case D_GAUSSIAN: x = t + (double)m->sd * z; break;
    case D_UNIFORM: x = t - (double)m->spread + 2.0 * (double)m->spread * u1; break;
    default: x = exp(log(t) - m->sigma * m->sigma / 2.0 + m->sigma * z);
    }
    return isnan(x) || x <= 0 ? 0 : (u64)round(x);
}

/* ---- one job on this rank ---- */
struct ctx {
    const struct job *job;
    int index, me, n;
    MPI_Comm comm;
    u64 seed;
    char *sbuf, *rbuf;
};

/* buffer sizes this rank needs for a motif: send and receive (distinct per Irecv) */
static void needs(const struct motif *m, int n, u64 *s, u64 *r)
{
    u64 b = m->bytes;
    switch (m->kind) {
    case M_PINGPONG: *s = *r = b; break;
    case M_HALO2D: case M_HALO3D:
        *s = *r = 0;
        for (int a = 0; a < m->ndims; a++) {
            *s = m->face[a] > *s ? m->face[a] : *s;
            *r += 2 * m->face[a];
        }
        break;
    case M_SWEEP3D: *s = *r = m->xbytes > m->ybytes ? m->xbytes : m->ybytes; break;
    case M_INCAST: *s = b; *r = b * (u64)n > PLAN_MAX_BYTES ? b : b * (u64)n; break; /* shared beyond 1 GiB */
    case M_ALLTOALL: *s = *r = b * (u64)n; break;
    default: *s = *r = m->kind == M_COMPUTE ? 0 : b;
    }
}

static void halo(struct ctx *c, const struct motif *m)
{
    int me = c->me, nb[6], k = 0;
    const u64 *d = m->dims;
    MPI_Request req[12];
    unsigned cc[3] = {me % d[0], (me / d[0]) % d[1], me / (d[0] * d[1])};
    for (int dir = 0; dir < 2 * m->ndims; dir++) {
        int a = dir / 2, step = dir % 2 ? 1 : -1, x = (int)cc[a] + step;
        nb[dir] = -1;
        if (d[a] <= 1 || ((x < 0 || x >= (int)d[a]) && !m->periodic))
            continue;
        unsigned q[3] = {cc[0], cc[1], cc[2]};
        q[a] = (unsigned)((x + (int)d[a]) % (int)d[a]);
        nb[dir] = (int)(q[0] + d[0] * (q[1] + d[1] * q[2]));
    }
    char *rb = c->rbuf;
    for (int dir = 0; dir < 2 * m->ndims; dir++)
        if (nb[dir] >= 0) {
            C(MPI_Irecv)(rb, (int)m->face[dir / 2], MPI_BYTE, nb[dir], TAG_HALO + (dir ^ 1), c->comm, &req[k++]);
            rb += m->face[dir / 2];
        }
    for (int dir = 0; dir < 2 * m->ndims; dir++)
        if (nb[dir] >= 0)
            C(MPI_Isend)(c->sbuf, (int)m->face[dir / 2], MPI_BYTE, nb[dir], TAG_HALO + dir, c->comm, &req[k++]);
    if (k)
        C(MPI_Waitall)(k, req, MPI_STATUSES_IGNORE);
}

static void sweep(struct ctx *c, const struct motif *m)
{
    int px = (int)m->dims[0], py = (int)m->dims[1], cx = c->me % px, cy = c->me / px;
    int xb = (int)m->xbytes, yb = (int)m->ybytes;
    u64 steps = m->angles / m->mmi * (m->nz / m->kba);
    for (int o = 0; o < 8; o++) {
        int di = o & 1 ? -1 : 1, dj = o & 2 ? -1 : 1;
        int upx = cx - di, upy = cy - dj, dnx = cx + di, dny = cy + dj;
        for (u64 s = 0; s < steps; s++) {
            if (upx >= 0 && upx < px)
                C(MPI_Recv)(c->rbuf, xb, MPI_BYTE, upx + px * cy, TAG_SWEEP_X, c->comm, MPI_STATUS_IGNORE);
            if (upy >= 0 && upy < py)
                C(MPI_Recv)(c->rbuf, yb, MPI_BYTE, cx + px * upy, TAG_SWEEP_Y, c->comm, MPI_STATUS_IGNORE);
            spin_ns((double)m->compute);
            if (dnx >= 0 && dnx < px)
                C(MPI_Send)(c->sbuf, xb, MPI_BYTE, dnx + px * cy, TAG_SWEEP_X, c->comm);
            if (dny >= 0 && dny < py)
                C(MPI_Send)(c->sbuf, yb, MPI_BYTE, cx + px * dny, TAG_SWEEP_Y, c->comm);
        }
    }
}

static void incast(struct ctx *c, const struct motif *m)
{
    int b = (int)m->bytes, root = (int)m->root, shared = m->bytes * (u64)c->n > PLAN_MAX_BYTES;
    if (c->me != root) {
        C(MPI_Send)(c->sbuf, b, MPI_BYTE, root, TAG_INCAST, c->comm);
        return;
    }
    MPI_Request *req = malloc(sizeof *req * (size_t)c->n);
    int k = 0;
    for (int q = 0; q < c->n; q++)
        if (q != root) {
            C(MPI_Irecv)(c->rbuf + (shared ? 0 : (size_t)k * m->bytes), b, MPI_BYTE, q, TAG_INCAST, c->comm, &req[k]);
            k++;
        }
    if (k)
        C(MPI_Waitall)(k, req, MPI_STATUSES_IGNORE);
    free(req);
}

/* one repeat of motif mi on this rank (call = chain iteration * iterations + repeat) */
static void run_once(struct ctx *c, const struct motif *m, int mi, u64 call)
{
    int me = c->me, n = c->n, b = (int)m->bytes;
    switch (m->kind) {
    case M_COMPUTE:
        spin_ns((double)draw(m, c->seed, (u64)c->index, (u64)mi, (u64)me, call));
        return;
    case M_PINGPONG:
        if (me >= n - n % 2)
            return;
        spin_ns((double)m->compute);
        if (me % 2 == 0) {
            C(MPI_Send)(c->sbuf, b, MPI_BYTE, me + 1, TAG_PINGPONG, c->comm);
            C(MPI_Recv)(c->rbuf, b, MPI_BYTE, me + 1, TAG_PINGPONG, c->comm, MPI_STATUS_IGNORE);
        } else {
            C(MPI_Recv)(c->rbuf, b, MPI_BYTE, me - 1, TAG_PINGPONG, c->comm, MPI_STATUS_IGNORE);
            C(MPI_Send)(c->sbuf, b, MPI_BYTE, me - 1, TAG_PINGPONG, c->comm);
        }
        return;
    case M_HALO2D: case M_HALO3D:
        if ((unsigned)me < m->dims[0] * m->dims[1] * m->dims[2]) {
            spin_ns((double)m->compute);
            halo(c, m);
        }
        return;
    case M_SWEEP3D:
        if ((u64)me < m->dims[0] * m->dims[1])
            sweep(c, m);
        return;
    default:
        break;
    }
    spin_ns((double)m->compute);
    switch (m->kind) {
    case M_INCAST: incast(c, m); break;
    case M_ALLREDUCE: C(MPI_Allreduce)(c->sbuf, c->rbuf, b, MPI_UNSIGNED_CHAR, MPI_BOR, c->comm); break;
    case M_REDUCE: C(MPI_Reduce)(c->sbuf, c->rbuf, b, MPI_UNSIGNED_CHAR, MPI_BOR, (int)m->root, c->comm); break;
    case M_BCAST: C(MPI_Bcast)(c->sbuf, b, MPI_BYTE, (int)m->root, c->comm); break;
    case M_ALLTOALL: C(MPI_Alltoall)(c->sbuf, b, MPI_BYTE, c->rbuf, b, MPI_BYTE, c->comm); break;
    case M_BARRIER: C(MPI_Barrier)(c->comm); break;
    }
}

/* the perform phase: the job's chain; secs[mi] = time in motif mi, secs[nmotifs] = total */
static void perform(struct ctx *c, double *secs)
{
    const struct job *j = c->job;
    double t0 = C(MPI_Wtime)();
    for (u64 it = 0; it < j->iterations; it++)
        for (size_t mi = 0; mi < j->nmotifs; mi++) {
            const struct motif *m = &j->motifs[mi];
            if ((it + 1) % m->every)
                continue;
            double t = C(MPI_Wtime)();
            for (u64 rep = 0; rep < m->iterations; rep++)
                run_once(c, m, (int)mi, it * m->iterations + rep);
            secs[mi] += C(MPI_Wtime)() - t;
        }
    secs[j->nmotifs] = C(MPI_Wtime)() - t0;
}

#include "motifs_report.h"

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    const char *path = NULL;
    u64 seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            const char *v = argv[++i];
            if (plan_u64(v, &seed)) {
                fprintf(stderr, "motifs: --seed: expected a whole number, got '%s'\n", v);
                return 2;
            }
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            if (strcmp(argv[i], "--check") && strcmp(argv[i], "--report-calls")) {
                fprintf(stderr, "motifs: unknown option %s (see --help)\n", argv[i]);
                return 2;
            }
        } else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "%s", usage);
        return 2;
    }
    struct plan f;
    if (arg_flag("--check")) {
        if (plan_read("motifs", path, &f))
            return 2;
        plan_print(&f, stdout);
        return 0;
    }
    return run_jobs(&argc, &argv, path, seed);
}
