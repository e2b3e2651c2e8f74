"""latitude validate: the ΔL grid syntax, RRMSE, where the program starts in a launch command,
input errors, and the CI short version of the study (one app, 3 ΔL points, 2 runs each, a
loose bound; the full study is bench/validation.py)."""

from __future__ import annotations

import csv
import json
import sys

import pytest
from jsonschemas import check
from latitude import validate, validate_machine
from latitude.errors import InputError
from tracetools import OMPI_RUN, run


@pytest.mark.parametrize(
    "text,expected",
    [
        ("0:200us:9", [i * 25e3 for i in range(9)]),
        ("0:100us:3", [0, 50e3, 100e3]),
        ("10us:20us:2", [10e3, 20e3]),
        ("0,50us,1ms", [0, 50e3, 1e6]),
        ("50us,0", [0, 50e3]),
    ],
)
def test_grid(text, expected):
    assert validate.parse_grid(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["0:200us:1", "0:200us:x", "200us:0:3", "a:b:c:d", ",", "fast"])
def test_grid_errors(text):
    with pytest.raises(InputError) as e:
        validate.parse_grid(text)
    assert e.value.where == "--delta-L"


def test_rrmse():
    pts = [validate.Point(0, 100.0, 1, [110, 90]), validate.Point(1, 200.0, 1, [190, 210, 200])]
    rmse, rel = validate.rrmse(pts)
    assert rmse == 0 and rel == 0
    pts = [validate.Point(0, 90.0, 1, [100]), validate.Point(1, 330.0, 1, [300])]
    rmse, rel = validate.rrmse(pts)
    assert rmse == pytest.approx((10**2 / 2 + 30**2 / 2) ** 0.5)
    assert rel == pytest.approx(rmse / 200)
    assert pts[1].error == pytest.approx(0.1)
    assert validate.Point(0, 1, 0, [1, 3]).std_ns == pytest.approx(2**0.5)


def test_launcher_part(ompi_apps):
    app = str(ompi_apps / "cg")
    assert validate_machine.launcher_part([OMPI_RUN, "-np", "2", "-x", "A=1", app, "--n", "64"]) == [
        OMPI_RUN,
        "-np",
        "2",
        "-x",
        "A=1",
    ]
    with pytest.raises(InputError):
        validate_machine.launcher_part([OMPI_RUN, "-np", "2", "no-such-program"])


def test_output_check_shows_the_first_difference_and_ignores_patterns():
    ref = "step 1 energy -15.8\nseed 1795538617\nresult 42\nelapsed 1.2 s\n"
    check = validate.OutputCheck(ref)
    check.check(ref.replace("1.2 s", "3.4 s"), "run 1")  # timing lines never count
    assert check.identical and check.diff == []
    check.check(ref.replace("seed 1795538617", "seed 1795538999").replace("42", "43"), "run 1 at ΔL = 50 µs")
    assert not check.identical
    assert check.diff == [
        "run 1 at ΔL = 50 µs:",
        "-seed 1795538617",
        "-result 42",
        "+seed 1795538999",
        "+result 43",
    ]
    check.check("other\n", "run 2")
    assert check.diff[0] == "run 1 at ΔL = 50 µs:"  # the first difference is kept
    seeded = validate.OutputCheck(ref, ignore=(r"^seed ",))
    seeded.check(ref.replace("1795538617", "1"), "run 1")
    assert seeded.identical
    with pytest.raises(InputError):
        validate.OutputCheck(ref, ignore=("(",))


def test_program_name(ompi_apps):
    app = str(ompi_apps / "cg")
    assert validate.program_name([OMPI_RUN, "-np", "2", app, "-0", "-o", "np.out"]) == "cg"
    assert validate.program_name(["mpirun", "-np", "2", "no-such-program", "x"]) == "x"


@pytest.mark.parametrize(
    "opts,where",
    [
        (["--delta-L", "0:1:1"], "--delta-L"),
        (["--reps", "0"], "--reps"),
        (["--trace", "/nonexistent-dir"], "/nonexistent-dir"),
        (["--machine", "/nonexistent.toml", "--trace", "."], "/nonexistent.toml"),
        (["--ignore-output", "(unclosed"], "--ignore-output"),
        (["--posterior", "/nonexistent.csv", "--trace", "."], "/nonexistent.csv"),
        (["--bayes", "--machine", "/nonexistent.toml", "--trace", "."], "--bayes"),
        (["--draws", "0"], "--draws"),
    ],
)
def test_validate_bad_input(ompi_apps, tmp_path, opts, where):
    proc = run(
        [
            sys.executable,
            "-m",
            "latitude",
            "validate",
            "-o",
            tmp_path,
            *opts,
            "--",
            OMPI_RUN,
            "-np",
            "2",
            ompi_apps / "cg",
        ],
        check=False,
    )
    assert proc.returncode == 2 and proc.stderr.startswith(f"latitude: {where}"), proc.stderr
    assert proc.stderr.count("\n") == 1


def test_trace_run_writes_compressed_and_replaces_a_plain_trace(ompi_apps, tmp_path):
    """validate traces the way `latitude trace` does by default: compressed rank files, which
    replace a plain trace an older run left in the directory (no `.txt` beside a `.txt.gz`),
    and which the traced-run checks read."""
    from latitude import inject, tracer
    from latitude.params import Params

    out = tmp_path / "traces"
    out.mkdir()
    for r in range(3):  # an older, larger plain trace
        (out / f"pmpi-trace-rank-{r}.txt").write_text("MPI_Init:-:1:2:1.000\nMPI_Finalize:2.000:-\n#@ end finalize\n")
    launch = inject.Launch.resolve([OMPI_RUN, "--oversubscribe", "-np", "2", str(ompi_apps / "cg"), "--n", "64"])
    run = validate.trace_run(launch, out, timeout=120)
    assert run.returncode == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["pmpi-trace-rank-0.txt.gz", "pmpi-trace-rank-1.txt.gz"]
    assert all(tracer.is_compressed(f) for f in tracer.trace_files(out))
    assert tracer.traced_runtime_ns(out) > 0
    [c] = validate.trace_checks([out], Params())
    assert c["traced_ns"] == tracer.traced_runtime_ns(out) and c["predicted_ns"] > 0


def test_computation_drift_by_hand():
    """drift = the largest rank's busy time (mean over runs) minus the same at the smallest
    ΔL; the model's growth is compared with the runs' without and with it."""
    from latitude import validate_drift

    # ΔL = 0: busy maxima 50 and 70 → 60; ΔL = 10 µs: 80 and 100 → 90 (drift +30 ns, +50 %)
    p0 = validate.Point(0, 100.0, 1, [110, 90], [[50, 40], [70, 10]])
    p1 = validate.Point(10_000, 200.0, 1, [230, 230], [[80, 20], [5, 100]])
    d = validate_drift.drift([p1, p0])
    assert d["reference_delta_L_us"] == 0 and [r["delta_L_us"] for r in d["points"]] == [0, 10]
    last = d["points"][-1]
    assert last["drift_us"] * 1e3 == pytest.approx(30) and last["drift_pct"] == pytest.approx(50)
    # the runs grew by 130, the model by 100 (−23 %), the model plus the drift by 130 (0 %)
    assert last["growth_us"] * 1e3 == pytest.approx(130) and last["model_growth_us"] * 1e3 == pytest.approx(100)
    assert d["model_growth_error_pct"] == pytest.approx(100 * (100 / 130 - 1))
    assert d["with_drift_growth_error_pct"] == pytest.approx(0, abs=1e-9)
    line = validate_drift.note(d)
    assert "+50.0 %" in line and "(-23.1 %)" in line and "(+0.0 %)" in line, line
    # a run without busy times (an injector report without wait_ns), or one ΔL: no claim
    assert validate_drift.drift([p0, validate.Point(1, 2.0, 1, [3])]) is None
    assert validate_drift.drift([p0]) is None and validate_drift.note(None) is None


def test_validate_short(ompi_apps, tmp_path):
    """The CI version of the study: CG, 3 ΔL points, 2 runs each; RRMSE under a loose 15 %
    (the study's bound is 2 % on a quiet machine, docs/validation.md); the posterior band
    from validate's own calibration (--bayes)."""

    def study(out):
        return run(
            [
                sys.executable,
                "-m",
                "latitude",
                "validate",
                "--delta-L",
                "0:100us:3",
                "--reps",
                "2",
                "--traces",
                "2",
                "--calib-repeat",
                "2",
                "--calib-sizes",
                "8,1KiB,8KiB,64KiB",
                "-o",
                out,
                "--max-rrmse",
                "15",
                "--bayes",
                "--steps",
                "300",
                "--draws",
                "20",
                "--json",
                "--",
                OMPI_RUN,
                "-np",
                "2",
                ompi_apps / "cg",
                "--n",
                "256",
                "--iters",
                "300",
            ],
            timeout=600,
            check=False,
        )

    # Other load on a 2-core machine shows up directly in the runs: a miss is measured again
    # once before it counts (exit status 1 = RRMSE over the bound; anything else fails at once).
    out = tmp_path / "v"
    proc = study(out)
    if proc.returncode == 1:
        out = tmp_path / "v2"
        proc = study(out)
    if proc.returncode == 1:
        checks = json.loads(proc.stdout)["trace_checks"]
        if all(c["disturbed"] for c in checks):  # the machine is too busy to judge the model
            pytest.skip("every traced run was disturbed by other load: " + "; ".join(c["disturbed"] for c in checks))
    if proc.returncode == 1:
        # a miss on this 2-core VM is judged against the study's own run-to-run noise: whole
        # launches of the same program differ by up to 1.6x here (traced 49 and 74 ms, injected
        # 49-80 ms at ΔL = 0 in one CI run), and an exact model misses by that noise too
        s = json.loads(proc.stdout)
        floor = s["noise"]["rrmse"]
        assert s["rrmse"] <= 2.5 * floor, (s["rrmse"], s["noise"], proc.stderr)
        assert "run-to-run noise alone would give" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    s = check("validate", json.loads(proc.stdout))
    assert len(s["points"]) == 3 and all(p["runs"] == 2 for p in s["points"])
    assert s["output_identical"] is True
    # the prediction grows with ΔL, and so do the measurements
    pred = [p["predicted_us"] for p in s["points"]]
    meas = [p["mean_us"] for p in s["points"]]
    assert pred[0] < pred[1] < pred[2] and meas[0] < meas[2]
    # the latency sensitivity, free of the trace's own deviation: the measured growth from
    # ΔL = 0 to 100 µs against the model's, within 3 standard errors of the runs' noise (and
    # 15 % of the growth on a quiet node)
    slope = s["noise"]["slope"]
    assert slope["predicted_ns"] == pytest.approx((pred[2] - pred[0]) * 1e3)
    miss = abs(slope["measured_ns"] - slope["predicted_ns"])
    assert miss <= max(3 * slope["se_ns"], 0.15 * slope["predicted_ns"]), slope
    with open(out / "validation.csv") as f:
        rows = list(csv.DictReader(f))
    assert {"delta_L_us", "predicted_us", "mean_us", "std_us", "lambda_L", "busy_us", "drift_us"} <= set(rows[0])
    assert (out / "validation.png").stat().st_size > 10000
    assert (out / "machine.toml").exists() and (out / "traces-1").is_dir() and (out / "traces-2").is_dir()
    # two traces, the median one (the lower of two) used; each prediction at ΔL = 0 against
    # its own traced run (same span; a preemption inside an MPI call of a 40 ms run is not in
    # the trace's computation, so loose: one within 15 %, both within 50 %)
    checks = s["trace_checks"]
    assert [c["trace"] for c in checks] == ["traces-1", "traces-2"], checks
    errs = sorted(abs(c["predicted_ns"] / c["traced_ns"] - 1) for c in checks)
    assert errs[0] < 0.15 and errs[-1] < 0.5, checks
    used = [n for n in s["notes"] if n.endswith("used (median prediction)")]
    assert len(used) == 1 and used[0].startswith(min(checks, key=lambda c: c["predicted_ns"])["trace"]), s["notes"]
    from latitude.params import Params

    # the checks against the traced runs are priced by the machine those runs saw (calibrated
    # under the tracer), the grid by the injector's
    traced = out / "machine-traced.toml"
    assert "(under the tracer)" in traced.read_text() and any(str(traced) in n for n in s["notes"]), s["notes"]
    [again] = validate.trace_checks([out / "traces-1"], Params.from_machine(str(traced)))
    assert again["predicted_ns"] == checks[0]["predicted_ns"]
    [other] = validate.trace_checks([out / "traces-1"], Params.from_machine(str(out / "machine.toml")))
    assert other["predicted_ns"] != checks[0]["predicted_ns"]
    machine = (out / "machine.toml").read_text()
    assert "uncertainty (over 2 runs" in machine and "L_std" in machine and (out / "machine.samples.csv").exists()
    assert s["output_diff"] == []
    # the computation's change with ΔL, from the injector's busy times: every point measured,
    # and busy time a real share of each run (CG computes, then waits at every allreduce)
    drift = s["computation_drift"]
    assert [r["delta_L_us"] for r in drift["points"]] == [p["delta_L_us"] for p in s["points"]]
    for r, p in zip(drift["points"], s["points"]):
        assert 0.05 * p["mean_us"] < r["busy_us"] < p["max_us"], (r, p)
        assert r["model_growth_us"] == pytest.approx(p["predicted_us"] - s["points"][0]["predicted_us"])
    assert drift["points"][0]["drift_us"] == 0 and "with_drift_growth_error_pct" in drift
    # the posterior of the calibration (--bayes): a band per point, holding its median, and the shares
    post = s["posterior"]
    assert post["path"] == str(out / "machine.posterior.csv") and (out / "machine.posterior.csv").exists()
    assert 0 <= post["share_inside"] <= 1 and 0 <= post["share_runs_inside"] <= 1
    for p in s["points"]:
        assert p["band_lo_us"] < p["band_median_us"] < p["band_hi_us"], p
        assert 0.5 < p["band_median_us"] / p["predicted_us"] < 2, p


def test_traced_runtime_is_the_longest_init_end_to_finalize_start(tmp_path):
    from latitude import tracer

    def rank(r, init_end, fin, calls=3):
        body = [f"#@ world rank={r} size=2", f"MPI_Init:-:1:2:{init_end}"]
        body += [f"MPI_Wtime:{init_end + i}:{init_end + i + 0.5}" for i in range(calls)]
        body += [f"MPI_Finalize:{fin}:-", "#@ end finalize"]
        (tmp_path / f"pmpi-trace-rank-{r}.txt").write_text("\n".join(body) + "\n")

    rank(0, 100.0, 1100.0)
    rank(1, 150.0, 1300.5, calls=20000)  # long enough that the tail is read on its own
    assert tracer.traced_runtime_ns(tmp_path) == pytest.approx(1150.5e3)
    rank(1, 150.0, 1300.5)
    (tmp_path / "pmpi-trace-rank-1.txt").write_text("MPI_Init:-:1:2:150.0\nMPI_Wtime:151:152\n")
    assert tracer.traced_runtime_ns(tmp_path) is None  # a rank that did not reach MPI_Finalize


def test_traced_runtime_on_one_clock_starts_when_the_last_rank_leaves_init(tmp_path):
    """Ranks of one host share a clock: the run counts from the last MPI_Init end (the graph
    starts every rank at its own, as if they left together) to the last MPI_Finalize start."""
    from latitude import tracer

    def rank(r, init_end, fin, host):
        body = [f"#@ world rank={r} size=2 host={host} pid=1", f"MPI_Init:-:1:2:{init_end}"]
        body += [f"MPI_Finalize:{fin}:-", "#@ end finalize"]
        (tmp_path / f"pmpi-trace-rank-{r}.txt").write_text("\n".join(body) + "\n")

    rank(0, 100.0, 1400.0, "a")
    rank(1, 150.0, 1300.5, "a")  # left MPI_Init 50 µs after rank 0
    assert tracer.traced_runtime_ns(tmp_path) == pytest.approx(1250e3)
    rank(1, 150.0, 1300.5, "b")  # two hosts: clocks not comparable, the longest rank's span
    assert tracer.traced_runtime_ns(tmp_path) == pytest.approx(1300e3)


@pytest.mark.parametrize(
    "fit,warned",
    [
        ("under_injector = false\nunder_tracer = true\n", "under the tracer"),
        ("under_injector = false\nunder_tracer = false\n", "without the injector"),
        ("under_injector = true\nunder_tracer = false\n", None),
        ("", None),  # a hand-written machine file: nobody knows, no claim
    ],
)
def test_a_machine_not_calibrated_under_the_injector_is_named(tmp_path, fit, warned):
    """validate --machine prices injected runs: a machine calibrated under the tracer (o ~170 ns)
    misses the injector's own work per call (o ~310 ns), and validate says so."""
    from latitude import loggp_fit

    m = tmp_path / "m.toml"
    m.write_text('[loggps]\nL = "1us"\no = "1us"\n' + (f"[fit]\n{fit}" if fit else ""))
    note = loggp_fit.not_under_injector(str(m))
    assert (note is None) if warned is None else (warned in note and "--under-injector" in note)
