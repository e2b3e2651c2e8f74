"""LogGPS parameters of a machine from ping-pong, overhead and streaming measurements.

``latitude-calib`` (tracer/latitude_calib.c) measures between two ranks, Netgauge/OSU
style: half round trips per size, the duration of an eager MPI_Send (o_send) and of an
MPI_Recv once the message is there (o_recv), the per-message time of back-to-back sends,
and the eager limit S (the largest message whose MPI_Send returns before the receive is
posted). L, o, G, O are the non-negative least-squares solution, in relative errors, of
every measurement written with the model's own formulas (docs/model.md, b(s) = s − 1):

    eager half round trip       = L + 2o + b(s)·(G + O)
    rendezvous half round trip  = 3L + 3o + b(s)·G   (handshake: RTS, read, data, FIN)
    (o_send + o_recv) / 2       = o + b(s)·O         (eager sizes)
    g   visible only if back-to-back small sends are slower than o_send (else 0)

The fit quality is the residual of every measured size under these formulas (and R²): a
machine whose messages do not follow LogGP (shared memory, with a large rendezvous setup
cost) shows it there.

Repeated measurement runs (``--repeat N``) are combined before the fit: per size, the median
of the runs' values, and the median eager limit. On a busy or noisy node single runs give
very different fits (the fit trades eager against rendezvous sizes differently each time);
the fit of the medians moves much less, and the notes show the spread of the single-run fits.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass, field

from latitude import launcher
from latitude.errors import InputError, ToolError

DEFAULT_SIZES = (0, 8, 64, 256, 1024, 2048, 4096, 8192, 16384, 65536, 262144, 1048576)


@dataclass
class Measurements:
    """What latitude-calib printed (µs)."""

    pingpong: dict = field(default_factory=dict)  # size -> (min, median, mean)
    o_send: dict = field(default_factory=dict)  # size -> median
    o_recv: dict = field(default_factory=dict)
    stream: dict = field(default_factory=dict)  # size -> µs per message
    eager: int | None = None  # None: no limit found (all eager)
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
                kind = parts[0]
                want = {"pingpong": 6, "o_send": 3, "o_recv": 3, "stream": 3, "eager": 2}.get(kind)
                if want and len(parts) != want:
                    raise ValueError
                if kind == "pingpong":
                    m.pingpong[int(parts[1])] = tuple(float(x) for x in parts[2:5])
                elif kind in ("o_send", "o_recv", "stream"):
                    getattr(m, kind)[int(parts[1])] = float(parts[2])
                elif kind == "eager":
                    m.eager = None if parts[1] == "inf" else int(parts[1])
                else:
                    continue  # the program's other output
            except (IndexError, ValueError):
                raise InputError(f"{where}:{n}", f"expected 'kind,size,values...', got {line!r}") from None
        if not m.pingpong:
            raise ToolError(f"{where}: no ping-pong measurements in the output")
        return m


def combine(runs: list[Measurements]) -> Measurements:
    """Repeated measurement runs as one: per size and statistic the median over the runs
    that measured it; the eager limit is the median of the limits found (no limit = above
    every size)."""
    import statistics

    if len(runs) == 1:
        return runs[0]
    m = Measurements(runs=list(runs))
    for size in sorted(set().union(*(r.pingpong for r in runs))):
        have = [r.pingpong[size] for r in runs if size in r.pingpong]
        m.pingpong[size] = tuple(statistics.median(v[i] for v in have) for i in range(3))
    for kind in ("o_send", "o_recv", "stream"):
        table = getattr(m, kind)
        for size in sorted(set().union(*(getattr(r, kind) for r in runs))):
            table[size] = statistics.median(getattr(r, kind)[size] for r in runs if size in getattr(r, kind))
    limits = sorted(math.inf if r.eager is None else r.eager for r in runs)
    mid = limits[(len(limits) - 1) // 2]
    m.eager = None if mid == math.inf else int(mid)
    return m


@dataclass
class Fit:
    """LogGPS parameters (ns, bytes) and how well they describe the measurements."""

    L: float
    o: float
    g: float
    G: float
    O: float
    S: int | None
    rows: list[dict]  # per size: measured, model, residual
    r2: float
    notes: list[str]

    @property
    def max_rel_error(self) -> float:
        return max(abs(r["rel_error"]) for r in self.rows)

    def to_dict(self) -> dict:
        """The `latitude calibrate --json` contract (docs/json.md)."""
        return {
            "L_ns": self.L,
            "o_ns": self.o,
            "g_ns": self.g,
            "G_ns": self.G,
            "O_ns": self.O,
            "S": self.S,
            "r2": self.r2,
            "max_rel_error": self.max_rel_error,
            "rows": self.rows,
            "notes": self.notes,
        }

    def params(self):
        from latitude.params import Params

        return Params(
            L=self.L,
            o=self.o,
            g=0.0,
            G=self.G,
            O=self.O,
            S=self.S if self.S is not None else "inf",
            protocol="handshake",
        )


def b(s: int) -> int:
    return max(s - 1, 0)


def _nnls(rows: list[list[float]], ys: list[float]) -> list[float]:
    """Least squares with every unknown ≥ 0 (few unknowns: try every support)."""
    import itertools

    import numpy as np

    A, y = np.asarray(rows, float), np.asarray(ys, float)
    n = A.shape[1]
    best, best_x = math.inf, [0.0] * n
    for k in range(n, 0, -1):
        for support in itertools.combinations(range(n), k):
            sol, *_ = np.linalg.lstsq(A[:, support], y, rcond=None)
            if (sol < 0).any():
                continue
            x = np.zeros(n)
            x[list(support)] = sol
            res = float(((A @ x - y) ** 2).sum())
            if res < best:
                best, best_x = res, [float(v) for v in x]
    return best_x


def _design(s: int, eager: bool) -> list[float]:
    """Coefficients of (L, o, G, O) in a half round trip of s bytes."""
    return [1.0, 2.0, b(s), b(s)] if eager else [3.0, 3.0, b(s), 0.0]


def fit(m: Measurements) -> Fit:
    """Relative least squares of every measurement under the model's formulas, L, o, G, O ≥ 0."""
    notes = []
    S = m.eager

    def is_eager(s):
        return S is None or s <= S

    sizes = sorted(m.pingpong)
    half = {s: m.pingpong[s][1] * 1e3 for s in sizes}  # medians, ns
    rows, ys = [], []
    for s in sizes:
        if half[s] > 0:
            rows.append([c / half[s] for c in _design(s, is_eager(s))])
            ys.append(1.0)
    for s in sorted(set(m.o_send) & set(m.o_recv)):
        ov = (m.o_send[s] + m.o_recv[s]) / 2 * 1e3
        if is_eager(s) and ov > 0:  # o + b(s)·O
            rows.append([0.0, 1.0 / ov, 0.0, b(s) / ov])
            ys.append(1.0)
    if len(rows) < 4:
        raise ToolError(f"calibration needs at least 4 measurements, got {len(rows)}")
    L, o, G, O = _nnls(rows, ys)
    g = _gap(m, o, notes)
    if len(m.runs) > 1:
        notes.append(_spread(m.runs))
    out = []
    for s in sizes:
        model = sum(c * v for c, v in zip(_design(s, is_eager(s)), (L, o, G, O)))
        out.append(
            {
                "bytes": s,
                "protocol": "eager" if is_eager(s) else "rendezvous",
                "measured_ns": half[s],
                "model_ns": model,
                "residual_ns": half[s] - model,
                "rel_error": (half[s] - model) / half[s] if half[s] else 0.0,
            }
        )
    mean = sum(half.values()) / len(half)
    ss_tot = sum((half[s] - mean) ** 2 for s in sizes)
    ss_res = sum(r["residual_ns"] ** 2 for r in out)
    r2 = 1 - ss_res / ss_tot if ss_tot else 1.0
    return Fit(L, o, g, G, O, S, out, r2, notes)


def _spread(runs: list[Measurements]) -> str:
    """How far apart the single runs' own fits are (what one run alone could have given)."""
    fits = [fit(r) for r in runs]

    def rng(name, unit, fmt):
        return (
            f"{name} {fmt.format(min(getattr(f, name) for f in fits))}–"
            f"{fmt.format(max(getattr(f, name) for f in fits))} {unit}"
        )

    return f"{len(runs)} measurement runs, fitted on their per-size medians; the runs fitted alone give " + ", ".join(
        [rng("L", "ns", "{:.0f}"), rng("o", "ns", "{:.0f}"), rng("G", "ns/B", "{:.4f}"), rng("O", "ns/B", "{:.4f}")]
    )


def _gap(m: Measurements, o: float, notes: list) -> float:
    """g: the per-message time of back-to-back small sends, when it exceeds the send overhead."""
    small = [s for s in sorted(m.stream) if s <= 64 and s in m.o_send]
    if not small:
        return 0.0
    s = small[0]
    gap, osend = m.stream[s] * 1e3, m.o_send[s] * 1e3
    if gap > 1.2 * osend:
        notes.append(
            f"back-to-back {s}-byte sends take {gap:.0f} ns each, more than o_send {osend:.0f} ns: g = {gap:.0f} ns"
        )
        return gap
    notes.append(
        f"g is not visible: back-to-back {s}-byte sends take {gap:.0f} ns each, "
        f"about o_send = {osend:.0f} ns (o ≥ g); g = 0"
    )
    return 0.0


def _t(ns: float) -> str:
    return f'"{ns:.4g}ns"'


def to_toml(f: Fit, command: str, injector: bool = False) -> str:
    """A machine file for ``--machine`` (Params.from_machine reads [loggps])."""
    now = datetime.datetime.now().isoformat(timespec="seconds")
    lines = [
        f"# Latitude machine file written by `latitude calibrate` on {now}",
        f"# measured with: {command}" + (" (under the latency injector, ΔL = 0)" if injector else ""),
        "[loggps]",
        f"L = {_t(f.L)}",
        f"o = {_t(f.o)}",
        f"g = {_t(f.g)}",
        f'G = "{f.G:.6g}ns"',
        f'O = "{f.O:.6g}ns"',
        f"S = {f.S}" if f.S is not None else 'S = "inf"',
        'protocol = "handshake"',
        "",
        "[fit]",
        f"r2 = {f.r2:.6f}",
        f"max_rel_error = {f.max_rel_error:.4f}",
        f"under_injector = {'true' if injector else 'false'}",
    ]
    for n in f.notes:
        lines.append(f"# {n}")
    lines += [
        "",
        "[measured]",
        "bytes = [" + ", ".join(str(r["bytes"]) for r in f.rows) + "]",
        "half_round_trip_ns = [" + ", ".join(f"{r['measured_ns']:.1f}" for r in f.rows) + "]",
        "model_ns = [" + ", ".join(f"{r['model_ns']:.1f}" for r in f.rows) + "]",
    ]
    return "\n".join(lines) + "\n"


def table(f: Fit) -> str:
    """The fit, human-readable."""
    S = "∞" if f.S is None else f"{f.S} B"
    out = [
        f"L = {f.L:.1f} ns   o = {f.o:.1f} ns   g = {f.g:.1f} ns   G = {f.G:.5f} ns/B "
        f"({1 / f.G if f.G else math.inf:.3g} GB/s)   O = {f.O:.5f} ns/B   S = {S}",
        "",
        f"{'bytes':>9} {'protocol':>10} {'measured µs':>12} {'model µs':>10} {'residual':>9}",
    ]
    for r in f.rows:
        out.append(
            f"{r['bytes']:>9} {r['protocol']:>10} {r['measured_ns'] / 1e3:>12.3f} "
            f"{r['model_ns'] / 1e3:>10.3f} {100 * r['rel_error']:>8.1f}%"
        )
    out.append(f"R² = {f.r2:.4f}, largest relative residual {100 * f.max_rel_error:.1f} %")
    out += [f"note: {n}" for n in f.notes]
    return "\n".join(out)


def measure(
    launch,
    sizes=DEFAULT_SIZES,
    batches: int = 11,
    iters: int = 200,
    injector_lib=None,
    rebuild: bool = False,
    timeout: float = 600,
    repeat: int = 1,
) -> tuple[Measurements, str]:
    """Run latitude-calib with the launcher (its program arguments replaced) `repeat` times,
    optionally under the injector at ΔL = 0. Returns the measurements (combined) and the
    command line."""
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
    runs = [_measure_once(launch, argv, injector_lib, timeout) for _ in range(repeat)]
    return combine(runs), " ".join(argv) + (f"  (× {repeat}, per-size medians)" if repeat > 1 else "")


def _measure_once(launch, argv: list[str], injector_lib, timeout: float) -> Measurements:
    from latitude import inject

    if injector_lib is not None:
        run = inject.run_injected(launch, inject.InjectOptions(), injector_lib, argv=argv, timeout=timeout)
        text = run.stdout
    else:
        cmd, env = launch.command({}, argv)
        run = launcher.run(cmd, env, timeout=timeout)
        if run.returncode != 0:
            raise ToolError(run.failure(f"`{' '.join(cmd)}`"))
        text = run.stdout
    return Measurements.parse(text)
