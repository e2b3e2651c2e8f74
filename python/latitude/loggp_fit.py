"""LogGPS parameters from machine measurements (:mod:`latitude.calibrate`), each identified
by the measurement that isolates it, with its uncertainty.

With b(s) = s − 1, the model's half round trips (README, Model) are

    eager (s ≤ S):       h(s) = L + 2o + b(s)·(G + O)
    rendezvous (s > S):  h(s) = 3L + 3o + b(s)·G          (handshake: RTS, read, data)

and the time inside MPI_Send / MPI_Recv of an eager message is o + b(s)·O. Fitting L, o, G, O
to the half round trips alone cannot separate L from o (only L + 2o and 3L + 3o are seen, and
a noisy or protocol-switching machine trades one against the other: one node gave L = 0 with
R² 0.93 and o = 57 / 253 / 335 ns in three runs). So each parameter comes from its own
measurement:

* o: the time inside the calls for the smallest eager message, (o_send + o_recv) / 2, with
  o_send the time inside MPI_Isend (the work before the message leaves) and o_recv inside
  MPI_Recv of a message MPI has already taken in;
  O: the slope of that time over the eager sizes (≥ 0), but no more than the eager half round
  trips' own slope leaves beside G (they grow by G + O per byte; Open MPI's shared memory
  switches its copy path near 1 KiB, which steepens the calls' times but not the round trip).
* L, per protocol: eager, the half round trip minus the two calls' own times,
  h(s) − o_send(s) − o_recv(s) = L + b(s)·(G − O), extrapolated to b = 0 over the smallest
  eager sizes; rendezvous, (h(s) − 3o − b(s)·G) / 3 from the line through the rendezvous
  sizes. The machine file's L is the eager one (the latency of a small message; the model
  has one L); the rendezvous one is reported beside it.
* G: the slope of h over the rendezvous sizes (bandwidth of large messages), or, with fewer
  than two of them, the eager slope minus O.
* g: back-to-back small sends, only if slower than o_send.
* nic_serialization: whether two messages a rank has in flight at once take twice as long
  as one (:mod:`latitude.nic_fit`); written only when they do.
* C (the per-byte cost of a local copy, docs/model.md §1): the slope of a memcpy's time over
  its size, 64 KiB to 4 MiB with cold caches (what a collective's copy of a rank's own block
  costs). O is not it: O is the per-byte cost of the eager path's copy of small messages that
  are in cache (0.03 ns/B on the development VM, where a cold 2 MiB copy takes 0.07–0.08).
  Without copy measurements (an older samples file) there is no C and copies are priced by O.
* K (the software cost of one collective call on one rank, beyond its messages): with 2 ranks,
  per batch ((barrier − 0 B exchange) + (allreduce of one double − 8 B exchange)) / 2 per
  call, where the exchange is MPI_Sendrecv with the peer (what a 2-rank barrier and a 2-rank
  recursive-doubling allreduce send), then the median over the batches (a preempted batch
  only adds time). Batch i of the four kinds is measured in the same round, so the
  differences pair calls that saw the same machine state. A K that is not positive, or
  smaller than its own spread, is written as 0 with a note. Without collective measurements
  (an older samples file, or not 2 ranks) there is no K.

Uncertainty: the spread of the same estimates over the repeated runs (`--repeat`, default 3),
or, for a single run, a bootstrap over its samples. Noise: how much the half round trips of a
size differ between runs (or between batches of one run); above 10 %, or with R² of the model
against the measurements below 0.95, the calibration says the machine is too noisy and what to
do. L ≤ 0 (a half round trip no longer than the two calls) is not written silently.
"""

from __future__ import annotations

import datetime
import random
import statistics
from dataclasses import dataclass, field

from latitude import tomlfile
from latitude.calibrate import COLLS, Measurements
from latitude.errors import ToolError
from latitude.nic_fit import Sharing, sharing

R2_MIN = 0.95  # below: the model does not describe the measurements
NOISE_MAX = 0.10  # above: half round trips of a size vary too much between runs / batches
PARAMS = ("L", "o", "G", "O", "L_rendezvous", "C", "K")


def b(s: int) -> int:
    return max(s - 1, 0)


def _line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope and intercept."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return slope, my - slope * mx


@dataclass
class Estimate:
    """One set of parameter values (ns, ns per byte)."""

    L: float
    o: float
    G: float
    O: float
    L_rendezvous: float | None
    s0: int  # the smallest eager size with call times (o and L come from it)
    C: float | None = None  # per-byte cost of a cold local copy (None: not measured)
    K: float | None = None  # cost of a collective call beyond its messages, ns (None: not measured)


def copy_slope(m: Measurements) -> float | None:
    """C: the least-squares slope of the median cold memcpy time over b(s) (ns per byte);
    None with fewer than two copy sizes or a slope that is not positive."""
    sizes = sorted(m.copy)
    if len(sizes) < 2:
        return None
    slope = _line([b(s) for s in sizes], [m.copy[s] * 1e3 for s in sizes])[0]
    return slope if slope > 0 else None


def coll_cost(m: Measurements) -> float | None:
    """K (ns): the median over batches of ((barrier − exchange of 0 B) + (allreduce − exchange of
    8 B)) / 2 per call, from a run's per-batch samples (batch i of each kind from the same
    round); for combined runs the median of the runs' K; from the medians per kind when there
    are no samples. None without all four kinds."""
    keys = [(f"coll_{name}", size) for name, size in COLLS]
    if all(k in m.samples for k in keys):
        ex0, bar, ex8, red = (m.samples[k] for k in keys)
        if len({len(ex0), len(bar), len(ex8), len(red)}) == 1:
            per = [((b_ - e0) + (r - e8)) / 2 * 1e3 for e0, b_, e8, r in zip(ex0, bar, ex8, red)]
            return statistics.median(per)
    if m.runs:
        ks = [k for k in map(coll_cost, m.runs) if k is not None]
        return statistics.median(ks) if ks else None
    if all(k in m.coll for k in COLLS):
        ex0, bar, ex8, red = (m.coll[k] for k in COLLS)
        return ((bar - ex0) + (red - ex8)) / 2 * 1e3
    return None


def estimate(m: Measurements) -> Estimate:
    S = m.eager
    sizes = sorted(m.pingpong)
    h = {s: m.pingpong[s][1] * 1e3 for s in sizes}  # medians, ns
    eager = [s for s in sizes if (S is None or s <= S) and s in m.o_send and s in m.o_recv]
    rndv = [s for s in sizes if S is not None and s > S]
    if not eager:
        raise ToolError("calibration needs an eager message size with o_send and o_recv measured")
    calls = {s: (m.o_send[s] + m.o_recv[s]) * 1e3 for s in eager}  # o_send + o_recv, ns
    s0 = eager[0]
    o = calls[s0] / 2
    O = max(0.0, _line([b(s) for s in eager], [calls[s] / 2 for s in eager])[0]) if len(eager) > 1 else 0.0
    small = eager[:4]
    ys = [h[s] - calls[s] for s in small]
    L = _line([b(s) for s in small], ys)[1] if len(small) > 1 else ys[0]
    slope_e = _line([b(s) for s in eager], [h[s] for s in eager])[0] if len(eager) > 1 else None
    L_r = None
    if len(rndv) > 1:
        G, icpt = _line([b(s) for s in rndv], [h[s] for s in rndv])
        G = max(G, 0.0)
        L_r = (icpt - 3 * o) / 3
        if slope_e is not None:  # the eager half round trips grow by G + O per byte: O no more
            O = min(O, max(0.0, slope_e - G))
    else:
        G = max(0.0, slope_e - O) if slope_e is not None else 0.0
        if rndv:
            L_r = (h[rndv[0]] - 3 * o - b(rndv[0]) * G) / 3
    return Estimate(L, o, G, O, L_r, s0, copy_slope(m), coll_cost(m))


@dataclass
class Fit:
    """LogGPS parameters (ns, bytes), how well they describe the measurements, and how sure
    they are."""

    L: float
    o: float
    g: float
    G: float
    O: float
    S: int | None
    rows: list[dict]  # per size: measured, model, residual
    r2: float
    notes: list[str]
    L_rendezvous: float | None = None
    uncertainty: dict = field(default_factory=dict)  # name -> {std, min, max, n, method}
    noise: float | None = None  # typical relative spread of a size's half round trip
    runs: int = 1
    C: float | None = None  # per-byte cost of a cold local copy (None: not measured)
    K: float | None = None  # cost of a collective call beyond its messages, ns (None: not measured)
    probe_ns: float | None = None  # the machine-state probe of the runs (median over the runs)
    sharing: Sharing = field(default_factory=Sharing)  # do a rank's messages in flight share G?

    @property
    def nic_serialization(self) -> bool:
        return self.sharing.serialize

    @property
    def max_rel_error(self) -> float:
        return max(abs(r["rel_error"]) for r in self.rows)

    @property
    def too_noisy(self) -> bool:
        return self.r2 < R2_MIN or (self.noise is not None and self.noise > NOISE_MAX)

    def params(self):
        from latitude.params import Params

        S = self.S if self.S is not None else "inf"
        return Params(
            L=self.L,
            o=self.o,
            g=0.0,
            G=self.G,
            O=self.O,
            S=S,
            protocol="handshake",
            C=self.C,
            K=self.K,
            nic_serialization=self.nic_serialization,
        )

    def to_dict(self) -> dict:
        return {
            "L_ns": self.L,
            "o_ns": self.o,
            "g_ns": self.g,
            "G_ns": self.G,
            "O_ns": self.O,
            "C_ns": self.C,
            "K_ns": self.K,
            "S": self.S,
            "probe_ns": self.probe_ns,
            "L_rendezvous_ns": self.L_rendezvous,
            "uncertainty": self.uncertainty,
            "noise": self.noise,
            "too_noisy": self.too_noisy,
            "runs": self.runs,
            "r2": self.r2,
            "max_rel_error": self.max_rel_error,
            "rows": self.rows,
            "notes": self.notes,
            "sharing": self.sharing.to_dict(),
        }


def _model(e: Estimate, s: int, eager: bool) -> float:
    return e.L + 2 * e.o + b(s) * (e.G + e.O) if eager else 3 * e.L + 3 * e.o + b(s) * e.G


def fit(m: Measurements) -> Fit:
    """The parameters of the (combined) measurements, their uncertainty over the single runs
    (m.runs) or a bootstrap of one run's samples, and the fit quality (see the module doc)."""
    e = estimate(m)
    S = m.eager
    notes = [_o_note(m, e)]
    g = _gap(m, e.o, notes)
    rows = []
    for s in sorted(m.pingpong):
        eager = S is None or s <= S
        half = m.pingpong[s][1] * 1e3
        model = _model(e, s, eager)
        rows.append(
            {
                "bytes": s,
                "protocol": "eager" if eager else "rendezvous",
                "measured_ns": half,
                "model_ns": model,
                "residual_ns": half - model,
                "rel_error": (half - model) / half if half else 0.0,
            }
        )
    halves = [r["measured_ns"] for r in rows]
    mean = sum(halves) / len(halves)
    ss_tot = sum((v - mean) ** 2 for v in halves)
    r2 = 1 - sum(r["residual_ns"] ** 2 for r in rows) / ss_tot if ss_tot else 1.0
    runs = m.runs or [m]
    f = Fit(e.L, e.o, g, e.G, e.O, S, rows, r2, notes, e.L_rendezvous, _uncertainty(runs), _noise(runs), len(runs))
    f.C = e.C
    f.probe_ns = m.probe_ns
    f.K, coll_notes = _coll_cost(e.K, f.uncertainty.get("K"))
    f.sharing = sharing(m.concurrent)
    notes += _copy_notes(m, f) + f.sharing.notes + coll_notes + _quality_notes(f) + _two_states(runs)
    return f


def _copy_notes(m: Measurements, f: Fit) -> list[str]:
    if not m.copy:
        return ["C not measured (no copy samples): local copies are priced by O"]
    sizes = sorted(m.copy)
    span = f"{sizes[0] // 1024} KiB to {sizes[-1] / 2**20:g} MiB"
    if f.C is None:
        return [f"C not identified: cold memcpy times of {span} do not grow with the size; copies are priced by O"]
    u = f.uncertainty.get("C")
    pm = f" ± {u['std']:.3g}" if u else ""
    return [
        f"C = {f.C:.4g}{pm} ns/B ({1 / f.C:.3g} GB/s): the slope of memcpy of {span} with cold caches, "
        f"both ranks copying at once; a collective's own-block copy is priced b·C, not b·O (O = {f.O:.3g} ns/B)"
    ]


COLL_MEASURED = "2-rank barrier − 0 B exchange, allreduce of 8 B − 8 B exchange"


def _coll_cost(k: float | None, u: dict | None) -> tuple[float | None, list[str]]:
    """The K to write and its note: a measured K that is not positive or smaller than its
    spread is written as 0, and the note says so."""
    if k is None:
        return None, ["K not measured (no collective samples; measured with exactly 2 ranks): no K is written"]
    std = u["std"] if u else None
    big = max(abs(k), std or 0) >= 1000  # µs, else ns
    scale, fmt, unit = (1e3, ".2f", "µs") if big else (1.0, ".1f", "ns")
    value = f"{format(k / scale, fmt)}{f' ± {format(std / scale, fmt)}' if std is not None else ''} {unit}"
    if k <= 0 or (std is not None and k < std):
        why = "not positive" if k <= 0 else "smaller than its spread"
        return 0.0, [
            f"K = {value} measured ({COLL_MEASURED}): {why}, a collective call costs no more than its "
            "messages here: K = 0"
        ]
    return k, [
        f"K = {value}: a collective call costs this much more than its messages ({COLL_MEASURED}); "
        "priced once per rank per collective call"
    ]


def _o_note(m: Measurements, e: Estimate) -> str:
    timer = f"; one clock read, {m.timer_ns:.0f} ns, subtracted from each" if m.timer_ns is not None else ""
    if m.tracer_gap_ns is not None:
        timer += (
            f"; under the tracer, its own work per call outside the records ({m.tracer_gap_ns:.0f} ns, "
            "a traced graph's computation) taken out of the calls and the half round trips"
        )
    return (
        f"o from the time inside the calls for {e.s0} B: o_send {m.o_send[e.s0] * 1e3:.0f} ns, "
        f"o_recv {m.o_recv[e.s0] * 1e3:.0f} ns{timer}; L = half round trip minus both"
    )


def _quality_notes(f: Fit) -> list[str]:
    out = []
    if f.L_rendezvous is not None:
        out.append(
            f"L per protocol: eager {f.L:.0f} ns (written as L), rendezvous {f.L_rendezvous:.0f} ns "
            f"((half round trip − 3o − b·G) / 3 over the rendezvous sizes)"
        )
        if f.L_rendezvous > f.L + 100:
            out.append(
                f"with one L the model's handshake rendezvous is {3 * (f.L_rendezvous - f.L):.0f} ns short of the "
                "measured rendezvous set-up per message (MPI's rendezvous costs more than 2L + o over eager here)"
            )
    u = f.uncertainty
    if u:
        how = f"over {f.runs} runs" if u["L"]["method"] == "runs" else "bootstrap of one run's samples"
        out.append(
            f"uncertainty ({how}, std): L ±{u['L']['std']:.0f} ns, o ±{u['o']['std']:.0f} ns, "
            f"G ±{u['G']['std']:.4g} ns/B, O ±{u['O']['std']:.4g} ns/B"
        )
        if f.L > 0 and u["L"]["std"] > f.L / 2:
            out.append(f"L = {f.L:.0f} ns is within about two standard deviations of 0: barely identified")
    if f.too_noisy:
        why = [f"R² = {f.r2:.3f} < {R2_MIN}"] if f.r2 < R2_MIN else []
        if f.noise is not None and f.noise > NOISE_MAX:
            why.append(f"a size's half round trip varies by {100 * f.noise:.0f} % between {_between(f)}")
        out.append(
            "the machine is too noisy for a reliable calibration ("
            + "; ".join(why)
            + "): run it on an idle node (nothing else on the cores of ranks 0 and 1), bind the ranks "
            "(e.g. mpirun --bind-to core), and raise --repeat or --batches"
        )
    return out


def _between(f: Fit) -> str:
    return "runs" if f.runs > 1 else "batches"


def _spread(values: list[float], method: str) -> dict:
    return {
        "std": statistics.pstdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
        "n": len(values),
        "method": method,
    }


def _uncertainty(runs: list[Measurements], draws: int = 100) -> dict:
    """Per parameter: the spread of the single runs' estimates, or, for one run with samples,
    of estimates of its samples resampled with replacement."""
    if len(runs) > 1:
        ests, method = [], "runs"
        for r in runs:
            try:
                ests.append(estimate(r))
            except ToolError:
                continue
    elif runs[0].samples:
        rng, one, method = random.Random(1), runs[0], "bootstrap"
        ests = []
        for _ in range(draws):
            resampled = {k: rng.choices(v, k=len(v)) for k, v in one.samples.items() if not k[0].startswith("coll_")}
            resampled |= _paired_draw(rng, {k: v for k, v in one.samples.items() if k[0].startswith("coll_")})
            ests.append(estimate(Measurements.from_samples(resampled, one.stream, one.eager, one.timer_ns)))
    else:
        return {}
    if len(ests) < 2:
        return {}
    out = {}
    for name in PARAMS:
        vals = [getattr(e, name) for e in ests if getattr(e, name) is not None]
        if vals:
            out[name] = _spread(vals, method)
    return out


def _paired_draw(rng: random.Random, samples: dict) -> dict:
    """The collective kinds' batches resampled together (the same batches for every kind:
    K pairs batch i of each)."""
    if not samples:
        return {}
    n = min(map(len, samples.values()))
    idx = rng.choices(range(n), k=n)
    return {k: [v[i] for i in idx] for k, v in samples.items()}


def _noise(runs: list[Measurements]) -> float | None:
    """Median over sizes of a half round trip's relative spread: between the runs' medians
    (max − min), or between one run's batches (interquartile range)."""
    spreads = []
    if len(runs) > 1:
        for s in set.intersection(*(set(r.pingpong) for r in runs)):
            v = [r.pingpong[s][1] for r in runs]
            med = statistics.median(v)
            if med > 0:
                spreads.append((max(v) - min(v)) / med)
    else:
        for (kind, _), v in runs[0].samples.items():
            if kind == "pingpong" and len(v) >= 4:
                q = statistics.quantiles(v, n=4)
                med = statistics.median(v)
                if med > 0:
                    spreads.append((q[2] - q[0]) / med)
    return statistics.median(spreads) if spreads else None


TWO_STATES = 1.4  # runs this much slower than the others (median over sizes): another machine state


def _two_states(runs: list[Measurements]) -> list[str]:
    """A note when the runs split into a fast and a slow group: each run's speed is the median
    over sizes of its half round trip against the median over all runs, and the largest ratio
    between neighbouring speeds (sorted) of TWO_STATES or more splits them. On a VM whose
    host places the two virtual CPUs on cores that share a cache or not, whole runs are fast
    or ~2× slower (docs/calibration.md, "Two machine states"); the median follows the larger
    group, and a traced run in the other state is mispriced by the difference."""
    if len(runs) < 3:
        return []
    med = {
        s: statistics.median(r.pingpong[s][1] for r in runs)
        for s in set.intersection(*map(set, (r.pingpong for r in runs)))
    }
    sizes = [s for s, m in med.items() if m > 0]
    if not sizes:
        return []
    speed = sorted((statistics.median(r.pingpong[s][1] / med[s] for s in sizes), i) for i, r in enumerate(runs))
    ratio, cut = max(
        ((b[0] / a[0], k + 1) for k, (a, b) in enumerate(zip(speed, speed[1:])) if a[0] > 0), default=(0, 0)
    )
    if ratio < TWO_STATES:
        return []
    slow = sorted(i + 1 for _, i in speed[cut:])
    fast = statistics.median(v for v, _ in speed[:cut])
    if fast <= 0:  # runs whose round trips read 0 (a broken samples file): no states to name
        return []
    return [
        f"the runs fall into two machine states: run{'s' * (len(slow) > 1)} {', '.join(map(str, slow))} of "
        f"{len(runs)} {statistics.median(v for v, _ in speed[cut:]) / fast:.1f}× slower than the others "
        "(a size's half round trip, median over sizes); the parameters follow the larger group, and a "
        "program run in the other state is priced by the wrong one — calibrate just before the runs you "
        "predict, or raise --repeat to see how often each state occurs"
    ]


def require_identified(f: Fit, allow_zero: bool = False) -> bool:
    """Refuse an L that is not positive (it would make ρ_L = 0 for every program), unless
    allowed: then L = 0 with a note saying so. Returns whether L was set to 0."""
    if f.L > 0:
        return False
    if allow_zero:
        f.notes.append(f"L = {f.L:.0f} ns measured (the half round trip is not longer than the calls' own time): L = 0")
        f.L = 0.0
        return True
    s0 = min(r["bytes"] for r in f.rows if r["protocol"] == "eager")
    raise ToolError(
        f"L is not identified: the half round trip of {s0} B is not longer than the time inside its MPI_Isend "
        f"and MPI_Recv (L = {f.L:.0f} ns). Calibrate on an idle node with the ranks bound to cores "
        "(e.g. mpirun --bind-to core), with more --repeat/--batches, or between two nodes; "
        "--allow-zero-L writes L = 0 anyway"
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


def to_toml(f: Fit, command: str, injector: bool = False, samples: str | None = None, tracer: bool = False) -> str:
    """A machine file for ``--machine`` (Params.from_machine reads [loggps])."""
    now = datetime.datetime.now().isoformat(timespec="seconds")
    under = " (under the latency injector, ΔL = 0)" if injector else " (under the tracer)" if tracer else ""
    lines = [
        f"# Latitude machine file written by `latitude calibrate` on {now}",
        f"# measured with: {command}{under}",
        "[loggps]",
        f"L = {_t(f.L)}",
        f"o = {_t(f.o)}",
        f"g = {_t(f.g)}",
        f'G = "{f.G:.6g}ns"',
        f'O = "{f.O:.6g}ns"',
        *([f'C = "{f.C:.6g}ns"'] if f.C is not None else []),
        *([f'K = "{f.K:.6g}ns"'] if f.K is not None else []),
        f"S = {f.S}" if f.S is not None else 'S = "inf"',
        'protocol = "handshake"',
        *(["nic_serialization = true"] if f.nic_serialization else []),
        "",
        "[fit]",
        f"r2 = {f.r2:.6f}",
        f"max_rel_error = {f.max_rel_error:.4f}",
        f"under_injector = {'true' if injector else 'false'}",
        f"under_tracer = {'true' if tracer else 'false'}",
        f"runs = {f.runs}",
        f"too_noisy = {'true' if f.too_noisy else 'false'}",
    ]
    if f.noise is not None:
        lines.append(f"noise = {f.noise:.4f}")
    if f.probe_ns is not None:
        lines.append(
            f"probe_ns = {f.probe_ns:.1f}  # 8 B half round trip via PMPI: the machine state (predict compares a trace's)"
        )
    if f.sharing.share is not None:
        lines.append(f"second_message_share = {f.sharing.share:.4f}  # two messages in flight take 1 + this × one")
    if f.L_rendezvous is not None:
        lines.append(f"L_rendezvous_ns = {f.L_rendezvous:.1f}")
    for name, u in f.uncertainty.items():
        lines.append(f"{name}_std = {u['std']:.6g}")
    if samples:
        lines.append(f'samples = "{samples}"')
    lines += [f"# {n}" for n in f.notes]
    lines += [
        "",
        "[measured]",
        "bytes = [" + ", ".join(str(r["bytes"]) for r in f.rows) + "]",
        "half_round_trip_ns = [" + ", ".join(f"{r['measured_ns']:.1f}" for r in f.rows) + "]",
        "model_ns = [" + ", ".join(f"{r['model_ns']:.1f}" for r in f.rows) + "]",
    ]
    return "\n".join(lines) + "\n"


def _pm(f: Fit, name: str, fmt: str) -> str:
    u = f.uncertainty.get(name)
    return f" ± {format(u['std'], fmt)}" if u else ""


def table(f: Fit, rows: list[dict] | None = None) -> str:
    """The fit, human-readable; `rows`: the fit's rows with the protocol classes' model
    beside (`classes_ns`, latitude.protocol_fit.with_classes), else the fit's own."""
    rows = f.rows if rows is None else rows
    S = "∞" if f.S is None else f"{f.S} B"
    bw = f"{1 / f.G:.3g} GB/s" if f.G else "∞"
    out = [
        f"L = {f.L:.1f}{_pm(f, 'L', '.1f')} ns   o = {f.o:.1f}{_pm(f, 'o', '.1f')} ns   g = {f.g:.1f} ns   "
        f"G = {f.G:.5f}{_pm(f, 'G', '.5f')} ns/B ({bw})   O = {f.O:.5f} ns/B   S = {S}",
    ]
    if f.C is not None:
        out.append(f"C = {f.C:.5f}{_pm(f, 'C', '.5f')} ns/B (a local copy, cold caches: {1 / f.C:.3g} GB/s)")
    if f.K is not None:
        out.append(f"K = {f.K:.1f}{_pm(f, 'K', '.1f')} ns (a collective call beyond its messages, per rank)")
    if f.L_rendezvous is not None:
        out.append(f"L measured by rendezvous messages: {f.L_rendezvous:.1f}{_pm(f, 'L_rendezvous', '.1f')} ns")
    classes = any("classes_ns" in r for r in rows)
    head = f"{'bytes':>9} {'protocol':>10} {'measured µs':>12} {'model µs':>10} {'residual':>9}"
    out += ["", head + (f" {'+classes µs':>12} {'residual':>9}" if classes else "")]
    for r in rows:
        line = (
            f"{r['bytes']:>9} {r['protocol']:>10} {r['measured_ns'] / 1e3:>12.3f} "
            f"{r['model_ns'] / 1e3:>10.3f} {100 * r['rel_error']:>8.1f}%"
        )
        if classes:
            c, m = r["classes_ns"], r["measured_ns"]
            line += f" {c / 1e3:>12.3f} {100 * (m - c) / m if m else 0.0:>8.1f}%"
        out.append(line)
    noise = "" if f.noise is None else f", half round trips vary by {100 * f.noise:.1f} % between {_between(f)}"
    out.append(f"R² = {f.r2:.4f}, largest relative residual {100 * f.max_rel_error:.1f} %{noise}")
    out += [f"note: {n}" for n in f.notes]
    return "\n".join(out)


def not_under_injector(path: str) -> str | None:
    """A note when --machine was calibrated without the injector (its [fit] says so): the
    injected runs pay the injector's per-call work (o ~310 ns against ~170 ns under the
    tracer on the development VM), which such a machine's o and g do not hold."""
    fit = tomlfile.read(path)[0].get("fit", {})
    if fit.get("under_injector", True) is not False:
        return None
    how = "under the tracer" if fit.get("under_tracer") else "without the injector"
    return (
        f"{path} was calibrated {how}: the injected runs pay the injector's own work per call, "
        "which its o and g do not hold (predictions low); calibrate with --under-injector"
    )
