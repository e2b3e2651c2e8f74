"""Measured collectives: latitude-collbench runs under real MPI (measure-coll), the
distribution statistics on hand cases, the background metric b on captured squeue output,
and bad sample files refused in one line."""

from __future__ import annotations

import csv
import json
import math
import sys

import numpy as np
import pytest
from conftest import one_line, run_cli
from jsonschemas import check
from latitude import collbench, slurm, variability
from latitude.errors import InputError
from tracetools import OMPI_RUN, run

# ---- statistics on hand cases ----


def test_describe_hand_case():
    x = np.arange(1, 101, dtype=float)
    d = variability.describe(x)
    assert d["mean_us"] == 50.5 and d["median_us"] == 50.5
    assert d["p90_us"] == pytest.approx(90.1) and d["p99_us"] == pytest.approx(99.01)
    assert d["tail_share"] == pytest.approx(sum(range(91, 101)) / 5050)


def test_bimodality_coefficient_separates_one_mode_from_two():
    rng = np.random.default_rng(1)
    normal = rng.normal(10, 1, 20000)
    uniform = rng.uniform(0, 1, 20000)
    two = np.concatenate([rng.normal(10, 0.5, 10000), rng.normal(20, 0.5, 10000)])
    assert variability.bimodality_coefficient(normal) == pytest.approx(1 / 3, abs=0.02)
    assert variability.bimodality_coefficient(uniform) == pytest.approx(5 / 9, abs=0.02)
    assert variability.bimodality_coefficient(two) > 0.85 > variability.BIMODAL
    # a long right tail (lognormal) is skewed but the coefficient stays the formula's
    assert math.isnan(variability.bimodality_coefficient(np.ones(10)))
    assert math.isnan(variability.bimodality_coefficient(np.array([1.0, 2.0, 3.0])))


def test_b_correlation_over_runs():
    cols = {k: [] for k in (*variability.NEEDED, "b")}
    for run_id, b in enumerate([0.1, 0.3, 0.5, 0.7], start=1):
        for i in range(20):
            cols["coll"].append("bcast")
            cols["algorithm"].append("binomial")
            cols["procs"].append(4)
            cols["bytes"].append(1024)
            cols["run"].append(str(run_id))
            cols["time_us"].append(10 + 20 * b + (i % 3))
            cols["b"].append(b)
    cols = variability._arrays(cols)
    (c,) = variability.b_correlation(cols)
    assert c["runs"] == 4 and c["pearson"] == pytest.approx(1.0) and c["spearman"] == pytest.approx(1.0)
    (s,) = variability.table(cols)
    assert s.runs == 4 and s.n == 80 and s.b == pytest.approx(0.4)


# ---- the background metric b ----
SQUEUE = """\
101|4|n[01-04]
102|2|n04,n05
103|1|n06
104_3|3|gpu[1-2],n07
205|2|n[08-09]
"""


def test_hostlist_expansion():
    assert slurm.expand_hostlist("n[01-03,7],login") == ["n01", "n02", "n03", "n7", "login"]
    assert slurm.expand_hostlist("a[8-10]") == ["a8", "a9", "a10"]
    assert slurm.expand_hostlist("node0") == ["node0"]
    with pytest.raises(InputError):
        slurm.expand_hostlist("n[x-3]")


def test_b_from_captured_squeue():
    jobs = slurm.parse_squeue(SQUEUE)
    assert [j for j, _ in jobs] == ["101", "102", "103", "104_3", "205"]
    # communicating jobs 101, 102, 104, 205: distinct nodes n01-05, gpu1, gpu2, n07, n08, n09 = 10
    # counted per job: 4 + 2 + 3 + 2 = 11; all running jobs' nodes per job: 11 + 1 = 12
    bg = slurm.background(jobs, 20)
    assert bg.b == pytest.approx(10 / 20)
    assert bg.refined == pytest.approx(0.5 * (10 / 20 + 11 / 12))
    # our own job (SLURM_JOB_ID=205) is not background
    mine = slurm.background(jobs, 20, own_job="205")
    assert mine.b == pytest.approx(8 / 20) and mine.refined == pytest.approx(0.5 * (8 / 20 + 9 / 10)) and mine.jobs == 4
    assert slurm.background([], 4).b == 0 and slurm.background([], 4).refined == 0


def test_b_kept_only_when_stable():
    a, b = slurm.Background(0.5, 0.50, 3, 10), slurm.Background(0.5, 0.58, 3, 10)
    assert slurm.stable(a, a) == a and slurm.stable(a, b) is None and slurm.stable(None, a) is None


def test_bad_squeue_line():
    with pytest.raises(InputError) as e:
        slurm.parse_squeue("101|4|n[01-04]\nnot a line\n")
    assert e.value.where == "squeue:2"


# ---- bad sample files: one line, exit 2 ----
HEADER = ",".join(collbench.COLUMNS)


def _row(**over):
    base = dict.fromkeys(collbench.COLUMNS, "")
    base.update(run=1, coll="bcast", algorithm="binomial", procs=2, bytes=4, iteration=0, time_us=1.5, mean_us=1.0)
    base.update(over)
    return ",".join(str(base[c]) for c in collbench.COLUMNS)


@pytest.mark.parametrize(
    "text,where",
    [
        ("", "s.csv:1"),
        ("coll,algorithm\nbcast,binomial\n", "s.csv:1"),
        (f"{HEADER}\n{_row()}\n{_row(time_us='fast')}\n", "s.csv:3"),
        (f"{HEADER}\n{_row(time_us=-1)}\n", "s.csv:2"),
        (f"{HEADER}\n{_row(time_us='nan')}\n", "s.csv:2"),
        (f"{HEADER}\n{_row(procs='two')}\n", "s.csv:2"),
        (f"{HEADER}\n{_row()},extra\n", "s.csv:2"),
        (f"{HEADER}\n", "s.csv"),
    ],
)
def test_bad_sample_files(tmp_path, text, where):
    (tmp_path / "s.csv").write_text(text)
    proc = run_cli("variability", tmp_path / "s.csv", check=False)
    one_line(proc, f"{tmp_path / where}")


def test_binary_and_missing_sample_files(tmp_path):
    (tmp_path / "s.csv").write_bytes(b"\xff\xfe\x00garbage")
    one_line(run_cli("variability", tmp_path / "s.csv", check=False), "s.csv")
    one_line(run_cli("variability", tmp_path / "none.csv", check=False), "none.csv")
    (tmp_path / "s.parquet").write_bytes(b"PAR1 not really")
    one_line(run_cli("variability", tmp_path / "s.parquet", check=False), "s.parquet")
    (tmp_path / "ok.csv").write_text(f"{HEADER}\n{_row()}\n")
    one_line(run_cli("variability", tmp_path / "ok.csv", "--violin", tmp_path / "v.jpg", check=False), "--violin")


def test_measure_coll_bad_options(tracer_cache):
    def bad(*opts, where):
        proc = run([sys.executable, "-m", "latitude", "measure-coll", *opts, "--", OMPI_RUN, "-np", "2"], check=False)
        one_line(proc, where)

    bad("-o", "x.txt", where="-o")
    bad("-o", "x.csv", "--colls", "gather", where="--colls")
    bad("-o", "x.csv", "--algorithms", "bcast=ring", where="--algorithms")
    bad("-o", "x.csv", "--colls", "reduce", "--sizes", "6", where="--sizes")
    bad("-o", "x.csv", "--iters", "0", where="--iters")
    one_rank = [sys.executable, "-m", "latitude", "measure-coll", "-o", "x.csv", "--colls", "p2p", "--iters", "5"]
    proc = run(
        [*one_rank, "--sizes", "4", "--", OMPI_RUN, "-np", "1"], check=False
    )  # found once it ran: after progress lines
    assert (
        proc.returncode == 2
        and proc.stderr.splitlines()[-1] == "latitude: command: p2p measures between ranks: launch at least 2"
    )


# ---- real MPI ----
def _measure(tmp_path, name, launcher, algorithms, colls="bcast,alltoall", iters=1000):
    out = tmp_path / name
    cmd = [sys.executable, "-m", "latitude", "measure-coll", "-o", out, "--colls", colls, "--algorithms", algorithms]
    cmd += ["--sizes", "4,4KiB", "--iters", str(iters), "--warmup", "20", "--", *launcher]
    run(cmd, timeout=300)
    return out


def test_measure_coll_and_variability_open_mpi(tracer_cache, tmp_path):
    out = _measure(
        tmp_path, "coll.csv", [OMPI_RUN, "--oversubscribe", "-np", "3"], "bcast=binomial,chain;alltoall=default"
    )
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3 * 2 * 1000  # 3 runs (bcast ×2, alltoall ×1), 2 sizes, every call kept
    first = rows[0]
    assert first["mpi"] == "openmpi" and "Open MPI" in first["library"] and first["procs"] == "3"
    assert (
        first["channels"] == "shm" and len(set(first["hosts"].split(";"))) == 1 and len(first["cpus"].split(";")) == 3
    )
    assert {(r["coll"], r["algorithm"]) for r in rows} == {
        ("bcast", "binomial"),
        ("bcast", "chain"),
        ("alltoall", "default"),
    }
    assert all(float(r["time_us"]) >= float(r["mean_us"]) > 0 for r in rows)
    assert {r["iteration"] for r in rows if r["run"] == "1" and r["bytes"] == "4"} == {str(i) for i in range(1000)}
    big = [float(r["time_us"]) for r in rows if r["coll"] == "alltoall" and r["bytes"] == "4096"]
    small = [float(r["time_us"]) for r in rows if r["coll"] == "alltoall" and r["bytes"] == "4"]
    assert np.median(big) > np.median(small)

    proc = run_cli("variability", out, "--json", "--violin", tmp_path / "v.png", "--hist", tmp_path / "h.svg")
    doc = check("variability", json.loads(proc.stdout))
    conf = {(c["coll"], c["algorithm"], c["bytes"]): c for c in doc["configurations"]}
    assert len(conf) == 6 and all(c["n"] == 1000 for c in conf.values())
    c = conf[("bcast", "chain", 4096)]
    assert c["median_us"] <= c["p90_us"] <= c["p99_us"] and 0.1 <= c["tail_share"] < 1 and c["b"] is None
    assert (tmp_path / "v.png").stat().st_size > 10_000 and (tmp_path / "h.svg").stat().st_size > 10_000
    assert "bcast" in run_cli("variability", out).stdout


def test_measure_coll_mpich_parquet(tracer_cache, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    launcher = ["mpiexec.mpich", "-np", "2"]
    out = _measure(tmp_path, "coll.parquet", launcher, "allreduce=recdoub,rabenseifner", colls="allreduce", iters=1000)
    df = pd.read_parquet(out)
    assert len(df) == 2 * 2 * 1000 and set(df["algorithm"]) == {"recdoub", "rabenseifner"}
    assert set(df["mpi"]) == {"mpich"} and df["library"].str.contains("MPICH").all()
    assert df["b"].isna().all()
    doc = json.loads(run_cli("variability", out, "--json").stdout)
    assert len(doc["configurations"]) == 4


def test_b_correlation_from_a_file(tmp_path):
    rows = [
        _row(run=r, b=b, iteration=i, time_us=5 + 10 * b + i % 2)
        for r, b in ((1, 0.2), (2, 0.5), (3, 0.4))
        for i in range(8)
    ]
    (tmp_path / "s.csv").write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    doc = check("variability", json.loads(run_cli("variability", tmp_path / "s.csv", "--json").stdout))
    (c,) = doc["b_correlation"]
    assert c["runs"] == 3 and c["pearson"] == pytest.approx(1.0) and c["spearman"] == pytest.approx(1.0)
    assert "Spearman 1.000" in run_cli("variability", tmp_path / "s.csv").stdout
