"""``latitude validate``: predicted runtime vs runs under injected latency, RRMSE."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from latitude import calibrate as calib
from latitude import inject, validate
from latitude.commands.calibrate import parse_sizes
from latitude.commands.launch_args import add_launch_args, require_positive
from latitude.errors import InputError
from latitude.units import parse_seconds

EPILOG = """\
examples:
  latitude validate -- mpirun -np 2 apps/halo2d --iters 2000
  latitude validate --delta-L 0:100us:5 --reps 3 -o out/cg -- mpirun -np 2 apps/cg --n 1024
  latitude validate --machine machine.toml --trace traces/ -- mpirun -np 2 ./app
  latitude validate --machine m.toml --posterior m.posterior.csv -- mpirun -np 2 ./app

Steps: trace the program once (ΔL = 0; --traces N: N times, the median one is used),
calibrate the machine under the injector (unless --machine; --calib-repeat runs combined by
per-size medians), predict T(L₀ + ΔL) over the grid, run the program under the injector --reps times
per ΔL, and report the measured mean ± std against the prediction and the RRMSE, and the
prediction at ΔL = 0 against the traced run's own runtime (the model's error on that run,
priced with the machine the traced runs saw: calibrated under the tracer, or --traced-machine). Writes
DIR/validation.csv (delta_L_us, predicted_us, mean_us, std_us, ...), DIR/runs.csv (every
run), DIR/validation.json and DIR/validation.png. With --posterior F (or --bayes) each ΔL also
gets the 95 % posterior predictive band of one run and the share of measured points inside
it (table, JSON "posterior" and band_* keys, shaded in the plot). Timings need a quiet machine: see
docs/validation.md."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "validate",
        help="compare predictions with runs under injected latency (RRMSE)",
        description="Trace once, calibrate, predict over a ΔL grid, run the program under the "
        "latency injector at every ΔL, and report the relative RMS error of the predictions.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--delta-L",
        default="0:200us:9",
        metavar="GRID",
        help="ΔL grid: LO:HI:POINTS or a comma list (default %(default)s)",
    )
    p.add_argument("--reps", type=int, default=5, help="runs per ΔL (default %(default)s)")
    p.add_argument(
        "-o", "--output", default="latitude-validate", metavar="DIR", help="output directory (default %(default)s)"
    )
    p.add_argument("--machine", metavar="TOML", help="machine file instead of calibrating")
    p.add_argument(
        "--traced-machine",
        metavar="TOML",
        help="machine the traced runs saw (calibrate --under-tracer), for each trace's ΔL = 0 check against "
        "its own run (default: calibrated under the tracer when validate calibrates, else --machine)",
    )
    p.add_argument("--trace", metavar="DIR", help="use this trace of the same command instead of tracing")
    p.add_argument(
        "--traces",
        type=int,
        default=1,
        metavar="N",
        help="traced runs at ΔL = 0; the one whose prediction is the median is used (default %(default)s)",
    )
    p.add_argument(
        "--calib-repeat",
        type=int,
        default=3,
        metavar="N",
        help="calibration runs, combined by per-size medians (default %(default)s)",
    )
    p.add_argument("--calib-sizes", metavar="LIST", help="message sizes for the calibration")
    p.add_argument(
        "--no-check-output",
        action="store_true",
        help="do not compare the program's output between the traced and injected runs",
    )
    p.add_argument(
        "--ignore-output",
        action="append",
        default=[],
        metavar="REGEX",
        help="stdout lines matching this are not compared (repeatable; timing lines never are)",
    )
    p.add_argument(
        "--timeout",
        metavar="TIME",
        help="limit per run, e.g. 300s or 10min (default: 1h for a traced run; for an injected run "
        "60 s + 10 × (the traced run's wall time + the largest predicted slowdown)); 0: no limit",
    )
    p.add_argument("--title", help="plot title (default: the program's name)")
    p.add_argument("--max-rrmse", type=float, metavar="PCT", help="exit with status 1 if the RRMSE exceeds PCT percent")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    g = p.add_argument_group("posterior predictive band (docs/validation.md)")
    g.add_argument(
        "--posterior",
        metavar="CSV",
        help="posterior of latitude calibrate --bayes (of the same machine, under the injector): the 95 %% "
        "predictive band per ΔL and the share of measured points inside it",
    )
    g.add_argument(
        "--bayes",
        action="store_true",
        help="sample the posterior from validate's own calibration (saved as DIR/machine.posterior.csv) and "
        "report the band as with --posterior",
    )
    g.add_argument("--steps", type=int, default=3000, help="MCMC steps per walker with --bayes (default 3000)")
    g.add_argument(
        "--draws", type=int, default=200, metavar="N", help="posterior draws for the band (default %(default)s)"
    )
    add_launch_args(
        p,
        "the tracer, injector and calibration",
        "the launch command, e.g. mpirun -np 2 ./app",
        metavar="-- LAUNCHER PROGRAM ARGS",
        rebuild=False,
    )
    p.set_defaults(func=run)


def run(args) -> int:
    require_positive(args, ("reps", "traces", "calib_repeat"), "number of runs")
    require_positive(args, ("steps", "draws"), "count")
    if args.trace and not Path(args.trace).exists():
        raise InputError(args.trace, "no such trace directory")
    opts = validate.ValidateOptions(
        deltas=validate.parse_grid(args.delta_L),
        reps=args.reps,
        outdir=Path(args.output),
        machine=args.machine,
        traced_machine=args.traced_machine,
        trace_dir=Path(args.trace) if args.trace else None,
        calib_sizes=parse_sizes(args.calib_sizes) if args.calib_sizes else calib.DEFAULT_SIZES,
        check_output=not args.no_check_output,
        ignore_output=tuple(args.ignore_output),
        timeout=None if args.timeout is None else (parse_seconds(args.timeout) or 0.0),
        title=args.title,
        calib_repeat=args.calib_repeat,
        traces=args.traces,
        posterior=args.posterior,
        bayes=args.bayes,
        bayes_steps=args.steps,
        draws=args.draws,
    )
    validate.OutputCheck(None, opts.ignore_output)  # a bad pattern is an error before any run
    launch = inject.Launch.resolve(args.command, args.mpicc)
    v = validate.validate(launch, opts)
    if args.json:
        print(json.dumps(v.summary(), indent=1))
    else:
        print(validate.table(v))
    inject.log(f"wrote {', '.join(v.files.values())}")
    if args.max_rrmse is not None and 100 * v.rrmse > args.max_rrmse:
        inject.log(f"RRMSE {100 * v.rrmse:.2f} % exceeds --max-rrmse {args.max_rrmse} %{validate.noise_note(v.noise)}")
        return 1
    return 0
