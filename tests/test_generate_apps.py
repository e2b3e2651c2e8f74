"""Generated graphs against real runs: `apps/motifs` executes a job file's plan under `latitude
trace`, `latitude schedule` converts the trace, and the scheduled graph must have the generated
graph's messages — per rank, in issue order, the same (send/recv, partner, bytes) — once the
harness traffic on MPI_COMM_WORLD (phase barriers, the timing gather) is set aside. One case
per motif, 2–8 ranks. Needs Open MPI and the tracer; skipped otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import ROOT, run_cli

APPS = os.path.join(ROOT, "apps")
MPIRUN = shutil.which("mpirun")
MPI = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np"]
COLL_BASE = 1 << 30


def _have_tracer() -> bool:
    return bool(MPIRUN and shutil.which("mpicc")) and run_cli("trace", "--help", check=False).returncode == 0


pytestmark = pytest.mark.skipif(not _have_tracer(), reason="needs `latitude trace`, Open MPI and mpicc")


@pytest.fixture(scope="module")
def motifs(tmp_path_factory):
    out = tmp_path_factory.mktemp("apps")
    subprocess.run(["make", "-s", "-C", APPS, f"BIN={out}", f"{out}/motifs"], check=True, capture_output=True)
    return out / "motifs"


def _messages(graph, drop_world_collectives: bool) -> dict:
    """rank -> [(kind, peer, bytes)] of its message ops in issue order."""
    a = graph.arrays()
    keep = a["kind"] != 0
    if drop_world_collectives:
        tag = a["tag"].astype(np.int64)
        world_coll = (tag >= COLL_BASE) & (tag != 0xFFFFFFFF) & (((tag >> 16) & 0x3FFF) == 0)
        keep &= ~world_coll
    idx = np.nonzero(keep)[0]
    idx = idx[np.lexsort((a["local"][idx], a["rank"][idx]))]
    out: dict = {}
    for v in idx:
        out.setdefault(int(a["rank"][v]), []).append((int(a["kind"][v]), int(a["peer"][v]), int(a["val"][v])))
    return out


def _run(tmp_path, motifs, ranks: int, text: str, coll: str = "default", seed: int = 1):
    import latitude
    from latitude import Graph, ScheduleOptions

    job, plan = tmp_path / "w.job", tmp_path / "w.plan"
    job.write_text(text)
    plan.write_text(run_cli("generate", "--check", job).stdout)  # what apps/motifs runs
    trace = tmp_path / "trace"
    proc = run_cli("trace", "-o", trace, "--", *MPI, str(ranks), motifs, "--seed", str(seed), plan, timeout=300)
    assert "(job)" in proc.stdout, proc.stdout + proc.stderr
    traced = Graph.from_trace(str(trace), ScheduleOptions(coll=coll), progress=False)
    assert set(traced.report.stats["unmodelled"]) <= {"MPI_Comm_split"}, traced.report.stats["unmodelled"]
    generated = latitude.generate(str(job), seed=seed, coll=coll, progress=False)
    return traced, generated


CASES = {
    "pingpong": (2, "pingpong bytes=4KiB iterations=3", "default"),
    "halo2d": (4, "halo2d x=1KiB y=512 periodic=1 iterations=2", "default"),
    "halo3d": (8, "halo3d x=1KiB y=2KiB z=3KiB compute=50us iterations=2", "default"),
    "sweep3d": (6, "sweep3d px=3 py=2 nx=12 ny=8 nz=8 kba=4 angles=2 mmi=1 compute=10us", "default"),
    "allreduce": (5, "allreduce bytes=64 iterations=2", "default"),
    "allreduce-ring": (4, "allreduce bytes=4KiB alg=ring", "allreduce=ring"),
    "bcast": (3, "bcast bytes=1KiB root=1", "default"),
    "reduce": (4, "reduce bytes=64KiB root=2", "default"),
    "alltoall": (4, "alltoall bytes=512", "default"),
    "barrier": (7, "barrier iterations=2", "default"),
    "incast": (5, "incast bytes=2KiB root=1 iterations=2", "default"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_motif_matches_its_trace(tmp_path, motifs, case):
    ranks, motif, coll = CASES[case]
    text = f"[JOB] {case}\n[RANKS] 0-{ranks - 1}\n[ITERATIONS] 2\n[MOTIF] {motif}\n"
    traced, generated = _run(tmp_path, motifs, ranks, text, coll)
    want, got = _messages(generated, False), _messages(traced, True)
    assert want, "the motif sends messages"
    assert got == want


def test_several_jobs_and_idle_ranks(tmp_path, motifs):
    text = (
        "[JOB] a\n[RANKS] 4-5,0-1\n[ITERATIONS] 3\n[MOTIF] compute time=20us\n[MOTIF] halo2d x=2KiB\n"
        "[MOTIF] allreduce bytes=8 every=2\n[JOB] b\n[RANKS] 2,6\n[MOTIF] pingpong bytes=100 iterations=2\n"
    )
    traced, generated = _run(tmp_path, motifs, 8, text)  # rank 3 and 7: in no job
    want, got = _messages(generated, False), _messages(traced, True)
    assert set(want) == {0, 1, 2, 4, 5, 6}
    assert got == want


def test_compute_draws_are_the_generators(tmp_path, motifs):
    """apps/motifs spins for the durations latitude generate draws (same seeded streams): the
    traced computation before each barrier is never shorter than the generated one, and
    mostly close to it (a busy machine may deschedule a rank now and then), while the draws
    differ enough between ranks and repeats for a mismatch to show."""
    text = "[JOB] c\n[RANKS] 0-1\n[ITERATIONS] 4\n[MOTIF] compute time=3ms dist=uniform spread=2ms\n[MOTIF] barrier\n"

    def before_collectives(graph):
        """Per rank: the calc each of the job's barriers waits for (its start ops' calc)."""
        a = graph.arrays()
        kind, rank, val, tag = a["kind"], a["rank"], a["val"], a["tag"].astype(np.int64)
        out = {}
        for v, q, _ in a["edges"]:
            t = int(tag[v])
            if kind[v] == 0 or kind[q] != 0 or t < COLL_BASE or ((t >> 16) & 0x3FFF) == 0:
                continue
            out.setdefault((int(rank[v]), t), int(val[q]))
        per_rank: dict = {}
        for (r, _t), ns in sorted(out.items()):
            per_rank.setdefault(r, []).append(ns)
        return per_rank

    # A rank descheduled by other load only lengthens a computation: each run must never be
    # shorter than the draws; "mostly close" may need another run on a busy machine.
    for attempt in range(3):
        (d := tmp_path / f"run{attempt}").mkdir()
        traced, generated = _run(d, motifs, 2, text, seed=11)
        want, got = before_collectives(generated), before_collectives(traced)
        assert sorted(want) == [0, 1] and all(len(v) == 4 for v in want.values())
        draws = [x for v in want.values() for x in v]
        assert len(set(draws)) == len(draws) and min(draws) >= 1_000_000 and max(draws) <= 5_000_000
        pairs = [(w, g) for r in want for w, g in zip(want[r], got[r])]
        assert all(g >= 0.99 * w for w, g in pairs), pairs
        if sum(g <= 1.25 * w + 500_000 for w, g in pairs) >= 5:
            break
    else:
        pytest.fail(f"3 runs, each with fewer than 5 of 8 computations close to their draws: last {pairs}")
