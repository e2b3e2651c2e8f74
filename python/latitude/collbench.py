"""Measured collectives (`latitude measure-coll`): running ``latitude-collbench`` once per
collective and algorithm, and the samples table it produces.

``latitude-collbench`` (tracer/latitude_collbench.c) times one collective OSU style: per
message size a warm-up, then each timed call after an MPI_Barrier, on every rank. Which
algorithm the library runs is set through the library's own parameters in the ranks'
environment, named here as in our collective library (docs/schedule.md):

* Open MPI: ``coll_tuned_use_dynamic_rules=1`` and ``coll_tuned_<coll>_algorithm=<id>``
  (MCA parameters as ``OMPI_MCA_*`` variables);
* MPICH: ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM=<name>`` with
  ``MPIR_CVAR_DEVICE_COLLECTIVES=none`` (so the device layer does not pick its own).

``default`` sets nothing: the library's own choice by size (what an application gets).

The samples table has one row per timed call: ``time_us`` is the slowest rank's time of that
call (the collective is done when its last rank is), ``mean_us`` the mean over the ranks.
Every row carries the run's metadata (MPI library and version, launcher, algorithm, P, size,
the ranks' hosts and cores, which channels were real, and the background metric b when a
Slurm queue is reachable), so one file is self-describing and loads into pandas as is.

**Emulated nodes** (`--machine M --placement P`): the run goes through the latency injector
(latitude.emulate), which delays every message between ranks placed on different nodes of M
by M's latency for the pair minus its intra-node one. Then `nodes` holds each rank's emulated
node, `emulated_ns` the distinct extra delays between nodes (`;`-separated, ns: the emulated
channel's α on top of shared memory; its bandwidth stays shared memory's), and `channels`
says `shm+emulated`. The injector runs collectives itself, as the schedules of Latitude's
default preset: under emulation only `default` is measured, and it is that preset's
algorithm, not the library's.
"""

from __future__ import annotations

import datetime
import os
import statistics
from dataclasses import dataclass, field

from latitude import launcher, slurm
from latitude.errors import InputError, ToolError

COLLBENCH_PROGRAM = "latitude-collbench"
COLLECTIVES = ("bcast", "reduce", "allreduce", "alltoall")
# point-to-point inputs of the composition model (`latitude coll-model`): rank 0's half round
# trip with each peer (algorithm "peer=R") and its non-blocking fan-out to k ranks ("k=K")
P2P_MODES = ("p2p", "fanout")
DEFAULT_SIZES = (4, 64, 1024, 16384, 65536, 262144)

# our algorithm name -> (Open MPI coll_tuned id, MPICH CVAR value); None: that library has none
ALGORITHMS: dict[str, dict[str, tuple[int | None, str | None]]] = {
    "bcast": {
        "linear": (1, None),
        "chain": (2, None),
        "binary": (5, None),
        "binomial": (6, "binomial"),
        "scatter_allgather": (9, "scatter_ring_allgather"),
    },
    "reduce": {
        "linear": (1, None),
        "chain": (2, None),
        "binary": (4, None),
        "binomial": (5, "binomial"),
        "rabenseifner": (7, "reduce_scatter_gather"),
    },
    "allreduce": {
        "reduce_bcast": (2, None),
        "recdoub": (3, "recursive_doubling"),
        "ring": (4, None),
        "rabenseifner": (6, "reduce_scatter_allgather"),
    },
    "alltoall": {
        "linear": (1, "scattered"),
        "pairwise": (2, "pairwise"),
        "bruck": (3, "brucks"),
    },
}

COLUMNS = [
    "run",
    "started",
    "mpi",
    "library",
    "launcher",
    "coll",
    "algorithm",
    "procs",
    "bytes",
    "iteration",
    "time_us",
    "mean_us",
    "hosts",
    "cpus",
    "channels",
    "b",
    "b_refined",
    "timing",
    "skew_us",
    "nodes",
    "emulated_ns",
]


def algorithm_env(family: str, coll: str, alg: str) -> dict[str, str]:
    """The environment that makes `family`'s library run `alg` for `coll`."""
    if alg == "default" or coll in P2P_MODES:
        return {}
    known = ALGORITHMS[coll]
    if alg not in known:
        raise InputError("--algorithms", f"{coll} has no algorithm {alg!r} (choose from default, {', '.join(known)})")
    ompi, mpich = known[alg]
    if family == "openmpi":
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", f"OMPI_MCA_coll_tuned_{coll}_algorithm": str(ompi)}
    if family in ("mpich", "intel"):
        if mpich is None:
            raise InputError(
                "--algorithms", f"MPICH has no {coll} algorithm {alg!r} to force (it has default, {_mpich_names(coll)})"
            )
        return {f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM": mpich, "MPIR_CVAR_DEVICE_COLLECTIVES": "none"}
    raise InputError("--algorithms", f"cannot choose algorithms for an MPI of family {family!r}; use default")


def _mpich_names(coll: str) -> str:
    return ", ".join(a for a, (_, m) in ALGORITHMS[coll].items() if m)


def parse_algorithms(text: str | None, colls: tuple[str, ...]) -> dict[str, list[str]]:
    """`--algorithms bcast=binomial,chain;reduce=default` (per collective), or a plain list
    applied to every collective that has the name; default: `default` only."""
    out = {c: ["default"] for c in colls}
    if not text:
        return out
    for entry in text.split(";"):
        entry = entry.strip()
        if not entry:
            continue
        name, eq, algs = entry.partition("=")
        if not eq:
            raise InputError("--algorithms", f"expected COLL=ALG,ALG;..., got {entry!r}")
        name = name.strip()
        if name in P2P_MODES:
            raise InputError("--algorithms", f"{name} is a point-to-point measurement and has no algorithms")
        if name not in colls:
            raise InputError("--algorithms", f"{name!r} is not one of the measured collectives ({', '.join(colls)})")
        chosen = [a.strip() for a in algs.split(",") if a.strip()]
        for a in chosen:
            if a != "default" and a not in ALGORITHMS[name]:
                raise InputError(
                    "--algorithms",
                    f"{name} has no algorithm {a!r} (choose from default, {', '.join(ALGORITHMS[name])})",
                )
        out[name] = chosen or ["default"]
    return out


@dataclass
class BenchRun:
    """What one latitude-collbench run printed."""

    library: str = ""
    procs: int = 0
    ranks: dict = field(default_factory=dict)  # rank -> (host, cpu)
    timer_ns: float | None = None
    window_us: float = 0.0  # the common start window (0: ranks on several hosts)
    samples: dict = field(default_factory=dict)  # (bytes, rank) -> [µs per call]
    starts: dict = field(default_factory=dict)  # (bytes, rank) -> [µs since a base, per call]
    ends: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, where: str = COLLBENCH_PROGRAM) -> BenchRun:
        r = cls()
        for n, line in enumerate(text.splitlines(), start=1):
            parts = line.strip().split(",")
            try:
                if parts[0] == "library":
                    r.library = ",".join(parts[1:]).strip()
                elif parts[0] == "procs":
                    r.procs = int(parts[1])
                elif parts[0] == "rank":
                    r.ranks[int(parts[1])] = (parts[2], int(parts[3]))
                elif parts[0] == "timer":
                    r.timer_ns = float(parts[1])
                elif parts[0] == "window":
                    r.window_us = float(parts[1])
                elif parts[0] in ("samples", "starts", "ends"):
                    table = getattr(r, parts[0])
                    table[(int(parts[1]), int(parts[2]))] = [float(v) for v in parts[3].split(";")]
            except (IndexError, ValueError):
                raise ToolError(f"{where}:{n}: unexpected line {line[:80]!r}") from None
        if r.procs < 1 or (not r.samples and r.procs > 1):
            raise ToolError(f"{where}: no samples in its output")
        return r

    def hosts(self) -> str:
        """Each rank's host, in rank order (`;`-separated): the placement measured."""
        return ";".join(self.ranks[r][0] for r in sorted(self.ranks))

    def channels(self, nodes: list[int] | None = None) -> str:
        """The channels the messages used: shared memory within a host, the network between
        hosts, and with emulated `nodes` (one per rank) the injector's delays between them."""
        hosts = {h for h, _ in self.ranks.values()}
        real = "shm" if len(hosts) <= 1 else ("network" if len(hosts) == len(self.ranks) else "shm+network")
        return real + "+emulated" if nodes and len(set(nodes)) > 1 else real

    def per_call(self, size: int) -> tuple[list[float], list[float], list[float | None]]:
        """Per timed call: its latency, the mean over ranks of their own times, and the
        spread of the ranks' start times. With a start window (one host, one clock) the
        latency is the last rank's end minus the first rank's start; otherwise the slowest
        rank's own time."""
        ranks = [r for r in range(self.procs) if (size, r) in self.samples]
        per_rank = [self.samples[(size, r)] for r in ranks]
        n = min(len(v) for v in per_rank)
        mean = [statistics.fmean(v[i] for v in per_rank) for i in range(n)]
        if self.window_us > 0 and all((size, r) in self.starts and (size, r) in self.ends for r in ranks):
            starts = [self.starts[(size, r)] for r in ranks]
            ends = [self.ends[(size, r)] for r in ranks]
            first = [min(v[i] for v in starts) for i in range(n)]
            latency = [max(v[i] for v in ends) - first[i] for i in range(n)]
            skew = [max(v[i] for v in starts) - first[i] for i in range(n)]
            return latency, mean, skew
        return [max(v[i] for v in per_rank) for i in range(n)], mean, [None] * n

    def sizes(self) -> list[int]:
        return sorted({s for s, _ in self.samples})


@dataclass(frozen=True)
class Emulation:
    """Emulated nodes (latitude.emulate.emulated_nodes): the injector's options, each rank's
    node and the pair-delay matrix (ns)."""

    inject: object  # latitude.inject.InjectOptions
    nodes: list
    matrix: list

    def extra_ns(self) -> str:
        """The distinct extra delays between emulated nodes, `;`-separated (ns)."""
        vals = sorted({round(v, 3) for row in self.matrix for v in row if v > 0})
        return ";".join(f"{v:g}" for v in vals)


@dataclass(frozen=True)
class BenchOptions:
    colls: tuple[str, ...] = COLLECTIVES
    algorithms: dict = field(default_factory=dict)  # coll -> [alg names]
    sizes: tuple[int, ...] = DEFAULT_SIZES
    iters: int = 1000
    warmup: int = 100
    root: int = 0
    timeout: float = 1800
    emulation: Emulation | None = None


def rows_of(
    run_id: int,
    started: str,
    family: str,
    launch_argv: list[str],
    coll: str,
    alg: str,
    r: BenchRun,
    b,
    emulation: Emulation | None = None,
) -> list[list]:
    """The samples-table rows of one run (COLUMNS order)."""
    cpus = ";".join(str(r.ranks[k][1]) for k in sorted(r.ranks))
    nodes = emulation.nodes if emulation else None
    meta_tail = [r.hosts(), cpus, r.channels(nodes), b.b if b else None, b.refined if b else None]
    emulated = [";".join(map(str, nodes)), emulation.extra_ns()] if emulation else [None, None]
    timing = "window" if r.window_us > 0 else "slowest-rank"
    rows = []
    if coll in P2P_MODES:  # rank 0's times per peer / fan-out width
        for (size, k), vals in sorted(r.samples.items()):
            label = f"{'peer' if coll == 'p2p' else 'k'}={k}"
            head = [run_id, started, family, r.library, " ".join(launch_argv), coll, label, r.procs, size]
            tail = meta_tail + ["rank0", None] + emulated
            rows.extend(head + [i, round(v, 3), round(v, 3)] + tail for i, v in enumerate(vals))
        return rows
    for size in r.sizes():
        latency, mean, skew = r.per_call(size)
        head = [run_id, started, family, r.library, " ".join(launch_argv), coll, alg, r.procs, size]
        rows.extend(
            head + [i, round(t, 3), round(m, 3)] + meta_tail + [timing, None if k is None else round(k, 3)] + emulated
            for i, (t, m, k) in enumerate(zip(latency, mean, skew))
        )
    return rows


def measure(launch, opts: BenchOptions, rebuild: bool = False, progress=None) -> list[list]:
    """Run latitude-collbench once per (collective, algorithm); the samples-table rows."""
    from latitude import inject

    prog = inject.build_with_spinner(launch, COLLBENCH_PROGRAM, rebuild)
    rows: list[list] = []
    run_id = 0
    for coll in opts.colls:
        sizes = opts.sizes
        for alg in opts.algorithms.get(coll, ["default"]):
            env = algorithm_env(launch.info.family, coll, alg)
            argv = list(launch.argv) + [str(prog), "--coll", coll, "--sizes", ",".join(map(str, sizes))]
            argv += ["--iters", str(opts.iters), "--warmup", str(opts.warmup), "--root", str(opts.root)]
            before = slurm.background_now()
            started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            bench = BenchRun.parse(_run(launch, env, argv, opts, f"{coll} {alg}"))
            if opts.emulation is not None and bench.procs != len(opts.emulation.nodes):
                n = len(opts.emulation.nodes)
                raise InputError("--placement", f"places {n} ranks, the launch ran {bench.procs}")
            if coll in P2P_MODES and bench.procs < 2:
                raise InputError("command", f"{coll} measures between ranks: launch at least 2")
            b = slurm.stable(before, slurm.background_now())
            run_id += 1
            rows.extend(rows_of(run_id, started, launch.info.family, launch.argv, coll, alg, bench, b, opts.emulation))
            if progress:
                progress(coll, alg)
    return rows


def _run(launch, env: dict, argv: list[str], opts: BenchOptions, what: str) -> str:
    """One timing run's output: plain, or under the injector on emulated nodes (where the
    algorithm environment is empty: only `default` is measured there)."""
    from latitude import inject

    if opts.emulation is not None:
        return inject.run_injected(launch, opts.emulation.inject, argv=argv, timeout=opts.timeout).stdout or ""
    cmd, run_env = launch.command(env, argv)
    run = launcher.run(cmd, run_env, timeout=opts.timeout)
    if run.returncode != 0:
        raise ToolError(run.failure(f"`{' '.join(cmd)}` ({what})"))
    return run.stdout


# ---- the samples file ----
def output_format(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".csv", ".parquet"):
        raise InputError("-o", f"expected an output ending in .csv or .parquet, got {path!r}")
    return ext


def write_samples(path: str, rows: list[list]) -> None:
    """The samples table as CSV or Parquet (by extension), atomically."""
    import csv

    from latitude.outputs import atomic

    ext = output_format(path)
    with atomic(path, "samples table") as tmp:
        if ext == ".csv":
            with open(tmp, "w", newline="", encoding="utf-8") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(COLUMNS)
                w.writerows(["" if v is None else v for v in row] for row in rows)
            return
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError("-o", "Parquet output needs pyarrow (pip install pyarrow); or write .csv") from None
        columns = list(zip(*rows)) if rows else [[] for _ in COLUMNS]
        floats = {"time_us", "mean_us", "b", "b_refined", "skew_us"}
        arrays = {
            name: pa.array(list(col), type=pa.float64() if name in floats else None)
            for name, col in zip(COLUMNS, columns)
        }
        pq.write_table(pa.table(arrays), tmp)
