"""LAMMPS (Debian's `lmp`, linked with Open MPI): every MPI function it imports is wrapped,
and a short traced run of the LJ benchmark gives a valid trace. Skipped without LAMMPS."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import tracecheck
from latitude import tracer
from tracetools import HAVE_OMPI, OMPI_CC, ROOT, ompi, trace

LMP = shutil.which("lmp")
pytestmark = pytest.mark.skipif(not (LMP and HAVE_OMPI), reason="needs Debian's lammps + Open MPI")


def _imported_mpi_functions() -> set[str]:
    libs = [LMP] + [
        line.split()[2]
        for line in subprocess.run(["ldd", LMP], capture_output=True, text=True).stdout.splitlines()
        if "=>" in line and len(line.split()) > 2 and "lammps" in line
    ]
    names = set()
    for lib in libs:
        out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True).stdout
        names |= {w.split("@")[0] for w in out.split() if w.startswith("MPI_")}
    return names


def test_every_mpi_function_lammps_imports_is_wrapped(tracer_cache):
    lib = tracer.build_tracer(tracer.probe_mpi(shutil.which(OMPI_CC)))
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
    wrapped = {w for w in out.split() if w.startswith("MPI_")}
    needed = _imported_mpi_functions()
    assert len(needed) > 40
    assert needed - wrapped == set()


def test_lammps_lj_traced(tmp_path):
    proc = trace(
        tmp_path,
        [*ompi(2), LMP, "-in", ROOT / "bench/lammps/in.lj", "-log", "none", "-var", "x", "0.5", "-var", "steps", "40"],
        timeout=300,
    )
    assert "Loop time" in proc.stdout
    traces, errors = tracecheck.check([str(tmp_path)])
    assert not errors, errors[:10]
    for t in traces:
        c = t.counts()
        assert t.end == "finalize"
        assert c["MPI_Irecv"] == c["MPI_Wait"] > 0 and c["MPI_Send"] > 0
        assert c["MPI_Cart_create"] == 1 and c["MPI_Allreduce"] > 0
