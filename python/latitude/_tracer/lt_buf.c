/* The record buffer.
 *
 * Normally it is a window of the trace file itself, mapped MAP_SHARED: a committed record is
 * in the page cache at once, so it survives even SIGKILL (MPICH's Hydra kills the other ranks
 * with SIGKILL when one calls MPI_Abort), and "flushing" is mapping the next window. The file
 * is kept one window longer than the data; the final size is set when the run ends. A rank
 * killed outright leaves zero bytes after its last record ("latitude trace" trims them).
 * Where the file cannot be mapped, a heap buffer written with pwrite() is used instead.
 *
 * Compressed traces (LATITUDE_TRACE_COMPRESS=1, a ".txt.gz" file) are deflated when the run
 * ends, not while it runs: deflating 1 MiB takes ~2 ms, and inside the MPI call whose record
 * filled the buffer that is time the traced run loses and no model re-creates (NetPIPE's
 * traced runs came out 28-32 % slower than their graphs, Quantum ESPRESSO's 7-10 %). So the
 * text goes to a mapped sibling file "<trace>.raw" exactly as a plain trace does, and the
 * end of the run (MPI_Finalize, a signal, exit) deflates it into the ".gz" in gzip members of
 * ZIP_CHUNK (lt_zip.c), cut after a newline, and removes it. A rank killed outright leaves its
 * ".raw" file, which `latitude trace` compresses (tracer.py). Where the sibling cannot be
 * mapped, the heap buffer is deflated each time it fills, as before. */
#define _GNU_SOURCE
#include "lt_buf.h"
#include "lt_zip.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define TAIL 64 /* kept free after the window for the "#@ end" line */
#define FIRST_WINDOW ((size_t)1 << 20)

static volatile uint64_t win_off; /* file offset of lt.buf[0] */
static char *map_base;            /* the mapping (page aligned) when mapped */
static size_t map_len, win_size, win_max; /* the window grows to win_max (--buffer) */
static uint64_t file_len;         /* current (pre-extended) file size */
static int mapped;
static int deflating; /* a compressed trace (lt.gz), its encoder ready */
static int map_fd = -1; /* the file mapped: the trace, or a compressed trace's ".raw" sibling */
static int raw_fd = -1; /* a compressed trace's text while the run lasts (lt_buf_raw) */
static char raw_path[4096];
static char *zip_in; /* a chunk of the ".raw" text read back to be deflated */
#define ZIP_CHUNK ((size_t)1 << 20)
static size_t zip_chunk = ZIP_CHUNK; /* the chunk: the buffer size up to ZIP_CHUNK */

/* Signals that end the run are blocked while buf/used/win_off change together. */
static void block(sigset_t *old)
{
    sigset_t set;
    sigfillset(&set);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

static void unblock(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

static void write_all(int fd, const char *b, size_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, b, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* disk full or closed: nothing sensible left to do */
        b += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
}

/* Deflate the committed bytes into one gzip member at the file's end (lt_zip.c). The buffer
 * always has TAIL bytes beyond lt.cap, so the "#@ end" line can join the last member. */
static void gz_member(int fd, size_t n)
{
    if (n == 0)
        return;
    const unsigned char *out;
    size_t k = lt_zip_member(lt.buf, n, &out);
    write_all(fd, (const char *)out, k, win_off);
    win_off += k;
}

/* Map the window that starts at file offset pos, with room for `need` bytes. */
static int map_at(uint64_t pos, size_t need)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t aligned = pos & ~(uint64_t)(page - 1);
    size_t lead = (size_t)(pos - aligned);
    if (map_base && win_size < win_max) /* 1 MiB first, doubling: a short run prefaults little */
        win_size = win_size * 2 < win_max ? win_size * 2 : win_max;
    size_t len = win_size > need + lead + TAIL ? win_size : need + lead + TAIL;
    len = (len + page - 1) & ~(page - 1);
    if (aligned + len > file_len) {
        if (ftruncate(map_fd, (off_t)(aligned + len)) != 0)
            return -1;
        file_len = aligned + len;
    }
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, (off_t)aligned);
    if (m == MAP_FAILED)
        return -1;
#ifdef MADV_POPULATE_WRITE
    madvise(m, len, MADV_POPULATE_WRITE); /* one call instead of a page fault per 4 KiB */
#endif
    if (map_base)
        munmap(map_base, map_len);
    map_base = m;
    map_len = len;
    lt.buf = map_base + lead;
    lt.cap = len - lead - TAIL;
    win_off = pos;
    return 0;
}

int lt_buf_raw(const char *path)
{
    if (snprintf(raw_path, sizeof raw_path, "%s.raw", path) >= (int)sizeof raw_path)
        return -1;
    raw_fd = open(raw_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return raw_fd < 0 ? -1 : 0;
}

int lt_buf_open(size_t size)
{
    win_max = size;
    win_size = size < FIRST_WINDOW ? size : FIRST_WINDOW;
    win_off = 0;
    lt.used = 0;
    deflating = lt.gz;
    const char *m = getenv("LATITUDE_TRACE_MMAP");
    int may_map = !(m && *m == '0');
    if (deflating) {
        /* mapped: the text to the ".raw" sibling, deflated in chunks at the end */
        map_fd = raw_fd;
        zip_chunk = size < ZIP_CHUNK ? size : ZIP_CHUNK;
        if (may_map && raw_fd >= 0 && lt_zip_open(zip_chunk + TAIL) == 0 && (zip_in = malloc(zip_chunk + TAIL))
            && map_at(0, 0) == 0) {
            mapped = 1;
            return 0;
        }
        if (raw_fd >= 0) {
            close(raw_fd);
            unlink(raw_path);
            raw_fd = -1;
        }
        map_fd = lt.fd;
        if (size > ZIP_CHUNK) /* deflated whenever it fills: keep each pause short */
            size = ZIP_CHUNK;
        if (lt_zip_open(size + TAIL) != 0)
            return -1; /* a ".gz" file must not get plain text */
    }
    map_fd = lt.fd;
    if (!deflating && may_map && map_at(0, 0) == 0) {
        mapped = 1;
        return 0;
    }
    mapped = 0;
    if (file_len)
        ftruncate(map_fd, 0);
    file_len = 0;
    lt.buf = malloc(size + TAIL); /* TAIL: room for the "#@ end" line after a full buffer */
    lt.cap = size;
    return lt.buf ? 0 : -1;
}

/* Move past the committed bytes; a record being formatted (partial bytes after `used`)
 * moves along. Returns the new address of its first byte. */
static char *advance(size_t partial, size_t need)
{
    sigset_t old;
    block(&old);
    uint64_t pos = win_off + lt.used;
    if (mapped) {
        if (map_at(pos, partial + need) != 0) {
            fprintf(stderr, "latitude-trace: cannot extend the trace file: %s\n",
                    strerror(errno));
            abort();
        }
        lt.used = 0; /* the partial record is already in the file pages now mapped */
    } else {
        if (deflating) {
            gz_member(lt.fd, lt.used); /* moves win_off to the file's end */
        } else {
            write_all(lt.fd, lt.buf, lt.used, win_off);
            win_off = pos;
        }
        memmove(lt.buf, lt.buf + lt.used, partial);
        lt.used = 0;
        if (partial + need > lt.cap) {
            char *nb = realloc(lt.buf, (partial + need) * 2 + TAIL);
            if (!nb || (deflating && lt_zip_open((partial + need) * 2 + TAIL) != 0))
                abort();
            lt.buf = nb;
            lt.cap = (partial + need) * 2;
        }
    }
    unblock(&old);
    return lt.buf;
}

void lt_flush_locked(void) { advance(0, 0); }

void lt_reserve_locked(size_t need) { advance(0, need); }

char *lt_ensure(char *p, size_t more)
{
    if ((size_t)(lt.buf + lt.cap - p) >= more + LT_SLACK)
        return p;
    size_t partial = (size_t)(p - (lt.buf + lt.used));
    return advance(partial, partial + more + LT_SLACK) + partial;
}

/* Deflate the ".raw" text [0, n) into gzip members written to fd from its start, each
 * zip_chunk at most and cut after a newline, then remove it. */
static void deflate_raw(int fd, uint64_t n)
{
    uint64_t at = 0, out_at = 0;
    while (at < n) {
        size_t k = n - at < zip_chunk ? (size_t)(n - at) : zip_chunk, got = 0;
        while (got < k) {
            ssize_t r = pread(raw_fd, zip_in + got, k - got, (off_t)(at + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (got == 0)
            break;
        size_t cut = got;
        if (at + got < n) /* a member ends after a newline when there is one */
            while (cut > 0 && zip_in[cut - 1] != '\n')
                cut--;
        if (cut == 0)
            cut = got;
        const unsigned char *out;
        size_t z = lt_zip_member(zip_in, cut, &out);
        write_all(fd, (const char *)out, z, out_at);
        out_at += z;
        at += cut;
    }
    close(raw_fd);
    raw_fd = -1;
    unlink(raw_path);
}

/* Append "#@ end <reason>\n" and give the file its final size (a compressed trace: deflate its
 * ".raw" text). Async-signal-safe (no allocation, only pread/pwrite/ftruncate/munmap/close/
 * unlink and lt_zip) so signal handlers can call it;
 * signals are blocked meanwhile, so a handler cannot end the file a second time while the last
 * member is being deflated. */
void lt_buf_end(const char *reason, size_t n)
{
    sigset_t old;
    block(&old);
    int fd = lt.fd;
    if (fd < 0) {
        unblock(&old);
        return;
    }
    lt.active = 0;
    lt.fd = -1;
    char tail[TAIL + 64], *p = tail;
    p = LT_EXT(p, "end ");
    p = lt_str(p, reason, n < TAIL - 8 ? n : TAIL - 8);
    *p++ = '\n';
    size_t tn = (size_t)(p - tail);
    uint64_t end = win_off + lt.used;
    if (mapped) {
        memcpy(lt.buf + lt.used, tail, tn); /* TAIL bytes are always free after the window */
        munmap(map_base, map_len);
        map_base = NULL;
        ftruncate(map_fd, (off_t)(end + tn));
        if (deflating)
            deflate_raw(fd, end + tn);
    } else if (deflating) {
        memcpy(lt.buf + lt.used, tail, tn); /* the heap buffer has TAIL bytes beyond lt.cap */
        gz_member(fd, lt.used + tn);
    } else {
        write_all(fd, lt.buf, lt.used, win_off);
        write_all(fd, tail, tn, end);
    }
    close(fd);
    unblock(&old);
}
