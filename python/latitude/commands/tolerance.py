"""`latitude tolerance GRAPH`: the largest L (or G) within 1 / 2 / 5 % of the baseline runtime."""

from __future__ import annotations

import time

from latitude.commands.model_args import add_model_args, params_from_args
from latitude.commands.schedule_args import add_schedule_args, load_graph
from latitude.outputs import atomic, open_atomic


def register(sub) -> None:
    p = sub.add_parser(
        "tolerance",
        help="largest latency (or G) keeping the slowdown under x %%",
        description="x % tolerance: the largest L (or G) with T ≤ (1 + x/100)·T(baseline), exact; "
        "or, with --map, the joint L × G tolerance regions.",
    )
    p.add_argument("graph", help="GOAL file, or a trace (directory or rank-0 file)")
    add_schedule_args(p)
    p.add_argument("--pct", default="1,2,5", metavar="X,Y,...", help="slowdown limits in percent (default 1,2,5)")
    p.add_argument("--param", choices=("L", "G"), default="L", help="parameter to vary (default L)")
    p.add_argument("--baseline", metavar="VALUE", help="baseline L (or G); default: the model's value (-L / -G)")
    p.add_argument(
        "--method",
        choices=("engine", "lp"),
        default="engine",
        help="engine (exact, default) or lp (max-ℓ LP with HiGHS)",
    )
    p.add_argument("--map", metavar="L=A:B,G=C:D", help="joint region in the L × G window (baseline = -L, -G)")
    p.add_argument("--resolution", type=int, default=64, metavar="N", help="G grid points of --map (default 64)")
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


def parse_map(text: str) -> tuple:
    from latitude.errors import InputError
    from latitude.units import parse_gap, parse_range, parse_time

    parts = dict(kv.split("=", 1) for kv in text.split(",") if "=" in kv)
    if set(parts) != {"L", "G"}:
        raise InputError("--map", f"expected L=A:B,G=C:D, got {text!r}")
    return parse_range(parts["L"], "--map L", parse_time), parse_range(parts["G"], "--map G", parse_gap)


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
    return report(args, graph, tol, elapsed, start)


def timing_line(elapsed: float, start: float | None) -> str:
    """The analysis's time, and the whole command's (reading or scheduling, plots, CSV)."""
    total = "" if start is None else f" (whole command {time.perf_counter() - start:.3g} s)"
    return f"{elapsed:.3g} s{total}"


def report(args, graph, tol, elapsed: float, start: float | None = None) -> int:
    from rich.table import Table

    from latitude.report import console, print_json
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
        out["seconds"] = elapsed
        if start is not None:
            out["seconds_total"] = time.perf_counter() - start
        print_json(out)
        return 0
    is_l = tol.param == "L"
    fx = fmt_time if is_l else (lambda x: f"{x:.6g} ns/B")
    t = Table(
        title=f"{tol.param} tolerance ({tol.method}): baseline {fx(tol.baseline)}, T = {fmt_time(tol.baseline_runtime)}"
    )
    for col in ("slowdown ≤", f"largest {tol.param}", f"Δ{tol.param} over baseline", "runtime limit"):
        t.add_column(col, justify="right")
    for r in tol.to_dict()["tolerance"]:
        m = r["max_ns"]
        t.add_row(
            f"{r['pct']:g} %",
            "unbounded" if m is None else fx(m),
            "unbounded" if m is None else "+" + fx(r["delta_ns"]),
            fmt_time(r["runtime_limit_ns"]),
        )
    con = console()
    con.print(t)
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

    if tol.param != "L":
        raise InputError("--plot", "the runtime plot is for --param L; use `latitude sensitivity --param G --plot`")
    if args.range:
        lo, hi = parse_range(args.range, "--range", parse_time)
    else:
        bounded = [r["max_ns"] for r in tol.to_dict()["tolerance"] if r["max_ns"] is not None]
        span = max([m - tol.baseline for m in bounded] + [10_000.0])
        lo, hi = tol.baseline, tol.baseline + 1.5 * span
    sens = graph.sensitivity(lo, hi, param="L", params=tol.params)
    measured = read_measured(args.measured) if args.measured else None
    return plot(sens, tol, args.plot, measured)


def run_map(args, graph, params, pcts, start: float) -> int:
    from rich.table import Table

    from latitude.report import console, print_json

    l_range, g_range = parse_map(args.map)
    t = time.perf_counter()
    tmap = graph.tolerance_map(l_range, g_range, pcts, args.resolution, params=params)
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
    tab = Table(
        title=f"L × G tolerance map, T₀ = {tmap.baseline_runtime:,.0f} ns, {args.resolution} G values (exact points)"
    )
    for col in ("slowdown ≤", "G range inside (ns/B)", "largest L at G_min", "largest L at G_max"):
        tab.add_column(col, justify="right")
    for pct, pts in tmap.curves.items():
        inside = [(g, l, st) for g, l, st in pts if l is not None]

        def fmt(x):
            return "–" if x is None else ("≥ window" if x[2] == "beyond" else f"{float(x[1]) / 1e3:.4g} µs")

        tab.add_row(
            f"{pct} %",
            f"{float(inside[0][0]):.4g} … {float(inside[-1][0]):.4g}" if inside else "none",
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
