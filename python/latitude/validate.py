"""Validation against real runs: predicted runtime vs runtime measured under injected latency.

The LLAMP paper's method (§III): trace the application once at ΔL = 0, predict T(L₀ + ΔL)
for a grid of ΔL with the machine's LogGPS parameters, run the application under the latency
injector at every ΔL several times, and report the relative root-mean-square error

    RRMSE = sqrt(mean_i (measured_i − predicted_i)²) / mean_i measured_i

over the grid points (measured_i = mean of the runs at ΔL_i; the paper's Table II), beside the
RRMSE an exact model would show from the runs' own noise (latitude.validate_noise).

Both sides measure the same span: the model's T is the finish time of the last rank, every
rank starting at the end of its MPI_Init (the trace's time origin); the injector reports each
rank's MPI_Init end → MPI_Finalize start and a run's runtime is the longest rank.

The machine parameters come from ``--machine`` or from ``latitude calibrate`` run under the
injector at ΔL = 0 (so its per-message overhead is part of o and L, as in the measured runs),
repeated and combined by per-size medians (``--calib-repeat``). A trace is one sample of the
application's computation, which varies from run to run on a busy node; with ``--traces N``
the application is traced N times and the trace whose ΔL = 0 prediction is the median is
used. Every trace's prediction at ΔL = 0 is also compared with that traced run's own runtime
(same span), priced with the machine the traced runs saw (calibrated under the tracer, or
``--traced-machine``; latitude.validate_machine): the difference is the model's and the
calibration's error on that very run, free of the run-to-run variation that the injected
runs' comparison includes.
With a posterior of the machine's parameters (``--posterior F`` from ``calibrate --bayes``,
or ``--bayes``: sampled from this validation's own calibration) every ΔL also gets the 95 %
posterior predictive band of one run: θᵢ drawn from the posterior, Tᵢ = T(θᵢ, Lᵢ + ΔL) by one
engine pass each, times 1 + s·√(1 + 1/k)·z with s the relative spread of the k ≥ 2 traced runs
(``--traces``) and z Student-t with k − 1 degrees of freedom: the program's own run-to-run
noise (``latitude.bayes.predictive_band``; with one trace the band is the credible band of
the mean); reported with the share of the measured means, and of single runs, inside it.

The band also holds what the model cannot see: the injector's own cost. The model is made
from a traced run, but the runs it is compared with run under the injector, whose calls do
more work (timestamps, release decisions, collectives as point-to-point schedules) and which
took 0-9 % longer at ΔL = 0 than the traced runs of the same program (docs/validation.md).
When the grid has ΔL = 0 with n ≥ 2 runs, that offset is measured, in ns (a cost per call,
not a share of T, so the same at every ΔL):

    D = mean(injected at ΔL = 0) − mean(traced),  se² = v_inj/n + v_tr/k

(v the sample variances; v_tr = v_inj with one trace), and every band value gets D + se·t_ν
added, t_ν Student-t with ν = min(k, n) − 1 (Welch's conservative bound; n − 1 with one
trace). The ΔL = 0 runs that measured D are then not counted in the shares inside (they
would be inside by construction): the shares judge the other ΔL, i.e. the model's latency
sensitivity plus an offset measured once. The JSON's ``posterior.offset`` reports D, se, ν.
Predictions use the rendezvous protocol the injector realises (handshake) and the eager
limit S of the machine, which the injector is given too; collectives use the default
algorithms of ``latitude schedule``, which the injector re-implements.
"""

from __future__ import annotations

import csv
import difflib
import json
import math
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from latitude import inject, launcher, loggp_fit, traced_run, tracer, validate_drift, validate_noise
from latitude.errors import InputError, ToolError
from latitude.outputs import open_atomic
from latitude.units import parse_range, parse_time
from latitude.validate_machine import launcher_part, machine_params, traced_machine_params

# stdout lines that report times differ between runs; everything else must be identical
_TIMING = re.compile(
    r"(?i)elapsed|time|perf|wall|cpu|second|%|/s\b|µs|\bms\b"
    r"|^\s*\w+\s*\|.*\|"
)  # and rows of timing tables (LAMMPS' "Pair | 0.55 | ...")


def parse_grid(text: str, where: str = "--delta-L") -> list[float]:
    """'0:200us:9' -> 9 evenly spaced ΔL (ns); or a comma list '0,10us,50us'."""
    parts = str(text).split(":")
    if len(parts) == 3:
        lo, hi = parse_range(f"{parts[0]}:{parts[1]}", where)
        try:
            n = int(parts[2])
        except ValueError:
            raise InputError(where, f"expected LO:HI:POINTS such as 0:200us:9, got {text!r}") from None
        if n < 2 or hi <= lo:
            raise InputError(where, f"expected at least 2 points on a non-empty range, got {text!r}")
        return [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    if len(parts) == 1:
        vals = sorted({parse_time(t.strip(), where) for t in text.split(",") if t.strip()})
        if not vals:
            raise InputError(where, f"expected a grid such as 0:200us:9 or 0,50us,100us, got {text!r}")
        return vals
    raise InputError(where, f"expected LO:HI:POINTS such as 0:200us:9, got {text!r}")


@dataclass
class ValidateOptions:
    deltas: list[float]  # ΔL grid, ns
    reps: int = 5
    outdir: Path = Path("latitude-validate")
    machine: str | None = None  # machine file; None: calibrate under the injector
    traced_machine: str | None = None  # the traced runs' machine; None: calibrate under the tracer
    trace_dir: Path | None = None  # an existing trace of the same run (skips tracing)
    calib_sizes: tuple = ()
    calib_batches: int = 11
    calib_iters: int = 200
    calib_repeat: int = 3  # calibration runs, combined by per-size medians
    traces: int = 1  # traced runs; the median one's graph is used
    check_output: bool = True
    ignore_output: tuple = ()  # regexes: stdout lines matching any are not compared
    timeout: float | None = None  # s per run; None: the defaults (run_timeout); 0: no limit
    title: str | None = None
    posterior: str | None = None  # posterior CSV of calibrate --bayes: the 95 % predictive band
    bayes: bool = False  # sample the posterior from validate's own calibration instead
    bayes_steps: int = 3000
    draws: int = 200  # posterior draws for the band (one engine pass per draw and ΔL)


@dataclass
class Point:
    delta_ns: float
    predicted_ns: float
    lambda_L: int
    runs_ns: list[int] = field(default_factory=list)
    busy_ns: list[list[int]] = field(default_factory=list)  # per run, each rank's (validate_drift)
    band: dict | None = None  # posterior predictive of one run (latitude.bayes.predictive_band), ns

    @property
    def mean_ns(self) -> float:
        return sum(self.runs_ns) / len(self.runs_ns)

    @property
    def std_ns(self) -> float:
        n = len(self.runs_ns)
        if n < 2:
            return 0.0
        m = self.mean_ns
        return math.sqrt(sum((x - m) ** 2 for x in self.runs_ns) / (n - 1))

    @property
    def error(self) -> float:
        """(predicted − measured mean) / measured mean."""
        return (self.predicted_ns - self.mean_ns) / self.mean_ns

    def row(self) -> dict:
        return {
            "delta_L_us": self.delta_ns / 1e3,
            "predicted_us": self.predicted_ns / 1e3,
            "mean_us": self.mean_ns / 1e3,
            "std_us": self.std_ns / 1e3,
            "min_us": min(self.runs_ns) / 1e3,
            "max_us": max(self.runs_ns) / 1e3,
            "runs": len(self.runs_ns),
            "error_pct": 100 * self.error,
            "lambda_L": self.lambda_L,
        } | (self.band_row() if self.band else {})

    def band_row(self) -> dict:
        b = self.band
        return {
            "band_lo_us": b["lo"] / 1e3,
            "band_median_us": b["median"] / 1e3,
            "band_hi_us": b["hi"] / 1e3,
            "mean_inside": b["lo"] <= self.mean_ns <= b["hi"],
            "runs_inside": sum(b["lo"] <= t <= b["hi"] for t in self.runs_ns),
        }


def rrmse(points: list[Point]) -> tuple[float, float]:
    """(RMSE ns, RRMSE as a fraction) of the measured means against the predictions."""
    rmse = math.sqrt(sum((p.mean_ns - p.predicted_ns) ** 2 for p in points) / len(points))
    return rmse, rmse / (sum(p.mean_ns for p in points) / len(points))


@dataclass
class Validation:
    points: list[Point]
    params: object
    rmse_ns: float
    rrmse: float
    trace_dir: Path
    machine_path: Path
    files: dict
    output_identical: bool | None
    baseline_L_ns: float
    notes: list[str]
    sens: object = None
    tol: object = None
    trace_checks: list = field(default_factory=list)
    output_diff: list = field(default_factory=list)  # the first differing run's first lines
    posterior: dict | None = None  # path, draws, shares inside the band (points carry the band)
    drift: dict | None = None  # the computation's change with ΔL (validate_drift)
    noise: dict | None = None  # the RRMSE from run-to-run noise alone, and the slope (validate_noise)

    def summary(self) -> dict:
        return {
            "rrmse": self.rrmse,
            "rmse_ns": self.rmse_ns,
            "points": [p.row() for p in self.points],
            "params": self.params.to_dict(),
            "baseline_L_ns": self.baseline_L_ns,
            "trace_dir": str(self.trace_dir),
            "machine": str(self.machine_path),
            "output_identical": self.output_identical,
            "output_diff": self.output_diff,
            "files": self.files,
            "notes": self.notes,
            "trace_checks": self.trace_checks,
            "computation_drift": self.drift,
            "noise": self.noise,
        } | ({"posterior": self.posterior} if self.posterior else {})


# ---- steps ----
DIFF_LINES = 8  # differing output lines shown


class OutputCheck:
    """The program's result lines (stdout without timing lines and lines matching --ignore-output)
    of the traced run, compared with each injected run; keeps the first difference."""

    def __init__(self, reference: str | None, ignore: tuple = ()):
        try:
            self.ignore = [re.compile(p) for p in ignore]
        except re.error as err:
            raise InputError("--ignore-output", f"not a regular expression: {err}") from None
        self.reference = self.lines(reference)
        self.identical = True
        self.diff: list[str] = []

    def lines(self, stdout: str | None) -> list[str]:
        return [
            ln
            for ln in (stdout or "").splitlines()
            if not _TIMING.search(ln) and not any(p.search(ln) for p in self.ignore)
        ]

    def check(self, stdout: str | None, where: str) -> None:
        got = self.lines(stdout)
        if got == self.reference:
            return
        self.identical = False
        if not self.diff:
            changed = [
                ln
                for ln in difflib.unified_diff(self.reference, got, "traced run", where, n=0, lineterm="")
                if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
            ]
            self.diff = [f"{where}:"] + changed[:DIFF_LINES] + (["…"] if len(changed) > DIFF_LINES else [])


def trace_run(launch: inject.Launch, outdir: Path, timeout: float | None) -> launcher.Run:
    """Trace the application once (ΔL = 0) into `outdir` (replacing its trace, whichever form it
    had), compressed as `latitude trace` writes by default: the same records, and the tracing
    cost of the runs a user traces."""
    lib = inject.build_with_spinner(launch, tracer.LIB_NAME)
    outdir.mkdir(parents=True, exist_ok=True)
    staging = tracer.staging_dir(outdir)
    try:
        env = tracer.trace_env(lib, staging, compress=True)
        run = launcher.run(*launch.command(env), timeout=timeout, what="the traced run")
        for f in tracer.trace_files(staging):
            tracer.repair(f)
        s = tracer.summarize(staging)
        if run.returncode != 0 or not s.files or set(s.endings) != {"finalize"}:
            raise ToolError(run.failure(f"the traced run of `{' '.join(launch.argv)}` ({s.ranks} trace files)"))
        tracer.install(staging, outdir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return run


def predict(graph, params, deltas: list[float]):
    """(sensitivity over [L₀, L₀ + max ΔL], tolerance from L₀, predicted T and λ_L per ΔL)."""
    L0 = params.L
    sens = graph.sensitivity(L0, L0 + max(deltas), params=params)
    tol = graph.tolerance(params=params, baseline=L0)
    preds = [(float(sens.runtime(L0 + d)), int(sens.slope(L0 + d))) for d in deltas]
    return sens, tol, preds


def trace_checks(dirs: list[Path], params) -> list[dict]:
    """Per trace: the prediction at the machine's L and the traced run's own runtime (same
    span). Their difference is the model's and the calibration's error at ΔL = 0 on that very
    run, free of run-to-run variation."""
    from latitude.api import load

    out = []
    for d in dirs:
        pred = float(load(str(d), progress=False).predict(params=params).runtime_ns)
        disturbed = traced_run.check(traced_run.analyse(d), pred)
        out.append(
            {"trace": d.name, "predicted_ns": pred, "traced_ns": tracer.traced_runtime_ns(d), "disturbed": disturbed}
        )
    return out


def check_note(c: dict) -> str:
    if c["traced_ns"] is None:
        return f"{c['trace']}: predicted {c['predicted_ns'] / 1e6:.1f} ms at ΔL = 0"
    err = c["predicted_ns"] / c["traced_ns"] - 1
    return (
        f"{c['trace']}: predicted {c['predicted_ns'] / 1e6:.1f} ms at ΔL = 0, the traced run took "
        f"{c['traced_ns'] / 1e6:.1f} ms ({100 * err:+.1f} %)"
        + (
            " — disturbed: every rank waited inside MPI longer than messages explain (other load)"
            if c.get("disturbed")
            else ""
        )
    )


def noise(points: list[Point], checks: list[dict], rel: float) -> dict | None:
    """validate_noise's floor, the chance an exact model misses by this study's RRMSE `rel`,
    and the slope, for this study's runs (points in ΔL order)."""
    ordered = sorted(points, key=lambda p: p.delta_ns)
    runs = [p.runs_ns for p in ordered]
    k = max(len(checks), 1)
    floor = validate_noise.rrmse_floor(runs, [c["traced_ns"] for c in checks if c["traced_ns"]], k)
    if floor is None:
        return None
    pred = [p.predicted_ns for p in ordered]
    p = validate_noise.exceed_p(rel, runs, floor["sigma_ns"], k)
    return floor | {"exceed_p": p, "slope": validate_noise.slope_check(runs, pred, floor["sigma_ns"])}


def median_trace(checks: list[dict]) -> dict:
    """The check of the trace whose prediction is the median (the lower middle one)."""
    ranked = sorted(checks, key=lambda c: c["predicted_ns"])
    return ranked[(len(ranked) - 1) // 2]


def run_timeout(traced_s: float, points: list[Point]) -> float:
    """Default limit of one injected run: a minute plus ten times the traced run and the
    largest predicted slowdown (a rank stuck in a crash handler must not hang the study)."""
    slowdown = max(p.predicted_ns for p in points) - min(p.predicted_ns for p in points)
    return 60 + 10 * (traced_s + slowdown / 1e9)


def run_grid(
    launch: inject.Launch, params, points: list[Point], reps: int, timeout, update, output: OutputCheck | None
) -> None:
    """reps × grid runs under the injector, rep-major with alternating direction (slow drifts
    of the machine then average out over the grid); each run's output checked."""
    lib = launch.build(inject.INJECT_LIB)
    done = 0
    for rep in range(reps):
        order = points if rep % 2 == 0 else list(reversed(points))
        for p in order:
            opts = inject.InjectOptions.for_machine(params, p.delta_ns)
            res = inject.run_injected(launch, opts, lib, timeout=timeout)
            p.runs_ns.append(res.runtime_ns)
            if (busy := res.busy_ns) is not None:
                p.busy_ns.append(busy)
            if output is not None:
                output.check(res.stdout, f"run {rep + 1} at ΔL = {p.delta_ns / 1e3:g} µs")
            done += 1
            update(done)


def validate(launch: inject.Launch, opts: ValidateOptions, log=inject.log) -> Validation:
    from latitude.progress import progress

    outdir = Path(opts.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    notes = []
    trace_dirs = (
        [Path(opts.trace_dir)]
        if opts.trace_dir
        else [outdir / "traces"]
        if opts.traces == 1
        else [outdir / f"traces-{i + 1}" for i in range(opts.traces)]
    )
    post = read_posterior(opts)
    output = None
    traced_s = 0.0  # wall time of the traced run: what the runs' default time limit scales with
    if not opts.trace_dir:
        for i, d in enumerate(trace_dirs):
            log(
                f"tracing `{' '.join(launch.argv)}` at ΔL = 0"
                f"{f' ({i + 1} of {len(trace_dirs)})' if len(trace_dirs) > 1 else ''} ..."
            )
            run = trace_run(launch, d, inject.DEFAULT_TIMEOUT_S if opts.timeout is None else opts.timeout or None)
            traced_s = max(traced_s, run.wall_s)
            if i == 0 and opts.check_output:
                output = OutputCheck(run.stdout, opts.ignore_output)
    params, mpath, calibration = machine_params(launch, opts, outdir)
    log(f"machine: {params.describe()} ({mpath})")
    if opts.machine and (note := loggp_fit.not_under_injector(opts.machine)):
        notes.append(note)
        log("warning: " + note)
    traced_params, source = traced_machine_params(launch, opts, outdir, params)
    notes.append(f"traced runs' machine (the ΔL = 0 check of each trace): {traced_params.describe()} ({source})")
    log(notes[-1])
    checks = trace_checks(trace_dirs, traced_params)
    chosen = median_trace(checks)
    trace_dir = next(d for d in trace_dirs if d.name == chosen["trace"])
    for c in checks:
        notes.append(check_note(c) + (" — used (median prediction)" if c is chosen and len(checks) > 1 else ""))
        log(notes[-1])
    from latitude.api import load

    graph = load(str(trace_dir), progress=False)
    sens, tol, preds = predict(graph, params, opts.deltas)
    points = [Point(d, t, lam) for d, (t, lam) in zip(opts.deltas, preds)]
    if opts.bayes:
        post = sample_posterior(opts, calibration, outdir, log)
    total = opts.reps * len(points)
    log(f"running {total} injected runs ({len(points)} ΔL × {opts.reps}; {inject.environment_note()}) ...")
    t0 = time.monotonic()
    if not traced_s:
        traced_s = (tracer.traced_runtime_ns(trace_dir) or 0) / 1e9
    limit = run_timeout(traced_s, points) if opts.timeout is None else opts.timeout or None
    with progress("injected runs", total=total) as update:
        run_grid(launch, params, points, opts.reps, limit, update, output)
    notes.append(f"{total} injected runs in {time.monotonic() - t0:.0f} s")
    rmse, rel = rrmse(points)
    same = output.identical if output else None
    v = Validation(points, params, rmse, rel, trace_dir, mpath, {}, same, params.L, notes, sens, tol, checks)
    if output:
        v.output_diff = output.diff
    v.drift = validate_drift.drift(points)
    v.noise = noise(points, checks, rel)
    if post is not None:
        log(f"posterior predictive band: {opts.draws} draws × {len(points)} ΔL engine passes ...")
        v.posterior = {"path": str(opts.posterior or outdir / "machine.posterior.csv")}
        v.posterior |= posterior_band(graph, params, post, points, [c["traced_ns"] for c in checks], opts.draws)
    v.files = write_outputs(v, outdir, opts.title or program_name(launch.argv))
    return v


def posterior_band(graph, params, post, points: list[Point], traced_ns: list, draws: int) -> dict:
    """Each point's 95 % predictive band (sets p.band) and the posterior block of the JSON:
    the run-to-run noise of the traced runs and, when the grid has ΔL = 0 with ≥ 2 runs, the
    injector's offset (the injected runs at ΔL = 0 against the traced runs, see the module's
    top comment). The points that estimated the offset are not counted in the shares inside:
    they would be inside by construction."""
    from latitude import bayes

    spread = bayes.run_spread(traced_ns)
    at0 = [p for p in points if p.delta_ns == 0]
    offset = bayes.injector_offset(traced_ns, at0[0].runs_ns) if at0 else None
    deltas = [p.delta_ns for p in points]
    bands = bayes.predictive_band(graph, params, post, deltas, draws, spread=spread, offset=offset)
    for p, b in zip(points, bands):
        p.band = b
    judged = [p for p in points if offset is None or p.delta_ns != 0] or points
    return {
        "draws": draws,
        "level": 0.95,
        "noise": band_noise(spread),
        "offset": None
        if offset is None
        else {"ns": offset[0], "se_ns": offset[1], "dof": offset[2], "points_excluded": len(points) - len(judged)},
        "share_inside": bayes.share_inside([p.mean_ns for p in judged], [p.band for p in judged]),
        "share_runs_inside": bayes.share_inside([p.runs_ns for p in judged], [p.band for p in judged]),
    }


def band_noise(spread) -> str:
    """How the band's run-to-run noise (bayes.run_spread) was estimated, in words (the JSON's
    posterior.noise)."""
    if spread is None:
        return "none: one traced run, the band is the posterior's credible band of the mean"
    return f"the {spread[1]} traced runs' spread ({100 * spread[0]:.2f} %), Student-t with {spread[1] - 1} degrees of freedom"


def read_posterior(opts: ValidateOptions):
    """--posterior F read (before any run: a bad file stops at once), else None."""
    if opts.bayes and (opts.machine or opts.posterior):
        raise InputError(
            "--bayes", "samples the posterior of validate's own calibration; with --machine give --posterior F"
        )
    if not opts.posterior:
        return None
    from latitude import bayes  # numpy and emcee: only when a band is asked for

    return bayes.Posterior.read(opts.posterior)


def sample_posterior(opts: ValidateOptions, calibration, outdir: Path, log):
    """--bayes: the posterior of this validation's own calibration, saved as
    DIR/machine.posterior.csv."""
    from latitude import bayes

    m, f, classes = calibration
    priors = bayes.Priors.around(f, None, classes, m)
    log(f"sampling the posterior of {', '.join(priors.names)}: 32 walkers × {opts.bayes_steps} steps (emcee) ...")
    post = bayes.sample(m, f, priors, steps=opts.bayes_steps, classes=classes)
    post.write(str(outdir / "machine.posterior.csv"))
    return post


def program_name(argv: list[str]) -> str:
    """The program's file name in a launch command (after the launcher and its options)."""
    try:
        return Path(argv[len(launcher_part(argv))]).name
    except InputError:
        return Path(argv[-1]).name


# ---- outputs ----
def write_outputs(v: Validation, outdir: Path, title: str) -> dict:
    files = {
        "csv": str(outdir / "validation.csv"),
        "runs": str(outdir / "runs.csv"),
        "json": str(outdir / "validation.json"),
        "plot": str(outdir / "validation.png"),
    }
    rows = [p.row() for p in v.points]
    if v.drift:  # the computation's change beside each point (CSV columns, a line in the plot)
        by_delta = {r["delta_L_us"]: r for r in v.drift["points"]}
        for r in rows:
            r |= {k: by_delta[r["delta_L_us"]][k] for k in ("busy_us", "drift_us")}
    with open_atomic(files["csv"], "CSV", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open_atomic(files["runs"], "CSV", newline="") as f:
        w = csv.writer(f)
        w.writerow(["delta_L_us", "run", "runtime_us"])
        for p in v.points:
            for i, t in enumerate(p.runs_ns):
                w.writerow([p.delta_ns / 1e3, i, t / 1e3])
    with open_atomic(files["json"], "JSON") as f:
        json.dump(v.summary() | {"files": files}, f, indent=1)
    share = v.posterior["share_inside"] if v.posterior else None
    plot(rows, v.sens, v.tol, files["plot"], f"{title}: RRMSE {100 * v.rrmse:.2f} %", share)
    return files


def plot(rows: list[dict], sens, tol, path: str, title: str, share: float | None = None) -> None:
    """The validation plot: the predicted curve with the measured points of `rows` (the JSON's
    points, with their band where they carry one) and the share inside the band in the title."""
    from latitude.plots import runtime_plot

    measured = [
        {"delta_us": r["delta_L_us"], "mean_us": r["mean_us"], "std_us": r["std_us"]}
        | ({"band_lo_us": r["band_lo_us"], "band_hi_us": r["band_hi_us"]} if "band_lo_us" in r else {})
        | ({"with_drift_us": r["predicted_us"] + r["drift_us"]} if "drift_us" in r else {})
        for r in rows
    ]
    band = "" if share is None else f", {100 * share:.0f} % inside the 95 % band"
    runtime_plot(sens, tol, path, measured=measured, title=title + band)


def noise_note(n: dict | None) -> str:
    if not n:
        return ""
    p = f"; an exact model misses by this much or more with p = {n['exceed_p']:.2f}" if "exceed_p" in n else ""
    return (
        f"; run-to-run noise alone would give about {100 * n['rrmse']:.1f} % "
        f"(σ = {n['sigma_ns'] / 1e6:.3f} ms per run over {n['dof']} degrees of freedom{p})"
    )


def table(v: Validation) -> str:
    band = " 95 % predictive band (ms)" if v.posterior else ""
    out = [f"{'ΔL (µs)':>8} {'predicted (ms)':>15} {'measured (ms)':>22} {'error':>8} {'λ_L':>7}{band}"]
    for p in v.points:
        out.append(
            f"{p.delta_ns / 1e3:>8.1f} {p.predicted_ns / 1e6:>15.3f} "
            f"{p.mean_ns / 1e6:>11.3f} ± {p.std_ns / 1e6:<8.3f} {100 * p.error:>7.2f}% {p.lambda_L:>7}"
            + (
                f"  [{p.band['lo'] / 1e6:.3f}, {p.band['hi'] / 1e6:.3f}]"
                + ("" if p.band_row()["mean_inside"] else " outside")
                if p.band
                else ""
            )
        )
    out.append(
        f"RRMSE {100 * v.rrmse:.2f} % (RMSE {v.rmse_ns / 1e6:.3f} ms; {len(v.points)} points × "
        f"{len(v.points[0].runs_ns)} runs)" + noise_note(v.noise)
    )
    if line := validate_drift.note(v.drift):
        out.append(line)
    if v.posterior:
        pst = v.posterior
        out.append(
            f"posterior ({pst['draws']} draws, {pst['path']}): {100 * pst['share_inside']:.0f} % of the measured means "
            f"and {100 * pst['share_runs_inside']:.0f} % of the runs inside the 95 % predictive band "
            "(θ from the posterior, one engine pass per draw, plus the traced runs' spread"
            + (
                f", plus the injector's own cost {pst['offset']['ns'] / 1e6:+.3f} ± {pst['offset']['se_ns'] / 1e6:.3f} ms "
                "measured at ΔL = 0, whose runs are not counted)"
                if pst.get("offset")
                else ")"
            )
        )
    used = next((c for c in v.trace_checks if c["trace"] == v.trace_dir.name), None)
    if used and used["traced_ns"]:
        out.append(
            f"at ΔL = 0 the model gives {used['predicted_ns'] / 1e6:.3f} ms for the traced run, which "
            f"took {used['traced_ns'] / 1e6:.3f} ms ({100 * (used['predicted_ns'] / used['traced_ns'] - 1):+.2f} %: "
            "the model's and the calibration's own error, without run-to-run variation)"
        )
    if v.output_identical is not None:
        out.append(
            "application output identical to the traced run in every injected run: "
            + ("yes" if v.output_identical else "NO, first difference (--ignore-output REGEX skips lines):")
        )
        out += ["  " + ln for ln in v.output_diff]
    return "\n".join(out)
