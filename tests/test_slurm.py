"""Against a real single-node Slurm (tests/slurmtools.py): b from the live queue, measure-coll
recording b with every sample, and `latitude trace -- srun` end to end (Open MPI through
`srun --mpi=pmix`, MPICH through `srun --mpi=pmi2`)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from latitude import slurm
from tracetools import OMPI_CC


def _latitude(cluster, *args, timeout=300):
    env = dict(cluster.env, PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(__file__)), "python"))
    proc = subprocess.run(
        [sys.executable, "-m", "latitude", *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout
    )
    assert proc.returncode == 0, f"latitude {args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


def _running(cluster, n: int) -> str:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        out = cluster.run(*slurm.SQUEUE).stdout
        if len(out.splitlines()) >= n:
            return out
        time.sleep(0.3)
    raise AssertionError(f"{n} jobs never ran:\n{cluster.run('squeue').stdout}")


def test_b_from_the_live_queue(slurm_cluster, monkeypatch):
    c = slurm_cluster
    jobs = [
        c.run("sbatch", "--parsable", "-n", "1", "-o", "/dev/null", "--wrap", "sleep 120").stdout.strip()
        for _ in range(2)
    ]
    try:
        live = _running(c, 2)
        parsed = slurm.parse_squeue(live)
        assert sorted(j for j, _ in parsed) == sorted(jobs) and all(nodes == [c.host] for _, nodes in parsed)
        monkeypatch.setenv("SLURM_CONF", c.env["SLURM_CONF"])
        monkeypatch.delenv("SLURM_JOB_ID", raising=False)
        bg = slurm.background_now()
        # 4 nodes (the real one and 3 down spares); both jobs hold one node: no network traffic
        assert bg == slurm.Background(b=0.0, refined=0.0, jobs=2, nodes=4)
        monkeypatch.setenv("SLURM_JOB_ID", jobs[0])  # measured from inside the first job
        assert slurm.background_now().jobs == 1
    finally:
        c.run("scancel", *jobs, check=False)


def test_measure_coll_under_slurm_records_b(slurm_cluster, tracer_cache, tmp_path):
    out = tmp_path / "coll.csv"
    _latitude(
        slurm_cluster,
        "measure-coll",
        "-o",
        out,
        "--colls",
        "bcast",
        "--algorithms",
        "bcast=binomial",
        "--sizes",
        "4,1KiB",
        "--iters",
        "1000",
        "--warmup",
        "10",
        "--",
        "srun",
        "-n",
        "2",
        "--mpi=pmix",
    )
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2000 and {r["launcher"] for r in rows} == {"srun -n 2 --mpi=pmix"}
    # the single node runs our job only: b = 0, recorded (not empty as without Slurm)
    assert {(r["b"], r["b_refined"]) for r in rows} == {("0.0", "0.0")}
    assert {r["hosts"] for r in rows} == {f"{slurm_cluster.host};{slurm_cluster.host}"} and {
        r["mpi"] for r in rows
    } == {"openmpi"}
    doc = json.loads(_latitude(slurm_cluster, "variability", out, "--json").stdout)
    assert [c["b"] for c in doc["configurations"]] == [0.0, 0.0]


def test_b_above_zero_on_a_live_queue_is_recorded_with_the_measurement(slurm_cluster, tracer_cache, tmp_path):
    """Beside the measurement, sharing its node: a two-node job (partition `pair`: the real
    node and spare1, so it counts as network traffic) and a one-node job. b and the refined b
    recorded with every sample are > 0 and what the formula gives for the live queue:
    N_c = 2 of N_t = 4 nodes, N'_c = 2, N_a = 2 + 1."""
    c = slurm_cluster
    bg = ("-o", "/dev/null", "--wrap", "sleep 300")
    jobs = [
        c.run("sbatch", "--parsable", "-p", "pair", "-N", "2", "-n", "2", *bg).stdout.strip(),
        c.run("sbatch", "--parsable", "-n", "1", *bg).stdout.strip(),
    ]
    try:
        live = _running(c, 2)
        parsed = slurm.parse_squeue(live)
        assert sorted(len(nodes) for _, nodes in parsed) == [1, 2] and all(c.host in n for _, n in parsed)
        want = slurm.background(parsed, 4)
        assert want.b == 0.5 and want.refined == pytest.approx(0.5 * (2 / 4 + 2 / 3))
        out = tmp_path / "coll.csv"
        opts = ("--colls", "bcast", "--algorithms", "bcast=binomial", "--sizes", "4", "--iters", "200")
        _latitude(c, "measure-coll", "-o", out, *opts, "--warmup", "10", "--", "srun", "-n", "2", "--mpi=pmix")
        assert slurm.parse_squeue(c.run(*slurm.SQUEUE).stdout) == parsed  # the queue held still
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 200 and {(float(r["b"]), float(r["b_refined"])) for r in rows} == {(want.b, want.refined)}
    finally:
        c.run("scancel", *jobs, check=False)


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_trace_through_srun(slurm_cluster, tracer_cache, tmp_path, mpi):
    cc, plugin = (OMPI_CC, "pmix") if mpi == "openmpi" else ("mpicc.mpich", "pmi2")
    if not shutil.which(cc):
        pytest.skip(f"{cc} not installed")
    app = tmp_path / "halo2d"
    src = os.path.join(os.path.dirname(os.path.dirname(__file__)), "apps", "halo2d.c")
    slurm_cluster.run(cc, "-O2", "-o", str(app), src, "-lm")
    traces = tmp_path / "traces"
    proc = _latitude(
        slurm_cluster,
        "trace",
        "--mpicc",
        cc,
        "-o",
        traces,
        "--",
        "srun",
        "-n",
        "4",
        f"--mpi={plugin}",
        app,
        "--iters",
        "10",
    )
    assert "on 2x2 ranks" in proc.stdout
    assert sorted(p.name for p in traces.iterdir()) == [f"pmpi-trace-rank-{r}.txt.gz" for r in range(4)]
    pred = json.loads(_latitude(slurm_cluster, "predict", traces, "--json").stdout)
    assert pred["runtime_ns"] > 0 and pred["critical_path"]
