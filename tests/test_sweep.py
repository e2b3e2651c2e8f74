"""latitude sweep: spec reading, every row against the analyses it stands for, Parquet = CSV,
resume after a kill, per-point errors, bad specs (docs/sweep.md)."""

from __future__ import annotations

import json
import os
import shutil

import latitude
import pytest
from latitude import sweep
from latitude.params import Params
from latitude.sweep_store import read_table
from latitude.traces import ScheduleOptions

pa = pytest.importorskip("pyarrow")

# 5 graphs (a GOAL file, a job file with 4 seeds) x 10 L x 2 G = 100 points.
SPEC_100 = """
input = ["{examples}/halo2d-16.goal", "{examples}/stencil-and-io.job"]
seed = [1, 2, 3, 4]
[params]
L = "1us:10us:10"
G = ["0.018ns", "50GB/s"]
o = "1us"
[analysis]
pct = [1, 2.5, 5]
"""


def write_spec(tmp_path, text: str, name: str = "spec.toml", **fmt) -> str:
    path = tmp_path / name
    path.write_text(text.format(**fmt))
    return str(path)


def results_equal(a: list, b: list) -> bool:
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in a]
    return strip == [{k: v for k, v in r.items() if k != "seconds"} for r in b]


@pytest.fixture
def spec_100(tmp_path, examples):
    return write_spec(tmp_path, SPEC_100, examples=examples)


def test_spec_points_and_collapsed_dimensions(spec_100):
    spec = sweep.read_spec(spec_100)
    pts = spec.points()
    assert len(pts) == 100
    assert len({p.key() for p in pts}) == 100
    goal = [s for s in spec.sources if s.kind == "goal"]
    assert len(goal) == 1 and goal[0].seed is None and goal[0].coll is None  # GOAL: no seed, no coll
    assert sorted(s.seed for s in spec.sources if s.kind == "job") == [1, 2, 3, 4]
    ls = sorted({dict(p.values)["L"] for p in pts})
    assert ls[0] == 1000.0 and ls[-1] == 10000.0 and len(ls) == 10
    assert {dict(p.values)["G"] for p in pts} == {0.018, 0.02}
    assert {dict(p.values)["o"] for p in pts} == {1000.0}
    assert spec.swept() == ["input", "seed", "L", "G"]


def test_every_row_is_the_analysis_it_stands_for(spec_100, tmp_path):
    out = str(tmp_path / "r.parquet")
    summary = sweep.run(sweep.read_spec(spec_100), out, sweep.RunOptions(workers=2))
    assert (summary.evaluated, summary.failed, summary.skipped) == (100, 0, 0)
    # Points are batched per graph: each worker loads a graph at most once, never per point.
    assert summary.batches <= 20 and summary.graph_loads <= 5 * 2
    rows = read_table(out)
    assert len(rows) == 100
    graphs = {}
    for r in rows:
        key = (r["input"], r["seed"])
        if key not in graphs:
            graphs[key] = latitude.load(r["input"], progress=False, schedule=ScheduleOptions(), seed=r["seed"] or 1)
        g = graphs[key]
        params = Params(L=r["L"], o=r["o"], G=r["G"])
        pred = g.predict(params)
        assert r["T_ns"] == pred.runtime_ns
        assert r["lambda_L"] == pred.lambda_["L"] and r["lambda_G"] == pred.lambda_["G"]
        assert r["rho_L"] == pred.rho_L
        assert r["path_latency_ns"] == pred.critical_path["latency_ns"]
        tol = g.tolerance(["1", "2.5", "5"], params=params)
        for pct in ("1", "2.5", "5"):
            m = tol.max(pct)
            assert r[f"tol_L_{pct}pct"] == (float("inf") if m is None else m)
        assert r["error"] is None
    # Rows come in the spec's order whatever order the workers finished in.
    assert [r["L"] for r in rows[:10]] == sorted(r["L"] for r in rows[:10])


def test_csv_equals_parquet_and_one_process_equals_the_pool(spec_100, tmp_path):
    spec = sweep.read_spec(spec_100)
    sweep.run(spec, str(tmp_path / "a.parquet"), sweep.RunOptions(workers=2))
    sweep.run(spec, str(tmp_path / "b.csv"), sweep.RunOptions(workers=1))
    a, b = read_table(str(tmp_path / "a.parquet")), read_table(str(tmp_path / "b.csv"))
    assert results_equal(a, b)
    import pandas as pd

    frame = pd.read_parquet(tmp_path / "a.parquet")
    assert len(frame) == 100 and frame["T_ns"].notna().all()
    assert pd.read_csv(tmp_path / "b.csv")["T_ns"].tolist() == frame["T_ns"].tolist()


def test_resume_after_a_kill_loses_only_the_batch_in_flight(spec_100, tmp_path, cli):
    full = str(tmp_path / "full.parquet")
    sweep.run(sweep.read_spec(spec_100), full, sweep.RunOptions(workers=1))
    rows = read_table(full)
    # What a kill leaves: no output, a journal of the finished batches and a cut line.
    out = str(tmp_path / "r.parquet")
    with open(out + ".journal", "w") as f:
        for r in rows[:37]:
            f.write(json.dumps(r) + "\n")
        f.write(json.dumps(rows[37])[:40])
    refused = cli("sweep", spec_100, "-o", out, check=False)
    assert refused.returncode == 2 and "--resume" in refused.stderr and refused.stderr.count("\n") == 1
    proc = cli("sweep", spec_100, "-o", out, "--resume", "--json")
    summary = json.loads(proc.stdout)
    assert (summary["skipped"], summary["evaluated"]) == (37, 63)
    assert not os.path.exists(out + ".journal")
    assert results_equal(read_table(out), rows)
    # Nothing left to do: a second resume evaluates nothing and keeps every row.
    again = json.loads(cli("sweep", spec_100, "-o", out, "--resume", "--json").stdout)
    assert (again["skipped"], again["evaluated"]) == (100, 0)
    assert results_equal(read_table(out), rows)


def test_resume_extends_a_csv_with_new_points(tmp_path, examples):
    spec = write_spec(
        tmp_path, 'input = ["{examples}/halo2d-16.goal"]\n[params]\nL = ["1us", "2us"]\n', examples=examples
    )
    out = str(tmp_path / "r.csv")
    sweep.run(sweep.read_spec(spec), out, sweep.RunOptions(workers=1))
    wider = write_spec(
        tmp_path, 'input = ["{examples}/halo2d-16.goal"]\n[params]\nL = ["1us", "2us", "3us"]\n', examples=examples
    )
    s = sweep.run(sweep.read_spec(wider), out, sweep.RunOptions(workers=1, resume=True))
    assert (s.skipped, s.evaluated) == (2, 1)
    assert [r["L"] for r in read_table(out)] == [1000.0, 2000.0, 3000.0]


def test_a_failing_point_records_its_error_and_the_sweep_goes_on(tmp_path, examples, cli):
    (tmp_path / "bad.goal").write_text("num_ranks 2\nrank 0 {\nl1: send 8b to 5\n}\n")
    spec = write_spec(
        tmp_path,
        'input = ["bad.goal", "{examples}/stencil-and-io.job"]\ncoll = ["default", "allreduce=nosuch"]\n'
        '[params]\nL = ["1us", "2us"]\n',
        examples=examples,
    )
    out = tmp_path / "r.csv"
    proc = cli("sweep", spec, "-o", out, "--json")
    s = json.loads(proc.stdout)
    assert (s["evaluated"], s["failed"]) == (6, 4)
    rows = read_table(str(out))
    bad = [r for r in rows if r["error"]]
    assert {r["input"] for r in bad if "bad.goal" in r["input"]} and all("\n" not in r["error"] for r in bad)
    assert any("bad.goal:3" in r["error"] for r in bad)
    assert any("nosuch" in r["error"] and r["coll"] == "allreduce=nosuch" for r in bad)
    good = [r for r in rows if not r["error"]]
    assert len(good) == 2 and all(r["T_ns"] > 0 for r in good)


@pytest.mark.parametrize(
    "text, where, what",
    [
        ('input = ["nope.goal"]\n', ":1", "no such file"),
        ('input = ["{ex}/halo2d-16.goal"]\nfoo = 1\n', ":2", "unknown key 'foo'"),
        ('input = ["{ex}/halo2d-16.goal"]\n[params]\nL = "1us"\nQ = 2\n', ":4", "unknown parameter 'Q'"),
        ('input = ["{ex}/halo2d-16.goal"]\n[params]\nL = "5us:1us:3"\n', ":3", "empty range"),
        ('input = ["{ex}/halo2d-16.goal"]\n[params]\nL = "1us:5us:0"\n', ":3", "positive number of points"),
        ('input = ["{ex}/halo2d-16.goal"]\n[params]\nG = "fast"\n', ":3", "G"),
        ('input = ["{ex}/halo2d-16.goal"]\n[params]\nprotocol = ["rdma"]\n', ":3", "handshake"),
        ('input = ["{ex}/halo2d-16.goal"]\nseed = [-1]\n', ":2", "seeds"),
        ('input = ["{ex}/halo2d-16.goal"]\n[analysis]\npct = [-1]\n', ":3", ">= 0"),
        ('input = ["{ex}/halo2d-16.goal"]\n[analysis]\ntolerance = ["o"]\n', ":3", "L or G"),
        ('input = ["{ex}/halo2d-16.goal"]\nmachine = ["m.toml"]\n', ":2", "no such file"),
        ("input = [\n", "", "not valid TOML"),
        ("seed = [1]\n", "", "expected input"),
    ],
)
def test_bad_specs_are_one_line(tmp_path, examples, cli, text, where, what):
    spec = tmp_path / "s.toml"
    spec.write_text(text.replace("{ex}", examples))
    proc = cli("sweep", spec, "-o", tmp_path / "r.csv", check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"latitude: {spec}{where}") and what in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and not (tmp_path / "r.csv").exists()


def test_bad_output_and_options(tmp_path, examples, cli):
    spec = write_spec(tmp_path, 'input = ["{examples}/halo2d-16.goal"]\n', examples=examples)
    for args, what in (
        (["-o", tmp_path / "r.txt"], ".parquet or .csv"),
        (["-o", tmp_path / "no" / "r.csv"], "no such directory"),
        (["-o", tmp_path / "r.csv", "--workers", "0"], "--workers"),
        (["-o", tmp_path / "r.csv", "--batch", "0"], "--batch"),
        (["-o", tmp_path / "r.csv", "--dask", "http://x"], "--dask"),
    ):
        proc = cli("sweep", spec, *args, check=False)
        assert proc.returncode == 2 and what in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_machine_files_are_a_dimension(tmp_path, examples):
    (tmp_path / "fast.toml").write_text('L = "1us"\no = "0.5us"\n')
    (tmp_path / "slow.toml").write_text('L = "8us"\no = "2us"\nG = "10GB/s"\n')
    spec = write_spec(
        tmp_path,
        'input = ["{examples}/llamp-fig4c.goal"]\nmachine = ["fast.toml", "slow.toml"]\n[params]\nS = [1024, "inf"]\n',
        examples=examples,
    )
    out = str(tmp_path / "r.parquet")
    sweep.run(sweep.read_spec(spec), out, sweep.RunOptions(workers=1))
    rows = read_table(out)
    assert [(os.path.basename(r["machine"]), r["S"]) for r in rows] == [
        ("fast.toml", 1024),
        ("fast.toml", 2**63 - 1),
        ("slow.toml", 1024),
        ("slow.toml", 2**63 - 1),
    ]
    g = latitude.load(os.path.join(examples, "llamp-fig4c.goal"), progress=False)
    for r in rows:
        base = Params.from_machine(r["machine"]).replace(S=r["S"])
        assert r["T_ns"] == g.predict(base).runtime_ns and r["o"] == base.o


def test_link_classes_are_parameters_of_the_sweep(tmp_path, examples, cli):
    """A machine file's own parameters (the link class `wire` of a fat tree and a dragonfly)
    sweep like L: a range in [params], one column each, rows equal to predict at those values."""
    ft, df = (os.path.join(examples, "machines", f) for f in ("fat-tree-k16.toml", "dragonfly-g8.toml"))
    spec = write_spec(
        tmp_path,
        'input = ["{examples}/halo2d-16.goal"]\nmachine = ["{ft}", "{df}"]\n[params]\nwire = "274ns:3500ns:3"\n',
        examples=examples,
        ft=ft,
        df=df,
    )
    out = str(tmp_path / "r.parquet")
    sweep.run(sweep.read_spec(spec), out, sweep.RunOptions(workers=1))
    rows = read_table(out)
    assert [r["wire"] for r in rows] == [274.0, 1887.0, 3500.0] * 2
    g = latitude.load(os.path.join(examples, "halo2d-16.goal"), progress=False)
    for r in rows:
        want = g.predict(Params.from_machine(r["machine"]).with_values({"wire": r["wire"]}))
        assert r["T_ns"] == want.runtime_ns and r["lambda_wire"] == want.lambda_["wire"] and not r["error"]
    # a parameter some machine file lacks is one line at its key
    (tmp_path / "flat.toml").write_text('L = "1us"\n')
    bad = write_spec(
        tmp_path,
        'input = ["{examples}/halo2d-16.goal"]\nmachine = ["{ft}", "flat.toml"]\n[params]\nwire = "1ns"\n',
        "bad.toml",
        examples=examples,
        ft=ft,
    )
    proc = cli("sweep", bad, "-o", tmp_path / "b.csv", check=False)
    assert proc.returncode == 2 and f"{bad}:4" in proc.stderr and "unknown parameter 'wire'" in proc.stderr, proc.stderr


def test_placements_are_a_dimension(tmp_path, examples, cli):
    """block, round-robin and a map file on one machine file: each row is the prediction of the
    same graph with its ranks placed so (a new binding, no reload), and the best one is not
    block on the badly interleaved two-group job."""
    machine = os.path.join(examples, "machines", "two-nodes.toml")
    (tmp_path / "groups.map").write_text("0\n1\n0\n1\n0\n1\n0\n1\n")
    spec = write_spec(
        tmp_path,
        'input = ["{examples}/two-groups-8.job"]\nmachine = ["{m}"]\nplacement = ["block", "round-robin", "groups.map"]\n'
        '[params]\nL = ["2us", "4us"]\n',
        examples=examples,
        m=machine,
    )
    out = str(tmp_path / "r.csv")
    sweep.run(sweep.read_spec(spec), out, sweep.RunOptions(workers=1))
    rows = read_table(out)
    assert [(os.path.basename(r["placement"]), r["L"]) for r in rows] == [
        (p, L) for p in ("block", "round-robin", "groups.map") for L in (2000.0, 4000.0)
    ]
    g = latitude.load(os.path.join(examples, "two-groups-8.job"), progress=False)
    base = Params.from_machine(machine)
    maps = {"block": [0, 0, 0, 0, 1, 1, 1, 1], "round-robin": [0, 1] * 4, "groups.map": [0, 1] * 4}
    for r in rows:
        want = g.predict(base.with_placement(maps[os.path.basename(r["placement"])]).replace(L=r["L"])).runtime_ns
        assert r["T_ns"] == want and not r["error"]
    by = {(os.path.basename(r["placement"]), r["L"]): r["T_ns"] for r in rows}
    assert by[("round-robin", 4000.0)] == by[("groups.map", 4000.0)] != by[("block", 4000.0)]
    # placements need machine files with nodes; a bad map file is one line at spec time
    for text, what in (
        ('input = ["{examples}/two-groups-8.job"]\nplacement = ["block"]\n', "need machine files"),
        ('input = ["{examples}/two-groups-8.job"]\nmachine = ["{m}"]\nplacement = ["bad.map"]\n', "bad.map:2"),
    ):
        (tmp_path / "bad.map").write_text("0\nx\n")
        bad = write_spec(tmp_path, text, "bad.toml", examples=examples, m=machine)
        proc = cli("sweep", bad, "-o", tmp_path / "b.csv", check=False)
        assert proc.returncode == 2 and what in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_inputs_are_relative_to_the_spec(tmp_path, examples, cli):
    shutil.copy(os.path.join(examples, "halo2d-16.goal"), tmp_path / "h.goal")
    (tmp_path / "sub").mkdir()
    spec = write_spec(tmp_path / "sub", 'input = ["../h.goal"]\n')
    proc = cli("sweep", spec, "-o", tmp_path / "r.csv", cwd="/")
    assert "1 points: 1 evaluated" in proc.stdout.replace("\n", " ")


KILL_JOB = """[JOB] stencil
[RANKS] 0-63
[ITERATIONS] 100
[MOTIF] compute time=100us dist=gaussian sd=5us
[MOTIF] halo3d x=64KiB y=64KiB z=64KiB periodic=1
[MOTIF] allreduce bytes=8
"""


def test_sigkill_mid_sweep_then_resume(tmp_path, cli):
    """A real kill: the sweep process (one worker, one point a batch) is SIGKILLed once the
    journal holds a few batches; --resume evaluates only the rest and the output equals an
    uninterrupted sweep's."""
    import signal
    import subprocess
    import sys
    import time

    from conftest import cli_env

    (tmp_path / "s.job").write_text(KILL_JOB)
    spec = write_spec(tmp_path, 'input = ["s.job"]\n[params]\nL = "1us:40us:24"\n')
    out = str(tmp_path / "r.csv")
    cmd = [sys.executable, "-m", "latitude", "sweep", spec, "-o", out, "--workers", "1", "--batch", "1"]
    proc = subprocess.Popen(cmd, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = out + ".journal"
    deadline = time.monotonic() + 300
    while not (os.path.exists(journal) and open(journal).read().count("\n") >= 3):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not os.path.exists(out)
    kept = open(journal).read().count("\n")
    assert 3 <= kept < 24
    s = json.loads(cli("sweep", spec, "-o", out, "--resume", "--json").stdout)
    assert s["skipped"] == kept and s["evaluated"] == 24 - kept
    full = str(tmp_path / "full.csv")
    sweep.run(sweep.read_spec(spec), full, sweep.RunOptions(workers=1))
    assert results_equal(read_table(out), read_table(full))
