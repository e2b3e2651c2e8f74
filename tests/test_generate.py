"""`latitude generate` and job files everywhere a graph is accepted: the CLI, the Python API,
GOAL round trips, analyses straight from a job file, and the error corpus
(tests/data/bad_jobs: every bad input is one line naming file and line, exit 2)."""

from __future__ import annotations

import json
import os

import pytest
from conftest import ROOT, run_cli

JOBS = os.path.join(ROOT, "tests", "data", "jobs")
BAD = os.path.join(ROOT, "tests", "data", "bad_jobs")

CFD = """# a small stencil code next to an I/O job
[JOB] cfd
[RANKS] 0-7
[ITERATIONS] 4
[MOTIF] compute time=20us dist=gaussian sd=2us
[MOTIF] halo3d x=4KiB y=4KiB z=4KiB
[MOTIF] allreduce bytes=8 every=2

[JOB] io
[RANKS] 8-11
[MOTIF] incast bytes=64KiB iterations=2
"""


@pytest.fixture
def cfd(tmp_path):
    p = tmp_path / "cfd.job"
    p.write_text(CFD)
    return p


def bad_cases():
    with open(os.path.join(BAD, "expected.txt")) as f:
        for line in f:
            name, rest = line.rstrip("\n").split(" ", 1)
            where, msg = rest.split(": ", 1)
            yield name, where, msg


def test_generate_writes_goal_that_reads_back(cfd, tmp_path):
    out = tmp_path / "cfd.goal"
    proc = run_cli("generate", cfd, "-o", out)
    assert "2 jobs on 12 ranks" in proc.stdout and "allreduce/recdoub ×2" in proc.stdout
    import latitude

    g, back = latitude.generate(str(cfd), progress=False), latitude.load(str(out))
    assert g.info["vertices"] == back.info["vertices"] and g.info["messages"] == back.info["messages"]
    a, b = g.predict(L="2us"), back.predict(L="2us")
    assert a.runtime_ns == b.runtime_ns and a.lambda_ == b.lambda_


def test_json_and_check(cfd):
    out = json.loads(run_cli("generate", cfd, "--json", "--seed", "3").stdout)
    assert out["world"] == 12 and out["seed"] == 3 and out["output"] is None
    jobs = {j["name"]: j for j in out["jobs"]}
    assert [m["calls"] for m in jobs["cfd"]["motifs"]] == [4, 4, 2]
    assert jobs["io"]["motifs"][0] == {"line": 11, "motif": "incast", "calls": 2, "alg": None}
    # 8 ranks x 4 iterations x 6 faces... halo3d 2x2x2: 3 neighbours each; recdoub on 8: 24; incast 3
    assert out["graph"]["messages"] == 8 * 3 * 4 + 24 * 2 + 3 * 2
    text = run_cli("generate", cfd, "--check").stdout
    assert text.splitlines()[3] == (
        "motif 6 halo3d px=2 py=2 pz=2 x=4096 y=4096 z=4096 periodic=0 compute=0 iterations=1 every=1"
    )


def test_python_api_text_path_seed_and_coll(cfd):
    import latitude

    by_text = latitude.generate(CFD, progress=False)
    by_path = latitude.generate(str(cfd), progress=False)
    assert by_text.info == {**by_path.info, "source": by_text.info["source"]}
    assert by_text.predict().runtime_ns == by_path.predict().runtime_ns
    other_seed = latitude.generate(CFD, seed=2, progress=False)
    assert other_seed.predict().runtime_ns != by_text.predict().runtime_ns
    ring = latitude.generate(CFD, coll="allreduce=ring", progress=False)
    assert ring.report.stats["jobs"][0]["motifs"][2]["alg"] == "ring"
    assert ring.info["messages"] == by_text.info["messages"] - 24 * 2 + 2 * 8 * 7 * 2
    with pytest.raises(latitude.InputError, match=r"<job>:3: halo2d: unknown parameter 'q'"):
        latitude.generate("[JOB] a\n[RANKS] 0-3\n[MOTIF] halo2d q=1\n")


def test_analyses_take_a_job_file(cfd):
    pred = json.loads(run_cli("predict", cfd, "-L", "1us", "--json").stdout)
    assert pred["runtime_ns"] > 4 * 20_000 and pred["lambda"]["L"] >= 4
    tol = json.loads(run_cli("tolerance", cfd, "--pct", "1,5", "--json").stdout)
    assert [t["pct"] for t in tol["tolerance"]] == [1.0, 5.0] and tol["tolerance"][0]["max_ns"] > tol["baseline_ns"]
    # --coll of the trace options chooses the algorithms of collective motifs without alg=
    ring = json.loads(run_cli("predict", cfd, "-L", "1us", "--json", "--coll", "allreduce=ring").stdout)
    assert ring["lambda"]["L"] != pred["lambda"]["L"]
    sens = json.loads(run_cli("sensitivity", cfd, "--range", "0:50us", "--json").stdout)
    assert sens["pieces"][0]["from_ns"] == 0


@pytest.mark.parametrize("name", sorted(f[:-4] for f in os.listdir(JOBS) if f.endswith(".job")))
def test_valid_vectors_generate(name):
    out = json.loads(run_cli("generate", os.path.join(JOBS, f"{name}.job"), "--json").stdout)
    assert out["graph"]["vertices"] > 0


@pytest.mark.parametrize("name, where, msg", list(bad_cases()))
def test_bad_job_files(name, where, msg):
    path = os.path.join(BAD, f"{name}.job")
    loc = path if where == "-" else f"{path}:{where}"
    for cmd in (["generate", path], ["predict", path]):
        proc = run_cli(*cmd, check=False)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == f"latitude: {loc}: {msg}\n"
        assert proc.stdout == ""


def test_missing_and_bad_options(tmp_path, cfd):
    proc = run_cli("generate", tmp_path / "nope.job", check=False)
    assert proc.returncode == 2 and "no such file or directory" in proc.stderr
    proc = run_cli("generate", cfd, "--coll", "allreduce=nope", check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("latitude: --coll: ")
    proc = run_cli("generate", cfd, "--seed", "-1", check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("latitude: --seed: ")


def test_generated_collectives_carry_their_call_cost(tmp_path):
    """A generated collective's join is its ranks' end of the call, as in a scheduled trace:
    the call cost K prices each of them, so 6 allreduces in a row on every rank add 6 K, in
    the engine, in the simulator and in the GOAL file written for the job."""
    job = tmp_path / "ar.job"
    job.write_text("[JOB] ar\n[RANKS] 0-3\n[ITERATIONS] 6\n[MOTIF] allreduce bytes=8\n")

    def runtime(cmd, graph, *k):
        return json.loads(run_cli(cmd, graph, "-L", "1us", *k, "--json").stdout)["runtime_ns"]

    base, priced = runtime("predict", job), runtime("predict", job, "-K", "700ns")
    assert priced - base == pytest.approx(6 * 700, abs=1e-6)
    assert runtime("simulate", job, "-K", "700ns") == pytest.approx(priced, abs=1e-6)
    goal = tmp_path / "ar.goal"
    run_cli("generate", job, "-o", goal)
    assert runtime("predict", goal, "-K", "700ns") == pytest.approx(priced, abs=1e-6)
