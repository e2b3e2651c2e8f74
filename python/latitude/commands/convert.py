"""`latitude convert IN -o OUT.lgraph`: any graph input as binary .lgraph (or GOAL text)."""

from __future__ import annotations

from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph


def register(sub) -> None:
    p = sub.add_parser(
        "convert",
        help="convert a graph (GOAL, trace, job file, .lgraph) to .lgraph or GOAL",
        description="Read any graph input and write it as binary .lgraph (OUT ends in .lgraph: "
        "loaded by every command without parsing, docs/graph-format.md) or as GOAL text "
        "(any other name: the interchange format LogGOPSim and LLAMP read).",
    )
    p.add_argument("input", help="GOAL file, .lgraph, trace (directory or rank-0 file) or job file")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output file (.lgraph: binary, else GOAL)")
    add_schedule_args(p)
    add_cache_arg(p)
    p.add_argument("--seed", type=int, default=1, metavar="N", help="seed of a job file's compute motifs (default 1)")
    p.add_argument("--json", action="store_true", help="print the graph's size and the output as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    import os

    from latitude.report import print_json

    graph = load_graph(args, "input")
    graph.write(args.output)
    info = graph.info
    if args.json:
        out = {k: info[k] for k in ("ranks", "vertices", "edges", "messages", "bytes")}
        out.update(input=args.input, output=args.output, output_bytes=os.path.getsize(args.output))
        print_json(out)
        return 0
    kind = "lgraph" if args.output.endswith(".lgraph") else "GOAL"
    print(
        f"{info['vertices']:,} ops, {info['edges']:,} dependencies, {info['messages']:,} messages on "
        f"{info['ranks']:,} ranks; wrote {args.output} ({kind}, {os.path.getsize(args.output):,} bytes)"
    )
    return 0
