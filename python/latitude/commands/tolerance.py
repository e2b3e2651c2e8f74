"""`latitude tolerance GRAPH`: the largest L (or G, a link class, any named parameter) within
1 / 2 / 5 % of the baseline runtime, the others fixed."""

from __future__ import annotations

import time

from latitude.commands.model_args import add_model_args, add_posterior_args, params_from_args
from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph
from latitude.outputs import atomic, open_atomic


def register(sub) -> None:
    p = sub.add_parser(
        "tolerance",
        help="largest latency (or G) keeping the slowdown under x %%",
        description="x % tolerance: the largest L (or G, a link class of the machine such as "
        "wire or global, any named parameter) with T ≤ (1 + x/100)·T(baseline), the others "
        "fixed, exact; or, with --map, the joint tolerance regions of two parameters.",
    )
    p.add_argument("graph", help="GOAL or .lgraph file, a trace (directory or rank-0 file) or a job file")
    add_schedule_args(p)
    add_cache_arg(p)
    p.add_argument("--pct", default="1,2,5", metavar="X,Y,...", help="slowdown limits in percent (default 1,2,5)")
    p.add_argument(
        "--param",
        default="L",
        metavar="NAME",
        help="parameter to vary: L, G, … or one of the machine's (wire, global, intra.L, …; default L)",
    )
    p.add_argument(
        "--baseline", metavar="VALUE", help="baseline of --param; default: its value (-L, -G, --set, machine)"
    )
    add_posterior_args(p, "each tolerance's 95 %% credible interval", "one analysis per draw")
    p.add_argument(
        "--method",
        choices=("engine", "lp"),
        default="engine",
        help="engine (exact, default) or lp (max-ℓ LP with HiGHS)",
    )
    p.add_argument(
        "--map",
        metavar="X=A:B,Y=C:D",
        help="joint region of two parameters, e.g. L=0:20us,G=0:0.1ns or wire,switch (a range may be left "
        "out: from the value to past its largest single tolerance); X is exact, Y the grid",
    )
    p.add_argument("--resolution", type=int, default=64, metavar="N", help="grid points of --map's Y (default 64)")
    add_model_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/json.md, ns)")
    p.add_argument("--csv", metavar="FILE", help="write the results (or the map's boundary points) as CSV")
    p.add_argument("--plot", metavar="FILE", help="plot: runtime with tolerance zones, or the L × G map (.png/.svg)")
    p.add_argument(
        "--range", metavar="A:B", help="L range of the runtime plot (default: baseline to past the largest tolerance)"
    )
    p.add_argument(
        "--measured", metavar="CSV", help="overlay measured runtimes (delta_L_us, mean_us, std_us) on the plot"
    )
    p.set_defaults(func=run)


def parse_pcts(text: str) -> list[str]:
    from latitude.analysis import ratio

    pcts = [t.strip() for t in text.split(",") if t.strip()]
    if not pcts:
        from latitude.errors import InputError

        raise InputError("--pct", "expected percentages such as 1,2,5")
    for p in pcts:
        ratio(p)
    return pcts


def parse_map(text: str, params) -> tuple[tuple[str, str], list]:
    """--map X=A:B,Y=C:D (ranges optional): the two parameter names and their ranges
    (None where not given)."""
    from latitude.errors import InputError
    from latitude.units import parse_range

    items = [kv.strip() for kv in text.split(",") if kv.strip()]
    if len(items) != 2:
        raise InputError("--map", f"expected L=A:B,G=C:D (or any two named parameters, e.g. wire,switch), got {text!r}")
    names, ranges = [], []
    for item in items:
        name, eq, rng = item.partition("=")
        name = name.strip()
        try:
            params.index(name)
        except InputError as err:
            raise InputError("--map", err.what) from None
        names.append(name)
        conv = lambda t, w, n=name: params.parse(n, t, w)  # noqa: E731
        ranges.append(parse_range(rng, f"--map {name}", conv) if eq else None)
    if names[0] == names[1]:
        raise InputError("--map", f"expected two different parameters, got {names[0]} twice")
    return (names[0], names[1]), ranges


def default_range(graph, params, name: str, pcts) -> tuple[float, float]:
    """From the parameter's value to 1.5× past its largest single-parameter tolerance (or to
    10× its value, at least +10 µs or +0.1 ns/B, when that is unbounded)."""
    x0 = params.value(name)
    tol = graph.tolerance(pcts, param=name, params=params)
    bounded = [r["max_ns"] for r in tol.to_dict()["tolerance"] if r["max_ns"] is not None]
    floor = 10_000.0 if params.kind(name) == "time" else 0.1
    span = 1.5 * max(bounded) - 0.5 * x0 if bounded else max(10 * x0, x0 + floor)
    return x0, max(span, x0 + floor / 100)


def run(args) -> int:

    start = time.perf_counter()
    pcts = parse_pcts(args.pct)
    params = params_from_args(args)
    graph = load_graph(args)
    if args.map:
        return run_map(args, graph, params, pcts, start)
    t = time.perf_counter()
    tol = graph.tolerance(pcts, param=args.param, baseline=args.baseline, params=params, method=args.method)
    elapsed = time.perf_counter() - t
    cred = credible(args, graph, params, pcts)
    return report(args, graph, tol, elapsed, start, cred)


def credible(args, graph, params, pcts):
    """The tolerances' posterior (latitude.bayes.credible_tolerance) when --posterior is given."""
    if not getattr(args, "posterior", None):
        return None
    from latitude import bayes
    from latitude.commands.launch_args import require_positive

    require_positive(args, ("draws",), "count")
    post = bayes.Posterior.read(args.posterior)
    return bayes.credible_tolerance(graph, params, post, pcts, args.param, args.draws)


def timing_line(elapsed: float, start: float | None) -> str:
    """The analysis's time, and the whole command's (reading or scheduling, plots, CSV)."""
    total = "" if start is None else f" (whole command {time.perf_counter() - start:.3g} s)"
    return f"{elapsed:.3g} s{total}"


def report(args, graph, tol, elapsed: float, start: float | None = None, cred: dict | None = None) -> int:
    from rich.table import Table

    from latitude.report import console, print_json, tolerance_rows
    from latitude.units import fmt_time

    written = []
    if args.csv:
        if _has_pandas():
            with atomic(args.csv, "CSV") as tmp:
                tol.to_frame().to_csv(tmp, index=False)
        else:
            _write_rows_csv(tol.to_dict()["tolerance"], args.csv)
        written.append(args.csv)
    if args.plot:
        written += runtime_plot(args, graph, tol)
    if args.json:
        out = tol.to_dict()
        if cred is not None:
            out["posterior"] = cred
        out["seconds"] = elapsed
        if start is not None:
            out["seconds_total"] = time.perf_counter() - start
        print_json(out)
        return 0
    is_time = tol.params.kind(tol.param) == "time"
    fx = fmt_time if is_time else (lambda x: f"{x:.6g} ns/B")
    t = Table(
        title=f"{tol.param} tolerance ({tol.method}): baseline {fx(tol.baseline)}, T = {fmt_time(tol.baseline_runtime)}"
    )
    for col in ("slowdown ≤", f"largest {tol.param}", f"Δ{tol.param} over baseline", "runtime limit"):
        t.add_column(col, justify="right")
    for row in tolerance_rows(tol, fx):
        t.add_row(*row)
    con = console()
    con.print(t)
    for r in (cred or {}).get("tolerance", []):
        d = r["delta_ns"]
        span = "unbounded in every draw" if d is None else f"{fx(d['median'])} [{fx(d['ci95'][0])}, {fx(d['ci95'][1])}]"
        con.print(f"posterior ({cred['draws']} draws): Δ{tol.param} within {r['pct']:g} %: {span}")
    for path in written:
        con.print(f"wrote {path}")
    con.print(timing_line(elapsed, start), soft_wrap=True)
    return 0


def runtime_plot(args, graph, tol) -> list[str]:
    """Runtime vs ΔL with the zones; range: baseline to 1.5× the largest bounded tolerance."""
    from latitude.errors import InputError
    from latitude.plots import read_measured
    from latitude.plots import runtime_plot as plot
    from latitude.units import parse_range, parse_time

    if tol.params.kind(tol.param) != "time":
        raise InputError(
            "--plot",
            f"the runtime plot is for latency parameters; use `latitude sensitivity --param {tol.param} --plot`",
        )
    lo, hi = parse_range(args.range, "--range", parse_time) if args.range else curve_range(tol)
    sens = graph.sensitivity(lo, hi, param=tol.param, params=tol.params)
    measured = read_measured(args.measured) if args.measured else None
    return plot(sens, tol, args.plot, measured)


def curve_range(tol) -> tuple:
    """The runtime curve's range: the baseline to 1.5× past the largest bounded tolerance."""
    bounded = [r["max_ns"] for r in tol.to_dict()["tolerance"] if r["max_ns"] is not None]
    span = max([m - tol.baseline for m in bounded] + [10_000.0])
    return tol.baseline, tol.baseline + 1.5 * span


def run_map(args, graph, params, pcts, start: float) -> int:
    from rich.table import Table

    from latitude.report import console, print_json

    axes, ranges = parse_map(args.map, params)
    t = time.perf_counter()
    ranges = [r if r is not None else default_range(graph, params, n, pcts) for n, r in zip(axes, ranges)]
    tmap = graph.tolerance_map(ranges[0], ranges[1], pcts, args.resolution, params=params, axes=axes)
    elapsed = time.perf_counter() - t
    written = []
    if args.csv:
        _write_rows_csv(tmap.rows(), args.csv)
        written.append(args.csv)
    if args.plot:
        from latitude.plots import map_plot

        written += map_plot(tmap, args.plot)
    if args.json:
        out = tmap.to_dict()
        out["seconds"] = elapsed
        out["seconds_total"] = time.perf_counter() - start
        print_json(out)
        return 0
    x, y = axes
    ty = params.kind(y) == "time"
    tab = Table(
        title=f"{x} × {y} tolerance map, T₀ = {tmap.baseline_runtime:,.0f} ns, {args.resolution} {y} values (exact points)"
    )
    for col in (
        "slowdown ≤",
        f"{y} range inside ({'µs' if ty else 'ns/B'})",
        f"largest {x} at {y}_min",
        f"largest {x} at {y}_max",
    ):
        tab.add_column(col, justify="right")
    fx = (lambda v: f"{v / 1e3:.4g} µs") if params.kind(x) == "time" else (lambda v: f"{v:.4g} ns/B")
    fy = (lambda v: f"{v / 1e3:.4g}") if ty else (lambda v: f"{v:.4g}")
    for pct, pts in tmap.curves.items():
        inside = [(g, l, st) for g, l, st in pts if l is not None]

        def fmt(p):
            return "–" if p is None else ("≥ window" if p[2] == "beyond" else fx(float(p[1])))

        tab.add_row(
            f"{pct} %",
            f"{fy(float(inside[0][0]))} … {fy(float(inside[-1][0]))}" if inside else "none",
            fmt(inside[0] if inside else None),
            fmt(inside[-1] if inside else None),
        )
    con = console()
    con.print(tab)
    for path in written:
        con.print(f"wrote {path}")
    con.print(timing_line(elapsed, start), soft_wrap=True)
    return 0


def _has_pandas() -> bool:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


def _write_rows_csv(rows: list[dict], path: str) -> None:
    import csv

    with open_atomic(path, "CSV", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["pct"])
        w.writeheader()
        w.writerows(rows)
