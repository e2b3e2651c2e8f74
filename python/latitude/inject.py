"""Run MPI programs under the latency injector (C sources ``tracer/ij_*.c``).

The injector is a PMPI library built and cached like the tracer (one build per MPI, see
:mod:`latitude.tracer`) and preloaded on the ranks the same way. With ``delta_L`` = ΔL it
makes every message visible to its receiver ΔL later than it otherwise would be, without
delaying eager senders; rendezvous messages (more than ``eager_limit`` bytes) follow the
handshake protocol of docs/model.md (3·ΔL to the receiver, a 4th to the sender); collectives
are re-implemented over point-to-point with the algorithms ``latitude schedule`` assumes.
Each rank writes a report: its runtime (MPI_Init end → MPI_Finalize start, the span an
execution graph of a trace covers) and counters.

    launch = Launch.resolve(["mpirun", "-np", "2", "./app"])
    run = run_injected(launch, InjectOptions(delta_L=50e3, eager_limit=4040))
    run.runtime_ns, run.ranks[0].counters["recvs"]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from latitude import launcher, tracer
from latitude.errors import InputError, ToolError

INJECT_LIB = "liblatitude_inject.so"
CALIB_PROGRAM = "latitude-calib"
REPORT_GLOB = "inject-rank-*.txt"
# Default limit of one run under the injector: a rank stuck in an MPI library's crash handler
# never ends (`--timeout` raises or lifts it).
DEFAULT_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class InjectOptions:
    """What the injector does (environment of the ranks, see tracer/ij_core.c)."""

    delta_L: float = 0.0  # ΔL, ns
    eager_limit: int | None = None  # S in bytes; None: every message is eager
    one_way: tuple[float, float] | None = None  # a + b·s ns: one-way time before it is measured
    collectives: bool = True  # False: collectives pass to MPI undelayed
    pair_delta: str | None = None  # file of a P×P matrix: extra ΔL per pair of ranks, ns

    def env(self) -> dict[str, str]:
        env = {"LATITUDE_INJECT_DELTA_L": f"{self.delta_L:.0f}"}
        if self.pair_delta:
            env["LATITUDE_INJECT_PAIR_DELTA"] = str(Path(self.pair_delta).resolve())
        if self.eager_limit is not None and self.eager_limit < 2**63 - 1:
            env["LATITUDE_INJECT_EAGER_LIMIT"] = str(int(self.eager_limit))
        if self.one_way is not None:
            env["LATITUDE_INJECT_OW"] = f"{self.one_way[0]:.3f},{self.one_way[1]:.6f}"
        if not self.collectives:
            env["LATITUDE_INJECT_COLL"] = "0"
        return env

    @classmethod
    def for_machine(cls, params, delta_L: float = 0.0, collectives: bool = True) -> InjectOptions:
        """Eager limit and one-way estimate from a machine's LogGPS parameters (Params)."""
        return cls(
            delta_L=delta_L,
            eager_limit=params.S,
            one_way=(params.L + 2 * params.o, params.G + params.O),
            collectives=collectives,
        )


@dataclass
class Launch:
    """A launcher command and the MPI it belongs to (how to build and preload for it)."""

    argv: list[str]
    family: str
    info: tracer.MPIInfo

    @classmethod
    def resolve(cls, argv: list[str], mpicc: str | None = None) -> Launch:
        if argv and argv[0] == "--":
            argv = argv[1:]
        if not argv:
            raise InputError("command", "no launcher given (e.g. -- mpirun -np 2 ./app)")
        if not shutil.which(argv[0]):
            raise InputError(argv[0], "launcher not found (is it on PATH?)")
        family, info = tracer.resolve_launch(argv, mpicc)
        return cls(list(argv), family, info)

    def build(self, name: str, rebuild: bool = False, log=None) -> Path:
        """A cached artifact of the C sources built for this MPI (injector, tracer, calib)."""
        return tracer.build_tracer(self.info, force=rebuild, log=log, name=name)

    def command(self, env: dict[str, str], argv: list[str] | None = None) -> tuple[list[str], dict]:
        return tracer.launch_command(argv or self.argv, self.family, env)


@dataclass
class RankReport:
    rank: int
    span_ns: int
    counters: dict = field(default_factory=dict)


@dataclass
class RunResult:
    returncode: int
    ranks: list[RankReport]
    wall_s: float
    stdout: str | None = None
    stderr: str | None = None

    @property
    def runtime_ns(self) -> int:
        """The run's runtime: the longest rank span (MPI_Init end → MPI_Finalize start)."""
        return max(r.span_ns for r in self.ranks)

    def total(self, key: str) -> int:
        return sum(int(r.counters.get(key, 0)) for r in self.ranks)

    @property
    def busy_ns(self) -> list[int] | None:
        """Per rank, its span outside the injector's waiting loops: its computation and the
        calls that do not wait (None from an injector that did not measure it)."""
        if not all("wait_ns" in r.counters for r in self.ranks):
            return None
        return [max(0, r.span_ns - int(r.counters["wait_ns"])) for r in self.ranks]


def read_reports(directory: Path) -> list[RankReport]:
    """The per-rank reports the injector wrote into `directory`."""
    out = []
    for path in sorted(Path(directory).glob(REPORT_GLOB)):
        fields = {}
        with open(path) as f:
            for n, line in enumerate(f, start=1):
                key, _, value = line.strip().partition(" ")
                if n == 1 and key != "latitude-inject":
                    raise ToolError(f"{path}:1: not an injector report")
                fields[key] = value
        try:
            out.append(RankReport(int(fields["rank"]), int(fields["span_ns"]), fields))
        except (KeyError, ValueError):
            raise ToolError(f"{path}: incomplete injector report (rank, span_ns)") from None
    return sorted(out, key=lambda r: r.rank)


def preload_env(lib: Path, opts: InjectOptions, report_dir: Path) -> dict[str, str]:
    env = {"LD_PRELOAD": tracer.preload_value(lib), "LATITUDE_INJECT_REPORT": str(Path(report_dir) / "inject-rank-")}
    env.update(opts.env())
    return env


def run_injected(
    launch: Launch,
    opts: InjectOptions,
    lib: Path | None = None,
    capture: bool = True,
    argv: list[str] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_S,
) -> RunResult:
    """Run the launcher command (or `argv`) once under the injector; a failed run is a
    ToolError with the program's exit status and the last lines of its stderr."""
    lib = lib or launch.build(INJECT_LIB)
    shown = f"`{' '.join(launch.argv if argv is None else argv)}` under the injector"
    with tempfile.TemporaryDirectory(prefix="latitude-inject-") as tmp:
        cmd, env = launch.command(preload_env(lib, opts, Path(tmp)), argv)
        run = launcher.run(cmd, env, capture, timeout, what=shown)
        ranks = read_reports(Path(tmp))
    if run.returncode != 0:
        raise ToolError(run.failure(shown))
    if not ranks:
        raise ToolError(f"{shown} wrote no injector report ({no_report_hint(launch)})")
    return RunResult(run.returncode, ranks, run.wall_s, run.stdout, run.stderr)


def no_report_hint(launch: Launch) -> str:
    """Why a run that ended well wrote no injector report."""
    return (
        f"did the program call MPI_Init and MPI_Finalize, built with {launch.info.family} ({launch.info.mpicc})? "
        "A statically linked MPI or MPICH's `use mpi_f08` bindings (which call PMPI_ directly) cannot be interposed"
    )


def log(msg: str) -> None:
    print(f"latitude: {msg}", file=sys.stderr, flush=True)


def build_with_spinner(launch: Launch, name: str, rebuild: bool = False) -> Path:
    """Build an artifact; a spinner on a terminal (the first build takes a few seconds)."""
    if not sys.stderr.isatty():
        return launch.build(name, rebuild, log)
    from rich.console import Console

    with Console(stderr=True).status(f"building {name} for {launch.info.family} ...") as status:
        return launch.build(name, rebuild, lambda m: status.update(f"latitude: {m}"))


def environment_note() -> str:
    """Why timings may be noisy: other load on the machine (1-minute load average)."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover
        return ""
    cores = os.cpu_count() or 1
    return f"load average {load:.2f} on {cores} cores"
