"""The real-application suite: MPI programs nobody on the project wrote, from Debian packages,
with 2 ranks under Open MPI — HPCC (small N), Quantum ESPRESSO pw.x (Si, 2 atoms), NetPIPE and
LAMMPS — each through the whole pipeline with the real CLI:

1. `latitude trace`; 2. `latitude schedule` to a GOAL file, which predicts exactly what the
trace does; 3. `latitude predict` on the trace with a machine file calibrated once for the
suite under the tracer (the machine a traced run sees): the ΔL = 0 prediction within
App.predict_bound (10 %; 15 % for NetPIPE) of the traced run's own runtime (same
span: the last MPI_Init end → MPI_Finalize start); 4. `latitude inject` at one ΔL: the
measured runtime against the prediction at L₀ + ΔL with the machine calibrated under the
injector (the machine an injected run sees), and the program's results identical to the
traced run's.
On HPCC and QE also every other command a user runs on a trace (sensitivity, tolerance,
simulate, validate), checked against predict.

A run disturbed by other load shows as time with every rank inside MPI (latitude.traced_run),
a run in another machine state than the calibration as a probe (in MPI_Init or MPI_Finalize)
outside [0.87, 1.15]× the machine file's; predict warns about both. A prediction that misses is traced again (up to 3
times); if every trace was warned about, the machine is too busy or unsteady to judge and
the test is skipped saying so. A miss on an
undisturbed trace fails."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from realapps import APPS
from tracetools import ompi, run

DELTA_L_US = 20  # the injected run's ΔL
TIMEOUT = 300


def latitude(*args, cwd=None, check=True):
    return run([sys.executable, "-m", "latitude", *map(str, args)], timeout=TIMEOUT, check=check, cwd=cwd)


def calibrated(tmp_path_factory, under: str) -> Path:
    path = tmp_path_factory.mktemp("machine") / "machine.toml"
    # up to the largest message the programs send (HPCC's b_eff: 2 MB): G from 256 KiB and
    # below, in cache, priced HPCC's 2 MB messages 25 % short
    sizes = "0,8,64,128,256,384,512,768,1KiB,2KiB,4KiB,16KiB,64KiB,256KiB,1MiB,2MiB"
    opts = [under, "--allow-zero-L", "--sizes", sizes, "--batches", "5", "--iters", "200"]
    latitude(
        "calibrate", *opts, "--repeat", "5", "-o", path, "--", *ompi(2)
    )  # medians of 5: one noisy fit moved NetPIPE 30 %
    return path


@pytest.fixture(scope="module")
def machine(tracer_cache, tmp_path_factory):
    """The machine as the injected runs see it (under the injector at ΔL = 0), once."""
    return calibrated(tmp_path_factory, "--under-injector")


@pytest.fixture(scope="module")
def traced_machine(tracer_cache, tmp_path_factory):
    """The machine as the traced runs see it (under the tracer), once: the injector's own work
    per call (~300 ns in o) is not what a traced run's calls pay (~150 ns), and NetPIPE, all
    small messages, was predicted up to 43 % above its traced run with the injector's."""
    return calibrated(tmp_path_factory, "--under-tracer")


def predict(graph, machine, *opts) -> dict:
    return json.loads(latitude("predict", graph, "--machine", machine, "--json", *opts).stdout)


def launch(d: Path, run: str) -> list[str]:
    """Open MPI's launcher with each rank's stdout kept in `d/run/1/rank.N/stdout` (the
    program's own output, apart from latitude's and each other's)."""
    return [*ompi(2), "--output-filename", str(d / run)]


def outputs(d: Path, run: str) -> str:
    """Every rank's stdout of one run, rank by rank."""
    files = sorted((d / run).glob("*/rank.*/stdout"), key=lambda f: int(f.parent.name[5:]))
    return "".join(f.read_text(errors="replace") for f in files)


def trace_and_predict(app, d: Path, machine: Path) -> list[dict]:
    """Trace until the prediction is within the bound, or 3 tries; one dict per try: trace,
    stdout, predict JSON, error. A miss is traced again even without a disturbance warning:
    the warning sees a rank preempted inside MPI, not one preempted while it computes, and
    the claim is about a typical traced run (QE on the idle machine: −1.5 to −5.9 % in 6 runs,
    the slowest traced run the worst; −11.8 % once in a CI run). A model that is off misses
    all three tries."""
    tries = []
    for i in range(3):
        argv, cwd = app.case(d)
        trace = d / f"traces-{i}"
        latitude("trace", "-o", trace, "--", *launch(d, f"out-trace-{i}"), *argv, cwd=cwd)
        s = predict(trace, machine)
        err = s["runtime_ns"] / s["traced_run"]["runtime_ns"] - 1
        out = outputs(d, f"out-trace-{i}") + app.results(cwd)
        tries.append({"trace": trace, "stdout": out, "predict": s, "error": err})
        # without a bound, trace again only when the run was disturbed
        if abs(err) <= app.predict_bound if app.predict_bound is not None else not s["warnings"]:
            break
    return tries


def injected(app, d: Path, machine: Path, predicted_ns: float):
    """One injected run at ΔL (again once if it misses): (its stdout, summary, error)."""
    argv, cwd = app.case(d)
    for i in range(2):
        run = f"out-inject-{i}"
        proc = latitude(
            "inject",
            "--delta-L",
            f"{DELTA_L_US}us",
            "--machine",
            machine,
            "--json",
            "--",
            *launch(d, run),
            *argv,
            cwd=cwd,
        )
        s = json.loads(proc.stdout)
        out = outputs(d, run) + app.results(cwd)
        err = predicted_ns / s["runtime_ns"] - 1
        if app.inject_bound is None or abs(err) <= app.inject_bound:
            break
    return out, s, err


def _state(t) -> str:
    """The traced run's machine-state probes (MPI_Init, MPI_Finalize) against the
    calibration's (predict's state_ratio and end_state_ratio)."""
    run = t["predict"]["traced_run"]
    ratios = [f"{run[k]:.2f}" for k in ("state_ratio", "end_state_ratio") if run.get(k) is not None]
    return f" (probes {', '.join(ratios)}× the machine's)" if ratios else ""


@pytest.mark.parametrize("name", list(APPS))
def test_real_application(name, machine, traced_machine, tmp_path):
    from latitude.params import Params
    from latitude.validate import OutputCheck

    app = APPS[name]
    if not app.available():
        pytest.skip(f"{name} is not installed (scripts/setup installs it)")
    tries = trace_and_predict(app, tmp_path, traced_machine)
    last = tries[-1]
    summary = "; ".join(
        f"{t['trace'].name}: {100 * t['error']:+.1f} %{' (warned)' if t['predict']['warnings'] else ''}{_state(t)}"
        for t in tries
    )
    print(f"{name}: ΔL = 0 prediction against the traced run: {summary}")
    missed = app.predict_bound is None or abs(last["error"]) > app.predict_bound
    if missed and all(t["predict"]["warnings"] for t in tries):
        # without a bound (NetPIPE) a warned trace still poisons the injected comparison
        pytest.skip(f"{name}: every traced run was disturbed or in another machine state ({summary})")
    if app.predict_bound is not None:
        assert abs(last["error"]) <= app.predict_bound, f"{name}: ΔL = 0 prediction against the traced run: {summary}"

    goal = tmp_path / f"{name}.goal"
    latitude("schedule", last["trace"], "-o", goal)
    assert predict(goal, traced_machine)["runtime_ns"] == last["predict"]["runtime_ns"]

    L0 = Params.from_machine(str(machine)).L
    at = predict(last["trace"], machine, "-L", f"{L0 + DELTA_L_US * 1e3}ns")
    assert at["runtime_ns"] > predict(last["trace"], machine)["runtime_ns"]
    out, s, err = injected(app, tmp_path, machine, at["runtime_ns"])
    assert s["messages"] > 0
    at_delta = (
        f"{name} at ΔL = {DELTA_L_US} µs: predicted {at['runtime_ns'] / 1e6:.1f} ms, "
        f"measured {s['runtime_ns'] / 1e6:.1f} ms ({100 * err:+.1f} %)"
    )
    print(at_delta)
    assert app.inject_bound is None or abs(err) <= app.inject_bound, at_delta
    check = OutputCheck(last["stdout"], app.varying)
    check.check(out, "the injected run")
    assert check.identical, check.diff


def analysis(cmd: str, graph, machine, *opts) -> dict:
    return json.loads(latitude(cmd, graph, "--machine", machine, "-g", "0ns", "--json", *opts).stdout)


def piece_at(pieces: list[dict], x: float) -> dict:
    """The piece on the right of x (the last one at the range's end)."""
    return next((p for p in pieces if p["from_ns"] <= x < p["to_ns"]), pieces[-1])


@pytest.mark.parametrize("name", ["hpcc", "qe"])
def test_every_command_on_a_real_trace(name, machine, tmp_path):
    """HPCC and QE through every command a user runs on a trace: sensitivity, tolerance and
    simulate agree with predict at the machine's L (they share one graph and one cost model),
    and validate runs the program under the injector at two ΔL and prices them."""
    app = APPS[name]
    if not app.available():
        pytest.skip(f"{name} is not installed (scripts/setup installs it)")
    argv, cwd = app.case(tmp_path)
    trace = tmp_path / "traces"
    latitude("trace", "-o", trace, "--", *ompi(2), *argv, cwd=cwd)
    app.results(cwd)
    base = analysis("predict", trace, machine)
    L0 = base["params"]["L"]

    curve = analysis("sensitivity", trace, machine, "--range", "0:50us")
    at = piece_at(curve["pieces"], L0)
    assert at["slope"] == base["lambda"]["L"]  # the right derivative, as predict's λ
    T0 = at["runtime_from_ns"] + at["slope"] * (L0 - at["from_ns"])
    assert T0 == pytest.approx(base["runtime_ns"], rel=1e-9)

    tol = analysis("tolerance", trace, machine)
    assert tol["baseline_runtime_ns"] == pytest.approx(base["runtime_ns"], rel=1e-12)
    for t in tol["tolerance"]:
        limit = (1 + t["pct"] / 100) * base["runtime_ns"]
        assert t["runtime_limit_ns"] == pytest.approx(limit, rel=1e-12)
        if t["max_ns"] is not None and t["max_ns"] < 5e4:  # inside the curve's range: the same T
            p = piece_at(curve["pieces"], t["max_ns"])
            assert p["runtime_from_ns"] + p["slope"] * (t["max_ns"] - p["from_ns"]) == pytest.approx(limit, rel=1e-9)

    sim = analysis("simulate", trace, machine, "--no-cpu-serialization")
    assert sim["unfinished_ops"] == 0
    if sim["exact_parameters"]:
        assert sim["runtime_ns"] == base["runtime_ns"]
    else:  # past 2⁶² units of 10⁻⁹ ns (4.6 s) the simulator works in fs and rounds a calibrated o, G
        assert sim["time_resolution_ns"] > 1e-9
        assert sim["runtime_ns"] == pytest.approx(base["runtime_ns"], rel=1e-9)

    ignore = [a for pat in app.varying for a in ("--ignore-output", pat)]
    out = tmp_path / "validate"
    v = latitude(
        "validate", "--machine", machine, "--trace", trace, "--delta-L", f"0,{DELTA_L_US}us", "--reps", "1",
        "-o", out, "--json", *ignore, "--", *ompi(2), *argv, cwd=cwd,
    )  # fmt: skip
    app.results(cwd)
    s = json.loads(v.stdout)
    assert [p["delta_L_us"] for p in s["points"]] == [0, DELTA_L_US]
    assert s["points"][0]["predicted_us"] * 1e3 == pytest.approx(predict(trace, machine)["runtime_ns"])
    assert all(p["runs"] == 1 and p["mean_us"] > 0 for p in s["points"])
    assert s["output_identical"] is not False, s["output_diff"]
    assert all((out / Path(f).name).is_file() for f in s["files"].values())
