"""How a liballprof trace becomes a graph: the conversion options (the Rust core does the work).

    import latitude
    g = latitude.Graph.from_trace("traces/", latitude.ScheduleOptions(coll="allreduce=ring"))
    print(g.report.summary())

``latitude.load(path)`` schedules `path` when it is a trace directory or a rank-0 trace
file, so every command that takes a graph also takes a trace (docs/schedule.md).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass


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
    issue_time: bool = True
    """Keep the time inside calls that issue nonblocking operations (Isend, Irecv, Start,
    nonblocking collectives) as computation: False drops it, as Schedgen does."""

    def to_dict(self) -> dict:
        return asdict(self)

    def core_kwargs(self) -> dict:
        """The keyword arguments of the core's Graph.from_trace."""
        out = self.to_dict()
        out["timemult"] = float(self.timemult)
        return out


def trace_bytes(path: str) -> int:
    """The size that decides on a progress bar: a directory's files, or twice a rank-0 file
    (it stands for several ranks)."""
    try:
        if os.path.isdir(path):
            return sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
        return os.path.getsize(path) * 2
    except OSError:
        return 0  # unreadable: the core's reader says why, naming the file
