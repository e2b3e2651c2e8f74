"""Traced motif apps end to end: `latitude trace … && latitude schedule … && latitude predict …`.

Needs the tracer (`latitude trace`), Open MPI and the apps in apps/; skipped otherwise.
Every app's trace must convert and price; for compute-dominated runs the prediction, with
L, o, G fitted to apps/pingpong on this machine, must be within 10 % of the traced run's
own runtime (MPI_Init to MPI_Finalize, the window the graph covers).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pytest
from conftest import ROOT, cli_env, run_cli
from latitude import tracer

APPS = os.path.join(ROOT, "apps")
MPIRUN = shutil.which("mpirun")


def _have_tracer() -> bool:
    if not (MPIRUN and os.path.isfile(os.path.join(APPS, "Makefile"))):
        return False
    proc = run_cli("trace", "--help", check=False)
    return proc.returncode == 0


pytestmark = pytest.mark.skipif(not _have_tracer(), reason="needs `latitude trace`, Open MPI and apps/")

MPI = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np"]


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("apps")
    subprocess.run(["make", "-s", "-C", APPS, f"BIN={out}"], check=True, capture_output=True)
    return out


def _trace(tmp, bin_dir, name, ranks, args):
    d = tmp / f"trace-{name}"
    d.parent.mkdir(parents=True, exist_ok=True)
    run_cli("trace", "-o", d, "--", *MPI, str(ranks), bin_dir / name, *args, timeout=600)
    return d


def _idle_fraction(seconds: float = 2.0) -> float:
    """Share of CPU time idle over `seconds` (from /proc/stat; 1.0 where unavailable)."""

    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + (v[4] if len(v) > 4 else 0)

    try:
        t1, i1 = sample()
        time.sleep(seconds)
        t2, i2 = sample()
    except OSError:
        return 1.0
    return (i2 - i1) / max(t2 - t1, 1)


def _wait_until_idle(timeout: float = 30.0, need: float = 0.85) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if _idle_fraction() >= need:
            return True
    return False


def _measured_ns(trace_dir) -> float:
    """Longest MPI_Init end → MPI_Finalize start over the ranks (µs in the trace)."""
    best = 0.0
    files = tracer.trace_files(trace_dir)  # compressed (latitude trace's default) or plain
    assert files, f"no rank files in {trace_dir}"
    for f in files:
        start = end = None
        with tracer.open_trace(f) as fh:
            for line in fh:
                if line.startswith(b"MPI_Init"):
                    start = float(line.rstrip(b"\n").split(b":")[-1])
                elif line.startswith(b"MPI_Finalize"):
                    end = float(line.split(b":")[1])
        best = max(best, end - start)
    return best * 1e3


@pytest.fixture(scope="module")
def machine(bin_dir):
    """LogGPS parameters from apps/pingpong (2 ranks): L = small-message half round trip
    (o is folded into L: a ping-pong cannot separate them), G = slope of the half round trip
    over the rendezvous sizes (least squares), S = Open MPI's shared-memory eager limit."""
    sizes = [8, 4096, 16384, 65536, 131072, 262144]
    _wait_until_idle()
    out = subprocess.run(
        [*MPI, "2", bin_dir / "pingpong", "--sizes", ",".join(map(str, sizes)), "--iters", "200"],
        capture_output=True,
        text=True,
        check=True,
        env=cli_env(),
    ).stdout
    t = {
        int(s): float(h) * 1e3
        for s, _, h in (line.split(",") for line in out.splitlines() if line[:1].isdigit() and line.count(",") == 2)
    }
    big = [s for s in sizes if s > 4096]
    mx, my = sum(big) / len(big), sum(t[s] for s in big) / len(big)
    g = sum((s - mx) * (t[s] - my) for s in big) / sum((s - mx) ** 2 for s in big)
    return ["-L", f"{t[8]}ns", "-o", "0", "-G", f"{max(g, 0.0)}ns", "-S", "4096"]


def test_callmix_every_call_converts(tmp_path, bin_dir):
    d = _trace(tmp_path, bin_dir, "callmix", 4, ["--rounds", "1"])
    stats = json.loads(run_cli("schedule", d, "--json").stdout)
    assert stats["extended"] and stats["unresolved_wildcards"] == 0
    kinds = {k.split()[0] for k in stats["collectives"]}
    assert kinds >= {
        "barrier",
        "bcast",
        "reduce",
        "allreduce",
        "gather",
        "gatherv",
        "scatter",
        "scatterv",
        "allgather",
        "allgatherv",
        "alltoall",
        "alltoallv",
        "reduce_scatter",
        "scan",
        "exscan",
    }
    assert set(stats["unmodelled"]) <= {
        "MPI_Comm_dup",
        "MPI_Comm_idup",
        "MPI_Comm_split",
        "MPI_Cart_create",
        "MPI_Cart_sub",
    }
    out = json.loads(run_cli("predict", d, "--json").stdout)
    assert out["runtime_ns"] > 0


@pytest.mark.parametrize(
    "name, ranks, args",
    [
        ("halo2d", 2, ["--nx", "2048", "--ny", "2048", "--iters", "40"]),
        ("sweep3d", 2, ["--nx", "64", "--ny", "64", "--nz", "128", "--angles", "24"]),
    ],
)
def test_compute_dominated_runs_are_predicted_within_10_percent(tmp_path, bin_dir, machine, name, ranks, args):
    # This machine is shared: a rank descheduled inside an MPI call stretches the measured
    # run in a way no trace-based model can see. Each attempt waits (bounded) for idle cores;
    # up to three traced runs, the least perturbed one must be within 10 %.
    errors = []
    for attempt in range(3):
        if not _wait_until_idle():
            break  # busy: do not spend more of the test budget waiting
        d = _trace(tmp_path / str(attempt), bin_dir, name, ranks, args)
        goal = tmp_path / f"{name}-{attempt}.goal"
        run_cli("schedule", d, "-o", goal)
        pred = json.loads(run_cli("predict", goal, *machine, "--json").stdout)
        measured = _measured_ns(d)
        errors.append((pred["runtime_ns"] - measured) / measured)
        if abs(errors[-1]) <= 0.10:
            return
    if not errors:
        pytest.skip("the machine never had idle cores: a timing comparison would be meaningless")
    pytest.fail(f"{name}: prediction errors {', '.join(f'{100 * e:+.1f} %' for e in errors)} (none within 10 %)")


@pytest.mark.parametrize(
    "name, ranks, args",
    [
        ("pingpong", 2, ["--sizes", "8,65536", "--iters", "20"]),
        ("alltoall", 4, []),
        ("persistent", 2, []),
        ("subcomm", 4, []),
    ],
)
def test_other_motif_apps_schedule_and_predict(tmp_path, bin_dir, name, ranks, args):
    d = _trace(tmp_path, bin_dir, name, ranks, args)
    stats = json.loads(run_cli("schedule", d, "--json").stdout)
    assert stats["events"] > 0 and stats["graph"]["messages"] > 0
    assert stats["unresolved_wildcards"] == 0
    pred = json.loads(run_cli("predict", d, "--json", "--coll", "schedgen").stdout)
    assert pred["runtime_ns"] > 0
    if name == "alltoall":
        _own_block_copies_are_in_the_goal_and_cost_b_O(tmp_path, d, stats)


def _own_block_copies_are_in_the_goal_and_cost_b_O(tmp_path, trace, stats):
    """Every rank's MPI_Alltoall copies its own block first (docs/collectives.md): one
    `//@copy` line per call and rank, nothing at O = 0 (stripping the lines, what LogGOPSim
    and LLAMP read, predicts the same), and its bytes in λ_O."""
    goal = tmp_path / "alltoall.goal"
    run_cli("schedule", trace, "-o", goal)
    text = goal.read_text()
    copies = [ln for ln in text.splitlines() if ln.startswith("//@copy ")]
    calls = sum(n for k, n in stats["collectives"].items() if k.split()[0] == "alltoall")
    assert calls > 0 and len(copies) == calls
    plain = tmp_path / "plain.goal"
    plain.write_text("".join(ln + "\n" for ln in text.splitlines() if not ln.startswith("//@")))

    def predict(path, *args):
        return json.loads(run_cli("predict", path, "-L", "1us", "-G", "0.1ns", *args, "--json").stdout)

    assert predict(goal, "-O", "0")["runtime_ns"] == predict(plain, "-O", "0")["runtime_ns"]
    with_copies, without = predict(goal, "-O", "0.1ns"), predict(plain, "-O", "0.1ns")
    copied = int(copies[0].split()[1][:-1])
    assert with_copies["lambda"]["O"] >= without["lambda"]["O"] + copied - 1
    assert with_copies["runtime_ns"] > without["runtime_ns"]
