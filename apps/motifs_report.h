/* motifs: set-up, the three barrier-separated phases and the timing table (included by
 * motifs.c after the motif code). */
#ifndef APPS_MOTIFS_REPORT_H
#define APPS_MOTIFS_REPORT_H

static u64 repeats(const struct job *j, const struct motif *m)
{
    return j->iterations / m->every * m->iterations;
}

/* rank 0: one row per job and motif from every rank's record
 * rec = [job index or -1, secs of motif 0..nmotifs-1, total] (width w) */
static void print_table(const struct plan *f, const double *all, int size, int w)
{
    printf("%-16s %5s %-10s %10s %12s %12s %14s\n", "job", "line", "motif", "repeats", "max_s", "mean_s", "per_repeat_us");
    for (size_t ji = 0; ji < f->njobs; ji++) {
        const struct job *j = &f->jobs[ji];
        for (size_t mi = 0; mi <= j->nmotifs; mi++) {
            double mx = 0, sum = 0;
            int cnt = 0;
            for (int r = 0; r < size; r++) {
                const double *rec = all + (size_t)r * w;
                if ((int)rec[0] != (int)ji)
                    continue;
                double v = rec[1 + mi];
                mx = v > mx ? v : mx;
                sum += v;
                cnt++;
            }
            double mean = cnt ? sum / cnt : 0;
            if (mi < j->nmotifs) {
                const struct motif *m = &j->motifs[mi];
                u64 n = repeats(j, m);
                printf("%-16s %5ld %-10s %10llu %12.6f %12.6f %14.3f\n", j->name, m->line, plan_kinds[m->kind], n, mx, mean,
                       n ? mx / (double)n * 1e6 : 0.0);
            } else
                printf("%-16s %5s %-10s %10s %12.6f %12.6f %14s\n", j->name, "-", "(job)", "-", mx, mean, "-");
        }
    }
    fflush(stdout);
}

static int run_jobs(int *argc, char ***argv, const char *path, u64 seed)
{
    C(MPI_Init)(argc, argv);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    struct plan f;
    int bad = plan_read(rank == 0 ? "motifs" : NULL, path, &f) != 0;
    if (!bad && (unsigned)size < f.world) {
        if (rank == 0)
            fprintf(stderr, "motifs: %s: the jobs use ranks up to %u but MPI_COMM_WORLD has %d ranks\n", path, f.world - 1, size);
        bad = 1;
    }
    if (bad) {
        MPI_Finalize();
        return 2;
    }
    /* set-up: my job, its communicator, buffers */
    struct ctx c = {.job = NULL, .index = -1, .me = 0, .n = 0, .comm = MPI_COMM_NULL, .seed = seed};
    for (size_t ji = 0; ji < f.njobs; ji++)
        for (size_t i = 0; i < f.jobs[ji].nranks; i++)
            if ((int)f.jobs[ji].ranks[i] == rank)
                c.job = &f.jobs[ji], c.index = (int)ji, c.me = (int)i;
    C(MPI_Comm_split)(MPI_COMM_WORLD, c.job ? c.index : MPI_UNDEFINED, c.me, &c.comm);
    int w = 2;
    for (size_t ji = 0; ji < f.njobs; ji++)
        w = (int)f.jobs[ji].nmotifs + 2 > w ? (int)f.jobs[ji].nmotifs + 2 : w;
    double *rec = calloc((size_t)w, sizeof(double));
    rec[0] = c.index;
    u64 smax = 1, rmax = 1;
    if (c.job) {
        c.n = (int)c.job->nranks;
        for (size_t mi = 0; mi < c.job->nmotifs; mi++) {
            u64 s, r;
            needs(&c.job->motifs[mi], c.n, &s, &r);
            smax = s > smax ? s : smax;
            rmax = r > rmax ? r : rmax;
        }
    }
    c.sbuf = malloc(smax);
    c.rbuf = malloc(rmax);
    memset(c.sbuf, 1, smax);
    memset(c.rbuf, 0, rmax);
    C(MPI_Barrier)(MPI_COMM_WORLD);
    if (c.job)
        perform(&c, rec + 1);
    C(MPI_Barrier)(MPI_COMM_WORLD);
    /* clean-up: timings to world rank 0 */
    double *all = rank == 0 ? malloc(sizeof(double) * (size_t)w * (size_t)size) : NULL;
    C(MPI_Gather)(rec, w, MPI_DOUBLE, all, w, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0)
        print_table(&f, all, size, w);
    free(all);
    free(rec);
    free(c.sbuf);
    free(c.rbuf);
    if (c.comm != MPI_COMM_NULL)
        C(MPI_Comm_free)(&c.comm);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}

#endif
