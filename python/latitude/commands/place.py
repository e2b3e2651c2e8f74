"""`latitude place GRAPH --machine m.toml`: rank placement by sensitivities, annealing and
volume-based baselines (block, round-robin, random, greedy, Scotch), priced by the engine."""

from __future__ import annotations

import os

from latitude.commands.model_args import add_model_args, params_from_args
from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph
from latitude.errors import InputError

EPILOG = """\
examples:
  latitude place app.goal --machine m.toml -o map.txt        # sens from the machine file's placement
  latitude place app.job --machine m.toml --method all --budget 20 --json
  latitude place app.goal --machine m.toml --init old.txt -o rankfile --format rankfile
  mpirun --rankfile rankfile ./app      # or: SLURM_HOSTFILE=hosts srun --distribution=arbitrary

Every map is priced exactly (one engine pass with the machine's placement replaced); the
table compares predicted T, λ_L (latency terms between nodes on the critical path) and
the change against block placement. -o writes the best map. See docs/placement.md."""

CHOICES = ("sens", "anneal", "all")


def register(sub) -> None:
    import argparse

    p = sub.add_parser(
        "place",
        help="choose a rank→node placement that lowers the predicted runtime",
        description="Rank placement on a machine file's nodes: the LLAMP paper's Algorithm 3 on "
        "the engine's pairwise sensitivities (sens), simulated annealing (anneal), and the "
        "baselines block, round-robin, random, greedy volume mapping and Scotch.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("graph", help="GOAL file, job file, or a trace (directory or rank-0 file)")
    add_schedule_args(p)
    add_cache_arg(p)
    add_model_args(p, output_o=True)
    p.add_argument(
        "--init",
        metavar="HOW",
        help="initial map and allocation: block, round-robin, random, or a map FILE "
        "(default: the machine file's placement)",
    )
    p.add_argument("--method", default="sens", choices=CHOICES, help="sens, anneal, or all methods (default sens)")
    p.add_argument("--seed", type=int, default=1, help="seed of random and anneal (default 1)")
    p.add_argument("--budget", type=float, default=30.0, metavar="SECONDS", help="time per search (default 30)")
    p.add_argument("--evaluations", type=int, metavar="N", help="cap on engine passes per search (reproducible)")
    p.add_argument("--top", type=int, default=8, metavar="K", help="candidates sens prices exactly per round")
    p.add_argument("-o", "--output", metavar="FILE", help="write the best map")
    p.add_argument("--format", default="list", choices=("list", "rankfile", "slurm"), help="map format of -o")
    p.add_argument("--hosts", metavar="FILE", help="host names, one per line (node i = line i) for rankfile/slurm")
    p.add_argument("--json", action="store_true", help="machine-readable output (times in ns)")
    p.set_defaults(func=run)


def _check_args(args) -> None:
    if args.budget is not None and not args.budget > 0:
        raise InputError("--budget", f"expected a positive number of seconds, got {args.budget}")
    if args.evaluations is not None and args.evaluations < 1:
        raise InputError("--evaluations", f"expected a positive count, got {args.evaluations}")
    if args.top < 1:
        raise InputError("--top", f"expected a positive count, got {args.top}")


def _init(args, graph, params):
    from latitude import placement as maps

    if args.init is None:  # block, round-robin, or the machine's map file (checked by binding it)
        return tuple(int(n) for n in graph.placement(params))
    if args.init in ("block", "round-robin", "random"):
        return args.init
    if not os.path.exists(args.init):
        raise InputError("--init", f"expected block, round-robin, random or a map file, got {args.init!r}")
    hosts = maps.read_hosts(args.hosts) if args.hosts else None
    m = maps.read_map(args.init, hosts=hosts)
    return maps.check(m, graph.num_ranks, params.machine.ranks_per_node, params.machine.nodes())


def run(args) -> int:
    from latitude import place
    from latitude import placement as maps
    from latitude.progress import progress
    from latitude.report import print_json

    _check_args(args)
    params = params_from_args(args)
    if params.machine is None:
        raise InputError("--machine", "placement needs a machine file with [nodes] (ranks per node, a network)")
    graph = load_graph(args)
    init = _init(args, graph, params)
    hosts = maps.read_hosts(args.hosts) if args.hosts else None
    methods = place.METHODS if args.method == "all" else ("block", args.method)
    opts = place.Options(seed=args.seed, budget=args.budget, max_evaluations=args.evaluations, top=args.top)
    with progress("placing", total=len(methods), enabled=not args.json) as update:
        results = place.compare(graph, params, init, methods, opts, progress=update)
    best = place.best(results)
    if args.output:
        comment = (
            f"latitude place {os.path.basename(args.graph)}: {best.method}, predicted T = {best.runtime_ns:.0f} ns"
        )
        maps.write_map(args.output, best.nodes, args.format, hosts, comment)
    block_ns = results[0].runtime_ns
    if args.json:
        print_json(
            {
                "machine": params.machine.source,
                "ranks": graph.num_ranks,
                "ranks_per_node": params.machine.ranks_per_node,
                "best": best.method,
                "output": args.output,
                "methods": [r.to_dict(block_ns) for r in results],
            }
        )
        return 0
    _table(results, block_ns, best, args.output)
    return 0


def _table(results, block_ns: float, best, output) -> None:
    from rich.table import Table

    from latitude.report import console
    from latitude.units import fmt_time

    t = Table(title="Placements (predicted by the engine)")
    for col in ("method", "predicted T", "λ_L", "vs block", "engine passes", "time"):
        t.add_column(col, justify="left" if col == "method" else "right")
    for r in results:
        change = r.runtime_ns / block_ns - 1.0 if block_ns else 0.0
        t.add_row(
            r.method + (" *" if r is best else ""),
            fmt_time(r.runtime_ns),
            f"{r.lambda_L:,}",
            f"{100 * change:+.2f} %",
            f"{r.evaluations:,}",
            f"{r.seconds:.2f} s",
        )
    con = console()
    con.print(t)
    for r in results:
        if r.method == "sens":
            con.print(
                f"sens: Algorithm 3 alone {fmt_time(r.info['alg3_runtime_ns'])} after {r.info['alg3_swaps']} swap(s); "
                f"{r.info['swaps']} change(s) with the exact refinement (stopped: {r.info['stop']})"
            )
    if output:
        con.print(f"wrote {output} ({best.method})")
