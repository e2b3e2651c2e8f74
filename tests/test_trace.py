"""Every motif app traced with Open MPI: the trace passes the format checker, its call counts
equal what the app reports it did, and the app prints the same results with and without the
tracer."""

from __future__ import annotations

import pytest
from tracetools import assert_counts_match, deterministic, ompi, run, trace

CASES = [
    ("pingpong", 2, ["--sizes", "0,8,1024,65536", "--iters", "50"]),
    ("halo2d", 4, ["--nx", "128", "--ny", "128", "--iters", "30", "--mode", "nonblocking"]),
    ("halo2d", 4, ["--nx", "128", "--ny", "128", "--iters", "30", "--mode", "blocking", "--allreduce-every", "3"]),
    ("sweep3d", 4, ["--nx", "16", "--ny", "16", "--nz", "16", "--kba", "4", "--angles", "3"]),
    ("alltoall", 4, ["--n", "128", "--iters", "3"]),
    ("alltoall", 4, ["--n", "128", "--iters", "3", "--variant", "alltoallv"]),
    ("alltoall", 2, ["--n", "128", "--iters", "3", "--variant", "ialltoall"]),
    ("persistent", 3, ["--n", "2000", "--iters", "20", "--mode", "startall"]),
    ("persistent", 2, ["--n", "2000", "--iters", "20", "--mode", "start"]),
    ("subcomm", 4, ["--iters", "10", "--n", "64"]),
    ("callmix", 4, ["--rounds", "2"]),
    ("callmix", 3, ["--rounds", "1"]),
]


@pytest.mark.parametrize("app,np,args", CASES, ids=[f"{a}-{n}-{'_'.join(x[-2:])}" for a, n, x in CASES])
def test_app_traced(ompi_apps, tmp_path, app, np, args):
    launch = [*ompi(np), ompi_apps / app, *args, "--report-calls"]
    plain = run(launch)
    traced = trace(tmp_path / "t", launch)
    assert deterministic(traced.stdout) == deterministic(plain.stdout)
    assert any(line.strip() for line in deterministic(plain.stdout))
    counts = assert_counts_match(tmp_path / "t", traced.stdout, np)
    assert all(c["MPI_Init"] == 1 and c["MPI_Finalize"] == 1 for c in counts.values())
    assert f"{np} ranks" in traced.stderr and "traces in" in traced.stderr


def test_help_of_every_app(ompi_apps):
    for app in ("pingpong", "halo2d", "sweep3d", "alltoall", "persistent", "subcomm", "callmix", "faults"):
        out = run([ompi_apps / app, "--help"]).stdout
        assert out.startswith("usage: " + app) and "--report-calls" in out


def test_pingpong_csv(ompi_apps):
    out = run([*ompi(2), ompi_apps / "pingpong", "--sizes", "0,64,4096", "--iters", "20"]).stdout
    rows = [line.split(",") for line in out.splitlines()[1:4]]
    assert out.splitlines()[0] == "size_bytes,iters,half_rtt_us"
    assert [int(r[0]) for r in rows] == [0, 64, 4096]
    assert all(float(r[2]) > 0 for r in rows)
