/* Opening the trace file and its header, and the paths by which a run can end (MPI_Finalize,
 * MPI_Abort, exit without MPI_Finalize, SIGTERM/SIGINT/SIGHUP). The buffer is in lt_buf.c. */
#define _GNU_SOURCE
#include "lt.h"
#include "lt_probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
#define NSIGS (int)(sizeof(sigs) / sizeof(sigs[0]))
static struct sigaction old_act[NSIGS];

void lt_finish(const char *reason)
{
    lt_lock();
    if (lt.fold)
        lt_fold_close(lt_tick_ns(lt_tick()));
    lt_buf_end(reason, strlen(reason));
    lt_unlock();
}

/* ---- end of run without MPI_Finalize ---- */
static void at_exit(void)
{
    if (lt.active && getpid() == lt.pid) /* not in a forked child */
        lt_finish("exit-without-finalize");
}

static int sig_index(int sig)
{
    for (int i = 0; i < NSIGS; i++)
        if (sigs[i] == sig)
            return i;
    return -1;
}

/* Async-signal-safe: lt_buf_end, sigaction, raise. A record being formatted when the signal
 * arrives is dropped; everything committed before it is kept. */
static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    int i = sig_index(sig);
    struct sigaction *prev = i >= 0 ? &old_act[i] : NULL;
    int fatal = !prev || (prev->sa_handler == SIG_DFL && !(prev->sa_flags & SA_SIGINFO));
    if (fatal && lt.fd >= 0 && getpid() == lt.pid) {
        char reason[24] = "signal ", *p = lt_u64(reason + 7, (uint64_t)sig);
        lt_buf_end(reason, (size_t)(p - reason));
    }
    if (!prev)
        return;
    if (prev->sa_flags & SA_SIGINFO) {
        if (prev->sa_sigaction)
            prev->sa_sigaction(sig, info, uctx);
    } else if (prev->sa_handler == SIG_DFL) {
        sigaction(sig, prev, NULL);
        raise(sig); /* delivered with the default action once we return */
    } else if (prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
    }
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NSIGS; i++)
        sigaction(sigs[i], &sa, &old_act[i]);
    atexit(at_exit);
}

/* ---- the tracer must wrap the MPI the program uses ----
 * Built for one MPI but preloaded into a program linked with another (say, the Open MPI
 * build of an app launched with MPICH's mpiexec and tracer), the wrappers would pass handles
 * of the wrong width and crash somewhere inside MPI. Say so instead, before main(). */
#if defined(OPEN_MPI) && OPEN_MPI
#define LT_BUILT_FOR "Open MPI"
#define LT_OTHER_MPI "MPIR_Process" /* MPICH and its derivatives (Intel MPI, ...) */
#else
#define LT_BUILT_FOR "MPICH"
#define LT_OTHER_MPI "ompi_mpi_comm_world"
#endif

__attribute__((constructor)) static void check_mpi(void)
{
    if (dlsym(RTLD_DEFAULT, LT_OTHER_MPI)) {
        fprintf(stderr, "latitude-trace: this tracer was built for " LT_BUILT_FOR
                " but the program also loads another MPI library; rebuild it with the mpicc "
                "of the program's MPI (latitude trace --mpicc ...)\n");
        _exit(127);
    }
}

/* ---- opening the trace ---- */
static size_t env_size(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k')
        v *= 1024;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024;
    else if (*end == 'G' || *end == 'g')
        v *= 1024.0 * 1024 * 1024;
    return v >= 65536 ? (size_t)v : dflt;
}

static int digits(int x)
{
    int d = 1;
    while (x >= 10) {
        x /= 10;
        d++;
    }
    return d;
}

/* prefix + rank (+ zero padding to the digits of the world size if asked) + ".txt" */
static void trace_path(char *out, size_t n)
{
    const char *prefix = getenv("LATITUDE_TRACE_PREFIX");
    if (!prefix || !*prefix)
        prefix = getenv("HTOR_PMPI_FILE_PREFIX");
    if (!prefix || !*prefix)
        prefix = "/tmp/pmpi-trace-rank-";
    const char *pad = getenv("LATITUDE_TRACE_PADDED");
    lt.padded = pad && *pad && *pad != '0';
    int width = lt.padded ? digits(lt.size) : 1; /* liballprof: digits of the world size */
    snprintf(out, n, "%s%0*d.txt%s", prefix, width, lt.rank, lt.gz ? ".gz" : "");
}

static char *header_line(char *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *header_line(char *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p, 2048, fmt, ap);
    va_end(ap);
    return p + (n < 0 ? 0 : n < 2048 ? n : 2047);
}

/* liballprof header comments, then our "#@" header (see docs/trace-format.md). */
static void write_header(void)
{
    char host[256] = "", libv[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    struct utsname u;
    time_t now = time(NULL);
    char when[64];
    int len = 0;
    gethostname(host, sizeof host - 1);
    uname(&u);
    ctime_r(&now, when);
    when[strcspn(when, "\n")] = 0;
    PMPI_Get_library_version(libv, &len);
    libv[strcspn(libv, "\r\n")] = 0;
    for (char *c = libv; *c; c++)
        if (*c == '\t')
            *c = ' '; /* MPICH separates with tabs */
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t mono = lt_now();

    lt_lock();
    lt_reserve_locked(16384);
    char *p = lt.buf + lt.used;
    p = header_line(p, "# Latitude PMPI Tracer 1 Output File (liballprof v1 format)\n");
    p = header_line(p, "# time: %s\n# hostname: %s\n", when, host);
    p = header_line(p, "# uname: %s %s %s %s %s\n", u.sysname, u.nodename, u.release, u.version,
                    u.machine);
    p = header_line(p, "#@ latitude-trace 1\n#@ mpi %s\n", libv);
    p = header_line(p, "#@ world rank=%d size=%d host=%s pid=%ld\n", lt.rank, lt.size, host,
                    (long)getpid());
    p = header_line(p, "#@ clock CLOCK_MONOTONIC unit=us monotonic=");
    p = lt_time(p, mono);
    p = header_line(p, " realtime=");
    p = lt_time(p, (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
    p = header_line(p, "\n#@ request_size %zu\n", sizeof(MPI_Request));
    p = header_line(p,
                    "#@ const any_source=%d any_tag=%d proc_null=%d root=%d undefined=%d "
                    "in_place=%lu bottom=%lu status_ignore=%lu statuses_ignore=%lu\n",
                    MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_PROC_NULL, MPI_ROOT, MPI_UNDEFINED,
                    (unsigned long)(uintptr_t)MPI_IN_PLACE, (unsigned long)(uintptr_t)MPI_BOTTOM,
                    (unsigned long)(uintptr_t)MPI_STATUS_IGNORE,
                    (unsigned long)(uintptr_t)MPI_STATUSES_IGNORE);
    if (lt.probe_ns > 0)
        p = header_line(p, "#@ probe half_rt_ns=%.1f bytes=8 rounds=%d\n", lt.probe_ns, LT_PROBE_ROUNDS);
    lt.used = (size_t)(p - lt.buf);
    lt_unlock();
    lt_header_ext(); /* communicators that exist from the start */
    lt_lock();
    p = lt.buf + lt.used;
    *p++ = '\n';
    lt.used = (size_t)(p - lt.buf);
    if (lt.gz)
        lt_flush_locked(); /* on disk from the start (in the ".raw" sibling when it is mapped) */
    lt_unlock();
}

/* Called by the MPI_Init/MPI_Init_thread wrappers after the real initialisation. */
void lt_start(int thread_multiple)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &lt.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &lt.size);
    lt.mt = thread_multiple;
    lt.pid = getpid();
    /* only when asked (`latitude trace` does): it needs ranks 0 and 1 both traced */
    const char *probe = getenv("LATITUDE_TRACE_PROBE");
    lt.probe_on = probe && *probe == '1';
    lt.probe_ns = lt.probe_on ? lt_probe_ns() : -1;
    const char *compress = getenv("LATITUDE_TRACE_COMPRESS");
    lt.gz = compress && *compress && *compress != '0';
    char path[4096];
    trace_path(path, sizeof path);
    lt.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (lt.gz && lt.fd >= 0)
        lt_buf_raw(path); /* the text while the run lasts; deflated at its end (lt_buf.c) */
    if (lt.fd < 0 || lt_buf_open(env_size("LATITUDE_TRACE_BUFFER", (size_t)8 << 20)) != 0) {
        fprintf(stderr, "latitude-trace: rank %d: cannot write %s: %s (not tracing)\n",
                lt.rank, path, strerror(errno));
        if (lt.fd >= 0)
            close(lt.fd);
        lt.fd = -1;
        return;
    }
    lt_tick_init();
    write_header();
    install_handlers();
    lt.active = 1;
}
