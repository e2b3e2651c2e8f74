/* Job files for apps/motifs: the same language, defaults, checks and error messages as
 * Latitude's parser (crates/latitude-core/src/synth/{job,motif,value,grid}.rs, documented in
 * docs/workloads.md). tests/test_generate_jobfile.py runs both on shared vectors
 * (tests/data/jobs, tests/data/bad_jobs) and compares the canonical dumps and the errors.
 * No MPI here: `motifs --check FILE` parses without MPI_Init. */
#ifndef APPS_JOBFILE_H
#define APPS_JOBFILE_H

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JF_MAX_BYTES (1ULL << 30)
#define JF_MAX_NS 1000000000000000ULL
#define JF_MAX_COUNT 1000000000ULL
#define JF_MAX_RANK ((1ULL << 24) - 1)
#define JF_DEFAULT_SEGMENT 65536ULL
#define JF_MSG 1024 /* message buffers */
#define JF_INNER 768 /* messages wrapped into another */

enum { M_COMPUTE, M_PINGPONG, M_HALO2D, M_HALO3D, M_SWEEP3D, M_ALLREDUCE, M_BCAST, M_REDUCE,
       M_ALLTOALL, M_BARRIER, M_INCAST, M_NKINDS };
static const char *jf_names[M_NKINDS] = {"compute", "pingpong", "halo2d", "halo3d", "sweep3d",
    "allreduce", "bcast", "reduce", "alltoall", "barrier", "incast"};
/* keys in validation and canonical order (motif.rs `keys`) */
static const char *jf_keys[M_NKINDS][12] = {
    {"time", "dist", "sd", "spread", "sigma", "vary", "iterations", "every"},
    {"bytes", "compute", "iterations", "every"},
    {"px", "py", "x", "y", "periodic", "compute", "iterations", "every"},
    {"px", "py", "pz", "x", "y", "z", "periodic", "compute", "iterations", "every"},
    {"px", "py", "nx", "ny", "nz", "kba", "angles", "mmi", "compute", "iterations", "every"},
    {"bytes", "alg", "compute", "iterations", "every"},
    {"bytes", "root", "alg", "compute", "iterations", "every"},
    {"bytes", "root", "alg", "compute", "iterations", "every"},
    {"bytes", "alg", "compute", "iterations", "every"},
    {"alg", "compute", "iterations", "every"},
    {"bytes", "root", "compute", "iterations", "every"},
};
/* algorithms per collective (collectives::CollKind::algorithms) */
static const char *jf_algs[M_NKINDS][8] = {
    [M_ALLREDUCE] = {"recdoub", "ring", "rabenseifner", "reduce_bcast", "dissemination", "schedgen"},
    [M_BCAST] = {"binomial", "binary", "linear", "chain", "scatter_allgather", "schedgen"},
    [M_REDUCE] = {"binomial", "binary", "linear", "chain", "rabenseifner", "schedgen"},
    [M_ALLTOALL] = {"pairwise", "linear", "bruck", "schedgen"},
    [M_BARRIER] = {"dissemination", "recdoub", "linear", "schedgen"},
};

enum { D_CONST, D_GAUSSIAN, D_UNIFORM, D_LOGNORMAL };
typedef unsigned long long u64;

struct motif {
    long line;
    int kind;
    u64 iterations, every, compute;
    u64 time, sd, spread; /* compute */
    double sigma;
    int dist, vary_rank;
    u64 bytes;
    unsigned root;
    int ndims, periodic; /* halo */
    unsigned dims[3];
    u64 face[3];
    unsigned px, py; /* sweep */
    u64 nx, ny, nz, kba, angles, mmi;
    char alg[48]; /* canonical label, "default" if not given */
};

struct job {
    char *name;
    long line;
    unsigned *ranks;
    size_t nranks;
    u64 iterations;
    struct motif *motifs;
    size_t nmotifs;
};

struct jobfile {
    struct job *jobs;
    size_t njobs;
    unsigned world;
    unsigned *owner; /* job index + 1 per world rank, 0 = none */
    size_t nowner;
};

/* ---- errors: "msg" for the current line, or a location override ---- */
static char jf_err[JF_MSG + 256];
static long jf_err_line; /* 0: no line (whole-file error) */

static int jf_fail(long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(jf_err, sizeof jf_err, fmt, ap);
    va_end(ap);
    jf_err_line = line;
    return -1;
}

/* ---- values (value.rs) ---- */
/* split "12.5KiB": length of the number part, or -1 */
static int jf_number(const char *t)
{
    int digits = 0, dots = 0, i = 0;
    for (; t[i] && (isdigit((unsigned char)t[i]) || t[i] == '.'); i++)
        t[i] == '.' ? dots++ : digits++;
    return digits > 0 && dots <= 1 ? i : -1;
}

static int jf_count(const char *t, u64 max, u64 *out, char *msg)
{
    size_t n = strlen(t);
    if (n == 0 || n > 19 || strspn(t, "0123456789") != n)
        return snprintf(msg, JF_INNER, "expected a whole number, got '%s'", t), -1;
    u64 v = strtoull(t, NULL, 10);
    if (v > max)
        return snprintf(msg, JF_INNER, "'%s' is larger than %llu", t, max), -1;
    return *out = v, 0;
}

static int jf_size(const char *t, u64 *out, char *msg)
{
    int k = jf_number(t);
    if (k < 0)
        return snprintf(msg, JF_INNER, "expected a size such as 64KiB or 4096, got '%s'", t), -1;
    const char *u = t + k;
    double m;
    if (!*u || !strcmp(u, "B")) m = 1;
    else if (!strcmp(u, "KiB") || !strcmp(u, "K")) m = 1024.0;
    else if (!strcmp(u, "MiB") || !strcmp(u, "M")) m = 1048576.0;
    else if (!strcmp(u, "GiB") || !strcmp(u, "G")) m = 1073741824.0;
    else if (!strcmp(u, "KB") || !strcmp(u, "kB")) m = 1e3;
    else if (!strcmp(u, "MB")) m = 1e6;
    else if (!strcmp(u, "GB")) m = 1e9;
    else
        return snprintf(msg, JF_INNER, "unknown size unit '%s' in '%s' (use B, KiB, MiB, GiB, KB, MB, GB)", u, t), -1;
    char num[64];
    snprintf(num, sizeof num, "%.*s", k, t);
    double b = strtod(num, NULL) * m;
    if (b != floor(b))
        return snprintf(msg, JF_INNER, "'%s' is not a whole number of bytes", t), -1;
    if (b > (double)JF_MAX_BYTES)
        return snprintf(msg, JF_INNER, "'%s' is larger than 1GiB", t), -1;
    return *out = (u64)b, 0;
}

static int jf_duration(const char *t, u64 *out, char *msg)
{
    int k = jf_number(t);
    if (k < 0)
        return snprintf(msg, JF_INNER, "expected a duration such as 10us or 1.5ms, got '%s'", t), -1;
    const char *u = t + k;
    double m;
    if (!*u || !strcmp(u, "ns")) m = 1;
    else if (!strcmp(u, "us") || !strcmp(u, "\xc2\xb5s")) m = 1e3;
    else if (!strcmp(u, "ms")) m = 1e6;
    else if (!strcmp(u, "s")) m = 1e9;
    else
        return snprintf(msg, JF_INNER, "unknown time unit '%s' in '%s' (use ns, us, ms, s)", u, t), -1;
    char num[64];
    snprintf(num, sizeof num, "%.*s", k, t);
    double ns = round(strtod(num, NULL) * m);
    if (ns > (double)JF_MAX_NS)
        return snprintf(msg, JF_INNER, "'%s' is longer than 1000000s", t), -1;
    return *out = (u64)ns, 0;
}

static int jf_fraction(const char *t, double *out, char *msg)
{
    int k = jf_number(t);
    if (k < 0 || t[k])
        return snprintf(msg, JF_INNER, "expected a number such as 0.25, got '%s'", t), -1;
    double v = strtod(t, NULL);
    if (!(v > 0.0 && v <= 10.0))
        return snprintf(msg, JF_INNER, "'%s' is outside (0, 10]", t), -1;
    return *out = v, 0;
}

static int jf_cmp_u(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

/* rank list "0-15,32-47" */
static int jf_ranks(const char *text, unsigned **out, size_t *n, char *msg)
{
    size_t cap = 16, len = 0;
    unsigned *r = malloc(cap * sizeof *r);
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t il = end ? (size_t)(end - p) : strlen(p);
        char item[128], a[128], b[128], tmp[JF_MSG];
        snprintf(item, sizeof item, "%.*s", (int)il, p);
        char *dash = strchr(item, '-');
        if (dash) {
            snprintf(a, sizeof a, "%.*s", (int)(dash - item), item);
            snprintf(b, sizeof b, "%s", dash + 1);
        } else {
            snprintf(a, sizeof a, "%s", item);
            snprintf(b, sizeof b, "%s", item);
        }
        u64 x, y;
        if (il >= sizeof item || jf_count(a, JF_MAX_RANK, &x, tmp) || jf_count(b, JF_MAX_RANK, &y, tmp)) {
            snprintf(msg, JF_MSG, "expected a rank list such as 0-15,32-47, got '%.*s' in '%s'", (int)il, p, text);
            return free(r), -1;
        }
        if (y < x) {
            snprintf(msg, JF_MSG, "empty rank range '%.*s' (the end is below the start)", (int)il, p);
            return free(r), -1;
        }
        if (len + (y - x + 1) > JF_MAX_RANK + 1) {
            snprintf(msg, JF_MSG, "more than %llu ranks in '%s'", JF_MAX_RANK + 1, text);
            return free(r), -1;
        }
        while (len + (y - x + 1) > cap)
            cap *= 2;
        r = realloc(r, cap * sizeof *r);
        for (u64 v = x; v <= y; v++)
            r[len++] = (unsigned)v;
        if (!end)
            break;
        p = end + 1;
    }
    unsigned *s = malloc(len * sizeof *s);
    memcpy(s, r, len * sizeof *s);
    qsort(s, len, sizeof *s, jf_cmp_u);
    for (size_t i = 1; i < len; i++)
        if (s[i] == s[i - 1]) {
            snprintf(msg, JF_MSG, "rank %u is listed twice in '%s'", s[i], text);
            return free(s), free(r), -1;
        }
    free(s);
    *out = r;
    *n = len;
    return 0;
}

static void jf_format_ranks(const unsigned *r, size_t n, FILE *f)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1] == r[j] + 1)
            j++;
        fprintf(f, "%s", i ? "," : "");
        if (i == j)
            fprintf(f, "%u", r[i]);
        else
            fprintf(f, "%u-%u", r[i], r[j]);
        i = j + 1;
    }
}

/* "64KiB" style (collectives::fmt_size) */
static void jf_fmt_size(u64 b, char *out)
{
    if (b >= (1ULL << 30) && b % (1ULL << 30) == 0) sprintf(out, "%lluGiB", b >> 30);
    else if (b >= (1ULL << 20) && b % (1ULL << 20) == 0) sprintf(out, "%lluMiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0) sprintf(out, "%lluKiB", b >> 10);
    else sprintf(out, "%llu", b);
}

/* ---- grids (grid.rs) ---- */
static void jf_dims2(u64 n, u64 *a, u64 *b)
{
    u64 x = (u64)sqrt((double)n) + 1;
    while (x * x > n)
        x--;
    while (n % x)
        x--;
    *a = n / x;
    *b = x;
}

static void jf_dims3(u64 n, u64 *a, u64 *b, u64 *c)
{
    for (u64 x = 1;; x++)
        if (n % x == 0) {
            jf_dims2(n / x, b, c);
            if (*b <= x) {
                *a = x;
                return;
            }
        }
}

static int jf_fill_dims(u64 *d, int nd, u64 n, char *msg)
{
    u64 set = 1;
    for (int i = 0; i < nd; i++)
        if (d[i]) {
            if (d[i] > n || set > n / d[i])
                return snprintf(msg, JF_INNER, "the given grid dimensions need more ranks than the job has (%llu)", n), -1;
            set *= d[i];
        }
    u64 left = n / set, s[3];
    int free_ = 0;
    for (int i = 0; i < nd; i++)
        free_ += !d[i];
    if (free_ == 1) s[0] = left;
    else if (free_ == 2) jf_dims2(left, &s[0], &s[1]);
    else if (free_ == 3) jf_dims3(left, &s[0], &s[1], &s[2]);
    for (int i = 0, k = 0; i < nd; i++)
        if (!d[i])
            d[i] = s[k++];
    return 0;
}

#include "jobfile_motif.h"

#endif
