"""Helpers and fixtures for the tracer tests (tests/test_trace*.py): building the apps,
running them with and without `latitude trace`, and reading their call reports."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import tracecheck

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "apps"
PYDIR = ROOT / "python"
HAVE_OMPI = shutil.which("mpicc.openmpi") is not None or (
    shutil.which("mpicc") is not None
    and shutil.which("mpirun") is not None
    and "open" in subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.lower()
)
HAVE_MPICH = shutil.which("mpicc.mpich") is not None and shutil.which("mpiexec.mpich") is not None
OMPI_CC = shutil.which("mpicc.openmpi") or "mpicc"
OMPI_RUN = shutil.which("mpirun.openmpi") or "mpirun"
TIMEOUT = 120


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(PYDIR) + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def ompi(np: int) -> list[str]:
    return [OMPI_RUN, "--oversubscribe", "-np", str(np)]


def mpich(np: int) -> list[str]:
    return ["mpiexec.mpich", "-np", str(np)]


def build_apps(dest: Path, mpicc: str, fortran: str | None = None) -> Path:
    cmd = ["make", "-s", "-C", str(APPS), f"MPICC={mpicc}", f"BIN={dest}"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    if fortran:
        subprocess.run(cmd + [f"MPIFC={fortran}", "fortran"], check=True, capture_output=True, text=True)
    return dest


def run(cmd: list[str], timeout: float = TIMEOUT, check: bool = True, cwd=None) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env(), timeout=timeout, cwd=cwd)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def trace(
    outdir: Path, launch: list, timeout: float = TIMEOUT, check: bool = True, opts: tuple = ()
) -> subprocess.CompletedProcess:
    """`latitude trace -o outdir [opts] -- launch...`"""
    return run(
        [sys.executable, "-m", "latitude", "trace", "-o", outdir, *opts, "--", *launch], timeout=timeout, check=check
    )


def canonical_goal(graph, path: Path) -> str:
    """The graph's GOAL text with tags renumbered in order of appearance (two readers of one
    run may number tags differently)."""
    graph.write_goal(str(path))
    names: dict[str, str] = {}
    return re.sub(r"tag (\d+)", lambda m: "tag " + names.setdefault(m.group(1), str(len(names))), path.read_text())


def assert_same_graph(g1, g2, tmp: Path) -> None:
    """Two descriptions of one run give the same graph: messages, bytes, collectives, GOAL text
    (up to tag names) and prediction."""
    assert (g1.info["messages"], g1.info["bytes"]) == (g2.info["messages"], g2.info["bytes"])
    assert g1.report.stats["collectives"] == g2.report.stats["collectives"]
    assert canonical_goal(g1, tmp / "a.goal") == canonical_goal(g2, tmp / "b.goal")
    p1, p2 = g1.predict(L="3us", o="1us", G="0.1ns"), g2.predict(L="3us", o="1us", G="0.1ns")
    assert p1.runtime_ns == p2.runtime_ns and p1.lambda_ == p2.lambda_


def reported_calls(stdout: str) -> dict[int, Counter]:
    """The apps' --report-calls lines: {rank: Counter(name -> calls)}."""
    out = {}
    for m in re.finditer(r"^calls rank=(\d+)(.*)$", stdout, re.M):
        out[int(m.group(1))] = Counter({k: int(v) for k, v in re.findall(r"(MPI_\w+)=(\d+)", m.group(2))})
    return out


def traced_calls(outdir: Path) -> tuple[dict[int, Counter], list[str]]:
    """Call counts per rank from the trace files, and the format checker's errors."""
    traces, errors = tracecheck.check([str(outdir)])
    counts = {}
    for t in traces:
        rank = int(re.search(r"rank=(\d+)", t.header["world"]).group(1))
        counts[rank] = t.counts()
    return counts, errors


def deterministic(stdout: str) -> list[str]:
    """stdout without the "calls" report and without timing columns (pingpong's CSV)."""
    lines = []
    for line in stdout.splitlines():
        if line.startswith("calls rank="):
            continue
        if re.fullmatch(r"\d+,\d+,[\d.]+", line):
            line = line.rsplit(",", 1)[0]
        lines.append(line)
    return lines


def assert_counts_match(outdir: Path, stdout: str, nranks: int) -> dict[int, Counter]:
    reported = reported_calls(stdout)
    traced, errors = traced_calls(outdir)
    assert not errors, "format errors:\n" + "\n".join(errors[:20])
    assert sorted(traced) == list(range(nranks))
    assert sorted(reported) == list(range(nranks)), stdout
    for r in range(nranks):
        assert traced[r] == reported[r], (
            f"rank {r}: trace has {dict(traced[r] - reported[r])} more and "
            f"{dict(reported[r] - traced[r])} fewer calls than the app reports"
        )
    return traced


@pytest.fixture(scope="session")
def tracer_cache(tmp_path_factory):
    """Tracers are built from the current sources into a cache private to this session."""
    d = tmp_path_factory.mktemp("tracer-cache")
    old = os.environ.get("LATITUDE_CACHE_DIR")
    os.environ["LATITUDE_CACHE_DIR"] = str(d)
    yield d
    if old is None:
        os.environ.pop("LATITUDE_CACHE_DIR", None)
    else:
        os.environ["LATITUDE_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def ompi_apps(tmp_path_factory, tracer_cache):
    if not HAVE_OMPI:
        pytest.skip("Open MPI not installed")
    fc = shutil.which("mpifort.openmpi") or shutil.which("mpifort")
    return build_apps(tmp_path_factory.mktemp("apps-ompi"), OMPI_CC, fc)


@pytest.fixture(scope="session")
def mpich_apps(tmp_path_factory, tracer_cache):
    if not HAVE_MPICH:
        pytest.skip("MPICH not installed (apt-get install mpich libmpich-dev)")
    return build_apps(tmp_path_factory.mktemp("apps-mpich"), "mpicc.mpich", shutil.which("mpifort.mpich"))


def build_c_driver(d: Path, name: str, driver: str, sources: list[str], sanitize: bool = False) -> Path:
    """Compile a small C `driver` against the tracer sources named (e.g. "lt_num.c") into d/name;
    with `sanitize`, under AddressSanitizer where the compiler has it (a write past a buffer
    then fails the run). Skips the test where there is no C compiler."""
    from latitude import tracer

    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    (d / f"{name}.c").write_text(driver)
    src = tracer.tracer_sources()
    exe = d / name
    flags = ["-O2", "-Wall", "-Wextra", "-Werror", f"-I{src}"]
    files = ["-o", exe, d / f"{name}.c", *(src / s for s in sources)]
    if not sanitize or subprocess.run([cc, *flags, "-fsanitize=address", *files], capture_output=True).returncode != 0:
        subprocess.run([cc, *flags, *files], check=True)
    return exe
