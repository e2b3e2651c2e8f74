"""Traces as graphs: scheduling a liballprof trace in memory (the Rust core does the work).

    from latitude.traces import ScheduleOptions, schedule
    graph, report = schedule("traces/", ScheduleOptions(coll="allreduce=ring"))
    print(report.summary())

``latitude.load(path)`` calls this when `path` is a trace directory or a rank-0 trace file,
so every command that takes a graph also takes a trace; :func:`add_schedule_args` gives
such commands the conversion flags (``--coll``, ``--timemult``, ...).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass

from latitude.errors import InputError
from latitude.units import fmt_size, fmt_time

# Traces at least this large get a progress bar while being scheduled.
_PROGRESS_BYTES = 64 << 20


@dataclass(frozen=True)
class ScheduleOptions:
    """How a trace becomes a graph (see docs/schedule.md)."""

    coll: str = "default"
    """Collective algorithms: a preset (default, schedgen) and/or COLL=ALG[<=SIZE],... rules."""
    timemult: float = 1000.0
    """Multiplier for trace time differences (µs): 1000 gives ns, as Schedgen."""
    request_size: int | None = None
    """sizeof(MPI_Request) for request arrays of plain traces: 4 (MPICH), 8 (Open MPI), None = auto."""
    mpi: str = "auto"
    """Constants (ANY_SOURCE, PROC_NULL) of plain traces: auto, openmpi or mpich."""
    p2p: bool = True
    collectives: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


def is_trace(path: str) -> bool:
    """A directory, or a file that reads like liballprof text rather than GOAL."""
    if os.path.isdir(path):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    for line in head.splitlines():
        text = line.strip()
        if not text:
            continue
        return text.startswith(b"#") or text.startswith(b"MPI_")
    return False


class GraphReport:
    """How a graph was made (trace conversion, job-file generation): the core's stats dict
    plus the graph's size."""

    def __init__(self, stats: dict, info: dict):
        self.stats = stats
        self.info = info

    def to_dict(self) -> dict:
        out = dict(self.stats)
        out["graph"] = {k: self.info[k] for k in ("ranks", "vertices", "edges", "messages", "bytes")}
        return out


class ScheduleReport(GraphReport):
    """What the conversion did: the stats dict of the core plus a summary."""

    def summary(self) -> str:
        """One line: ranks, ops, messages, collectives by algorithm, unmodelled calls."""
        s, i = self.stats, self.info
        parts = [
            f"{s['ranks']} ranks, {s['events']:,} calls → {i['vertices']:,} ops, "
            f"{i['messages']:,} messages ({fmt_size(i['bytes'])})"
        ]
        if s["collectives"]:
            colls = ", ".join(f"{k.replace(' ', '/')} {v:,}" for k, v in s["collectives"].items())
            parts.append(f"collectives (calls on all ranks): {colls}")
        else:
            parts.append("no collectives")
        if s["unmodelled"]:
            names = ", ".join(f"{k} ×{v['calls']:,}" for k, v in s["unmodelled"].items())
            parts.append(f"not modelled: {names}")
        return "; ".join(parts)

    def notes(self) -> list[str]:
        """One line per unmodelled call name (with the time kept as computation), then notes."""
        out = []
        for name, u in self.stats["unmodelled"].items():
            out.append(f"{name}: {u['calls']:,} calls, {fmt_time(u['time_ns'])} kept as computation ({u['reason']})")
        out.extend(self.stats["notes"])
        return out


def schedule(path: str, options: ScheduleOptions | None = None, progress: bool = True):
    """Convert the trace at `path` (directory or rank-0 file): returns (Graph, ScheduleReport)."""
    from latitude.api import Graph, _core

    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(path, "no such file or directory")
    o = options or ScheduleOptions()
    kwargs = dict(
        coll=o.coll,
        timemult=float(o.timemult),
        request_size=o.request_size,
        mpi=o.mpi,
        p2p=o.p2p,
        collectives=o.collectives,
    )
    core = _core()
    if progress and _trace_bytes(path) >= _PROGRESS_BYTES:
        from latitude.progress import progress as bar

        with bar(f"scheduling {os.path.basename(os.path.normpath(path))}") as update:
            handle, stats = core.Graph.from_trace(path, progress=update, **kwargs)
    else:
        handle, stats = core.Graph.from_trace(path, **kwargs)
    graph = Graph(handle, path)
    report = ScheduleReport(stats, graph.info)
    graph.schedule_report = report
    return graph, report


def _trace_bytes(path: str) -> int:
    if os.path.isdir(path):
        return sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
    return os.path.getsize(path) * 2  # a rank-0 file stands for several ranks


def add_schedule_args(p: argparse.ArgumentParser) -> None:
    """Trace-conversion flags for commands that take a graph (used when it is a trace)."""
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
    )
