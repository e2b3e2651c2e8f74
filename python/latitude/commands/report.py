"""`latitude report GRAPH -o report.html`: one self-contained HTML page about a graph."""

from __future__ import annotations

import os
import shlex
import sys

from latitude.commands.model_args import add_model_args, params_from_args
from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="a self-contained HTML report: prediction, critical path, tolerance curve, ranks",
        description="Write one HTML page (inline CSS and SVG: no network access needed to view it) with "
        "the prediction and critical-path breakdown, runtime vs ΔL with the 1/2/5 % zones and the "
        "critical latencies, λ_L and ρ_L, the per-rank table, the L × G map with --map, the inputs and "
        "the exact command.",
    )
    p.add_argument("graph", help="GOAL file, or a trace (directory or rank-0 file), or a job file")
    p.add_argument("-o", "--output", dest="output", required=True, metavar="HTML", help="the page to write")
    add_schedule_args(p)
    add_cache_arg(p)
    p.add_argument("--pct", default="1,2,5", metavar="X,Y,...", help="tolerance limits in percent (default 1,2,5)")
    p.add_argument(
        "--range", metavar="A:B", help="L range of the curve (default: baseline to past the largest tolerance)"
    )
    p.add_argument("--map", metavar="L=A:B,G=C:D", help="add the joint L × G tolerance map on this window")
    p.add_argument("--resolution", type=int, default=64, metavar="N", help="G grid points of --map (default 64)")
    p.add_argument(
        "--compare",
        action="append",
        metavar="TOML",
        help="add a topology comparison: the input on this machine file (repeat: two or more; docs/network.md)",
    )
    p.add_argument(
        "--compare-param", default="wire", metavar="NAME", help="parameter the comparison varies (default wire)"
    )
    p.add_argument("--title", help="page title (default: the input's name)")
    add_model_args(p, output_o=True)
    p.set_defaults(func=run)


def run(args) -> int:
    from latitude import __version__
    from latitude.commands.tolerance import curve_range, default_range, parse_map, parse_pcts
    from latitude.compare import comparison, load_machines
    from latitude.errors import InputError
    from latitude.graph_report import Context, write_report
    from latitude.report import console
    from latitude.units import parse_range, parse_time

    pcts = parse_pcts(args.pct)
    params = params_from_args(args)
    rng = parse_range(args.range, "--range", parse_time) if args.range else curve_range
    graph = load_graph(args, calls=True)  # a trace keeps its MPI calls for the decomposition
    tmap = None
    if args.map:
        axes, ranges = parse_map(args.map, params)
        ranges = [r if r is not None else default_range(graph, params, n, pcts) for n, r in zip(axes, ranges)]
        tmap = graph.tolerance_map(ranges[0], ranges[1], pcts, args.resolution, params=params, axes=axes)
    cmp = None
    if args.compare:
        if len(args.compare) < 2:
            raise InputError("--compare", "give two or more machine files to compare")
        cmp = comparison(graph, load_machines(args.compare), args.compare_param, pcts)
    inputs = [("graph", args.graph)] + ([("machine", args.machine)] if args.machine else [])
    inputs += [("compared machine", m) for m in args.compare or ()]
    command = "latitude " + shlex.join(sys.argv[1:])
    ctx = Context(graph, params, pcts, command, inputs, rng, tmap, __version__, comparison=cmp)
    title = args.title or f"Latitude report: {os.path.basename(os.path.normpath(args.graph))}"
    write_report(ctx, args.output, title)
    console().print(f"wrote {args.output}")
    return 0
