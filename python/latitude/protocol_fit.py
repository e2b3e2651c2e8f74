"""Protocol size classes from calibration measurements (docs/model.md §1, `[protocols]`).

The base fit (:mod:`latitude.loggp_fit`) takes o and L from the smallest eager messages, so
they are the small class's. With o_c and l_c the extra overhead and latency of class c, the
measurements of an eager size s of class c are

    calls:            (o_send(s) + o_recv(s)) / 2  = o + o_c + b(s)·O
    half round trip:  h(s) − o_send(s) − o_recv(s) = L + l_c + b(s)·(G − O)

The cut-off S₁ splits the eager sizes into a small class (≤ S₁) and a medium one: every split
leaving each class two sizes is tried; per split the calls' times give O (one slope) and
each class's o + o_c (its intercept), the round trips minus the calls each class's L + l_c,
and the split with the least squared error of the round trips wins. Two classes are kept only when they describe the
round trips clearly better than one (BIC lower by more than 2 and a step in the round trip of
more than 3 % of it, and more than the measurements' own noise); otherwise the calibration
says one class is enough and writes none. With three or more runs the noise is the step's
own: the same cut-off fitted in each run, the step must exceed twice its standard error over
the runs. A run in another machine state moves every size's round trip by a common factor
and inflates the spread between runs, but hardly the step inside the run: judged against the
spread of the levels, a 50 ns step that every run showed was refused when one run of five
came out 25 % slower. With fewer runs, twice the relative spread of the round trips.

The large (rendezvous) class's l_c is the rendezvous latency the round trips of large
messages show beyond L (h = 3(L + l_c) + 3(o + o_c) + b·G: only l_c + o_c is identified, so
all of it goes to l_c, and o_c is 0), fitted to the rendezvous round trips by least squared
relative error.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace

from latitude.calibrate import Measurements
from latitude.loggp_fit import Fit, b, estimate
from latitude.params import CLASS_PARAMS

STEP_MIN = 0.03  # a class step smaller than this share of the round trip is not a class
BIC_MIN = 2.0


@dataclass
class ClassFit:
    S1: int | None  # None: one eager class is enough
    values: dict = field(default_factory=dict)  # CLASS_PARAMS name -> ns
    # O (ns/B) of the split: the classes' o_c and l_c are relative to it, so it is the
    # machine file's O when small and medium are written (None: the base fit's O stands)
    O: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"S1": self.S1, "classes": self.values, "notes": self.notes}

    def toml(self) -> list[str]:
        """The machine file's `[protocols]` table (empty with one class)."""
        if self.S1 is None:
            return []
        out = ["", "[protocols]", f"S1 = {self.S1}"]
        for c in ("small", "medium", "large"):
            o, L = self.values[f"{c}.o"], self.values[f"{c}.L"]
            out.append(f'{c} = {{ o = "{o:.4g}ns", L = "{L:.4g}ns" }}')
        return out


def written_fit(f: Fit, c: ClassFit) -> Fit:
    """The fit as the machine file holds it beside the classes: with their O when small and
    medium are written."""
    return f if c.O is None else replace(f, O=c.O)


def with_classes(rows: list[dict], f: Fit, c: ClassFit) -> list[dict]:
    """The fit's rows (latitude.loggp_fit) with `classes_ns`, the half round trip of the
    machine file as written (its L, o, G and O, the classes' l_c and o_c: eager
    L + l_c + 2(o + o_c) + b·(G + O), rendezvous 3(L + l_c) + 3(o + o_c) + b·G); the rows
    unchanged when no class is written."""
    if c.S1 is None:
        return rows
    w, v = written_fit(f, c), c.values
    out = []
    for r in rows:
        s = r["bytes"]
        if r["protocol"] == "rendezvous":
            model = 3 * (w.L + v["large.L"]) + 3 * (w.o + v["large.o"]) + b(s) * w.G
        else:
            k = "small" if s <= c.S1 else "medium"
            model = w.L + v[f"{k}.L"] + 2 * (w.o + v[f"{k}.o"]) + b(s) * (w.G + w.O)
        out.append(r | {"classes_ns": model})
    return out


def _bic(sse: float, n: int, k: int) -> float:
    return n * math.log(max(sse, 1e-9) / n) + k * math.log(n)


def _common_slope(groups: list[list[tuple[float, float]]]) -> tuple[float, list[float]]:
    """Least squares y = a_g + slope·x with one intercept per group and a common slope."""
    means = [(sum(x for x, _ in g) / len(g), sum(y for _, y in g) / len(g)) for g in groups]
    sxy = sum((x - mx) * (y - my) for g, (mx, my) in zip(groups, means) for x, y in g)
    sxx = sum((x - mx) ** 2 for g, (mx, _) in zip(groups, means) for x, _ in g)
    slope = sxy / sxx if sxx else 0.0
    return slope, [my - slope * mx for mx, my in means]


def _split(eager: list[int], h: dict, calls: dict, f: Fit, k: int):
    """Classes eager[:k] and eager[k:]: O (common slope of the calls' times), each class's
    o_c and l_c, and the squared error of the round trips."""
    groups = [eager[:k], eager[k:]] if k else [eager]
    O, icpt = _common_slope([[(b(s), calls[s] / 2) for s in g] for g in groups])
    O = max(O, 0.0)
    out, sse = [], 0.0
    for g, a in zip(groups, icpt):
        x_o = a - f.o
        x_L = sum(h[s] - calls[s] - b(s) * (f.G - O) for s in g) / len(g) - f.L
        model = {s: f.L + x_L + 2 * (f.o + x_o) + b(s) * (f.G + O) for s in g}
        sse += sum((h[s] - model[s]) ** 2 for s in g)
        out.append((x_o, x_L))
    return O, out, sse


def _tables(m: Measurements, eager: list[int]) -> tuple[dict, dict]:
    """Every size's half round trip and each eager size's o_send + o_recv (ns)."""
    h = {s: m.pingpong[s][1] * 1e3 for s in m.pingpong}
    return h, {s: (m.o_send[s] + m.o_recv[s]) * 1e3 for s in eager}


def _jump(classes: list[tuple[float, float]]) -> float:
    """What the cut-off adds to the round trip (2·Δo + ΔL) between the split's two classes."""
    (so, sl), (mo, ml) = classes
    return (2 * mo + ml) - (2 * so + sl)


def _step_noise(m: Measurements, eager: list[int], f: Fit, k: int, hi: float) -> float:
    """The smallest step (ns) the measurements tell from noise: twice the standard error of
    the step over the runs (three or more runs measuring every eager size), else twice the
    relative spread of the round trips times their level."""
    runs = [r for r in m.runs if all(s in r.pingpong and s in r.o_send and s in r.o_recv for s in eager)]
    if len(runs) < 3:
        return 2 * (f.noise or 0.0) * hi
    jumps = [_jump(_split(eager, *_tables(r, eager), f, k)[1]) for r in runs]
    return 2 * statistics.stdev(jumps) / math.sqrt(len(jumps))


def fit_classes(m: Measurements, f: Fit) -> ClassFit:
    """The protocol classes of the measurements `m` given their base fit `f`."""
    S = m.eager
    eager = [s for s in sorted(m.pingpong) if (S is None or s <= S) and s in m.o_send and s in m.o_recv]
    rndv = [s for s in sorted(m.pingpong) if S is not None and s > S]
    h, calls = _tables(m, eager)
    large_L = _large_latency(rndv, h, f)
    out = ClassFit(None)
    if len(eager) < 4 or S is None:
        out.notes.append("protocol classes: too few eager sizes (or no eager limit) to look for a small class")
        return out
    n = len(eager)
    one = _split(eager, h, calls, f, 0)[2]
    # Each class keeps at least two sizes (an intercept and the common slope per split).
    best = min(range(2, n - 1), key=lambda k: _split(eager, h, calls, f, k)[2])
    O, classes, two = _split(eager, h, calls, f, best)
    (so, sl), (mo, ml) = classes
    jump = _jump(classes)
    hi = sum(h[s] for s in eager[best:]) / (n - best)
    gain = _bic(one, n, 2) - _bic(two, n, 3)
    big = abs(jump) > STEP_MIN * hi and abs(jump) > _step_noise(m, eager, f, best, hi)
    if gain <= BIC_MIN or not big:
        out.notes.append(
            f"protocol classes: one eager class is enough (the best cut-off, {eager[best - 1]} B, changes the "
            f"round trip by {jump:+.0f} ns; BIC gain {gain:.1f})"
        )
        return _large_only(out, large_L, m, rndv, h, f)
    out.S1, out.O = eager[best - 1], O
    # The classes add cost: a negative excess (noise, or a cheaper medium path) is written as 0.
    vals = dict(zip(CLASS_PARAMS, (so, sl, mo, ml, 0.0, large_L)))
    out.values = {k: max(v, 0.0) for k, v in vals.items()}
    out.notes.append(
        f"protocol classes: small up to {out.S1} B, medium up to {S} B: the round trip steps by "
        f"{jump:+.0f} ns at the cut-off (BIC gain {gain:.1f}); large (rendezvous) messages add "
        f"{large_L:.0f} ns of latency" + ("" if rndv else " (no rendezvous sizes measured)")
    )
    return out


def _large_latency(rndv: list[int], h: dict, f: Fit) -> float:
    """l_c of the large class: the latency that, added three times to the handshake
    rendezvous (3L + 3o + b·G), fits the rendezvous round trips with the least squared
    *relative* error. The rendezvous line's intercept (f.L_rendezvous) is set by the largest
    sizes, whose per-byte cost leaves cache, and read as latency it priced 4 KiB messages at
    2.9x their round trip in one calibration; weighted by 1/h² every size counts by its share."""
    if not rndv:
        return 0.0
    w = {s: 1.0 / h[s] ** 2 for s in rndv}
    excess = {s: h[s] - 3 * f.L - 3 * f.o - b(s) * f.G for s in rndv}
    return max(0.0, sum(w[s] * excess[s] for s in rndv) / (3 * sum(w.values())))


def _large_share_noise(m: Measurements, rndv: list[int], f: Fit) -> float:
    """The smallest share of the round trip a rendezvous set-up (3·l_c) must have to be told
    from noise: twice the standard error over the runs of each run's own share (three or more
    runs measuring every rendezvous size, each run fitted on its own), else twice the relative
    spread of the round trips. A run in another machine state scales all its round trips by
    one factor and leaves its share where it was; judged against the spread of the levels, a
    rendezvous 3.5 µs dearer than the model at 4 KiB in every run was refused when one run of
    three came out 1.8x slower (noise 0.82), and CG's halo messages were priced at a fifth."""
    runs = [r for r in m.runs if all(s in r.pingpong for s in rndv)]
    if len(runs) < 3:
        return 2 * (f.noise or 0.0)
    shares = []
    for r in runs:
        h_r = _tables(r, [])[0]
        shares.append(3 * _large_latency(rndv, h_r, estimate(r)) / min(h_r[s] for s in rndv))
    return 2 * statistics.stdev(shares) / math.sqrt(len(shares))


def _large_only(out: ClassFit, large_L: float, m: Measurements, rndv: list[int], h: dict, f: Fit) -> ClassFit:
    """One eager class, but rendezvous messages with a set-up latency of their own (3·l_c
    more than 3 % of their round trip and than the runs' noise): S1 = 0 and only large.L."""
    if not rndv:
        return out
    rt = min(h[s] for s in rndv)
    if 3 * large_L <= max(STEP_MIN, _large_share_noise(m, rndv, f)) * rt:
        return out
    out.S1 = 0
    out.values = dict.fromkeys(CLASS_PARAMS, 0.0) | {"large.L": large_L}
    out.notes.append(f"protocol classes: rendezvous messages add {large_L:.0f} ns of latency (large.L, S1 = 0)")
    return out
