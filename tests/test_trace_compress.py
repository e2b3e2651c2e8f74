"""Compressed traces (`latitude trace`'s default; `--plain` writes text): the tracer deflates each
rank's records into `pmpi-trace-rank-N.txt.gz` when the run ends, never during it (its text
waits in a mapped `.raw` sibling); every command reads them as they are, `gunzip` gives the
plain liballprof files (the same text a Schedgen user reads), and a rank killed outright keeps
every record it wrote."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess

import pytest
import tracecheck
from conftest import run_cli
from latitude import tracer
from test_trace_golden import normalize
from tracetools import HAVE_MPICH, assert_counts_match, deterministic, mpich, ompi, run, trace


def _gunzip_dir(src, dest):
    dest.mkdir()
    for f in sorted(src.glob("*.txt.gz")):
        (dest / f.name[: -len(".gz")]).write_bytes(gzip.decompress(f.read_bytes()))


def test_compressed_trace_reads_as_the_plain_one(ompi_apps, tmp_path):
    """The polling program traced compressed: smaller, a whole gzip file per rank, every call
    accounted for, and `schedule` gives the same graph from the .gz files as from their
    gunzipped text."""
    launch = [*ompi(2), ompi_apps / "polls", "--iters", "400", "--work", "50", "--report-calls"]
    plain = run(launch)
    gz = tmp_path / "gz"
    traced = trace(gz, launch)  # compressed: the default
    assert deterministic(traced.stdout) == deterministic(plain.stdout)
    files = sorted(p.name for p in gz.iterdir())
    assert files == ["pmpi-trace-rank-0.txt.gz", "pmpi-trace-rank-1.txt.gz"]
    assert_counts_match(gz, traced.stdout, 2)  # tracecheck parses the decompressed text
    text = tmp_path / "text"
    _gunzip_dir(gz, text)
    assert sum(f.stat().st_size for f in text.iterdir()) > 3 * sum(f.stat().st_size for f in gz.iterdir())
    a = json.loads(run_cli("schedule", gz, "--json").stdout)
    b = json.loads(run_cli("schedule", text, "--json").stdout)
    assert a["graph"] == b["graph"] and a["graph"]["messages"] > 2 * 400
    # the summary `latitude trace` prints counts the compressed bytes and every call
    s, t = tracer.summarize(gz), tracer.summarize(text)
    assert (s.calls, s.folded_polls, s.endings) == (t.calls, t.folded_polls, t.endings)
    assert s.bytes == sum(f.stat().st_size for f in gz.iterdir()) < t.bytes
    assert s.bytes < 200 * a["graph"]["messages"] < t.bytes  # the target, which plain text misses
    assert tracer.traced_runtime_ns(gz) == tracer.traced_runtime_ns(text)
    # the rank-0 file names the trace too, and the cached graph sees the compressed files
    one = json.loads(run_cli("predict", gz / "pmpi-trace-rank-0.txt.gz", "--json").stdout)
    assert one["runtime_ns"] > 0


def test_default_is_compressed_plain_on_request(ompi_apps, tmp_path):
    """`latitude trace` writes `.txt.gz` unless --plain is given: whole gzip files (Python's
    gzip and the command-line gunzip agree) whose text is a plain run's, call for call, for a
    program whose call sequence does not depend on timing (compared as the golden traces are:
    timestamps, addresses and host lines normalised)."""
    launch = [*ompi(3), ompi_apps / "persistent", "--n", "2000", "--iters", "5", "--mode", "startall"]
    trace(tmp_path / "gz", launch)
    trace(tmp_path / "text", launch, opts=("--plain",))
    gz, text = tracer.trace_files(tmp_path / "gz"), tracer.trace_files(tmp_path / "text")
    assert [f.name for f in gz] == [f"pmpi-trace-rank-{r}.txt.gz" for r in range(3)]
    assert [f.name for f in text] == [f"pmpi-trace-rank-{r}.txt" for r in range(3)]
    assert all(tracer.is_compressed(f) for f in gz) and not any(tracer.is_compressed(f) for f in text)
    gunzip = shutil.which("gunzip")
    for z, t in zip(gz, text):
        unzipped = gzip.decompress(z.read_bytes()).decode()
        if gunzip:
            assert subprocess.run([gunzip, "-c", z], capture_output=True, check=True).stdout.decode() == unzipped
        assert normalize(unzipped) == normalize(t.read_text())
        assert unzipped.startswith("# Latitude PMPI Tracer 1 Output File (liballprof v1 format)\n")
        assert unzipped.endswith("#@ end finalize\n") and z.stat().st_size < t.stat().st_size
    for d in ("gz", "text"):
        _, errors = tracecheck.check([str(tmp_path / d)])
        assert not errors, errors[:10]


def test_nothing_is_deflated_while_the_run_lasts(ompi_apps, tmp_path):
    """While the program runs, each rank's records go to its mapped `.raw` file and the
    `.txt.gz` stays empty: deflating a buffer inside the MPI call that filled it (~2 ms per MiB)
    made NetPIPE's traced runs 28-32 % slower than their graphs. At the end the `.raw` files
    are gone and the `.gz` files hold the whole text, in members no larger than the buffer."""
    import time

    out = tmp_path / "t"
    out.mkdir()
    app = [ompi_apps / "halo2d", "--nx", "64", "--ny", "64", "--iters", "3000"]
    cmd = [*tracer_cli(), "trace", "--buffer", "64KiB", "-o", out, "--", *ompi(2), *app]
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = []
    while proc.poll() is None and len(seen) < 20:
        for raw in out.glob(".latitude-trace-*/pmpi-trace-rank-*.txt.gz.raw"):
            gz = raw.with_name(raw.name[: -len(".raw")])
            try:
                size = gz.stat().st_size if gz.exists() else 0
                text = raw.read_bytes().rstrip(b"\0")
            except FileNotFoundError:  # the run ended between the glob and the read
                continue
            # well into the run (many buffers written) and not ended yet ("#@ end" not written)
            if len(text) > 256 * 1024 and b"#@ end " not in text[-256:]:
                seen.append(size)
        time.sleep(0.005)
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    assert seen and set(seen) == {0}, seen
    assert not list(out.rglob("*.raw"))
    for f in sorted(out.glob("*.txt.gz")):
        data = f.read_bytes()
        assert data.count(b"\x1f\x8b\x08\x00") > 4  # members of the 64 KiB buffer
        text = gzip.decompress(data)
        assert text.endswith(b"#@ end finalize\n") and text.count(b"\nMPI_Sendrecv") + text.count(b"\nMPI_Isend") > 3000


def test_a_killed_compressed_rank_keeps_every_record_it_wrote(tmp_path):
    """A rank killed outright leaves its `.raw` text (zeros after the data, maybe an unfinished
    record) beside an empty `.gz`: repair() closes the text with "#@ end killed", compresses it
    into the rank file and removes the `.raw`."""
    f = tmp_path / "pmpi-trace-rank-0.txt.gz"
    f.write_bytes(b"")
    text = b"#@ latitude-trace 1\n\nMPI_Init:-:1:2:5.000\n" + b"MPI_Barrier:6.000:1,0,2:7.000\n" * 50
    (tmp_path / (f.name + ".raw")).write_bytes(text + b"MPI_Bar" + b"\0" * 4096)
    assert tracer.repair(f)
    assert gzip.decompress(f.read_bytes()) == text + b"#@ end killed\n"
    assert not (tmp_path / (f.name + ".raw")).exists() and not tracer.repair(f)


def tracer_cli():
    import sys

    return [sys.executable, "-m", "latitude"]


def test_repair_of_a_killed_compressed_rank(tmp_path):
    """A killed rank's file is the whole gzip members of the buffers it flushed, perhaps with
    the start of one more (killed while writing it): it reads up to where its data ends, and
    repair() keeps its complete lines, drops the unfinished one and closes the file with "#@ end
    killed", as a whole gzip file."""
    first = b"#@ latitude-trace 1\n\nMPI_Init:-:1:2:5.000\n"
    second = b"MPI_Barrier:6.000:1,0,2:7.000\n" * 50 + b"MPI_Bar"
    cut = gzip.compress(second)[:-30]  # the member being written when the kill came
    f = tmp_path / "pmpi-trace-rank-0.txt.gz"
    for tail in (b"", cut):
        f.write_bytes(gzip.compress(first) + tail)
        with tracer.open_trace(f) as fh:
            got = fh.read()
        assert got.startswith(first) and (first + second).startswith(got)
        assert tracer.repair(f)
        assert gzip.decompress(f.read_bytes()) == got[: got.rfind(b"\n") + 1] + b"#@ end killed\n"
        assert not tracer.repair(f)  # complete now


@pytest.mark.skipif(not HAVE_MPICH, reason="MPICH not installed")
def test_mpich_abort_compressed(mpich_apps, tmp_path):
    """Hydra kills the other rank with SIGKILL: its compressed file holds its header and the
    blocks flushed before (a 64 KiB buffer flushes often), and `latitude trace` closes it."""
    launch = [*mpich(2), mpich_apps / "faults", "--mode", "abort", "--after", "3"]
    trace(tmp_path, launch, check=False, opts=("--compress", "--buffer", "64KiB"))
    traces, errors = tracecheck.check([str(tmp_path)])
    assert not errors, errors[:10]
    ends = sorted(t.end for t in traces)
    assert ends[0] == "abort 3" and ends[1] in ("killed", "signal 15", "signal 9"), ends
    assert all(t.header["latitude-trace"] == "1" for t in traces)


def test_open_trace_reads_gzip_members_in_chunks(tmp_path):
    """A file of several gzip members (`cat a.gz b.gz`), larger than one read, reads whole; the
    progress count is the compressed size."""
    text = b"".join(b"MPI_Barrier:%d.000:1,0,2:%d.500\n" % (i, i) for i in range(100_000))
    f = tmp_path / "pmpi-trace-rank-0.txt.gz"
    f.write_bytes(gzip.compress(text[:1_000_001]) + gzip.compress(text[1_000_001:]))
    with tracer.open_trace(f) as fh:
        assert fh.read() == text
        assert fh.raw.consumed == f.stat().st_size
    plain = tmp_path / "plain.txt"
    plain.write_bytes(text)
    with tracer.open_trace(plain) as fh:  # not compressed: the file itself
        assert fh.read() == text
