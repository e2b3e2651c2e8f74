"""How the traced run itself went, read from its trace: was it disturbed?

A graph keeps a trace's computation (the gaps between MPI calls) and prices its MPI calls
with the model, so time a rank lost *inside* an MPI call — preempted by other load, say —
vanishes from the prediction: Quantum ESPRESSO's prediction was 45 % below a traced run that
spent 19 s preempted inside MPI_Alltoall. Waiting for a message is explained by the graph's
dependencies (a partner that arrives later); but while *every* rank is inside MPI at once,
nobody computes and only messages can be in progress, so that time is bounded by the
messages' own costs. This module measures it on the trace's clock (all ranks on one node
share it; traces from several nodes are not compared):

    all_in_mpi = |{t in [Init end, Finalize start] : every rank is inside an MPI call at t}|

A stretch of it is one message's cost at most; a rank preempted by the scheduler makes
stretches of a time slice (milliseconds) instead, while a model that merely underprices
messages shows as many short ones. `check` therefore counts only stretches of at least
LONG_NS (1 ms: 10 MB at shared-memory speed, more than any message of the programs we test)
and warns when a prediction falls short of the traced run by more than 10 % and those long
stretches account for at least half of the shortfall.

It also reads the machine-state probes the tracer took in MPI_Init (`#@ probe`, the median
8-byte half round trip between ranks 0 and 1 through PMPI) and again in MPI_Finalize
(`#@ probe_end`, after the run's time; traces from before 2026-12-07 have only the first).
`latitude calibrate` takes the same probe in each of its runs and keeps their median in the
machine file ([fit] probe_ns).
On a machine whose process launches land in different states (a VM whose virtual CPUs the
host places anew: whole runs about twice as fast or slow), the ratio of the two probes says
whether the traced run saw the calibration's state; `state_check` warns when either ratio
is outside [1/STATE_RATIO, STATE_RATIO], since then every message's price is off by about
that factor for the part of the run in that state. The state can change during a launch:
the probe at the end catches a run that started in the calibration's state and left it.
"""

from __future__ import annotations

import heapq
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from latitude import tracer

SHORTFALL = 0.10  # prediction below the traced run by more than this: look for a cause
LONG_NS = 1e6  # an all-in-MPI stretch this long is not one message: preemption
STATE_RATIO = 1.15  # a traced run's probe this far from its machine's (either way): another state
PROBE = re.compile(rb"#@ probe half_rt_ns=([0-9.]+)")
PROBE_END = re.compile(rb"#@ probe_end half_rt_ns=([0-9.]+)")
SKIP = (b"MPI_Init", b"MPI_Init_thread", b"MPI_Finalize")


@dataclass
class TracedRun:
    runtime_ns: float  # last MPI_Init end → last MPI_Finalize start (tracer.traced_runtime_ns)
    all_in_mpi_ns: float  # every rank inside an MPI call at once
    long_in_mpi_ns: float  # the part of it in stretches of at least LONG_NS
    longest_ns: float  # the longest such stretch
    longest_call: str  # the call rank 0 was in during it
    longest_at_ns: float  # its start, after rank 0's MPI_Init end
    probe_ns: float | None = None  # the machine-state probe of rank 0's header, if taken
    probe_end_ns: float | None = None  # the same probe in rank 0's MPI_Finalize, if taken

    def to_dict(self) -> dict:
        return asdict(self)


def _calls(path: Path, probes: dict):
    """(start µs, end µs, name) of each MPI call between Init and Finalize, in trace order;
    the `#@ probe_end` line (after MPI_Finalize) goes into probes["end"]."""
    with tracer.open_trace(path) as f:
        for line in f:
            if not line.startswith(b"MPI_"):
                if m := PROBE_END.match(line):
                    probes["end"] = float(m.group(1))
                continue
            fields = line.rstrip(b"\n").split(b":")
            if fields[0] in SKIP or len(fields) < 3:
                continue
            try:
                yield float(fields[1]), float(fields[-1]), fields[0]
            except ValueError:
                continue


def _events(rank: int, path: Path, probes: dict):
    for start, end, name in _calls(path, probes if rank == 0 else {}):
        if end > start:
            yield start, 1, rank, name
            yield end, 0, rank, name  # at a tie an end comes before a start


def analyse(trace: str | os.PathLike) -> TracedRun | None:
    """The traced run's runtime and time with every rank inside MPI; None for traces from
    several nodes (clocks not comparable) or without MPI_Init/MPI_Finalize."""
    d = Path(trace)
    d = d if d.is_dir() else d.parent
    files = tracer.trace_files(d)
    runtime = tracer.traced_runtime_ns(d)
    if not files or runtime is None or len({tracer.trace_host(f) for f in files}) != 1:
        return None
    n, inside, since = len(files), 0, None
    total = long = longest = at = 0.0
    call = ""
    current: dict[int, bytes] = {}
    first, probes = None, {}
    for t, kind, rank, name in heapq.merge(*(_events(r, f, probes) for r, f in enumerate(files))):
        first = t if first is None else first
        if kind == 1:
            current[rank] = name
            inside += 1
            if inside == n:
                since, started_in = t, current.get(0, b"")
        else:
            if inside == n and since is not None:
                stretch = t - since
                total += stretch
                long += stretch if stretch * 1e3 >= LONG_NS else 0.0
                if stretch > longest:
                    longest, at, call = stretch, since - first, started_in.decode(errors="replace")
            inside -= 1
    return TracedRun(
        runtime, total * 1e3, long * 1e3, longest * 1e3, call, at * 1e3, probe_of(files[0]), probes.get("end")
    )


def probe_of(path: Path) -> float | None:
    """The `#@ probe` value of a rank file's header (ns), None if it has none."""
    m = PROBE.match(tracer.header_line(path, b"#@ probe ") or b"")
    return float(m.group(1)) if m else None


def state_ratios(run: TracedRun | None, machine_probe_ns: float | None) -> tuple[float | None, float | None]:
    """The traced run's probes (MPI_Init, MPI_Finalize) over the machine file's (each None
    unless both were taken)."""
    if run is None or not machine_probe_ns:
        return None, None
    return tuple(p / machine_probe_ns if p else None for p in (run.probe_ns, run.probe_end_ns))


def _off(ratio: float | None) -> bool:
    return ratio is not None and not 1 / STATE_RATIO <= ratio <= STATE_RATIO


def state_check(ratios: tuple[float | None, float | None], machine: str) -> str | None:
    """A warning when the traced run (at its start or its end) and the calibration saw
    different machine states."""
    off = [(r, call) for r, call in zip(ratios, ("MPI_Init", "MPI_Finalize")) if _off(r)]
    if not off:
        return None
    where = " and ".join(f"{r:.2f}× in {call}" for r, call in off)
    worse = {"more" if r > 1 else "less" for r, _ in off}
    cost = " or ".join(sorted(worse, reverse=True))  # "more", "less" or "more or less"
    return (
        f"the traced run's machine-state probe (8 B half round trip) was {where} that of "
        f"{machine}: the run saw another machine state, and its messages cost about "
        f"that factor {cost} than the machine file prices them; calibrate and "
        'trace again, one right after the other, until the probes agree (docs/calibration.md, "Two machine states")'
    )


def check(run: TracedRun | None, predicted_ns: float) -> str | None:
    """A warning when the prediction falls short of the traced run and time with every rank
    inside MPI explains most of the shortfall (see the module comment)."""
    if run is None or predicted_ns >= (1 - SHORTFALL) * run.runtime_ns:
        return None
    short = run.runtime_ns - predicted_ns
    if run.long_in_mpi_ns < 0.5 * short:
        return None
    from latitude.units import fmt_time

    return (
        f"the traced run took {fmt_time(run.runtime_ns)}, the prediction is {fmt_time(predicted_ns)} "
        f"({100 * (predicted_ns / run.runtime_ns - 1):+.0f} %); for {fmt_time(run.long_in_mpi_ns)} of the traced run "
        f"every rank was inside MPI at once in stretches of 1 ms or more (longest {fmt_time(run.longest_ns)} in {run.longest_call} "
        f"{fmt_time(run.longest_at_ns)} after MPI_Init), more than messages explain: the traced run was "
        "probably disturbed (a rank preempted by other load). Its computation is still right, its MPI time "
        "is not: trace again on a quiet node"
    )
