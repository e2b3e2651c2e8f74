/* Folding of unsuccessful polls, and the cheap clock they are timed with.
 *
 * Codes that poll (MPI_Test in a loop, MPI_Iprobe between pieces of work) make millions of
 * calls that complete nothing. Each used to be a record: HPCC wrote 14-23 GiB in 15 s and ran
 * 3-6x slower traced. Now the first unsuccessful poll is formatted as usual but left pending
 * after the committed bytes; every following unsuccessful poll whose signature (the call and
 * its arguments, request handles included) is one of the fold's (up to SIGS of them, so a
 * loop polling two requests in turn folds too) only adds to a count. The next record of any
 * other kind closes the fold first: the pending record gets the start of that record (when
 * the polling stopped) as its end time and a "#@ polls n=<N> busy=<us> [calls=<name:k,...>]"
 * line, then it is committed (docs/trace-format.md). A fold of one poll is written exactly as
 * before. A run killed outright loses a pending fold's repeats, not its first poll.
 *
 * Timing: reading a clock costs more than an unsuccessful MPI_Test (30-50 ns against 15 on
 * the 2-core VM of the CI), so while a fold is open only 1 poll in 16 is timed (lt_poll_t0);
 * busy is the first poll's time plus the mean of the timed ones times the others, at most the
 * fold's span (a timed poll preempted by another process would otherwise inflate it). A poll
 * that was not timed but must be written (it completed something) starts a mean poll before
 * its end. Polls are timed with the TSC when the kernel itself trusts it as its clock source
 * (constant rate, synchronised across cores), else with CLOCK_MONOTONIC. Tick times are
 * converted to the trace's CLOCK_MONOTONIC ns with a rate measured from MPI_Init on (a clock
 * pair read at each conversion) and never go below the last time written, so the trace stays
 * in order. */
#include "lt_buf.h"
#include "lt_poll.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define LT_HAVE_TSC 1
#endif

#define SIGS 4         /* distinct polls one fold may alternate between */
#define EXT_MAX 96     /* the pending record's extension lines ("#@ done -") */
#define REC_MAX 512    /* longer poll records are committed, not folded */

static struct {
    uint64_t sig[SIGS], n[SIGS];
    const char *name[SIGS];
    int nsig;
    uint64_t count, timed, busy;    /* polls, those timed, ticks inside the timed ones */
    uint64_t start;                 /* the first poll's start (trace ns) */
    size_t tend_off, end_off;       /* the pending record's ":TEND" and end (offsets in lt.buf) */
    char ext[EXT_MAX];
    size_t ext_len;
} f;

static int fold_on = 1; /* LATITUDE_TRACE_FOLD=0 writes every poll */

/* ---- the clock ---- */
static int use_tsc;
static uint64_t ns0, tk0; /* a clock pair at MPI_Init */

static int kernel_clock_is_tsc(void)
{
    char buf[32] = "";
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

uint64_t lt_tick(void)
{
#ifdef LT_HAVE_TSC
    if (use_tsc)
        return __rdtsc();
#endif
    return lt_now();
}

/* a clock pair: ticks read on both sides of the clock, the middle taken */
static void pair(uint64_t *ns, uint64_t *tk)
{
    uint64_t a = lt_tick();
    *ns = lt_now();
    uint64_t b = lt_tick();
    *tk = a + (b - a) / 2;
}

void lt_tick_init(void)
{
    const char *fold = getenv("LATITUDE_TRACE_FOLD");
    fold_on = !(fold && *fold == '0');
    const char *env = getenv("LATITUDE_TRACE_TSC");
#ifdef LT_HAVE_TSC
    use_tsc = env && *env ? *env != '0' : kernel_clock_is_tsc();
#else
    (void)env;
    (void)kernel_clock_is_tsc;
#endif
    pair(&ns0, &tk0);
}

/* ns per tick, from MPI_Init to (ns, tk) */
static double rate(uint64_t ns, uint64_t tk) { return tk > tk0 ? (double)(ns - ns0) / (double)(tk - tk0) : 1.0; }

uint64_t lt_tick_ns(uint64_t t)
{
    uint64_t ns = t;
    if (use_tsc) {
        uint64_t now, tk;
        pair(&now, &tk);
        double back = t < tk ? (double)(tk - t) * rate(now, tk) : 0.0;
        ns = now - (uint64_t)back;
    }
    return ns < lt.tlast ? lt.tlast : ns;
}

uint64_t lt_ticks_ns(uint64_t d)
{
    if (!use_tsc)
        return d;
    uint64_t now, tk;
    pair(&now, &tk);
    return (uint64_t)((double)d * rate(now, tk));
}

/* ---- folding ---- */
int lt_poll_again(uint64_t sig, const char *name, uint64_t t0)
{
    if (!fold_on)
        return 0;
    uint64_t t1 = t0 ? lt_tick() : 0;
    lt_lock();
    int i = 0;
    if (lt.fold) {
        while (i < f.nsig && f.sig[i] != sig)
            i++;
        if (i == f.nsig && f.nsig < SIGS) {
            f.sig[i] = sig;
            f.name[i] = name;
            f.n[i] = 0;
            f.nsig++;
        }
    }
    if (!lt.fold || i == SIGS) {
        lt_unlock();
        return 0;
    }
    f.n[i]++;
    f.count++;
    if (t0) {
        f.timed++;
        f.busy += t1 - t0;
    }
    lt_unlock();
    return 1;
}

uint64_t lt_poll_start(void)
{
    uint64_t now = lt_tick(), mean = f.timed ? f.busy / f.timed : 0;
    return now - (mean < now ? mean : 0);
}

void lt_poll_first(size_t tend_off, char *end, uint64_t sig, const char *name, uint64_t t0)
{
    char *tend = lt.buf + lt.used + tend_off; /* the window may have moved since the call line */
    char *nl = memchr(tend, '\n', (size_t)(end - tend));
    size_t ext = nl ? (size_t)(end - nl - 1) : EXT_MAX;
    if (!fold_on || ext >= EXT_MAX || end - (lt.buf + lt.used) > REC_MAX) {
        lt_commit(end); /* not a poll record we can rewrite: keep it as it is */
        return;
    }
    uint64_t t1 = lt_tick();
    memcpy(f.ext, nl + 1, ext);
    f.ext_len = ext;
    f.tend_off = (size_t)(tend - lt.buf);
    f.end_off = (size_t)(end - lt.buf);
    f.sig[0] = sig;
    f.name[0] = name;
    f.n[0] = 1;
    f.nsig = 1;
    f.count = 1;
    f.timed = 1;
    f.busy = t1 - t0;
    f.start = lt_tick_ns(t0);
    lt.fold = 1;
    lt.poll_skip = 0; /* pending: `used` does not move past it, nrec does not count it yet */
    lt_unlock();
}

/* ",name:k" for each polled call */
static char *calls(char *p)
{
    p = LT_LIT(p, " calls=");
    for (int i = 0; i < f.nsig; i++) {
        if (i)
            *p++ = ',';
        p = lt_str(p, f.name[i], strlen(f.name[i]));
        *p++ = ':';
        p = lt_u64(p, f.n[i]);
    }
    return p;
}

void lt_fold_close(uint64_t end)
{
    lt.fold = 0;
    char *p = lt.buf + f.end_off; /* a single poll stays as it was written */
    if (f.count > 1) {
        uint64_t busy = (uint64_t)((double)f.busy / (double)f.timed * (double)f.count);
        end = end < lt.tlast ? lt.tlast : end;
        /* busy is extrapolated from the timed polls: one preempted while timed can push it
         * past the fold's span, which the polls cannot have exceeded */
        uint64_t span = end > f.start ? end - f.start : 0, busy_ns = lt_ticks_ns(busy);
        p = lt.buf + f.tend_off;
        *p++ = ':';
        p = lt_time(p, end);
        *p++ = '\n';
        lt.tlast = end;
        p = lt_str(p, f.ext, f.ext_len);
        p = LT_EXT(p, "polls n=");
        p = lt_u64(p, f.count);
        p = LT_LIT(p, " busy=");
        p = lt_time(p, busy_ns < span ? busy_ns : span);
        if (f.nsig > 1)
            p = calls(p);
        *p++ = '\n';
    }
    lt.used = (size_t)(p - lt.buf);
    lt.nrec++;
}
