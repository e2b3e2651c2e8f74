"""`latitude generate JOB -o graph.goal`: a synthetic workload (job file) as an execution graph."""

from __future__ import annotations

import time

from latitude.commands.schedule_args import add_max_ops
from latitude.outputs import refuse_inputs


def register(sub) -> None:
    p = sub.add_parser(
        "generate",
        help="turn a job file of motifs into an execution graph (GOAL)",
        description="Generate the execution graph of a StressBench/SST-style job file: jobs on rank lists, "
        "ordered motif chains (pingpong, halo2d, halo3d, sweep3d, allreduce, bcast, reduce, "
        "alltoall, barrier, incast, compute). The format is in docs/workloads.md; every command "
        "that takes a graph also takes a job file. apps/motifs runs the same workload for real from "
        "the plan --check prints.",
    )
    p.add_argument("job", help="job file")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the graph: binary .lgraph if FILE ends in .lgraph (fast to load), else GOAL text",
    )
    p.add_argument(
        "--seed", type=int, default=1, metavar="N", help="seed of the compute motifs' distributions (default 1)"
    )
    p.add_argument(
        "--coll",
        metavar="SPEC",
        default="default",
        help="algorithms for collective motifs without alg= (docs/schedule.md syntax, default: MPICH-like)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="only parse: print the job file's plan (every value resolved; what apps/motifs runs), generate nothing",
    )
    add_max_ops(p)
    p.add_argument("--json", action="store_true", help="print the generation statistics as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from latitude.graph import Graph
    from latitude.jobs import check
    from latitude.report import print_json

    if args.check:
        print(check(args.job), end="")
        return 0
    refuse_inputs(args, args.job)
    t = time.perf_counter()
    graph = Graph.from_job(args.job, seed=args.seed, coll=args.coll, max_ops=args.max_ops)
    elapsed = time.perf_counter() - t
    if args.output:
        graph.write(args.output)
    report = graph.report
    if args.json:
        out = report.to_dict()
        out["output"] = args.output
        out["seconds"] = elapsed
        print_json(out)
        return 0
    line = report.summary()
    if args.output:
        line += f"; wrote {args.output}"
    print(line)
    return 0
