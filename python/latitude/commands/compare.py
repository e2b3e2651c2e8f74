"""`latitude compare GRAPH --machine a.toml --machine b.toml --param wire`: one workload on
several machines (the LLAMP paper's topology study, Fig. 11)."""

from __future__ import annotations

from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph

EPILOG = """\
examples:
  latitude compare app.goal --machine ft.toml --machine df.toml --param wire --range 274:3500ns --pct 1
  latitude compare app.goal --machine ft.toml --machine df.toml --param wire --pct 1,5 --plot fig11.png --json

Every machine must have the compared parameter (a dragonfly whose terminal, local and global
links all have the latency `wire` names it in [params]: terminal = "wire", ...; docs/network.md)."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser(
        "compare",
        help="compare machines (topologies) on one workload: T, λ per class, tolerance, runtime curves",
        description="Price one workload on several machine files: T at each machine's values, λ of every "
        "named parameter, the largest value of --param within each --pct slowdown (the others fixed), "
        "and T against --param over --range for each machine (plot).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("graph", help="GOAL file, job file, or a trace (directory or rank-0 file)")
    add_schedule_args(p)
    add_cache_arg(p)
    p.add_argument(
        "--machine", action="append", required=True, metavar="TOML", help="a machine file (repeat: two or more)"
    )
    p.add_argument("--param", default="wire", metavar="NAME", help="parameter to compare (default wire)")
    p.add_argument(
        "--range",
        metavar="A:B",
        help="range of --param for the curves (default: base value to past the largest tolerance)",
    )
    p.add_argument("--pct", default="1", metavar="X,Y,...", help="slowdown limits in percent (default 1)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="set a parameter on every machine (repeatable)")
    p.add_argument("--plot", metavar="FILE", help="runtime vs --param per machine (.png/.svg)")
    p.add_argument("--csv", metavar="FILE", help="one row per machine and limit")
    p.add_argument("--json", action="store_true", help="machine-readable output (ns)")
    p.set_defaults(func=run)


def run(args) -> int:
    from rich.table import Table

    from latitude.commands.model_args import with_sets
    from latitude.commands.tolerance import parse_pcts
    from latitude.compare import comparison, load_machines, plot
    from latitude.errors import InputError
    from latitude.report import console, print_json, write_csv_rows
    from latitude.units import fmt_time, parse_range

    if len(args.machine) < 2:
        raise InputError("--machine", "give two or more machine files to compare")
    pcts = parse_pcts(args.pct)
    machines = [(name, with_sets(p, args.set)) for name, p in load_machines(args.machine)]
    graph = load_graph(args)
    first = machines[0][1]
    for _, p in machines:
        if args.param not in p.names:
            raise InputError(
                p.machine.source if p.machine else "--machine",
                f"no parameter {args.param!r} to compare (its parameters: {', '.join(p.names)})",
            )
    rng = parse_range(args.range, "--range", lambda t, w: first.parse(args.param, t, w)) if args.range else None
    cmp = comparison(graph, machines, args.param, pcts, rng)
    written = []
    if args.plot:
        written += plot(cmp, args.plot)
    if args.csv:
        rows = cmp.csv_rows()
        write_csv_rows(args.csv, list(rows[0]), rows)
        written.append(args.csv)
    if args.json:
        print_json(cmp.to_dict())
        return 0
    con = console()
    is_time = first.kind(args.param) == "time"
    fx = fmt_time if is_time else (lambda x: f"{x:.6g} ns/B")
    t = Table(title=f"{len(machines)} machines compared in {args.param} ({graph.info['ranks']} ranks)")
    for col in ("machine", "network", args.param, "T", f"λ_{args.param}") + tuple(
        f"largest {args.param} at {p} %" for p in pcts
    ):
        t.add_column(col, justify="left" if col in ("machine", "network") else "right")
    for r in cmp.results:
        tols = [("unbounded" if x["max_ns"] is None else fx(x["max_ns"])) for x in r.tolerance.to_dict()["tolerance"]]
        net = r.params.machine.describe(short=True) if r.params.machine else "flat"
        lam = r.prediction.lambda_[args.param]
        t.add_row(r.name, net, fx(r.params.value(args.param)), fmt_time(r.prediction.runtime_ns), f"{lam:,}", *tols)
    con.print(t)
    # λ of every latency parameter per machine (the globals o, g, G, O and the copy cost C are left out)
    per_byte = ("o", "g", "G", "O", "C", "K")
    names = [n for n in dict.fromkeys(n for r in cmp.results for n in r.params.names) if n not in per_byte]
    lt = Table(title="λ per latency parameter (links of each class crossed on the critical path)")
    lt.add_column("machine")
    for n in names:
        lt.add_column(f"λ_{n}", justify="right")
    for r in cmp.results:
        lam = r.prediction.lambda_
        lt.add_row(r.name, *[f"{lam[n]:,}" if n in lam else "–" for n in names])
    con.print(lt)
    for path in written:
        con.print(f"wrote {path}")
    return 0
