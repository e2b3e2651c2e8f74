"""HPCC and Quantum ESPRESSO (Debian's packages, Open MPI, 2 ranks, small inputs from
tests/realapps.py) traced, scheduled and predicted end to end, as a new user would.

HPCC polls (MPI_Testany/MPI_Test in MPIRandomAccess, MPI_Iprobe in HPL) and ends each
RandomAccess run by cancelling the wildcard receives it left posted: the trace must stay
bounded by the real communication, the cancelled receives leave the graph and every other
wildcard receive is resolved. pw.x is Fortran (`use mpi`): its calls go through the
generated Fortran wrappers. Skipped where the packages are not installed."""

from __future__ import annotations

import gzip
import json
import re

import pytest
import realapps
import tracecheck
from conftest import run_cli
from tracetools import HAVE_OMPI, ompi


def _check_trace(d, outdir) -> dict:
    traces, errors = tracecheck.check([str(d)])
    assert not errors, errors[:10]
    assert all(t.end == "finalize" for t in traces)
    stats = json.loads(run_cli("schedule", d, "--json").stdout)
    assert stats["extended"] and stats["unresolved_wildcards"] == 0, stats["notes"]
    pred = json.loads(run_cli("predict", d, "--json").stdout)
    assert pred["runtime_ns"] > 0
    return stats


@pytest.mark.skipif(not (HAVE_OMPI and realapps.have_hpcc()), reason="needs Debian's hpcc and Open MPI")
def test_hpcc(tmp_path, tracer_cache):
    cmd, cwd = realapps.hpcc_case(tmp_path / "run")
    # plain text: the bound below is the folding's, which compression would hide
    proc = run_cli("trace", "-o", tmp_path / "t", "--plain", "--json", "--", *ompi(2), *cmd, cwd=cwd, timeout=300)
    summary = json.loads(proc.stdout)
    out = (cwd / "hpccoutf.txt").read_text()
    assert "End of HPC Challenge tests" in out and "FAILED" not in out
    assert len(re.findall(r"Found 0 errors in \d+ locations \(passed\)", out)) >= 2
    stats = _check_trace(tmp_path / "t", cwd)
    # MPIRandomAccess and its LCG variant each cancel the last wildcard receive per rank
    assert stats["cancelled_recvs"] + stats["assumed_cancelled"] >= 4
    assert stats["polls"] > 10 * stats["poll_records"] > 0
    # bounded by the real communication: unfolded, N = 1000 wrote ~900 MB
    assert summary["bytes"] < 400 * stats["graph"]["messages"], (summary["bytes"], stats["graph"]["messages"])
    _every_analysis(tmp_path / "t")


@pytest.mark.skipif(not (HAVE_OMPI and realapps.have_hpcc()), reason="needs Debian's hpcc and Open MPI")
def test_hpcc_compressed(tmp_path, tracer_cache):
    """Traced as `latitude trace` does by default (compressed), HPCC's trace is within 200 bytes
    per message of its graph, and its graph is the one the gunzipped text gives."""
    cmd, cwd = realapps.hpcc_case(tmp_path / "run")
    proc = run_cli("trace", "-o", tmp_path / "t", "--json", "--", *ompi(2), *cmd, cwd=cwd, timeout=300)
    summary = json.loads(proc.stdout)
    assert [f.rsplit("/", 1)[-1] for f in summary["files"]] == ["pmpi-trace-rank-0.txt.gz", "pmpi-trace-rank-1.txt.gz"]
    graph = json.loads(run_cli("schedule", tmp_path / "t", "--json").stdout)["graph"]
    assert summary["bytes"] < 200 * graph["messages"], (summary["bytes"], graph["messages"])
    text = tmp_path / "text"
    text.mkdir()
    for f in (tmp_path / "t").glob("*.txt.gz"):
        (text / f.name[: -len(".gz")]).write_bytes(gzip.decompress(f.read_bytes()))
    assert json.loads(run_cli("schedule", text, "--json").stdout)["graph"] == graph


def _every_analysis(d) -> None:
    """Every command that takes a graph works on the trace and agrees on the traced runtime."""
    pred = json.loads(run_cli("predict", d, "--json").stdout)["runtime_ns"]
    lp = run_cli("lp", d, "--solve").stdout
    t = re.search(r"HiGHS: optimal, T = [\d.]+ \w+ \(([\d,.]+) ns\)", lp)
    assert t, lp
    assert abs(float(t.group(1).replace(",", "")) - pred) <= 1e-6 * pred
    sim = json.loads(run_cli("simulate", d, "--json").stdout)
    assert sim["runtime_ns"] > 0 and sim["unfinished_ops"] == 0 and sim["static_mismatches"] == 0
    tol = json.loads(run_cli("tolerance", d, "--json").stdout)
    assert abs(tol["baseline_runtime_ns"] - pred) <= 1e-6 * pred and tol["tolerance"][0]["delta_ns"] > 0
    sens = json.loads(run_cli("sensitivity", d, "--range", "0:50us", "--json").stdout)
    assert sens["breakpoints"] and all(b["slope_right"] >= b["slope_left"] for b in sens["breakpoints"])


@pytest.mark.skipif(not (HAVE_OMPI and realapps.have_qe()), reason="needs Debian's quantum-espresso and Open MPI")
def test_quantum_espresso(tmp_path, tracer_cache):
    cmd, cwd = realapps.qe_case(tmp_path / "run")
    proc = run_cli("trace", "-o", tmp_path / "t", "--", *ompi(2), *cmd, cwd=cwd, timeout=300)
    energy = re.search(r"^!\s+total energy\s+=\s+(-?[\d.]+) Ry", proc.stdout, re.M)
    assert energy and "convergence has been achieved" in proc.stdout
    assert abs(float(energy.group(1)) - -15.807) < 0.005  # bulk Si, this cutoff and k-mesh
    stats = _check_trace(tmp_path / "t", cwd)
    counts = tracecheck.check([str(tmp_path / "t")])[0][0].counts()
    assert counts["MPI_Alltoall"] > 0 and counts["MPI_Allreduce"] > 0  # traced through the Fortran wrappers
    assert stats["graph"]["messages"] > 0
