"""The traces the tracer writes, compared record for record with reference traces.

tests/data/golden-traces/ holds traces of deterministic runs (their call sequence does not
depend on timing), normalised: timestamps become T, numbers of 2^32 and more (heap and stack
addresses, Open MPI's handles: they move between runs) are numbered by first appearance
(A0, A1, ...), and the lines naming the host, the process and the calendar time are dropped.
What remains — every call, every argument that is not an address, which arguments share an
address, every extension line — must match exactly. The references were written by the
hand-written tracer before its wrappers were generated from wrappers.tbl (issue 17), so this
checks that the generated wrappers write the same traces. When the format changes on purpose,
rewrite them: `LATITUDE_UPDATE_GOLDEN=1 python3 -m pytest tests/test_trace_golden.py`."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from tracetools import HAVE_MPICH, HAVE_OMPI, mpich, ompi, trace

GOLDEN = Path(__file__).resolve().parent / "data" / "golden-traces"
UPDATE = os.environ.get("LATITUDE_UPDATE_GOLDEN") == "1"

# (MPI, app, ranks, arguments): call sequences that do not depend on timing
CASES = [
    ("ompi", "persistent", 3, ["--n", "2000", "--iters", "5", "--mode", "startall"]),
    ("ompi", "subcomm", 4, ["--iters", "3", "--n", "64"]),
    ("ompi", "alltoall", 4, ["--n", "64", "--iters", "2", "--variant", "alltoallv"]),
    ("ompi", "sweep3d", 4, ["--nx", "8", "--ny", "8", "--nz", "8", "--kba", "4", "--angles", "2"]),
    ("ompi", "fring", 2, []),
    ("ompi", "fring08", 2, []),
    ("mpich", "halo2d", 4, ["--nx", "64", "--ny", "64", "--iters", "5"]),
    ("mpich", "subcomm", 4, ["--iters", "3", "--n", "32"]),
    ("mpich", "fring", 2, []),
]
DROPPED = (
    "# time:",
    "# hostname:",
    "# uname:",
    "#@ clock ",
    "#@ probe ",
    "#@ probe_end ",
)  # probes: timings, like the clock
BIG = re.compile(r"\d{10,}")


def normalize(text: str) -> list[str]:
    """A trace file in the reference form (see the module docstring)."""
    ids: dict[int, int] = {}

    def addr(m: re.Match) -> str:
        v = int(m.group())
        return m.group() if v < 1 << 32 else f"A{ids.setdefault(v, len(ids))}"

    out = []
    for line in text.splitlines():
        if line.startswith(DROPPED):
            continue
        if line.startswith("#@ world "):
            line = re.sub(r" (host|pid)=\S+", r" \1=*", line)
        elif line.startswith("MPI_"):
            f = line.split(":")
            f[1] = f[1] if f[1] == "-" else "T"
            f[-1] = f[-1] if f[-1] == "-" else "T"
            line = ":".join(f)
        out.append(BIG.sub(addr, line))
    return out


def case_id(c) -> str:
    mpi, app, np, args = c
    return f"{mpi}-{app}-{np}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_trace_matches_reference(request, tmp_path, case):
    mpi, app, np, args = case
    if not (HAVE_OMPI if mpi == "ompi" else HAVE_MPICH):
        pytest.skip(f"{mpi} not installed")
    apps = request.getfixturevalue("ompi_apps" if mpi == "ompi" else "mpich_apps")
    if not (apps / app).exists():
        pytest.skip(f"{app} not built (no Fortran MPI compiler)")
    launcher = ompi if mpi == "ompi" else mpich
    trace(tmp_path, [*launcher(np), apps / app, *args], opts=("--plain",))  # the liballprof text itself
    ref = GOLDEN / case_id(case)
    for r in range(np):
        got = normalize((tmp_path / f"pmpi-trace-rank-{r}.txt").read_text())
        path = ref / f"rank-{r}.txt"
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(got) + "\n")
            continue
        want = path.read_text().splitlines()
        mpi_line = next((x for x in want if x.startswith("#@ mpi ")), "")
        if mpi_line not in got:
            pytest.skip(f"the references were written with another MPI ({mpi_line[7:60]})")
        for n, (a, b) in enumerate(zip(got, want), 1):
            assert a == b, f"{case_id(case)} rank {r}, line {n} of the normalised trace:\n got  {a}\n want {b}"
        assert len(got) == len(want), f"{case_id(case)} rank {r}: {len(got)} lines, reference {len(want)}"
