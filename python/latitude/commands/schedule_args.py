"""The trace-conversion flags of every command that takes a graph (--coll, --timemult, ...),
used when the input is a trace."""

from __future__ import annotations

import argparse

from latitude.errors import InputError
from latitude.outputs import refuse_inputs
from latitude.traces import ScheduleOptions


def add_schedule_args(p: argparse.ArgumentParser, jobs: bool = True) -> None:
    """Trace-conversion flags for commands that take a graph (used when it is a trace);
    `jobs`: the input may be a job file too (--max-ops)."""
    grp = p.add_argument_group("trace conversion (when the input is a trace directory or rank-0 file)")
    grp.add_argument(
        "--coll",
        metavar="SPEC",
        default="default",
        help="collective algorithms: default | schedgen, and/or COLL=ALG[<=SIZE],... "
        "e.g. 'allreduce=recdoub<=64KiB,ring;bcast=binomial' (see docs/schedule.md)",
    )
    grp.add_argument(
        "--timemult",
        type=float,
        default=1000.0,
        metavar="N",
        help="multiply trace time differences (µs) by N (default 1000: ns)",
    )
    grp.add_argument(
        "--request-size",
        default="auto",
        metavar="auto|4|8",
        help="sizeof(MPI_Request) for request arrays in plain traces (default auto)",
    )
    grp.add_argument(
        "--mpi",
        default="auto",
        choices=("auto", "openmpi", "mpich"),
        help="MPI constants of plain traces (default: detected)",
    )
    grp.add_argument(
        "--issue-time",
        default="kept",
        choices=("kept", "dropped"),
        help="the time inside calls that issue nonblocking operations (MPI_Isend, MPI_Irecv, "
        "MPI_Start, nonblocking collectives): kept as computation (default; no cost rule puts "
        "it on the rank's time line) or dropped, as Schedgen does (docs/schedule.md)",
    )
    if jobs:
        add_max_ops(grp)


def add_max_ops(p) -> None:
    """--max-ops: the size limit of a job file's graph."""
    p.add_argument(
        "--max-ops",
        type=int,
        metavar="N",
        help="job files: refuse a graph estimated above N operations "
        "(default: what the available memory holds, ~48 bytes per operation)",
    )


def add_cache_arg(p: argparse.ArgumentParser) -> None:
    """--cache: keep a binary copy of a GOAL input next to it; --no-cache: do not reuse or
    keep a trace's graph in the user's cache (docs/graph-format.md)."""
    p.add_argument(
        "--cache",
        action="store_true",
        help="keep a binary copy of a GOAL input next to it (GRAPH.lgraph) and map that instead "
        "while the GOAL file's size and modification time are unchanged (docs/graph-format.md)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="a trace input is scheduled again, not taken from (or put into) the cache of trace "
        "graphs ($XDG_CACHE_HOME/latitude/graphs, reused while the rank files and conversion "
        "options are unchanged; LATITUDE_CACHE=0 turns it off too: docs/graph-format.md)",
    )


def load_graph(args: argparse.Namespace, name: str = "graph", calls: bool = False):
    """The command's input graph (`args.<name>`: .lgraph, GOAL, trace or job file) as its
    flags say: trace conversion, --seed and --max-ops of a job file, --cache of a GOAL file.
    `calls`: a trace's graph also keeps its measured MPI calls (`graph.report.stats["calls"]`,
    for the decomposition). No output option may name the input (or, for a trace, one of its
    rank files)."""
    from latitude.api import load, sniff  # heavy (the core): only when a command runs
    from latitude.graph import Graph

    path = getattr(args, name)
    refuse_inputs(args, path)
    if calls and sniff(path).name == "trace":  # the measured calls are read from the rank files
        graph = Graph.from_trace(path, schedule_options_from_args(args), calls=True)
    else:
        graph = load(
            path,
            schedule=schedule_options_from_args(args),
            seed=getattr(args, "seed", 1),
            max_ops=getattr(args, "max_ops", None),
            cache=getattr(args, "cache", False),
            trace_cache=not getattr(args, "no_cache", False),
        )
    refuse_inputs(args, path, trace_pattern(graph))
    return graph


def trace_pattern(graph) -> str | None:
    """The rank-file naming pattern of a graph read from a trace (None otherwise)."""
    stats = getattr(graph.report, "stats", None) or {}
    return stats.get("pattern")


def schedule_options_from_args(args: argparse.Namespace) -> ScheduleOptions:
    rs = str(getattr(args, "request_size", "auto"))
    if rs == "auto":
        request_size = None
    elif rs in ("4", "8"):
        request_size = int(rs)
    else:
        raise InputError("--request-size", f"expected auto, 4 or 8, got {rs!r}")
    return ScheduleOptions(
        coll=getattr(args, "coll", "default"),
        timemult=getattr(args, "timemult", 1000.0),
        request_size=request_size,
        mpi=getattr(args, "mpi", "auto"),
        p2p=not getattr(args, "no_p2p", False),
        collectives=not getattr(args, "no_collectives", False),
        issue_time=getattr(args, "issue_time", "kept") == "kept",
    )
