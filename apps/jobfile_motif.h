/* Motif lines and the job-file grammar (motif.rs, job.rs); included by jobfile.h. */
#ifndef APPS_JOBFILE_MOTIF_H
#define APPS_JOBFILE_MOTIF_H

/* ---- parameters of one motif line ---- */
struct params {
    int kind, n;
    const char *key[12], *val[12];
    int klen[12];
};

static int jp_find(const struct params *p, const char *key)
{
    for (int i = 0; i < p->n; i++)
        if ((int)strlen(key) == p->klen[i] && !strncmp(p->key[i], key, p->klen[i]))
            return i;
    return -1;
}

static const char *jp_raw(const struct params *p, const char *key)
{
    int i = jp_find(p, key);
    return i < 0 ? NULL : p->val[i];
}

static void jp_join(const char **list, int n, char *out)
{
    out[0] = 0;
    for (int i = 0; i < n && list[i]; i++)
        strcat(strcat(out, i ? ", " : ""), list[i]);
}

static int jp_new(struct params *p, int kind, char **tok, int ntok, char *msg)
{
    const char *name = jf_names[kind];
    p->kind = kind;
    p->n = 0;
    for (int t = 0; t < ntok; t++) {
        const char *eq = strchr(tok[t], '=');
        int klen = eq ? (int)(eq - tok[t]) : 0, ok = eq && klen > 0 && eq[1];
        for (int i = 0; ok && i < klen; i++)
            ok = (tok[t][i] >= 'a' && tok[t][i] <= 'z') || tok[t][i] == '_';
        if (!ok)
            return snprintf(msg, JF_MSG, "%s: expected key=value, got '%s'", name, tok[t]), -1;
        int known = 0;
        for (int k = 0; k < 12 && jf_keys[kind][k]; k++)
            known |= (int)strlen(jf_keys[kind][k]) == klen && !strncmp(jf_keys[kind][k], tok[t], klen);
        if (!known) {
            char keys[256];
            jp_join(jf_keys[kind], 12, keys);
            return snprintf(msg, JF_MSG, "%s: unknown parameter '%.*s' (known: %s)", name, klen, tok[t], keys), -1;
        }
        p->key[p->n] = tok[t];
        p->klen[p->n] = klen;
        for (int i = 0; i < p->n; i++)
            if (p->klen[i] == klen && !strncmp(p->key[i], tok[t], klen))
                return snprintf(msg, JF_MSG, "%s: parameter '%.*s' given twice", name, klen, tok[t]), -1;
        p->val[p->n++] = eq + 1;
    }
    return 0;
}

/* "name: key: inner" */
static int jp_wrap(const struct params *p, const char *key, const char *inner, char *msg)
{
    char tmp[JF_INNER];
    snprintf(tmp, sizeof tmp, "%s", inner);
    return snprintf(msg, JF_MSG, "%s: %s: %s", jf_names[p->kind], key, tmp), -1;
}

static int jp_count(const struct params *p, const char *key, u64 dflt, u64 min, u64 *out, char *msg)
{
    const char *v = jp_raw(p, key);
    char inner[JF_INNER];
    if (!v)
        return *out = dflt, 0;
    if (jf_count(v, JF_MAX_COUNT, out, inner))
        return jp_wrap(p, key, inner, msg);
    if (*out < min) {
        snprintf(inner, sizeof inner, "must be at least %llu, got '%s'", min, v);
        return jp_wrap(p, key, inner, msg);
    }
    return 0;
}

typedef int (*jf_parse_fn)(const char *, u64 *, char *);

static int jp_value(const struct params *p, const char *key, u64 dflt, jf_parse_fn f, u64 *out, char *msg)
{
    const char *v = jp_raw(p, key);
    char inner[JF_INNER];
    if (!v)
        return *out = dflt, 0;
    return f(v, out, inner) ? jp_wrap(p, key, inner, msg) : 0;
}

/* a word from a fixed list: index, or -1 with "expected <choices>, got 'v'" */
static int jp_word(const struct params *p, const char *key, const char **words, int dflt, const char *choices, int *out, char *msg)
{
    const char *v = jp_raw(p, key);
    if (!v)
        return *out = dflt, 0;
    for (int i = 0; words[i]; i++)
        if (!strcmp(words[i], v))
            return *out = i, 0;
    char inner[JF_INNER];
    snprintf(inner, sizeof inner, "expected %s, got '%s'", choices, v);
    return jp_wrap(p, key, inner, msg);
}

static int jp_alg(const struct params *p, struct motif *m, char *msg)
{
    const char *v = jp_raw(p, "alg");
    char inner[JF_INNER], names[256];
    if (!v)
        return strcpy(m->alg, "default"), 0;
    const char **algs = jf_algs[m->kind];
    const char *colon = strchr(v, ':');
    int nlen = colon ? (int)(colon - v) : (int)strlen(v), found = 0;
    for (int i = 0; i < 8 && algs[i]; i++)
        found |= (int)strlen(algs[i]) == nlen && !strncmp(algs[i], v, nlen);
    jp_join(algs, 8, names);
    if (!found)
        snprintf(inner, sizeof inner, "unknown algorithm '%s' for %s (choose from %s)", v, jf_names[m->kind], names);
    else if (nlen == 5 && !strncmp(v, "chain", 5)) {
        u64 seg = JF_DEFAULT_SEGMENT;
        if (colon && jf_size(colon + 1, &seg, inner))
            return jp_wrap(p, "alg", inner, msg);
        if (seg == 0) {
            snprintf(inner, sizeof inner, "the chain segment must be at least 1 byte");
            return jp_wrap(p, "alg", inner, msg);
        }
        char s[32];
        jf_fmt_size(seg, s);
        snprintf(m->alg, sizeof m->alg, "chain:%s", s);
        return 0;
    } else if (colon)
        snprintf(inner, sizeof inner, "only chain takes a segment size, got '%s'", v);
    else
        return snprintf(m->alg, sizeof m->alg, "%.*s", nlen, v), 0;
    return jp_wrap(p, "alg", inner, msg);
}

static int jp_compute(const struct params *p, struct motif *m, char *msg)
{
    static const char *dists[] = {"const", "gaussian", "uniform", "lognormal", NULL};
    static const char *varies[] = {"call", "rank", NULL};
    if (!jp_raw(p, "time"))
        return snprintf(msg, JF_MSG, "compute: missing time=DURATION"), -1;
    if (jp_value(p, "time", 0, jf_duration, &m->time, msg) ||
        jp_word(p, "dist", dists, D_CONST, "const, gaussian, uniform or lognormal", &m->dist, msg) ||
        jp_value(p, "sd", 0, jf_duration, &m->sd, msg) || jp_value(p, "spread", 0, jf_duration, &m->spread, msg))
        return -1;
    const char *sg = jp_raw(p, "sigma");
    char inner[JF_INNER];
    m->sigma = 1.0;
    if (sg && jf_fraction(sg, &m->sigma, inner))
        return jp_wrap(p, "sigma", inner, msg);
    if (jp_word(p, "vary", varies, 0, "call or rank", &m->vary_rank, msg))
        return -1;
    const char *keys[] = {"sd", "spread", "sigma"};
    for (int i = 0; i < 3; i++) {
        int want = m->dist == i + 1, given = jp_raw(p, keys[i]) != NULL;
        if (want && !given)
            return snprintf(msg, JF_MSG, "compute: dist=%s needs %s=", dists[i + 1], keys[i]), -1;
        if (!want && given)
            return snprintf(msg, JF_MSG, "compute: %s applies only to dist=%s", keys[i], dists[i + 1]), -1;
    }
    if (m->dist == D_UNIFORM && m->spread > m->time)
        return snprintf(msg, JF_MSG, "compute: spread must not exceed time (durations are not negative)"), -1;
    if (m->dist == D_LOGNORMAL && m->time == 0)
        return snprintf(msg, JF_MSG, "compute: dist=lognormal needs time > 0"), -1;
    return 0;
}

static int jp_grid(const struct params *p, struct motif *m, char *msg)
{
    static const char *pk[] = {"px", "py", "pz"}, *fk[] = {"x", "y", "z"};
    static const char *bits[] = {"0", "1", NULL};
    u64 d[3] = {0, 0, 0};
    for (int a = 0; a < m->ndims; a++)
        if (jp_count(p, pk[a], 0, 1, &d[a], msg))
            return -1;
    for (int a = 0; a < m->ndims; a++)
        if (jp_value(p, fk[a], 8192, jf_size, &m->face[a], msg))
            return -1;
    if (jp_word(p, "periodic", bits, 0, "0 or 1", &m->periodic, msg))
        return -1;
    for (int a = 0; a < 3; a++)
        m->dims[a] = a < m->ndims ? (unsigned)d[a] : 1;
    return 0;
}

static int jp_sweep(const struct params *p, struct motif *m, char *msg)
{
    u64 px, py;
    if (jp_count(p, "px", 0, 1, &px, msg) || jp_count(p, "py", 0, 1, &py, msg) ||
        jp_count(p, "nx", 64, 1, &m->nx, msg) || jp_count(p, "ny", 64, 1, &m->ny, msg) ||
        jp_count(p, "nz", 64, 1, &m->nz, msg) || jp_count(p, "kba", 8, 1, &m->kba, msg) ||
        jp_count(p, "angles", 6, 1, &m->angles, msg) || jp_count(p, "mmi", 3, 1, &m->mmi, msg))
        return -1;
    if (m->nz % m->kba)
        return snprintf(msg, JF_MSG, "sweep3d: kba=%llu does not divide nz=%llu", m->kba, m->nz), -1;
    if (m->angles % m->mmi)
        return snprintf(msg, JF_MSG, "sweep3d: mmi=%llu does not divide angles=%llu", m->mmi, m->angles), -1;
    m->px = (unsigned)px;
    m->py = (unsigned)py;
    return 0;
}

static u64 jf_sweep_xbytes(const struct motif *m) { return (m->ny + m->py - 1) / m->py * m->kba * m->mmi * 8; }
static u64 jf_sweep_ybytes(const struct motif *m) { return (m->nx + m->px - 1) / m->px * m->kba * m->mmi * 8; }
static int jf_rooted(int kind) { return kind == M_BCAST || kind == M_REDUCE; }

/* parse_motif: `name` is lower case */
static int jf_motif(const char *name, char **tok, int ntok, u64 n, long line, struct motif *m, char *msg)
{
    int kind = -1;
    for (int k = 0; k < M_NKINDS; k++)
        if (!strcmp(jf_names[k], name))
            kind = k;
    if (kind < 0) {
        char known[256];
        jp_join(jf_names, M_NKINDS, known);
        return snprintf(msg, JF_MSG, "unknown motif '%s' (known: %s)", name, known), -1;
    }
    struct params p;
    memset(m, 0, sizeof *m);
    m->line = line;
    m->kind = kind;
    if (jp_new(&p, kind, tok, ntok, msg))
        return -1;
    if ((kind != M_COMPUTE && jp_value(&p, "compute", 0, jf_duration, &m->compute, msg)) ||
        jp_count(&p, "iterations", 1, 1, &m->iterations, msg) || jp_count(&p, "every", 1, 1, &m->every, msg))
        return -1;
    u64 root = 0;
    int rc = 0;
    switch (kind) {
    case M_COMPUTE: rc = jp_compute(&p, m, msg); break;
    case M_PINGPONG: rc = jp_value(&p, "bytes", 8, jf_size, &m->bytes, msg); break;
    case M_HALO2D: case M_HALO3D:
        m->ndims = kind == M_HALO2D ? 2 : 3;
        rc = jp_grid(&p, m, msg);
        break;
    case M_SWEEP3D: rc = jp_sweep(&p, m, msg); break;
    case M_INCAST:
        rc = jp_value(&p, "bytes", 8, jf_size, &m->bytes, msg) || jp_count(&p, "root", 0, 0, &root, msg);
        break;
    default:
        rc = (kind != M_BARRIER && jp_value(&p, "bytes", 8, jf_size, &m->bytes, msg)) ||
             (jf_rooted(kind) && jp_count(&p, "root", 0, 0, &root, msg)) || jp_alg(&p, m, msg);
    }
    if (rc)
        return -1;
    m->root = (unsigned)root;
    if (kind == M_PINGPONG && n < 2)
        return snprintf(msg, JF_MSG, "pingpong: needs at least 2 ranks, the job has %llu", n), -1;
    if ((kind == M_INCAST || jf_rooted(kind)) && root >= n)
        return snprintf(msg, JF_MSG, "%s: root %llu is outside the job's %llu ranks", name, root, n), -1;
    if (kind == M_HALO2D || kind == M_HALO3D || kind == M_SWEEP3D) {
        u64 d[3] = {m->dims[0], m->dims[1], m->dims[2]};
        int nd = m->ndims;
        if (kind == M_SWEEP3D)
            d[0] = m->px, d[1] = m->py, nd = 2;
        char inner[JF_INNER];
        if (jf_fill_dims(d, nd, n, inner))
            return snprintf(msg, JF_MSG, "%s: %s", name, inner), -1;
        if (kind == M_SWEEP3D)
            m->px = (unsigned)d[0], m->py = (unsigned)d[1];
        else
            for (int a = 0; a < nd; a++)
                m->dims[a] = (unsigned)d[a];
    }
    return 0;
}

#include "jobfile_parse.h"

#endif
