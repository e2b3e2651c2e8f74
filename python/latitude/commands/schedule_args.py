"""The trace-conversion flags of every command that takes a graph (--coll, --timemult, ...),
used when the input is a trace."""

from __future__ import annotations

import argparse

from latitude.errors import InputError
from latitude.traces import ScheduleOptions


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
