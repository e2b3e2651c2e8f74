"""`latitude schedule TRACES -o app.goal`: a liballprof trace as an execution graph (GOAL)."""

from __future__ import annotations

import sys

from latitude.commands.schedule_args import add_schedule_args, schedule_options_from_args, trace_pattern
from latitude.outputs import refuse_inputs


def register(sub) -> None:
    p = sub.add_parser(
        "schedule",
        help="convert a trace into an execution graph (GOAL)",
        description="Convert liballprof v1 traces (ours with '#@' extension lines, or other people's) into "
        "an execution graph: computation between calls, point-to-point with requests, "
        "collectives from the algorithm library (--coll). Prints a one-line summary; the "
        "calls that are not modelled (their time stays computation) follow on stderr.",
    )
    p.add_argument("traces", help="trace directory or the rank-0 trace file")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the graph: binary .lgraph if FILE ends in .lgraph (fast to load), else GOAL text",
    )
    p.add_argument(
        "--timeline",
        metavar="OUT.json",
        help="also write the traced run's timeline (measured call times and the messages between calls) as a "
        "Chrome trace / Perfetto file, to open next to 'simulate --timeline'",
    )
    add_schedule_args(p, jobs=False)
    p.add_argument("--no-p2p", action="store_true", help="drop point-to-point calls (their time becomes computation)")
    p.add_argument("--no-collectives", action="store_true", help="drop collectives (their time becomes computation)")
    p.add_argument("--json", action="store_true", help="print the conversion statistics as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from latitude.graph import Graph
    from latitude.report import print_json

    if args.timeline:
        from latitude.timeline import check_output

        check_output(args.timeline)
    refuse_inputs(args, args.traces)
    graph = Graph.from_trace(args.traces, schedule_options_from_args(args), timeline=args.timeline)
    refuse_inputs(args, args.traces, trace_pattern(graph))
    report = graph.report
    if args.output:
        graph.write(args.output)
    if args.json:
        out = report.to_dict()
        out["output"] = args.output
        print_json(out)
        return 0
    line = report.summary()
    if args.output:
        line += f"; wrote {args.output}"
    if args.timeline:
        t = report.stats["timeline"]
        line += f"; timeline of the traced run ({t['calls']:,} calls, {t['messages']:,} messages) in {args.timeline}"
    print(line)
    for note in report.notes():
        print(f"latitude: note: {note}", file=sys.stderr)
    return 0
