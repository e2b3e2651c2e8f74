/* The plan of a job file as `latitude generate --check JOB` prints it (docs/workloads.md,
 * "The plan"): every value resolved by Latitude's parser, one line per job and motif, so
 * apps/motifs reads it with no job-file grammar of its own:
 *
 *   world W
 *   job LINE NAME ranks=N iterations=I list=0-3,8
 *   motif LINE KIND key=value ...          (integers; dist, vary, alg are words; sigma a decimal)
 *
 * plan_print writes a plan back in the same form (`motifs --check`), so tests can check
 * that every key was read. No MPI here. */
#ifndef APPS_PLAN_H
#define APPS_PLAN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long u64;

#define PLAN_MAX_BYTES (1ULL << 30) /* the job-file language's largest message */

enum { M_COMPUTE, M_PINGPONG, M_HALO2D, M_HALO3D, M_SWEEP3D, M_ALLREDUCE, M_BCAST, M_REDUCE,
       M_ALLTOALL, M_BARRIER, M_INCAST, M_NKINDS };
static const char *plan_kinds[M_NKINDS] = {"compute", "pingpong", "halo2d", "halo3d", "sweep3d",
    "allreduce", "bcast", "reduce", "alltoall", "barrier", "incast"};
enum { D_CONST, D_GAUSSIAN, D_UNIFORM, D_LOGNORMAL };
static const char *plan_dists[] = {"const", "gaussian", "uniform", "lognormal"};

struct motif {
    long line;
    int kind;
    u64 iterations, every, compute;
    u64 time, sd, spread; /* compute */
    double sigma;
    int dist, vary_rank;
    u64 bytes, root;
    int ndims, periodic; /* halo (dims[a] = 1 beyond ndims); sweep: dims[0..1] = px, py */
    u64 dims[3], face[3];
    u64 nx, ny, nz, kba, angles, mmi, xbytes, ybytes; /* sweep */
    char alg[48];
};

struct job {
    char name[256];
    long line;
    unsigned *ranks;
    size_t nranks;
    u64 iterations;
    struct motif *motifs;
    size_t nmotifs;
};

struct plan {
    unsigned world;
    struct job *jobs;
    size_t njobs;
};

/* The integer keys: where each lives in a motif. */
static const struct { const char *key; size_t at; } plan_ints[] = {
    {"iterations", offsetof(struct motif, iterations)}, {"every", offsetof(struct motif, every)},
    {"compute", offsetof(struct motif, compute)}, {"time", offsetof(struct motif, time)},
    {"sd", offsetof(struct motif, sd)}, {"spread", offsetof(struct motif, spread)},
    {"bytes", offsetof(struct motif, bytes)}, {"root", offsetof(struct motif, root)},
    {"px", offsetof(struct motif, dims[0])}, {"py", offsetof(struct motif, dims[1])},
    {"pz", offsetof(struct motif, dims[2])}, {"x", offsetof(struct motif, face[0])},
    {"y", offsetof(struct motif, face[1])}, {"z", offsetof(struct motif, face[2])},
    {"nx", offsetof(struct motif, nx)}, {"ny", offsetof(struct motif, ny)}, {"nz", offsetof(struct motif, nz)},
    {"kba", offsetof(struct motif, kba)}, {"angles", offsetof(struct motif, angles)},
    {"mmi", offsetof(struct motif, mmi)}, {"xbytes", offsetof(struct motif, xbytes)},
    {"ybytes", offsetof(struct motif, ybytes)},
};
#define PLAN_NINTS (sizeof plan_ints / sizeof plan_ints[0])

/* Keys of each kind, in the order the plan lists them. */
static const char *plan_keys[M_NKINDS][14] = {
    {"time", "dist", "vary", "iterations", "every"},
    {"bytes", "compute", "iterations", "every"},
    {"px", "py", "x", "y", "periodic", "compute", "iterations", "every"},
    {"px", "py", "pz", "x", "y", "z", "periodic", "compute", "iterations", "every"},
    {"px", "py", "nx", "ny", "nz", "kba", "angles", "mmi", "xbytes", "ybytes", "compute", "iterations", "every"},
    {"bytes", "alg", "compute", "iterations", "every"},
    {"bytes", "root", "alg", "compute", "iterations", "every"},
    {"bytes", "root", "alg", "compute", "iterations", "every"},
    {"bytes", "alg", "compute", "iterations", "every"},
    {"alg", "compute", "iterations", "every"},
    {"bytes", "root", "compute", "iterations", "every"},
};

static u64 *plan_int(struct motif *m, const char *key)
{
    for (size_t i = 0; i < PLAN_NINTS; i++)
        if (!strcmp(plan_ints[i].key, key))
            return (u64 *)((char *)m + plan_ints[i].at);
    return NULL;
}

static int plan_word(const char *const *words, int n, const char *w)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(words[i], w))
            return i;
    return -1;
}

static int plan_u64(const char *t, u64 *out)
{
    char *end;
    errno = 0;
    *out = strtoull(t, &end, 10);
    return *t >= '0' && *t <= '9' && !*end && !errno ? 0 : -1;
}

/* "0-3,8" -> ranks */
static int plan_ranks(char *text, struct job *j)
{
    size_t cap = 16;
    j->ranks = malloc(cap * sizeof *j->ranks);
    for (char *item = strtok(text, ","); item; item = strtok(NULL, ",")) {
        char *dash = strchr(item, '-');
        u64 a, b;
        if (dash)
            *dash = 0;
        if (plan_u64(item, &a) || (dash ? plan_u64(dash + 1, &b) : (b = a, 0)) || b < a || b >= (1u << 24))
            return -1;
        for (u64 r = a; r <= b; r++) {
            if (j->nranks == cap)
                j->ranks = realloc(j->ranks, (cap *= 2) * sizeof *j->ranks);
            j->ranks[j->nranks++] = (unsigned)r;
        }
    }
    return j->nranks ? 0 : -1;
}

/* One `key=value` of a motif; -1 if the key or value is not one a plan has. */
static int plan_set(struct motif *m, char *kv)
{
    char *v = strchr(kv, '=');
    if (!v)
        return -1;
    *v++ = 0;
    u64 *slot = plan_int(m, kv);
    if (slot)
        return plan_u64(v, slot);
    if (!strcmp(kv, "dist"))
        return (m->dist = plan_word(plan_dists, 4, v)) < 0 ? -1 : 0;
    if (!strcmp(kv, "vary"))
        return strcmp(v, "rank") && strcmp(v, "call") ? -1 : (m->vary_rank = !strcmp(v, "rank"), 0);
    if (!strcmp(kv, "periodic"))
        return strcmp(v, "0") && strcmp(v, "1") ? -1 : (m->periodic = *v == '1', 0);
    if (!strcmp(kv, "sigma")) {
        char *end;
        m->sigma = strtod(v, &end);
        return *v && !*end && m->sigma > 0 ? 0 : -1;
    }
    if (!strcmp(kv, "alg") && strlen(v) < sizeof m->alg)
        return strcpy(m->alg, v), 0;
    return -1;
}

/* The words of one line (split in place on spaces). */
static int plan_split(char *line, char **w, int max)
{
    int n = 0;
    for (char *t = strtok(line, " \r"); t && n < max; t = strtok(NULL, " \r"))
        w[n++] = t;
    return n;
}

static int plan_line(struct plan *p, char *text, const char **err)
{
    char *w[32];
    int n = plan_split(text, w, 32);
    if (n == 0)
        return 0;
    if (!strcmp(w[0], "world")) {
        u64 v;
        *err = "expected 'world N'";
        return n == 2 && !plan_u64(w[1], &v) && v <= (1u << 24) ? (p->world = (unsigned)v, 0) : -1;
    }
    if (!strcmp(w[0], "job")) {
        *err = "expected 'job LINE NAME ranks=N iterations=I list=RANKS'";
        u64 line, ranks, iters;
        if (n != 6 || plan_u64(w[1], &line) || strlen(w[2]) >= sizeof p->jobs->name || strncmp(w[3], "ranks=", 6) ||
            plan_u64(w[3] + 6, &ranks) || strncmp(w[4], "iterations=", 11) || plan_u64(w[4] + 11, &iters) ||
            strncmp(w[5], "list=", 5))
            return -1;
        p->jobs = realloc(p->jobs, (p->njobs + 1) * sizeof *p->jobs);
        struct job *j = &p->jobs[p->njobs++];
        memset(j, 0, sizeof *j);
        strcpy(j->name, w[2]);
        j->line = (long)line;
        j->iterations = iters;
        *err = "the job's rank list does not match its rank count";
        return plan_ranks(w[5] + 5, j) || j->nranks != ranks ? -1 : 0;
    }
    if (!strcmp(w[0], "motif")) {
        u64 line;
        int kind = n >= 3 ? plan_word(plan_kinds, M_NKINDS, w[2]) : -1;
        *err = "expected 'motif LINE KIND key=value ...' after a job line";
        if (!p->njobs || kind < 0 || plan_u64(w[1], &line))
            return -1;
        struct job *j = &p->jobs[p->njobs - 1];
        j->motifs = realloc(j->motifs, (j->nmotifs + 1) * sizeof *j->motifs);
        struct motif *m = &j->motifs[j->nmotifs++];
        memset(m, 0, sizeof *m);
        m->kind = kind;
        m->line = (long)line;
        m->dims[0] = m->dims[1] = m->dims[2] = 1;
        m->ndims = kind == M_HALO3D ? 3 : 2;
        *err = "unknown key or bad value in a motif line";
        for (int i = 3; i < n; i++)
            if (plan_set(m, w[i]))
                return -1;
        *err = "a motif needs iterations >= 1 and every >= 1";
        return m->iterations && m->every ? 0 : -1;
    }
    *err = "expected a 'world', 'job' or 'motif' line";
    return -1;
}

/* Read the plan at `path`; on error print `prog: path[:line]: what` (prog NULL: silent). */
static int plan_read(const char *prog, const char *path, struct plan *p)
{
    memset(p, 0, sizeof *p);
    FILE *in = fopen(path, "r");
    if (!in) {
        if (prog)
            fprintf(stderr, "%s: %s: no such file\n", prog, path);
        return -1;
    }
    char buf[65536];
    long lineno = 0;
    const char *err = NULL;
    int rc = 0;
    while (!rc && fgets(buf, sizeof buf, in)) {
        lineno++;
        buf[strcspn(buf, "\n")] = 0;
        if (lineno == 1 && buf[0] == '[') /* a job file, not its plan */
            err = "a job file: run its plan, `latitude generate --check FILE > PLAN` (docs/workloads.md)", rc = -1;
        else
            rc = plan_line(p, buf, &err);
    }
    fclose(in);
    if (!rc && (!p->world || !p->njobs))
        err = "expected a plan: 'world N', then job and motif lines", lineno = 0, rc = -1;
    if (rc && prog) {
        if (lineno)
            fprintf(stderr, "%s: %s:%ld: %s\n", prog, path, lineno, err);
        else
            fprintf(stderr, "%s: %s: %s\n", prog, path, err);
    }
    return rc;
}

/* the shortest decimal that reads back as v (as Latitude writes it) */
static void plan_print_shortest(FILE *o, const char *prefix, double v)
{
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fprintf(o, "%s%s", prefix, buf);
}

static void plan_print_ranks(const struct job *j, FILE *o)
{
    for (size_t i = 0; i < j->nranks;) {
        size_t k = i;
        while (k + 1 < j->nranks && j->ranks[k + 1] == j->ranks[k] + 1)
            k++;
        fprintf(o, i ? ",%u" : "%u", j->ranks[i]);
        if (k > i)
            fprintf(o, "-%u", j->ranks[k]);
        i = k + 1;
    }
}

/* The plan as read, in the form `latitude generate --check` prints. */
static void plan_print(const struct plan *p, FILE *o)
{
    fprintf(o, "world %u\n", p->world);
    for (size_t ji = 0; ji < p->njobs; ji++) {
        const struct job *j = &p->jobs[ji];
        fprintf(o, "job %ld %s ranks=%zu iterations=%llu list=", j->line, j->name, j->nranks, j->iterations);
        plan_print_ranks(j, o);
        fputc('\n', o);
        for (size_t mi = 0; mi < j->nmotifs; mi++) {
            struct motif m = j->motifs[mi];
            fprintf(o, "motif %ld %s", m.line, plan_kinds[m.kind]);
            for (const char *const *k = plan_keys[m.kind]; *k; k++) {
                if (!strcmp(*k, "dist")) {
                    fprintf(o, " dist=%s", plan_dists[m.dist]);
                    if (m.dist == D_GAUSSIAN)
                        fprintf(o, " sd=%llu", m.sd);
                    else if (m.dist == D_UNIFORM)
                        fprintf(o, " spread=%llu", m.spread);
                    else if (m.dist == D_LOGNORMAL)
                        plan_print_shortest(o, " sigma=", m.sigma);
                } else if (!strcmp(*k, "vary"))
                    fprintf(o, " vary=%s", m.vary_rank ? "rank" : "call");
                else if (!strcmp(*k, "periodic"))
                    fprintf(o, " periodic=%d", m.periodic);
                else if (!strcmp(*k, "alg"))
                    fprintf(o, " alg=%s", m.alg);
                else
                    fprintf(o, " %s=%llu", *k, *plan_int(&m, *k));
            }
            fputc('\n', o);
        }
    }
}

#endif
