"""Runs that end badly still leave complete, parseable trace files: MPI_Abort mid-run,
SIGTERM (sent by the process itself or by whoever kills the launcher), and exit without
MPI_Finalize. Every file must pass the format checker and say how it ended."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import tracecheck
from tracetools import env, ompi, trace


def endings(outdir):
    traces, errors = tracecheck.check([str(outdir)])
    assert not errors, "\n".join(errors[:20])
    return {int(t.header["world"].split()[0].split("=")[1]): (t.end, t.counts()) for t in traces}


def test_abort_mid_run(ompi_apps, tmp_path):
    proc = trace(
        tmp_path, [*ompi(3), ompi_apps / "faults", "--mode", "abort", "--after", "4", "--rank", "1"], check=False
    )
    assert proc.returncode != 0
    ends = endings(tmp_path)
    assert sorted(ends) == [0, 1, 2]
    assert ends[1][0] == "abort 3"
    assert ends[1][1]["MPI_Abort"] == 1 and ends[1][1]["MPI_Allreduce"] == 4
    for r in (0, 2):  # blocked in the 5th allreduce, then killed by mpirun
        assert ends[r][0].startswith("signal "), ends[r][0]
        assert ends[r][1]["MPI_Allreduce"] >= 4
    assert "ended by abort" in proc.stderr


# how the records reach the file: a mapped window or a heap buffer written with pwrite (--plain),
# or deflated into gzip members (latitude trace's default)
BUFFERS = {"mmap": ("1", ("--plain",)), "heap": ("0", ("--plain",)), "gz": ("1", ())}


@pytest.mark.parametrize("buffer", BUFFERS)
def test_sigterm_from_the_process(ompi_apps, tmp_path, monkeypatch, buffer):
    mmap, opts = BUFFERS[buffer]
    monkeypatch.setenv("LATITUDE_TRACE_MMAP", mmap)
    proc = trace(
        tmp_path,
        [
            *ompi(2),
            "-x",
            "LATITUDE_TRACE_MMAP",
            ompi_apps / "faults",
            "--mode",
            "sigterm",
            "--after",
            "3",
            "--rank",
            "0",
        ],
        check=False,
        opts=opts,
    )
    assert proc.returncode != 0
    ends = endings(tmp_path)
    assert ends[0][0] == f"signal {int(signal.SIGTERM)}"
    assert ends[0][1]["MPI_Sendrecv"] == 3 and ends[0][1]["MPI_Allreduce"] == 3


def test_sigterm_to_the_launcher(ompi_apps, tmp_path):
    """The way a batch system ends a job: SIGTERM to mpirun, which forwards it to the ranks."""
    cmd = [
        sys.executable,
        "-m",
        "latitude",
        "trace",
        "-o",
        str(tmp_path),
        "--",
        *map(str, ompi(2)),
        str(ompi_apps / "faults"),
        "--mode",
        "hang",
        "--after",
        "2",
    ]
    proc = subprocess.Popen(
        cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.time() + 60
        # the ranks' files appear in the staging directory (compressed: .txt.gz)
        while time.time() < deadline and len(list(tmp_path.glob(".latitude-trace-*/*.txt*"))) < 2:
            time.sleep(0.2)
        time.sleep(1.0)  # some iterations of the hanging loop
        launcher = _child_named(proc.pid, ("mpirun", "orterun"))
        assert launcher, "mpirun not found among the children of latitude trace"
        os.kill(launcher, signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # never leave the hanging ranks behind
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    ends = endings(tmp_path)
    assert sorted(ends) == [0, 1]
    for end, counts in ends.values():
        assert end.startswith("signal "), end
        assert counts["MPI_Allreduce"] > 2
    assert "ended by signal" in err


def test_exit_without_finalize(ompi_apps, tmp_path):
    trace(tmp_path, [*ompi(2), ompi_apps / "faults", "--mode", "exit", "--after", "2"], check=False)
    ends = endings(tmp_path)
    assert [e for e, _ in ends.values()] == ["exit-without-finalize"] * 2
    assert all(c["MPI_Allreduce"] == 2 and c["MPI_Finalize"] == 0 for _, c in ends.values())


@pytest.mark.parametrize("buffer", BUFFERS)
def test_small_buffer_many_flushes(ompi_apps, tmp_path, monkeypatch, buffer):
    """A 64 KiB buffer forces hundreds of flushes (window moves with the mapped file, writes
    with the heap buffer, gzip members); the file must still be exact."""
    mmap, opts = BUFFERS[buffer]
    monkeypatch.setenv("LATITUDE_TRACE_MMAP", mmap)
    proc = trace(
        tmp_path,
        [
            *ompi(2),
            "-x",
            "LATITUDE_TRACE_MMAP",
            ompi_apps / "halo2d",
            "--nx",
            "64",
            "--ny",
            "64",
            "--iters",
            "400",
            "--report-calls",
        ],
        opts=("--buffer", "64KiB", *opts),
    )
    from tracetools import assert_counts_match

    assert_counts_match(tmp_path, proc.stdout, 2)
    files = list(tmp_path.glob("*.txt*"))
    assert len(files) == 2
    if buffer == "gz":  # many members, each a whole gzip file
        assert all(f.read_bytes().count(b"\x1f\x8b\x08\x00") > 4 for f in files)
    else:
        assert all(f.stat().st_size > 4 * 65536 for f in files)


def _child_named(pid: int, names: tuple) -> int | None:
    """A descendant process of pid whose command name starts with one of `names`."""
    for _ in range(50):
        out = subprocess.run(["ps", "-eo", "pid=,ppid=,comm="], capture_output=True, text=True).stdout
        procs = [line.split(None, 2) for line in out.splitlines()]
        kids, frontier = [], {pid}
        while frontier:
            nxt = {int(p) for p, pp, _ in procs if int(pp) in frontier}
            kids += [(int(p), c) for p, pp, c in procs if int(pp) in frontier]
            frontier = nxt
        for p, comm in kids:
            if comm.strip().startswith(names):
                return p
        time.sleep(0.1)
    return None
