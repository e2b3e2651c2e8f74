"""Machine measurements for the LogGPS calibration: running ``latitude-calib``, reading what
it prints, combining repeated runs, and saving / reloading the raw samples.

``latitude-calib`` (tracer/latitude_calib.c) measures between two ranks, Netgauge/OSU style:
half round trips per size (per batch the median of round trips timed one by one), the time
inside an eager MPI_Send (o_send) and inside an MPI_Recv of a message already there (o_recv),
the per-message time of back-to-back sends, one nonblocking send against two at once (whether
a rank's messages in flight share its bandwidth), the eager limit S, the time of memcpy calls of
64 KiB to 4 MiB with cold caches, the time per call of back-to-back MPI_Barrier, MPI_Allreduce
of one double and MPI_Sendrecv of 0 and 8 bytes (with exactly 2 ranks), and the cost of one
clock read (subtracted from every timed interval). :mod:`latitude.loggp_fit` turns them into
L, o, g, G, O, S, the copy cost C and the collective call's cost K.

The samples behind each statistic (per-batch half round trips, every timed o_send / o_recv
call, per-batch copy times, per-batch collective and exchange times, per run) are kept:
`latitude calibrate -o machine.toml` saves them next to the machine file
(``machine.samples.csv``: run, kind, bytes, index, value_us) and `--from-samples` fits them
again without running anything, so a calibration can be re-analysed (other estimators,
protocol size classes, Bayesian fits) from the data of the run. A samples file written before
the copies were measured has no `copy` rows: it still loads, and its fit has no C; one
written before the collectives were measured has no `coll_*` rows: it still loads, and its
fit has no K.
"""

from __future__ import annotations

import csv
import math
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from latitude import launcher, tracer
from latitude.errors import InputError, ToolError
from latitude.outputs import write_text

DEFAULT_SIZES = (0, 8, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536, 262144, 1048576)
# the collective calls and their point-to-point references: (name, bytes), as latitude-calib
# prints them (`coll,<name>,<bytes>,<µs per call>`; samples of kind coll_<name>)
COLLS = (("exchange", 0), ("barrier", 0), ("exchange", 8), ("allreduce", 8))
SAMPLE_KINDS = ("pingpong", "o_send", "o_recv", "copy", "coll_exchange", "coll_barrier", "coll_allreduce")

# fields per line of latitude-calib's output, by kind (other kinds: the program's own output)
LINE_FIELDS = {
    "pingpong": 6,
    "o_send": 3,
    "o_recv": 3,
    "stream": 3,
    "concurrent": 4,
    "copy": 3,
    "coll": 4,
    "eager": 2,
    "timer": 2,
    "probe": 2,
    "samples": 4,
}


@dataclass
class Measurements:
    """What latitude-calib printed (µs), for one run or several combined."""

    pingpong: dict = field(default_factory=dict)  # size -> (min, median, mean) of per-batch values
    o_send: dict = field(default_factory=dict)  # size -> median
    o_recv: dict = field(default_factory=dict)
    stream: dict = field(default_factory=dict)  # size -> µs per message
    concurrent: dict = field(default_factory=dict)  # size -> (µs of one Isend, of two at once)
    copy: dict = field(default_factory=dict)  # size -> median µs of a cold memcpy
    coll: dict = field(default_factory=dict)  # (name, bytes) -> median over batches of µs per call
    eager: int | None = None  # None: no limit found (all eager)
    timer_ns: float | None = None  # cost of one clock read, already subtracted
    probe_ns: float | None = None  # the machine-state probe (8 B half round trip via PMPI, ns)
    tracer_gap_ns: float | None = None  # under the tracer: its work per call, taken out (less_tracer_gap)
    samples: dict = field(default_factory=dict)  # (kind, size) -> values (µs)
    runs: list = field(default_factory=list)  # the single runs, when combined

    @classmethod
    def parse(cls, text: str, where: str = "latitude-calib") -> Measurements:
        m = cls()
        for n, line in enumerate(text.splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(",")
            try:
                m._line(parts)
            except (IndexError, ValueError):
                raise InputError(f"{where}:{n}", f"expected 'kind,size,values...', got {line[:80]!r}") from None
        if not m.pingpong:
            raise ToolError(f"{where}: no ping-pong measurements in the output")
        return m

    def _line(self, parts: list[str]) -> None:
        kind = parts[0]
        want = LINE_FIELDS.get(kind)
        if want and len(parts) != want:
            raise ValueError
        if kind == "pingpong":
            self.pingpong[int(parts[1])] = tuple(float(x) for x in parts[2:5])
        elif kind in ("o_send", "o_recv", "stream", "copy"):
            getattr(self, kind)[int(parts[1])] = float(parts[2])
        elif kind == "concurrent":
            self.concurrent[int(parts[1])] = (float(parts[2]), float(parts[3]))
        elif kind == "coll":
            if (parts[1], int(parts[2])) not in COLLS:
                raise ValueError
            self.coll[(parts[1], int(parts[2]))] = float(parts[3])
        elif kind == "eager":
            self.eager = None if parts[1] == "inf" else int(parts[1])
        elif kind == "timer":
            self.timer_ns = float(parts[1])
        elif kind == "probe":  # ≤ 0: rank 0 did not take it (one rank)
            self.probe_ns = positive(float(parts[1]))
        elif kind == "samples":
            if parts[1] not in SAMPLE_KINDS:
                raise ValueError
            self.samples[(parts[1], int(parts[2]))] = [float(v) for v in parts[3].split(";")]
        # other lines: the program's own output

    def less_tracer_gap(self, gap: float) -> None:
        """Measured under the tracer, every call timed from outside (the round trips, the
        calls' own time, back-to-back sends) holds the tracer's work before and after its
        record once: `gap`, which a traced graph keeps as computation between the records
        and the model must not price a second time (`tracer_gap_us`)."""
        self.tracer_gap_ns = gap * 1e3
        self.pingpong = {s: tuple(v - gap for v in t) for s, t in self.pingpong.items()}
        for kind in ("o_send", "o_recv", "stream"):
            setattr(self, kind, {s: v - gap for s, v in getattr(self, kind).items()})
        for key, vals in self.samples.items():
            if key[0] in ("pingpong", "o_send", "o_recv"):
                self.samples[key] = [v - gap for v in vals]

    @classmethod
    def from_samples(
        cls,
        samples: dict,
        stream: dict,
        eager: int | None,
        timer_ns: float | None,
        probe_ns: float | None = None,
        concurrent: dict | None = None,
    ) -> Measurements:
        """A run rebuilt from its samples (what --from-samples fits)."""
        m = cls(stream=dict(stream), eager=eager, timer_ns=timer_ns, samples=dict(samples), probe_ns=probe_ns)
        m.concurrent = {s: tuple(pair) for s, pair in (concurrent or {}).items()}
        for (kind, size), vals in samples.items():
            if kind == "pingpong":
                m.pingpong[size] = (min(vals), statistics.median(vals), statistics.fmean(vals))
            elif kind.startswith("coll_"):
                m.coll[(kind[len("coll_") :], size)] = statistics.median(vals)
            else:
                getattr(m, kind)[size] = statistics.median(vals)
        if not m.pingpong:
            raise ToolError("no ping-pong samples")
        return m


def combine(runs: list[Measurements]) -> Measurements:
    """Repeated measurement runs as one: per size and statistic the median over the runs
    that measured it; the eager limit is the median of the limits found (no limit = above
    every size)."""
    if len(runs) == 1:
        return runs[0]
    m = Measurements(runs=list(runs))
    m.pingpong = tuple_medians([r.pingpong for r in runs])
    for kind in ("o_send", "o_recv", "stream", "copy", "coll"):
        table = getattr(m, kind)
        for size in sorted(set().union(*(getattr(r, kind) for r in runs))):
            table[size] = statistics.median(getattr(r, kind)[size] for r in runs if size in getattr(r, kind))
    m.concurrent = tuple_medians([r.concurrent for r in runs])
    limits = sorted(math.inf if r.eager is None else r.eager for r in runs)
    mid = limits[(len(limits) - 1) // 2]
    m.eager = None if mid == math.inf else int(mid)
    for name in ("timer_ns", "probe_ns", "tracer_gap_ns"):
        setattr(m, name, median_known(getattr(r, name) for r in runs))
    return m


def tuple_medians(tables: list[dict]) -> dict:
    """Tables of size -> tuple of statistics as one: per size, each statistic's median over
    the tables that have the size."""
    out = {}
    for size in sorted(set().union(*tables)):
        have = [t[size] for t in tables if size in t]
        out[size] = tuple(statistics.median(v[i] for v in have) for i in range(len(have[0])))
    return out


def median_known(values) -> float | None:
    """The median of the values that are not None (None if none is)."""
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def positive(v: float) -> float | None:
    return v if v > 0 else None


# ---- the samples file: one row per value, long format (loads into pandas as is) ----
SAMPLES_HEADER = ["run", "kind", "bytes", "index", "value_us"]


def write_samples(runs: list[Measurements], path: str) -> None:
    """Every run's samples, back-to-back stream times, eager limit and clock cost."""
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SAMPLES_HEADER)
    for run, m in enumerate(runs, start=1):
        for (kind, size), vals in sorted(m.samples.items()):
            w.writerows([run, kind, size, i, f"{v:.4f}"] for i, v in enumerate(vals))
        w.writerows([run, "stream", size, 0, f"{v:.4f}"] for size, v in sorted(m.stream.items()))
        for size, pair in sorted(m.concurrent.items()):  # index 0: one message, 1: two at once
            w.writerows([run, "concurrent", size, i, f"{v:.4f}"] for i, v in enumerate(pair))
        w.writerow([run, "eager", "inf" if m.eager is None else m.eager, 0, ""])
        if m.timer_ns is not None:
            w.writerow([run, "timer", 0, 0, f"{m.timer_ns / 1e3:.6f}"])
        if m.probe_ns is not None:
            w.writerow([run, "probe", 8, 0, f"{m.probe_ns / 1e3:.6f}"])
    write_text(path, buf.getvalue(), "samples CSV")


def read_samples(path: str) -> list[Measurements]:
    """The runs of a samples file written by write_samples."""
    runs: dict[int, dict] = {}
    try:
        f = open(path, newline="")
    except OSError as err:
        raise InputError(path, f"cannot read the samples file ({err.strerror})") from None
    with f:
        reader = csv.reader(f)
        if next(reader, None) != SAMPLES_HEADER:
            raise InputError(f"{path}:1", f"expected the header {','.join(SAMPLES_HEADER)}")
        for n, row in enumerate(reader, start=2):
            try:
                run, kind, size, index, value = row
                r = runs.setdefault(
                    int(run),
                    {"samples": {}, "stream": {}, "concurrent": {}, "eager": None, "timer": None, "probe": None},
                )
                if kind in SAMPLE_KINDS:
                    r["samples"].setdefault((kind, int(size)), []).append(float(value))
                elif kind == "stream":
                    r["stream"][int(size)] = float(value)
                elif kind == "concurrent" and index in ("0", "1"):
                    r["concurrent"].setdefault(int(size), [0.0, 0.0])[int(index)] = float(value)
                elif kind == "eager":
                    r["eager"] = None if size == "inf" else int(size)
                elif kind == "timer":
                    r["timer"] = float(value) * 1e3
                elif kind == "probe":
                    r["probe"] = positive(float(value) * 1e3)
                else:
                    raise ValueError
            except ValueError:
                raise InputError(f"{path}:{n}", "expected run,kind,bytes,index,value_us") from None
    if not runs:
        raise InputError(path, "no samples")
    try:
        out = [
            Measurements.from_samples(
                r["samples"], r["stream"], r["eager"], r["timer"], r["probe"], concurrent=r["concurrent"]
            )
            for _, r in sorted(runs.items())
        ]
    except ToolError as err:
        raise InputError(path, str(err)) from None
    return out


# ---- running latitude-calib ----
def measure(
    launch,
    sizes=DEFAULT_SIZES,
    batches: int = 11,
    iters: int = 200,
    injector_lib=None,
    rebuild: bool = False,
    timeout: float = 600,
    repeat: int = 1,
    tracer_lib=None,
) -> tuple[Measurements, str]:
    """Run latitude-calib with the launcher (its program arguments replaced) `repeat` times,
    optionally under the injector at ΔL = 0 or under the tracer. Returns the measurements
    (combined; the single runs in `.runs`) and the command line."""
    from latitude import inject

    prog = inject.build_with_spinner(launch, inject.CALIB_PROGRAM, rebuild)
    argv = list(launch.argv) + [
        str(prog),
        "--sizes",
        ",".join(str(s) for s in sizes),
        "--batches",
        str(batches),
        "--iters",
        str(iters),
    ]
    runs = [_measure_once(launch, argv, injector_lib, timeout, tracer_lib) for _ in range(repeat)]
    return combine(runs), " ".join(argv) + (f"  (× {repeat}, per-size medians)" if repeat > 1 else "")


def _measure_once(launch, argv: list[str], injector_lib, timeout: float, tracer_lib=None) -> Measurements:
    from latitude import inject

    if injector_lib is not None:
        run = inject.run_injected(launch, inject.InjectOptions(), injector_lib, argv=argv, timeout=timeout)
        return Measurements.parse(run.stdout)
    with tempfile.TemporaryDirectory(prefix="latitude-calib-trace-") as tmp:
        # under the tracer, every call pays the recording a traced run's calls pay, compressed
        # as `latitude trace` writes by default; the trace is read for the tracer's own gap
        env = tracer.trace_env(tracer_lib, Path(tmp), compress=True, probe=False) if tracer_lib else {}
        cmd, env = launch.command(env, argv)
        run = launcher.run(cmd, env, timeout=timeout)
        gap = tracer_gap_us(Path(tmp)) if tracer_lib and run.returncode == 0 else None
    if run.returncode != 0:
        raise ToolError(run.failure(f"`{' '.join(cmd)}`"))
    m = Measurements.parse(run.stdout)
    if gap is not None:
        m.less_tracer_gap(gap)
    return m


def tracer_gap_us(outdir: Path) -> float | None:
    """The tracer's own work between two calls, outside both records' timestamps (µs): the
    median gap from an MPI_Recv's end to the next MPI_Send's start on rank 1, where the
    ping-pong does nothing in between (the traced run's graph has such gaps as computation)."""
    files = tracer.trace_files(outdir)
    if len(files) < 2:
        return None
    gaps, recv_end = [], None
    with tracer.open_trace(files[1]) as f:
        for line in f:
            if line.startswith(b"MPI_Send:") and recv_end is not None:
                gaps.append(float(line.split(b":", 2)[1]) - recv_end)
            recv_end = float(line.rstrip().rsplit(b":", 1)[1]) if line.startswith(b"MPI_Recv:") else None
    return statistics.median(gaps) if gaps else None
