/* The job-file grammar (job.rs) and the canonical dump; included by jobfile_motif.h.
 * jf_parse(text, f): 0, or -1 with jf_err (and jf_err_line, 0 = whole file). */
#ifndef APPS_JOBFILE_PARSE_H
#define APPS_JOBFILE_PARSE_H

/* strict UTF-8 (what Rust's String::from_utf8 accepts) */
static int jf_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n)
            return 0;
        unsigned cp = len == 1 ? c : c & (0x7F >> len);
        for (int k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

static struct job *jf_current(struct jobfile *f, const char *tag, char *msg)
{
    if (!f->njobs)
        snprintf(msg, JF_MSG, "[%s] before the first [JOB]", tag);
    return f->njobs ? &f->jobs[f->njobs - 1] : NULL;
}

static int jf_one_arg(const char *tag, char **args, int nargs, const char *what, char *msg)
{
    if (nargs == 0)
        return snprintf(msg, JF_MSG, "expected %s after [%s]", what, tag), -1;
    if (nargs > 1)
        return snprintf(msg, JF_MSG, "expected only %s after [%s], got %d words", what, tag, nargs), -1;
    return 0;
}

/* checks at the end of a job (errors at the job's line) */
static int jf_close_job(struct jobfile *f)
{
    if (!f->njobs)
        return 0;
    struct job *j = &f->jobs[f->njobs - 1];
    if (!j->nranks)
        return jf_fail(j->line, "job '%s' has no [RANKS] line", j->name);
    if (!j->nmotifs)
        return jf_fail(j->line, "job '%s' has no [MOTIF] lines", j->name);
    if (!j->iterations)
        j->iterations = 1;
    return 0;
}

static int jf_job(struct jobfile *f, const char *tag, char **args, int nargs, long line, char *msg)
{
    if (jf_one_arg(tag, args, nargs, "a job name", msg))
        return -1;
    const char *name = args[0];
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != '-')
            return snprintf(msg, JF_MSG, "a job name is letters, digits, '_', '.' and '-', got '%s'", name), -1;
    for (size_t i = 0; i < f->njobs; i++)
        if (!strcmp(f->jobs[i].name, name))
            return snprintf(msg, JF_MSG, "job '%s' is already defined on line %ld", name, f->jobs[i].line), -1;
    f->jobs = realloc(f->jobs, (f->njobs + 1) * sizeof *f->jobs);
    struct job *j = &f->jobs[f->njobs++];
    memset(j, 0, sizeof *j);
    j->name = strdup(name);
    j->line = line;
    return 0;
}

static int jf_rank_list(struct jobfile *f, const char *tag, char **args, int nargs, char *msg)
{
    struct job *j = jf_current(f, tag, msg);
    if (!j)
        return -1;
    if (j->nranks)
        return snprintf(msg, JF_MSG, "job '%s' already has a rank list", j->name), -1;
    if (jf_one_arg(tag, args, nargs, "a rank list such as 0-15,32-47", msg))
        return -1;
    unsigned *r;
    size_t n;
    if (jf_ranks(args[0], &r, &n, msg))
        return -1;
    unsigned top = 0;
    for (size_t i = 0; i < n; i++)
        top = r[i] > top ? r[i] : top;
    if (f->nowner <= top) {
        f->owner = realloc(f->owner, (top + 1) * sizeof *f->owner);
        memset(f->owner + f->nowner, 0, (top + 1 - f->nowner) * sizeof *f->owner);
        f->nowner = top + 1;
    }
    for (size_t i = 0; i < n; i++)
        if (f->owner[r[i]]) {
            struct job *o = &f->jobs[f->owner[r[i]] - 1];
            snprintf(msg, JF_MSG, "rank %u is already in job '%s' (line %ld); jobs use disjoint ranks", r[i], o->name, o->line);
            return free(r), -1;
        }
    for (size_t i = 0; i < n; i++)
        f->owner[r[i]] = (unsigned)f->njobs;
    j->ranks = r;
    j->nranks = n;
    return 0;
}

static int jf_iterations(struct jobfile *f, char **args, int nargs, char *msg)
{
    struct job *j = jf_current(f, "ITERATIONS", msg);
    if (!j)
        return -1;
    if (j->iterations)
        return snprintf(msg, JF_MSG, "job '%s' already has [ITERATIONS]", j->name), -1;
    if (jf_one_arg("ITERATIONS", args, nargs, "a count", msg))
        return -1;
    char inner[JF_INNER];
    if (jf_count(args[0], JF_MAX_COUNT, &j->iterations, inner))
        return snprintf(msg, JF_MSG, "[ITERATIONS]: %s", inner), -1;
    if (!j->iterations)
        return snprintf(msg, JF_MSG, "[ITERATIONS]: must be at least 1, got '%s'", args[0]), -1;
    return 0;
}

static int jf_motif_line(struct jobfile *f, char **args, int nargs, long line, char *msg)
{
    struct job *j = jf_current(f, "MOTIF", msg);
    if (!j)
        return -1;
    if (!j->nranks)
        return snprintf(msg, JF_MSG, "[MOTIF] before the [RANKS] line of job '%s'", j->name), -1;
    if (!nargs)
        return snprintf(msg, JF_MSG, "expected a motif name after [MOTIF]"), -1;
    for (char *c = args[0]; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c += 'a' - 'A';
    if (!strcmp(args[0], "init") || !strcmp(args[0], "fini"))
        return 0; /* SST/Ember start and end markers */
    struct motif m;
    if (jf_motif(args[0], args + 1, nargs - 1, j->nranks, line, &m, msg))
        return -1;
    j->motifs = realloc(j->motifs, (j->nmotifs + 1) * sizeof m);
    j->motifs[j->nmotifs++] = m;
    return 0;
}

static int jf_statement(struct jobfile *f, char *text, long line)
{
    char *hash = strchr(text, '#'), msg[JF_MSG];
    if (hash)
        *hash = 0;
    char *tok[256];
    int ntok = 0;
    for (char *t = strtok(text, " \t\r"); t; t = strtok(NULL, " \t\r"), ntok++)
        if (ntok < 256) /* more words only matter as a count (every statement errs before) */
            tok[ntok] = t;
    if (!ntok)
        return 0;
    char *close = tok[0][0] == '[' ? strchr(tok[0] + 1, ']') : NULL;
    if (!close)
        return jf_fail(line, "expected a [JOB], [RANKS], [ITERATIONS] or [MOTIF] line, got '%s'", tok[0]);
    *close = 0;
    char *tag = tok[0] + 1, **args = tok + 1;
    int nargs = ntok - 1;
    if (close[1]) { /* "[JOB]name": the rest of the first word is an argument */
        args = tok;
        tok[0] = close + 1;
        nargs = ntok;
    }
    int rc;
    if (!strcmp(tag, "JOB") || !strcmp(tag, "JOB_NAME") || !strcmp(tag, "JOB_ID")) {
        if (jf_close_job(f))
            return -1;
        rc = jf_job(f, tag, args, nargs, line, msg);
    } else if (!strcmp(tag, "RANKS") || !strcmp(tag, "NID_LIST"))
        rc = jf_rank_list(f, tag, args, nargs, msg);
    else if (!strcmp(tag, "ITERATIONS"))
        rc = jf_iterations(f, args, nargs, msg);
    else if (!strcmp(tag, "MOTIF"))
        rc = jf_motif_line(f, args, nargs, line, msg);
    else
        rc = (snprintf(msg, JF_MSG, "unknown section '[%s]' (expected [JOB], [RANKS], [ITERATIONS] or [MOTIF])", tag), -1);
    return rc ? jf_fail(line, "%s", msg) : 0;
}

static int jf_parse(char *text, size_t len, struct jobfile *f)
{
    memset(f, 0, sizeof *f);
    if (!jf_utf8((const unsigned char *)text, len))
        return jf_fail(0, "not UTF-8 text; expected a job file");
    long line = 1;
    for (char *p = text;; line++) {
        char *nl = memchr(p, '\n', len - (size_t)(p - text));
        if (nl)
            *nl = 0;
        if (jf_statement(f, p, line))
            return -1;
        if (!nl)
            break;
        p = nl + 1;
    }
    if (jf_close_job(f))
        return -1;
    if (!f->njobs)
        return jf_fail(0, "no [JOB] in the file; expected [JOB] name, [RANKS] list and [MOTIF] lines");
    f->world = (unsigned)f->nowner;
    return 0;
}

static void jf_canonical(const struct jobfile *f, FILE *o)
{
    fprintf(o, "world %u\n", f->world);
    for (size_t ji = 0; ji < f->njobs; ji++) {
        const struct job *j = &f->jobs[ji];
        fprintf(o, "job %ld %s ranks=%zu iterations=%llu list=", j->line, j->name, j->nranks, j->iterations);
        jf_format_ranks(j->ranks, j->nranks, o);
        fprintf(o, "\n");
        for (size_t mi = 0; mi < j->nmotifs; mi++) {
            const struct motif *m = &j->motifs[mi];
            fprintf(o, "motif %ld %s", m->line, jf_names[m->kind]);
            static const char *dn[] = {"const", "gaussian", "uniform", "lognormal"};
            switch (m->kind) {
            case M_COMPUTE:
                fprintf(o, " time=%llu dist=%s", m->time, dn[m->dist]);
                if (m->dist == D_GAUSSIAN) fprintf(o, " sd=%llu", m->sd);
                if (m->dist == D_UNIFORM) fprintf(o, " spread=%llu", m->spread);
                if (m->dist == D_LOGNORMAL) fprintf(o, " sigma=%.6f", m->sigma);
                fprintf(o, " vary=%s", m->vary_rank ? "rank" : "call");
                break;
            case M_PINGPONG: fprintf(o, " bytes=%llu", m->bytes); break;
            case M_HALO2D: case M_HALO3D:
                for (int a = 0; a < m->ndims; a++) fprintf(o, " p%c=%u", "xyz"[a], m->dims[a]);
                for (int a = 0; a < m->ndims; a++) fprintf(o, " %c=%llu", "xyz"[a], m->face[a]);
                fprintf(o, " periodic=%d", m->periodic);
                break;
            case M_SWEEP3D:
                fprintf(o, " px=%u py=%u nx=%llu ny=%llu nz=%llu kba=%llu angles=%llu mmi=%llu xbytes=%llu ybytes=%llu",
                        m->px, m->py, m->nx, m->ny, m->nz, m->kba, m->angles, m->mmi, jf_sweep_xbytes(m), jf_sweep_ybytes(m));
                break;
            case M_INCAST: fprintf(o, " bytes=%llu root=%u", m->bytes, m->root); break;
            default:
                if (m->kind != M_BARRIER) fprintf(o, " bytes=%llu", m->bytes);
                if (jf_rooted(m->kind)) fprintf(o, " root=%u", m->root);
                fprintf(o, " alg=%s", m->alg);
            }
            if (m->kind != M_COMPUTE)
                fprintf(o, " compute=%llu", m->compute);
            fprintf(o, " iterations=%llu every=%llu\n", m->iterations, m->every);
        }
    }
}

/* Read and parse `path`; on error print "<prog>: path[:line]: msg" to stderr (unless prog is
 * NULL) and return -1. */
static int jf_read(const char *prog, const char *path, struct jobfile *f)
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        if (prog)
            fprintf(stderr, "%s: %s: no such file\n", prog, path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap + 1);
    while ((got = fread(buf + len, 1, cap - len, in)) > 0)
        if ((len += got) == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    fclose(in);
    buf[len] = 0;
    int rc = jf_parse(buf, len, f);
    free(buf);
    if (rc && !prog)
        ;
    else if (rc && jf_err_line)
        fprintf(stderr, "%s: %s:%ld: %s\n", prog, path, jf_err_line, jf_err);
    else if (rc)
        fprintf(stderr, "%s: %s: %s\n", prog, path, jf_err);
    return rc;
}

#endif
