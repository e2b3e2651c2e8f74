"""The tracer with MPICH (Hydra's mpiexec, int handles, 4-byte requests), skipped when MPICH is
not installed; and the Fortran bindings with both MPIs."""

from __future__ import annotations

import shutil

import pytest
import tracecheck
from tracetools import assert_counts_match, deterministic, mpich, ompi, run, trace

MPICH_CASES = [
    ("halo2d", 4, ["--nx", "128", "--ny", "128", "--iters", "20"]),
    ("subcomm", 4, ["--iters", "8", "--n", "32"]),
    ("persistent", 2, ["--n", "2000", "--iters", "10", "--mode", "start"]),
    ("callmix", 3, ["--rounds", "1"]),
]


@pytest.mark.parametrize("app,np,args", MPICH_CASES, ids=[c[0] for c in MPICH_CASES])
def test_mpich_app_traced(mpich_apps, tmp_path, app, np, args):
    launch = [*mpich(np), mpich_apps / app, *args, "--report-calls"]
    plain = run(launch)
    traced = trace(tmp_path, launch)
    assert deterministic(traced.stdout) == deterministic(plain.stdout)
    assert_counts_match(tmp_path, traced.stdout, np)
    t = tracecheck.parse(tmp_path / "pmpi-trace-rank-0.txt.gz")  # latitude trace's default: compressed
    assert t.header["request_size"] == "4" and t.header["mpi"].startswith("MPICH")
    assert t.consts["any_source"] == -2


def test_mpich_abort(mpich_apps, tmp_path):
    """Hydra kills the other ranks with SIGKILL: their records survive in the mapped file of a
    plain trace, and `latitude trace` closes the file with "#@ end killed" (a compressed trace
    keeps the buffers it flushed: test_trace_compress.py)."""
    launch = [*mpich(2), mpich_apps / "faults", "--mode", "abort", "--after", "3"]
    trace(tmp_path, launch, check=False, opts=("--plain",))
    traces, errors = tracecheck.check([str(tmp_path)])
    assert not errors, errors[:10]
    ends = sorted(t.end for t in traces)
    assert ends[0] == "abort 3" and ends[1] in ("killed", "signal 15", "signal 9"), ends
    assert all(t.counts()["MPI_Allreduce"] >= 3 for t in traces)


def _fortran_case(apps, launcher, tmp_path, prog):
    if not (apps / prog).exists():
        pytest.skip(f"{prog} not built (no Fortran MPI compiler)")
    launch = [*launcher(3), apps / prog, "--report-calls"]
    plain = run(launch)
    traced = trace(tmp_path, launch)
    assert deterministic(traced.stdout) == deterministic(plain.stdout)
    assert "fring checksum" in plain.stdout
    counts = assert_counts_match(tmp_path, traced.stdout, 3)
    assert counts[0]["MPI_Recv"] == 40  # wildcard receives, resolved by "#@ status" lines


@pytest.mark.parametrize("prog", ["fring", "fring08"])
def test_fortran_openmpi(ompi_apps, tmp_path, prog):
    """Open MPI's Fortran layers call PMPI_ directly: traced by the Fortran wrappers."""
    _fortran_case(ompi_apps, ompi, tmp_path, prog)


def test_fortran_mpich_use_mpi(mpich_apps, tmp_path):
    """MPICH's mpif.h/`use mpi` bindings call the C MPI_ functions: traced by the C wrappers."""
    _fortran_case(mpich_apps, mpich, tmp_path, "fring")


def test_fortran_mpich_f08_is_documented_as_untraced(mpich_apps, tmp_path):
    """MPICH's mpi_f08 calls PMPI_ directly; `latitude trace` must say nothing was traced."""
    if not (mpich_apps / "fring08").exists() or not shutil.which("mpifort.mpich"):
        pytest.skip("no MPICH Fortran compiler")
    proc = trace(tmp_path, [*mpich(2), mpich_apps / "fring08"], check=False)
    assert proc.returncode == 1 and "mpi_f08" in proc.stderr
