"""`latitude sensitivity GRAPH --range A:B`: every critical latency (or breakpoint in G, a link
class or any named parameter), exact."""

from __future__ import annotations

import time

from latitude.commands.model_args import add_model_args, params_from_args
from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph
from latitude.outputs import open_atomic


def register(sub) -> None:
    p = sub.add_parser(
        "sensitivity",
        help="critical latencies and λ, ρ on every piece of T(L) (or T(G))",
        description="Find every critical point of the runtime in L (or G) on a range, exactly, "
        "with the slope on each side and T, λ, ρ on each linear piece.",
    )
    p.add_argument("graph", help="GOAL or .lgraph file, a trace (directory or rank-0 file) or a job file")
    add_schedule_args(p)
    add_cache_arg(p)
    p.add_argument("--range", required=True, metavar="A:B", help="parameter range, e.g. 0:100us (for G: 0:0.1ns)")
    p.add_argument(
        "--param",
        default="L",
        metavar="NAME",
        help="parameter to vary: L, G, o, … or one of the machine's (a link class such as wire, intra.L; default L)",
    )
    p.add_argument("--step", metavar="X", help="LLAMP-style coarsening: no two reported breakpoints closer than X")
    p.add_argument(
        "--method",
        choices=("engine", "lp"),
        default="engine",
        help="engine (exact, default) or lp (LLAMP Algorithm 2 with HiGHS ranging)",
    )
    add_model_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/json.md, ns)")
    p.add_argument("--csv", metavar="FILE", help="write the curve (T, λ, ρ on --points points plus every breakpoint)")
    p.add_argument(
        "--points", type=int, default=100, metavar="N", help="grid points of the CSV/plot curve (default 100)"
    )
    p.add_argument("--plot", metavar="FILE", help="λ and ρ vs Δ plot (.png/.svg; no extension: both)")
    p.add_argument(
        "--all", action="store_true", help="print every breakpoint and piece (default: the first and last 10 of each)"
    )
    p.set_defaults(func=run)


def write_csv(sens, path: str, points: int) -> None:
    import csv

    name = sens.param
    is_time = sens.params.kind(name) == "time"
    cols = [f"{name}_us" if is_time else f"{name}_ns_per_B", "T_us", f"lambda_{name}", f"rho_{name}"]
    with open_atomic(path, "CSV", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in sens.curve(points):
            x = r["x"] / 1e3 if is_time else r["x"]
            w.writerow([f"{x:.9g}", f"{r['T'] / 1e3:.9g}", r["slope"], f"{r['rho']:.9g}"])


def run(args) -> int:
    from latitude.report import console, print_json
    from latitude.units import parse_range

    start = time.perf_counter()
    params = params_from_args(args)
    params.index(args.param)
    lo, hi = parse_range(args.range, "--range", lambda text, where: params.parse(args.param, text, where))
    graph = load_graph(args)
    t = time.perf_counter()
    sens = graph.sensitivity(lo, hi, param=args.param, step=args.step, params=params, method=args.method)
    elapsed = time.perf_counter() - t
    if args.csv:
        write_csv(sens, args.csv, args.points)
    written = []
    if args.plot:
        from latitude.plots import sensitivity_plot

        written = sensitivity_plot(sens, args.plot)
    if args.json:
        out = sens.to_dict()
        out["seconds"] = elapsed
        out["seconds_total"] = time.perf_counter() - start
        print_json(out)
        return 0
    con = console()
    print_tables(sens, con, args.all)
    for path in ([args.csv] if args.csv else []) + written:
        con.print(f"wrote {path}")
    con.print(timing_line(sens, elapsed, time.perf_counter() - start), soft_wrap=True)
    return 0


def timing_line(sens, elapsed: float, total: float) -> str:
    """How the sweep ran and how long: the analysis, and the whole command (reading the graph
    or scheduling the trace, the analysis, tables, CSV and plots)."""
    if sens.method != "engine":
        how = f"{sens.evaluations} HiGHS solves"
    elif sens.evaluations == 0:
        how = f"one parametric pass per part of the range, {sens.passes} part(s)"
    else:
        how = f"{sens.evaluations} evaluations in {sens.passes} graph passes"
    return f"{sens.method}: {how}, {elapsed:.3g} s (whole command {total:.3g} s)"


def print_tables(sens, con, show_all: bool = False) -> None:
    from rich.table import Table

    from latitude.report import add_rows
    from latitude.units import fmt_time

    is_time = sens.params.kind(sens.param) == "time"
    fx = fmt_time if is_time else (lambda x: f"{x:.6g} ns/B")
    name = "critical latencies" if sens.param == "L" else f"breakpoints in {sens.param}"
    t = Table(title=f"{len(sens.breakpoints):,} {name} in [{fx(sens.lo)}, {fx(sens.hi)}]")
    for col in (sens.param, "runtime T", f"λ_{sens.param} left → right"):
        t.add_column(col, justify="right")

    def bp_row(b):
        merged = "" if b.exact else " (merged)"
        return fx(float(b.at)), fmt_time(float(b.left(b.at))), f"{b.left.slope:,} → {b.right.slope:,}{merged}"

    add_rows(t, sens.breakpoints, bp_row, show_all, name)
    con.print(t)
    p = Table(title=f"{len(sens.pieces):,} linear pieces")
    for col in ("from", "to", f"λ_{sens.param}", "T from", "T to", f"ρ_{sens.param} from", f"ρ_{sens.param} to"):
        p.add_column(col, justify="right")

    def piece_row(q):
        t0, t1 = float(q.line(q.start)), float(q.line(q.end))
        rho0 = float(q.start) * q.line.slope / t0 if t0 else 0.0
        rho1 = float(q.end) * q.line.slope / t1 if t1 else 0.0
        return (
            fx(float(q.start)),
            fx(float(q.end)),
            f"{q.line.slope:,}",
            fmt_time(t0),
            fmt_time(t1),
            f"{rho0:.4f}",
            f"{rho1:.4f}",
        )

    add_rows(p, sens.pieces, piece_row, show_all, "pieces")
    con.print(p)
