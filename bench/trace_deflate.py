#!/usr/bin/env python3
"""How fast the tracer's DEFLATE encoder (`_tracer/lt_zip.c`) compresses trace text, and how
small, beside zlib's fastest level (as the tracer used it: one stream, a sync flush per
buffer) and libdeflate's level 1 (one member per buffer, where its shared library is
installed). Each encoder compresses the same rank files in buffers of `--buffer` bytes, as the
tracer does when its buffer fills; times are the best of `--reps` passes (ns per input byte),
the encoders interleaved so that load on the machine hits them alike.

    python3 bench/trace_deflate.py TRACEDIR_OR_FILE... [--buffer 1MiB] [--reps 20] [--json out.json]

A compressed rank file (`latitude trace`'s default, `.txt.gz`) is decompressed first, so the
encoders get the text it holds; a plain one (`--plain`) is read as it is."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "python" / "latitude" / "_tracer"
sys.path.insert(0, str(ROOT / "python"))
from latitude import tracer  # noqa: E402

DRIVER = r"""
#define _GNU_SOURCE
#include "lt_zip.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef HAVE_ZLIB
#include <zlib.h>
#endif
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
typedef void *(*alloc_fn)(int);
typedef size_t (*gzip_fn)(void *, const void *, size_t, void *, size_t);
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb");
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f), blk = (size_t)atol(argv[2]);
    int reps = atoi(argv[3]);
    rewind(f);
    char *in = malloc(n + 1);
    if (fread(in, 1, n, f) != n) return 1;
    unsigned char *out = malloc(2 * n + (1 << 20));
    void *ld = dlopen("libdeflate.so.0", RTLD_NOW), *ldc = NULL;
    gzip_fn ld_gzip = NULL;
    if (ld) {
        ldc = ((alloc_fn)dlsym(ld, "libdeflate_alloc_compressor"))(1);
        ld_gzip = (gzip_fn)dlsym(ld, "libdeflate_gzip_compress");
    }
    lt_zip_open(blk);
    const char *names[3] = {"lt_zip", "zlib-1", "libdeflate-1"};
    double best[3] = {1e99, 1e99, 1e99};
    size_t size[3] = {0, 0, 0};
    for (int r = 0; r < reps; r++)
        for (int e = 0; e < 3; e++) {
            size_t o = 0;
            double t = now();
            if (e == 0) {
                for (size_t off = 0; off < n; off += blk) {
                    const unsigned char *p;
                    size_t k = lt_zip_member(in + off, n - off < blk ? n - off : blk, &p);
                    memcpy(out + o, p, k);
                    o += k;
                }
            } else if (e == 1) {
#ifdef HAVE_ZLIB
                z_stream z;
                memset(&z, 0, sizeof z);
                deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
                for (size_t off = 0; off < n; off += blk) {
                    size_t m = n - off < blk ? n - off : blk;
                    z.next_in = (unsigned char *)in + off;
                    z.avail_in = (uInt)m;
                    do {
                        z.next_out = out + o;
                        z.avail_out = 1 << 16;
                        deflate(&z, off + m >= n ? Z_FINISH : Z_SYNC_FLUSH);
                        o += (1 << 16) - z.avail_out;
                    } while (z.avail_out == 0);
                }
                deflateEnd(&z);
#else
                continue;
#endif
            } else {
                if (!ld_gzip) continue;
                for (size_t off = 0; off < n; off += blk)
                    o += ld_gzip(ldc, in + off, n - off < blk ? n - off : blk, out + o, 2 * n + (1 << 20) - o);
            }
            t = now() - t;
            if (t < best[e]) best[e] = t;
            size[e] = o;
        }
    for (int e = 0; e < 3; e++)
        if (size[e])
            printf("%s %.4f %zu %zu\n", names[e], best[e] * 1e9 / (double)n, n, size[e]);
    return 0;
}
"""


def rank_files(paths: list[str]) -> list[Path]:
    out = []
    for p in map(Path, paths):
        out += tracer.trace_files(p) if p.is_dir() else [p]
    if not out:
        raise SystemExit("trace_deflate: no rank files (pmpi-trace-rank-N.txt or .txt.gz) given")
    return out


def as_text(f: Path, tmp: Path) -> Path:
    """The rank file itself if plain, else its text decompressed into `tmp`."""
    if not tracer.is_compressed(f):
        return f
    out = tmp / f.name.removesuffix(".gz")
    with tracer.open_trace(f) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return out


def build(tmp: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise SystemExit("trace_deflate: no C compiler")
    (tmp / "driver.c").write_text(DRIVER)
    exe = tmp / "deflate-bench"
    base = [cc, "-O2", f"-I{SRC}", "-o", exe, tmp / "driver.c", SRC / "lt_zip.c", SRC / "lt_crc.c", "-ldl"]
    if subprocess.run([*base[:-1], "-DHAVE_ZLIB", "-lz", "-ldl"], capture_output=True).returncode != 0:
        subprocess.run(base, check=True)  # without zlib's header: lt_zip (and libdeflate) only
    return exe


def parse_size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20}
    t = text.lower().removesuffix("ib").removesuffix("b")
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="trace directories or rank files")
    ap.add_argument("--buffer", default="1MiB", help="bytes per buffer (default 1MiB, the tracer's)")
    ap.add_argument("--reps", type=int, default=20, help="passes per encoder (best taken; default 20)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="latitude-deflate-") as tmp:
        exe = build(Path(tmp))
        for f in rank_files(a.paths):
            text = as_text(f, Path(tmp))
            out = subprocess.run(
                [exe, text, str(parse_size(a.buffer)), str(a.reps)], capture_output=True, text=True, check=True
            )
            if text != f:
                text.unlink()
            for line in out.stdout.split("\n"):
                if line:
                    name, ns, n, size = line.split()
                    rows.append(
                        {
                            "file": str(f),
                            "encoder": name,
                            "ns_per_byte": float(ns),
                            "bytes": int(n),
                            "compressed": int(size),
                        }
                    )
    print(f"{'file':40} {'encoder':13} {'ns/B':>6} {'ratio':>6}")
    for r in rows:
        print(
            f"{Path(r['file']).name[-40:]:40} {r['encoder']:13} {r['ns_per_byte']:6.2f} {r['bytes'] / r['compressed']:6.2f}"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
