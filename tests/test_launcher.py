"""The shared launcher under failing, hanging and interrupted runs (latitude.launcher): the
program's own exit status and stderr tail come through, a hanging run is stopped at its
time limit, SIGTERM/SIGHUP stop the run with every rank and remove temporary directories,
`latitude trace -o DIR` never loses a trace or a file it did not write, and build paths
with spaces or `$(...)` are never executed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from latitude import launcher, tracer
from tracetools import HAVE_OMPI, env, ompi, trace

pytestmark = pytest.mark.skipif(not HAVE_OMPI, reason="needs Open MPI")


def latitude(*args, check=False, extra_env=None, timeout=120):
    e = env()
    e.update(extra_env or {})
    cmd = [sys.executable, "-m", "latitude", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout, check=check)


def processes_running(marker: str) -> list[str]:
    """Command lines of live processes that contain `marker` (zombies excluded)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state != "Z" and int(pid) != os.getpid():
            out.append(cmd)
    return out


def gone(marker: str, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while processes_running(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


# ---- exit status and stderr ----
def test_inject_passes_the_programs_status_through(ompi_apps):
    out = latitude(
        "inject", "--delta-L", "1us", "--", *ompi(2), ompi_apps / "faults", "--mode", "status", "--after", "3"
    )
    assert out.returncode == 7, out.stderr
    assert "runtime" in out.stderr and "exited with status 7" in out.stderr


def test_inject_segfault_shows_the_status_and_stderr_tail(ompi_apps):
    out = latitude("inject", "--delta-L", "0", "--", *ompi(2), ompi_apps / "faults", "--mode", "segv", "--after", "2")
    assert out.returncode == 139, out.stderr  # Open MPI's mpirun reports a rank killed by SIGSEGV so
    last = out.stderr[out.stderr.rindex("latitude: ") :]
    assert "exited with status 139 (a process killed by SIGSEGV?)" in last
    assert "the last lines of its stderr" in last and "signal 11" in last
    assert "built with" not in out.stderr and "Traceback" not in out.stderr


def test_trace_failure_without_traces_is_the_programs(tmp_path):
    out = latitude("trace", "-o", tmp_path / "t", "--", *ompi(1), "sh", "-c", "echo broken >&2; exit 5")
    assert out.returncode == 5, out.stderr
    assert "exited with status 5" in out.stderr and "  broken" in out.stderr and "built with" not in out.stderr


def test_status_text():
    assert launcher.status_text(-9) == "was killed by signal 9 (SIGKILL)"
    assert launcher.status_text(3) == "exited with status 3"
    assert launcher.exit_status(-15) == 143 and launcher.exit_status(2) == 2


# ---- time limits and signals ----
def test_timeout_stops_every_rank(ompi_apps):
    marker = str(ompi_apps / "faults")
    t0 = time.monotonic()
    out = latitude(
        "inject", "--delta-L", "0", "--timeout", "3s", "--", *ompi(2), marker, "--mode", "hang", "--after", "1"
    )
    assert out.returncode == 1 and time.monotonic() - t0 < 60, out.stderr
    assert "did not finish within 3 s and was stopped (raise the limit with --timeout)" in out.stderr
    assert gone(marker), processes_running(marker)


def test_bad_timeout_is_one_line(ompi_apps):
    out = latitude("inject", "--delta-L", "0", "--timeout", "soon", "--", *ompi(2), ompi_apps / "faults")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and out.stderr.startswith("latitude: --timeout")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("command", ["inject", "trace"])
def test_signal_stops_the_run_and_cleans_up(ompi_apps, tmp_path, command, sig):
    marker = str(ompi_apps / "faults")
    tmpdir, outdir = tmp_path / "tmp", tmp_path / "out"
    tmpdir.mkdir()
    opts = ["--delta-L", "0"] if command == "inject" else ["-o", outdir]
    cmd = [sys.executable, "-m", "latitude", command, *opts, "--", *ompi(2), marker, "--mode", "hang", "--after", "1"]
    e = env()
    e["TMPDIR"] = str(tmpdir)
    proc = subprocess.Popen([str(c) for c in cmd], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(processes_running(marker)) < 3 and time.monotonic() < deadline:  # latitude, mpirun, ranks
        time.sleep(0.2)
    time.sleep(1)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"latitude: terminated by {signal.Signals(sig).name}" in err
    assert gone(marker), processes_running(marker)
    assert list(tmpdir.iterdir()) == []  # the injector's report directory
    if command == "trace":
        assert not [p for p in outdir.iterdir() if p.name.startswith(".latitude-trace-")]


# ---- trace -o DIR keeps what the user has ----
def test_trace_directory_is_never_lost(ompi_apps, tmp_path):
    pingpong = [*ompi(2), ompi_apps / "pingpong", "--sizes", "8", "--iters", "2"]
    backup = tmp_path / "pmpi-trace-rank-0-backup.txt"
    backup.write_text("mine")
    trace(tmp_path, pingpong)
    first = {p.name: p.read_bytes() for p in tracer.trace_files(tmp_path)}
    assert sorted(first) == ["pmpi-trace-rank-0.txt.gz", "pmpi-trace-rank-1.txt.gz"]
    # A second trace into the same directory needs --force, and touches nothing without it.
    out = trace(tmp_path, pingpong, check=False)
    assert out.returncode == 2 and "already holds a trace" in out.stderr and out.stderr.count("\n") == 1
    # A failed run with --force keeps the previous trace; its own goes aside.
    out = trace(
        tmp_path, [*ompi(2), ompi_apps / "faults", "--mode", "abort", "--after", "2"], check=False, opts=("--force",)
    )
    assert out.returncode != 0
    assert {p.name: p.read_bytes() for p in tracer.trace_files(tmp_path)} == first
    (aside,) = tmp_path.glob("failed-run-*")
    assert len(tracer.trace_files(aside)) == 2
    # A good run with --force replaces it (fewer ranks: the old rank 1 goes too).
    trace(
        tmp_path, [*ompi(1), ompi_apps / "faults", "--mode", "status", "--after", "1", "--rank", "5"], opts=("--force",)
    )
    assert [p.name for p in tracer.trace_files(tmp_path)] == ["pmpi-trace-rank-0.txt.gz"]
    assert backup.read_text() == "mine" and len(tracer.trace_files(aside)) == 2
    assert not list(tmp_path.glob(".latitude-trace-*"))


def test_force_replaces_a_trace_of_the_other_format(ompi_apps, tmp_path):
    """A plain trace replaced by a compressed one (the default) and back: each rank ends with
    one file, of the new run's format, never `pmpi-trace-rank-0.txt` beside `.txt.gz`; a failed
    run of the other format leaves the previous trace as it was."""
    pingpong = [*ompi(2), ompi_apps / "pingpong", "--sizes", "8", "--iters", "2"]
    trace(tmp_path, pingpong, opts=("--plain",))
    plain = {p.name: p.read_bytes() for p in tracer.trace_files(tmp_path)}
    assert sorted(plain) == ["pmpi-trace-rank-0.txt", "pmpi-trace-rank-1.txt"]
    assert not any(tracer.is_compressed(tmp_path / n) for n in plain)
    out = trace(
        tmp_path, [*ompi(2), ompi_apps / "faults", "--mode", "abort", "--after", "2"], check=False, opts=("--force",)
    )
    assert out.returncode != 0
    assert {p.name: p.read_bytes() for p in tracer.trace_files(tmp_path)} == plain
    (aside,) = tmp_path.glob("failed-run-*")
    assert all(p.name.endswith(".txt.gz") for p in tracer.trace_files(aside))
    trace(tmp_path, pingpong, opts=("--force",))
    names = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert names == ["pmpi-trace-rank-0.txt.gz", "pmpi-trace-rank-1.txt.gz"]
    assert all(tracer.is_compressed(tmp_path / n) for n in names)
    trace(tmp_path, [*ompi(3), ompi_apps / "pingpong", "--sizes", "8", "--iters", "2"], opts=("--force", "--plain"))
    names = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert names == [f"pmpi-trace-rank-{r}.txt" for r in range(3)]
    assert not list(tmp_path.glob(".latitude-trace-*"))


def test_trace_into_a_file_or_uncreatable_directory(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    for where in (f, f / "sub"):
        out = latitude("trace", "-o", where, "--", *ompi(2), "true")
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and out.stderr.startswith("latitude: -o"), out.stderr


# ---- build paths ----
def test_build_paths_with_spaces_and_substitutions_are_not_executed(ompi_apps, tmp_path):
    canary = tmp_path / "executed"
    evil = f"$(touch {canary}) `touch {canary}`"
    mpicc_dir = tmp_path / f"my mpi {evil}"
    mpicc_dir.mkdir(parents=True)
    (mpicc_dir / "mpicc").symlink_to(tracer.find_mpicc(ompi(2)))
    cache = tmp_path / f"cache$(touch${{IFS}}{canary})`touch${{IFS}}{canary}`"
    out = latitude(
        "trace",
        "-o",
        tmp_path / "t",
        "--mpicc",
        mpicc_dir / "mpicc",
        "--",
        *ompi(2),
        ompi_apps / "pingpong",
        "--sizes",
        "8",
        "--iters",
        "2",
        extra_env={"LATITUDE_CACHE_DIR": str(cache)},
    )
    assert out.returncode == 0, out.stderr
    assert len(tracer.trace_files(tmp_path / "t")) == 2
    assert not canary.exists()
    # LD_PRELOAD cannot carry a path with spaces: refused before building, in one line.
    out = latitude(
        "inject", "--delta-L", "0", "--", *ompi(2), "true", extra_env={"LATITUDE_CACHE_DIR": str(tmp_path / "a b")}
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "LATITUDE_CACHE_DIR" in out.stderr
    assert not canary.exists()


def test_validate_run_limit_scales_with_the_traced_run():
    from latitude.validate import Point, run_timeout

    points = [Point(0, 1e9, 0), Point(1e5, 3e9, 100)]
    assert run_timeout(2.0, points) == 60 + 10 * (2.0 + 2.0)


def test_run_keeps_the_tail_and_decodes_any_bytes(tmp_path):
    r = launcher.run(
        ["sh", "-c", "printf 'a\\377\\n'; i=0; while [ $i -lt 30 ]; do echo err$i >&2; i=$((i+1)); done; exit 3"],
        dict(os.environ),
    )
    assert r.returncode == 3 and r.stdout == "a\ufffd\n"
    assert r.tail == [f"err{i}" for i in range(18, 30)]
    assert r.failure("x").startswith("x exited with status 3; the last lines of its stderr:\n  err18")
