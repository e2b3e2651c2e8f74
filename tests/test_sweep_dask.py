"""latitude sweep on Dask: a real `dask scheduler` and two `dask worker` processes on
localhost (the distributed package's own CLIs), and a LocalCluster; results equal the local
process pool's, point for point."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time

import pytest
from conftest import cli_env
from latitude.sweep_store import read_table
from test_sweep import SPEC_100 as SPEC  # 100 points on 5 graphs

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture
def dask_cluster(tmp_path):
    """`dask scheduler` and two single-threaded `dask worker`s; yields the address."""
    dask = shutil.which("dask")
    if dask is None:
        pytest.skip("the dask command is not installed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = cli_env()
    log = open(tmp_path / "dask.log", "w")  # noqa: SIM115 - closed below
    common = ["--no-dashboard"]
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), *common], env=env, stdout=log, stderr=log
        )
    ]
    try:
        for i in range(2):
            procs.append(
                subprocess.Popen(
                    [dask, "worker", address, "--nthreads", "1", "--name", f"w{i}", *common],
                    env=env,
                    stdout=log,
                    stderr=log,
                )
            )
        from distributed import Client

        deadline = time.monotonic() + 120
        with Client(address, timeout="60s") as client:
            while len(client.scheduler_info()["workers"]) < 2:
                assert time.monotonic() < deadline, (tmp_path / "dask.log").read_text()
                assert all(p.poll() is None for p in procs), (tmp_path / "dask.log").read_text()
                time.sleep(0.2)
        yield address
    finally:
        _stop(procs)
        log.close()


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def test_dask_scheduler_and_two_workers_equal_the_local_pool(dask_cluster, tmp_path, examples, cli):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(examples=examples))
    local = cli("sweep", spec, "-o", tmp_path / "local.parquet", "--json")
    dask = cli("sweep", spec, "-o", tmp_path / "dask.parquet", "--dask", dask_cluster, "--json")
    s_local, s_dask = json.loads(local.stdout), json.loads(dask.stdout)
    assert s_local["evaluated"] == s_dask["evaluated"] == 100 and s_dask["failed"] == 0
    assert s_dask["workers"] == 2 and s_dask["engine"] == f"dask {dask_cluster}"
    # Batched per graph: each of the two workers loads each of the 5 graphs at most once.
    assert s_dask["graph_loads"] <= 10 and s_dask["batches"] < 100
    rows_local, rows_dask = read_table(str(tmp_path / "local.parquet")), read_table(str(tmp_path / "dask.parquet"))
    assert len(rows_dask) == 100
    assert _strip(rows_dask) == _strip(rows_local)


def test_dask_local_cluster_equals_the_local_pool(tmp_path, examples, cli):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(examples=examples))
    cli("sweep", spec, "-o", tmp_path / "local.csv", "--workers", "1")
    proc = cli("sweep", spec, "-o", tmp_path / "dask.csv", "--dask", "local", "--workers", "2", "--json")
    summary = json.loads(proc.stdout)
    assert summary["workers"] == 2 and summary["engine"] == "dask local"
    assert _strip(read_table(str(tmp_path / "dask.csv"))) == _strip(read_table(str(tmp_path / "local.csv")))


def test_unreachable_scheduler_is_one_line(tmp_path, examples, cli):
    spec = tmp_path / "spec.toml"
    spec.write_text(f'input = ["{examples}/halo2d-16.goal"]\n')
    proc = cli("sweep", spec, "-o", tmp_path / "r.csv", "--dask", f"tcp://127.0.0.1:{_free_port()}", check=False)
    assert proc.returncode == 1 and proc.stderr.startswith("latitude: --dask") and proc.stderr.count("\n") == 1
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "r.csv.journal").exists()
