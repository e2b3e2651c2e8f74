"""The tracer's DEFLATE encoder (`_tracer/lt_zip.c`), alone: whatever text it is given, in
buffers of whatever size, the gzip members it writes decode (Python's zlib, `gunzip`) to exactly
that text. Compiled here with a small driver that reads stdin and writes one member per buffer,
as the tracer does when its buffer fills."""

from __future__ import annotations

import gzip
import os
import random
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest
from tracetools import build_c_driver, ompi, trace

DRIVER = r"""
#include "lt_zip.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    size_t block = (size_t)atol(argv[1]), n = 0, cap = 1 << 20;
    char *in = malloc(cap);
    for (size_t k; (k = fread(in + n, 1, cap - n, stdin)) > 0;)
        if ((n += k) == cap)
            in = realloc(in, cap *= 2);
    if (lt_zip_open(block) != 0)
        return 1;
    size_t off = 0;
    do {
        size_t m = n - off < block ? n - off : block;
        const unsigned char *out;
        size_t k = lt_zip_member(in + off, m, &out);
        fwrite(out, 1, k, stdout);
        off += m;
    } while (off < n);
    return 0;
}
"""


@pytest.fixture(scope="module")
def zipper(tmp_path_factory) -> Path:
    return build_c_driver(tmp_path_factory.mktemp("zip"), "zipper", DRIVER, ["lt_zip.c", "lt_crc.c"], sanitize=True)


def members(zipper: Path, text: bytes, block: int, env: dict | None = None) -> bytes:
    env = {**(env or os.environ), "ASAN_OPTIONS": "detect_leaks=0"}
    return subprocess.run([zipper, str(block)], input=text, capture_output=True, check=True, env=env).stdout


def decode_members(data: bytes) -> list[bytes]:
    """Each member's text, checking that every member ends (CRC and size verified by zlib)."""
    out = []
    while data:
        z = zlib.decompressobj(wbits=31)
        out.append(z.decompress(data))
        assert z.eof, "a member does not end"
        data = z.unused_data
    return out


def trace_like(rng: random.Random, lines: int) -> bytes:
    """Lines shaped like a trace's: call lines whose fields repeat with drifting timestamps and
    numbers that change width, extension lines, and some noise."""
    out, t = [], 1_000_000_000.0
    bufs = [rng.randrange(10**14, 10**15) for _ in range(4)]
    for i in range(lines):
        t += rng.random() * 10 ** rng.randrange(0, 6)
        k = rng.randrange(10)
        if k < 4:
            out.append(
                f"MPI_Isend:{t:.3f}:{rng.choice(bufs)}:{rng.choice([1, 8, 1024, 99999])}:1,4,4:"
                f"{rng.randrange(2)}:{rng.randrange(300)}:94364188230688,0,2:{rng.choice(bufs)}:{t + 0.5:.3f}"
            )
        elif k < 7:
            out.append(f"MPI_Test:{t:.3f}:{rng.choice(bufs)}:140723803596824:0:{t + 0.25:.3f}")
            out.append(f"#@ done {i - rng.randrange(1, 50)}")
        elif k < 8:
            out.append(f"#@ polls n={rng.randrange(2, 10 ** rng.randrange(1, 8))} busy={rng.random() * 100:.3f}")
        elif k < 9:
            counts = ",".join(str(rng.randrange(10 ** rng.randrange(1, 6))) for _ in range(rng.randrange(1, 300)))
            out.append(f"MPI_Alltoallv:{t:.3f}:{bufs[0]}:{counts}:{t + 3:.3f}")
        else:
            out.append("".join(chr(rng.randrange(32, 127)) for _ in range(rng.randrange(0, 120))))
    return ("\n".join(out) + "\n").encode()


def test_members_decode_to_the_text(zipper):
    """Trace-like text of every shape, in buffers from 64 bytes to 8 MiB: whole members that
    decode byte for byte, and about as small as zlib's fastest level makes them."""
    rng = random.Random(7)
    text = trace_like(rng, 8000)
    for block in (64, 1000, 65536, 1 << 20, 8 << 20):
        sample = text if block > 64 else text[:50_000]
        data = members(zipper, sample, block)
        parts = decode_members(data)
        assert b"".join(parts) == sample
        assert len(parts) == -(-len(sample) // block)
        assert gzip.decompress(data) == sample  # gzip's own reading of several members
    assert len(members(zipper, text, 1 << 20)) < 1.1 * len(gzip.compress(text, compresslevel=1))


def test_text_that_does_not_compress(zipper):
    """Random bytes (stored blocks: 2 MiB of them in 1 MiB buffers filled the output buffer
    past its end before its size counted every block), one very long line (copies reaching
    across the whole 32 KiB window and past it), one byte repeated, no newline at all, and
    nothing at all."""
    rng = random.Random(3)
    cases = [
        rng.randbytes(2 << 20),
        (b"MPI_Waitall:1.000:" + b",".join(b"%d" % rng.randrange(10**6) for _ in range(40_000)) + b"\n") * 3,
        b"a" * 200_000,
        b"MPI_Barrier:1.000:1,0,2:2.000",
        b"",
        b"\n" * 70_000,
    ]
    for text in cases:
        for block in (1 << 20, 4096):
            data = members(zipper, text, block)
            assert b"".join(decode_members(data)) == text
    noise = members(zipper, cases[0], 1 << 20)
    assert len(noise) < len(cases[0]) * 1.001 + 128  # stored, not inflated


def test_crc_by_tables_and_by_carry_less_multiply(zipper):
    """CPUs without carry-less multiplication compute the CRC with tables: the same members,
    for every length and alignment of the text."""
    rng = random.Random(11)
    text = trace_like(rng, 3000)
    tables = {**os.environ, "LATITUDE_TRACE_NO_CLMUL": "1"}
    for n in [*range(0, 200), 4095, 4096, 4097, len(text)]:
        sample = text[rng.randrange(16) :][:n]
        assert members(zipper, sample, 1 << 20, tables) == members(zipper, sample, 1 << 20)
        assert gzip.decompress(members(zipper, sample, 1 << 20)) == sample


def test_a_real_trace_through_gunzip(zipper, ompi_apps, tmp_path):
    """The plain trace of a real run (the polling program), in 256 KiB buffers, through the
    command-line gunzip, and at least 5x smaller."""
    gunzip = shutil.which("gunzip")
    if not gunzip:
        pytest.skip("no gunzip")
    trace(tmp_path / "t", [*ompi(2), ompi_apps / "polls", "--iters", "2000", "--work", "100"], opts=("--plain",))
    files = sorted((tmp_path / "t").glob("*.txt"))
    assert len(files) == 2
    for f in files:
        text = f.read_bytes()
        gz = tmp_path / (f.name + ".gz")
        gz.write_bytes(members(zipper, text, 256 << 10))
        assert subprocess.run([gunzip, "-c", gz], capture_output=True, check=True).stdout == text
        assert gz.stat().st_size * 5 < len(text)
