"""`simulate --noise coll:SAMPLES`: collective calls delayed by draws from measure-coll's
samples minus the model's own time of the call (latitude.coll_noise, graph/colls.rs)."""

from __future__ import annotations

import csv
import json
import sys

import numpy as np
import pytest
from conftest import one_line, run_cli
from latitude import api, coll_noise
from latitude.params import Params
from tracetools import OMPI_RUN, run, trace

# L = 1 µs, no overheads, no per-byte cost: one exchange of an allreduce on 2 ranks costs 1 µs
LOGGP = ("-L", "1us", "-o", "0", "-g", "0", "-G", "0", "-O", "0")
HEADER = ["run", "coll", "algorithm", "procs", "bytes", "iteration", "time_us"]


def _trace(path, calls: int = 1, gap_us: float = 10.0):
    """Two ranks: `calls` allreduces of 16 bytes on MPI_COMM_WORLD, `gap_us` of computation
    before each and after the last (liballprof format, times in µs)."""
    path.mkdir()
    for r in (0, 1):
        lines, t = ["MPI_Init:-:1:2:0"], 0.0
        for _ in range(calls):
            t += gap_us
            lines.append(f"MPI_Allreduce:{t:g}:1:2:2:10,8,8:3:0,{r},2:{t + 1:g}")
            t += 1
        lines.append(f"MPI_Finalize:{t + gap_us:g}:-")
        (path / f"t-{r}.txt").write_text("\n".join(lines) + "\n")
    return path


def _samples(path, times_us, coll="allreduce", algorithm="default", procs=2, size=16):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for i, t in enumerate(times_us):
            w.writerow([1, coll, algorithm, procs, size, i, t])
    return path


def _simulate(graph, *extra):
    out = run_cli("simulate", graph, *LOGGP, "--json", *extra).stdout
    return json.loads(out)


def test_the_graph_marks_each_ranks_end_of_a_call(tmp_path):
    g = api.load(str(_trace(tmp_path / "t", calls=3)), progress=False)
    c = g.coll_calls()
    arrays = g.arrays(edges=False)
    assert len(c["vertex"]) == 6 and c["kinds"][0][0] == "allreduce"
    assert sorted(c["procs"].tolist()) == [2] * 6 and set(c["bytes"].tolist()) == {16}
    # one instance per call, shared by both ranks; each mark is a zero-length calc
    inst = c["instance"].tolist()
    assert len(set(inst)) == 3 and all(inst.count(i) == 2 for i in inst)
    for v in c["vertex"].tolist():
        assert arrays["kind"][v] == 0 and arrays["val"][v] == 0
    ranks = sorted(arrays["rank"][v] for v in c["vertex"].tolist())
    assert ranks == [0, 0, 0, 1, 1, 1]


def test_degenerate_distribution_adds_exactly_the_excess(tmp_path):
    graph = _trace(tmp_path / "t")
    quiet = _simulate(graph)
    assert quiet["runtime_ns"] == 21_000  # 10 µs, the allreduce's one exchange (1 µs), 10 µs
    samples = _samples(tmp_path / "s.csv", [5.0] * 7)
    noisy = _simulate(graph, "--noise", f"coll:{samples}")
    # excess = 5 µs measured − 1 µs the model's own time of the call
    assert noisy["runtime_ns"] == quiet["runtime_ns"] + 4_000
    assert noisy["rank_end_ns"] == [25_000, 25_000]
    # the model's time as coll_noise computes it
    cfg = next(iter(coll_noise.graph_configs(api.load(str(graph), progress=False))))
    t = coll_noise.model_time_ns(cfg, 2, 16, Params(L=1000, o=0, g=0, G=0, O=0), {"semantics": "design"})
    assert t == 1000.0


def test_measured_time_below_the_model_adds_nothing_and_says_so(tmp_path):
    graph = _trace(tmp_path / "t")
    samples = _samples(tmp_path / "s.csv", [0.5] * 4)
    noisy = _simulate(graph, "--noise", f"coll:{samples}")
    assert noisy["runtime_ns"] == 21_000
    assert any("exceeds 100 %" in n for n in noisy["notes"])


def test_draws_are_seeded_reproducible_and_shared_by_the_call(tmp_path):
    graph = _trace(tmp_path / "t", calls=20)
    times = np.linspace(1.0, 101.0, 200).tolist()
    samples = _samples(tmp_path / "s.csv", times)
    args = ("--noise", f"coll:{samples}", "--samples", "40", "--csv")
    run_cli("simulate", graph, *LOGGP, *args, tmp_path / "a.csv", "--seed", "3")
    run_cli("simulate", graph, *LOGGP, *args, tmp_path / "b.csv", "--seed", "3")
    run_cli("simulate", graph, *LOGGP, *args, tmp_path / "c.csv", "--seed", "4")
    a, b, c = ((tmp_path / f"{x}.csv").read_text() for x in "abc")
    assert a == b and a != c
    one = _simulate(graph, "--noise", f"coll:{samples}", "--seed", "3")
    # both members of a call are delayed by the same draw: the ranks end together
    assert one["rank_end_ns"][0] == one["rank_end_ns"][1]
    # 20 calls, mean excess 50 µs: far above the quiet run, within the table's range
    quiet = 20 * 11_000 + 10_000
    assert quiet + 20 * 10_000 < one["runtime_ns"] < quiet + 20 * 100_000
    runtimes = np.array([float(r["runtime_us"]) for r in csv.DictReader(open(tmp_path / "a.csv"))])
    mean_excess = (runtimes.mean() * 1e3 - quiet) / 20
    assert 40_000 < mean_excess < 60_000  # E[t − 1 µs] = 50 µs


def test_substitutes_and_missing_collectives_are_noted(tmp_path):
    graph = _trace(tmp_path / "t")
    # only 4 ranks and 64 bytes measured, plus an unrelated collective
    samples = _samples(tmp_path / "s.csv", [5.0] * 3, procs=4, size=64)
    doc = _simulate(graph, "--noise", f"coll:{samples}")
    assert doc["runtime_ns"] > 21_000
    assert any("draws from the measured default on 4 ranks, 64 B" in n for n in doc["notes"])
    bcast_only = _samples(tmp_path / "b.csv", [5.0] * 3, coll="bcast")
    doc = _simulate(graph, "--noise", f"coll:{bcast_only}")
    assert doc["runtime_ns"] == 21_000
    assert any("has no allreduce measurements" in n for n in doc["notes"])


def test_bad_inputs_one_line(tmp_path):
    graph = _trace(tmp_path / "t")
    one_line(run_cli("simulate", graph, "--noise", "coll:", check=False), "expected coll:SAMPLES")
    missing = tmp_path / "nope.csv"
    one_line(run_cli("simulate", graph, "--noise", f"coll:{missing}", check=False), "no such samples file")
    bad = tmp_path / "bad.csv"
    bad.write_text("run,coll,algorithm,procs,bytes,time_us\n1,allreduce,default,2,16,abc\n")
    one_line(run_cli("simulate", graph, "--noise", f"coll:{bad}", check=False), f"{bad}:2", "time_us")
    nohead = tmp_path / "nohead.csv"
    nohead.write_text("1,2,3\n")
    one_line(run_cli("simulate", graph, "--noise", f"coll:{nohead}", check=False), f"{nohead}:1", "header")
    ring = _samples(tmp_path / "ring.csv", [5.0], algorithm="ring")
    proc = run_cli("simulate", graph, "--noise", f"coll:{ring}", "--coll", "allreduce=recdoub", check=False)
    one_line(proc, "measure allreduce with ring, not with recdoub")
    twice = ("--noise", f"coll:{ring}", "--noise", f"coll:{ring}")
    one_line(run_cli("simulate", graph, *twice, check=False), "at most one coll")
    # GOAL text keeps the calls (//@call lines), so the delays apply to it as to the trace;
    # without those lines (a foreign GOAL file) nothing is marked, which is refused
    goal = tmp_path / "g.goal"
    run_cli("convert", graph, "-o", goal)
    samples = _samples(tmp_path / "s.csv", [5.0])
    assert "//@call allreduce" in goal.read_text()
    run_cli("simulate", goal, "--noise", f"coll:{samples}")
    bare = tmp_path / "bare.goal"
    bare.write_text("".join(ln for ln in goal.read_text().splitlines(True) if not ln.startswith("//@call")))
    one_line(run_cli("simulate", bare, "--noise", f"coll:{samples}", check=False), "no collective calls marked")


def test_end_to_end_from_a_measure_coll_run(ompi_apps, tmp_path):
    """measure-coll times MPI_Allreduce of 8 bytes on 2 real ranks; cg (2 allreduces of one
    double per iteration) is traced on 2 ranks; its simulation with those measurements is
    slower than without, by no more than every call drawing the largest measured time."""
    samples = tmp_path / "coll.csv"
    cmd = [sys.executable, "-m", "latitude", "measure-coll", "-o", samples, "--colls", "allreduce"]
    cmd += ["--sizes", "8", "--iters", "1000", "--warmup", "20", "--", OMPI_RUN, "--oversubscribe", "-np", "2"]
    run(cmd, timeout=300)
    tr = tmp_path / "tr"
    trace(tr, [OMPI_RUN, "--oversubscribe", "-np", "2", ompi_apps / "cg", "--px", "2", "--py", "1", "--iters", "5"])
    # a model without costs (T = 0 per call): every measured time is excess, whatever the load
    free = ("-L", "0", "-o", "0")
    quiet = _simulate(tr, *free)
    noisy = _simulate(tr, *free, "--noise", f"coll:{samples}")
    calls = len(api.load(str(tr), progress=False).coll_calls()["vertex"]) // 2
    assert calls >= 10
    t = np.array([float(r["time_us"]) for r in csv.DictReader(open(samples))]) * 1e3
    assert quiet["runtime_ns"] < noisy["runtime_ns"] <= quiet["runtime_ns"] + calls * t.max()
    again = _simulate(tr, *free, "--noise", f"coll:{samples}")
    assert again["runtime_ns"] == noisy["runtime_ns"]


@pytest.mark.parametrize("spec", ["coll:x.csv"])
def test_spec_is_described(spec):
    from latitude.noise import describe, parse_noise

    assert describe(parse_noise(spec)) == "collective delays measured in x.csv"
