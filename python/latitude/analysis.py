"""Latency and bandwidth analyses on top of the exact engine (metrics: docs/model.md §2).

T(x) in one named parameter x (L, G, a link class such as `wire`, `intra.L`, …; the others
fixed) is convex and piecewise linear.

* **Sensitivity** (`Graph.sensitivity`): every critical point (breakpoint) of T on [lo, hi]
  and the linear pieces between them. Exact sweeps carry each value's piecewise-linear
  function of x through one graph pass (its upper envelope of lines; one part of [lo, hi]
  per core; latitude_core::engine::envelope). With a step, tangent intersections: the
  tangents at the ends of an interval meet at x*; if T(x*) lies on them x* is the only
  breakpoint, otherwise the pieces at x* split the interval; O(#pieces) evaluations batched
  several per graph pass (latitude_core::engine::parametric). Both give the same pieces.
* **Tolerance** (`Graph.tolerance`): the largest x with T(x) ≤ (1 + p/100)·T(x₀), by Newton
  steps from above on T's pieces (each step lands on a new piece; exact, finitely many).
  "unbounded" when T stops growing (λ = 0 beyond every breakpoint).
* **Tolerance map** (`Graph.tolerance_map`): the boundary of {(x, y): T(x, y) ≤ (1+p/100)·T₀}
  for two named parameters (L and G by default, or two link classes). T is jointly convex, so
  the region is convex and its boundary a convex curve; for each of n values of y on a grid
  the boundary's x is computed exactly, and where the boundary leaves through x = x_min the
  crossing y is computed exactly too. Between those exact points the curve is drawn
  linearly (an inner approximation of the convex region, at the stated grid).

All positions come from Rust as exact rationals in ticks (10⁻⁹ ns); here they are Fractions of ns.
Reports read them in linear time: a lookup bisects the pieces (O(log n)), and curves for
tables, CSV and plots walk the sorted points and the pieces together once, in floats (exact
Fractions only where an exact answer is asked for: `runtime`, `tolerance`, `to_dict`). A
trace with thousands of critical latencies (HPCC: 7,560) made the old per-point scans over
Fractions quadratic.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from fractions import Fraction

from latitude.errors import InputError
from latitude.params import PARAM_NAMES

PARAM_INDEX = {name: i for i, name in enumerate(PARAM_NAMES)}
TICKS = 10**9  # exact values come from Rust in ticks of 10⁻⁹ ns


def ns(num: int, den: int = 1) -> Fraction:
    """An exact rational in ticks, as ns."""
    return Fraction(num, den * TICKS)


def param_index(name: str, params=None) -> int:
    """Index of a named parameter of `params` (the globals without)."""
    if params is not None:
        return params.index(name)
    if name not in PARAM_INDEX:
        raise InputError("--param", f"expected one of {', '.join(PARAM_NAMES)}, got {name!r}")
    return PARAM_INDEX[name]


# Slowdown limits are exact fractions multiplied into i128 runtimes by the core: bounded so
# that the product cannot overflow (a 10^9 % slowdown is already "unbounded" in practice).
MAX_PCT = 10**9


def ratio(pct) -> tuple[int, int]:
    """1 + pct/100 as an exact (num, den); pct may be '1.5', 2, 0.5."""
    try:
        f = Fraction(str(pct))
    except (ValueError, ZeroDivisionError):
        raise InputError("--pct", f"expected a percentage such as 1, 2.5, got {pct!r}") from None
    if f < 0:
        raise InputError("--pct", f"a tolerance percentage must be >= 0, got {pct}")
    if f > MAX_PCT:
        raise InputError("--pct", f"expected a percentage of at most {MAX_PCT:.0e}, got {pct}")
    r = 1 + f / 100
    if r.denominator > 100 * 10**9:
        raise InputError("--pct", f"expected at most 9 decimal places, got {pct}")
    return r.numerator, r.denominator


@dataclass(frozen=True)
class Line:
    """T(x) = slope·x + intercept (ns; for G, x in ns per byte)."""

    slope: int
    intercept: Fraction

    @classmethod
    def from_ticks(cls, s: int, c: int) -> Line:
        return cls(int(s), ns(c))

    def __call__(self, x) -> Fraction:
        return self.slope * Fraction(x) + self.intercept


@dataclass(frozen=True)
class Breakpoint:
    at: Fraction
    left: Line
    right: Line
    exact: bool = True


@dataclass(frozen=True)
class Piece:
    start: Fraction
    end: Fraction
    line: Line


@dataclass
class Sensitivity:
    """T on [lo, hi] in one parameter: breakpoints and linear pieces (exact)."""

    param: str
    lo: float
    hi: float
    params: object
    breakpoints: list
    pieces: list
    evaluations: int = 0
    passes: int = 0
    method: str = "engine"
    baseline: float | None = None
    complete: bool = True
    _ends: list | None = field(default=None, repr=False, compare=False)

    def _piece_ends(self) -> list:
        """The pieces' end points (exact, ascending), for bisection; built once."""
        if self._ends is None:
            self._ends = [p.end for p in self.pieces]
        return self._ends

    def _snap(self, x) -> Fraction:
        """x, moved onto the range if it is outside by less than a tick (floats such as
        88.13 ns lie a hair below the range's exact end points)."""
        x = Fraction(x)
        lo, hi = self.pieces[0].start, self.pieces[-1].end
        tick = Fraction(1, 10**9)
        return lo if lo - tick < x < lo else hi if hi < x < hi + tick else x

    def piece_at(self, x) -> Piece:
        """The first piece containing x (at a breakpoint: the one to its left)."""
        x = self._snap(x)
        i = bisect_left(self._piece_ends(), x)
        if i < len(self.pieces) and self.pieces[i].start <= x:
            return self.pieces[i]
        raise InputError("sensitivity", f"{float(x)} is outside the analysed range [{self.lo}, {self.hi}]")

    def runtime(self, x) -> float:
        return float(self.piece_at(x).line(x))

    def slope(self, x) -> int:
        """Right derivative at x (the slope of the piece to the right)."""
        i = bisect_right(self._piece_ends(), self._snap(x))
        return self.pieces[min(i, len(self.pieces) - 1)].line.slope

    def rho(self, x) -> float:
        """x·λ/T: the share of T spent in this parameter (ρ_L for L)."""
        t = self.runtime(x)
        return float(Fraction(x) * self.slope(x)) / t if t else 0.0

    def tolerance(self, pcts=(1, 2, 5), baseline=None) -> Tolerance | None:
        """The x % tolerances read off the pieces, exactly as `Graph.tolerance` computes them,
        without another graph pass; None when the baseline is outside the range or an answer
        may lie beyond its end (then ask `Graph.tolerance`)."""
        if not self.complete or not all(b.exact for b in self.breakpoints):
            return None
        x0 = self.baseline if baseline is None else baseline
        if x0 is None:
            return None
        x0 = Fraction(round(Fraction(x0) * TICKS), TICKS)  # parameters are whole ticks
        if not self.pieces[0].start <= x0 <= self.pieces[-1].end:
            return None
        t0 = self.piece_at(x0).line(x0)
        rows = []
        for pct in pcts:
            rn, rd = ratio(pct)
            limit = t0 * Fraction(rn, rd)
            x = _largest_below(self.pieces, x0, limit)
            if x is None:
                return None
            rows.append({"pct": Fraction(str(pct)), "max": x, "limit": limit})
        base = self.params.with_values({self.param: float(x0)})
        return Tolerance(self.param, float(x0), float(t0), rows, base)

    def curve(self, points: int = 100) -> list[dict]:
        """T, λ, ρ on an even grid plus every breakpoint (for plots and CSV), in floats: one
        pass over the sorted points and the pieces together; λ is the right slope."""
        lo, hi = float(self.lo), float(self.hi)
        n = max(points - 1, 1)
        xs = sorted({lo + (hi - lo) * i / n for i in range(points)} | {float(b.at) for b in self.breakpoints})
        pieces = [(float(p.end), p.line.slope, float(p.line.intercept)) for p in self.pieces]
        rows, k = [], 0
        for x in xs:
            while k < len(pieces) - 1 and pieces[k][0] <= x:
                k += 1
            _, s, c = pieces[k]
            t = s * x + c
            rows.append({"x": x, "T": t, "slope": s, "rho": x * s / t if t else 0.0})
        return rows

    def to_dict(self) -> dict:
        """The stable JSON contract of `latitude sensitivity --json` (docs/json.md)."""
        out = {
            "param": self.param,
            "range_ns": [self.lo, self.hi],
            "method": self.method,
            "breakpoints": [
                {
                    "at_ns": float(b.at),
                    "slope_left": b.left.slope,
                    "slope_right": b.right.slope,
                    "runtime_ns": float(b.left(b.at)),
                    "exact": b.exact,
                }
                for b in self.breakpoints
            ],
            "pieces": [
                {
                    "from_ns": float(p.start),
                    "to_ns": float(p.end),
                    "slope": p.line.slope,
                    "runtime_from_ns": float(p.line(p.start)),
                    "runtime_to_ns": float(p.line(p.end)),
                    "rho_from": _rho(p.start, p),
                    "rho_to": _rho(p.end, p),
                }
                for p in self.pieces
            ],
            "evaluations": self.evaluations,
            "graph_passes": self.passes,
            "params": self.params.to_dict(),
        }
        if self.params.kind(self.param) == "gap":
            out["range_ns_per_byte"] = out["range_ns"]
        return out

    def to_frame(self):
        """Pieces as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.to_dict()["pieces"])

    def curve_frame(self, points: int = 100):
        import pandas as pd

        return pd.DataFrame(self.curve(points))


def _largest_below(pieces, x0: Fraction, limit: Fraction) -> Fraction | None:
    """Largest x ≥ x0 on the pieces with T(x) ≤ limit (T is nondecreasing); None if T stays
    below the limit up to the end of the range (the answer lies beyond it)."""
    for p in pieces:
        if p.end < x0 or p.line(p.end) <= limit:
            continue
        # T crosses the limit on this piece; its slope is positive since T(x0) ≤ limit.
        return max(x0, (limit - p.line.intercept) / p.line.slope)
    return None


def _f(x):
    return None if x is None else float(x)


def _rho(x: Fraction, p: Piece) -> float:
    t = p.line(x)
    return float(x * p.line.slope / t) if t else 0.0


def sensitivity(core_graph, params, param: str, lo: float, hi: float, step: float | None = None) -> Sensitivity:
    k = param_index(param, params)
    if hi < lo:
        raise InputError("--range", f"empty range {lo}:{hi}")
    if step is not None and step <= 0:
        raise InputError("--step", "the step must be positive")
    raw = core_graph.sweep(params.to_core(), k, float(lo), float(hi), step)
    bps = [
        Breakpoint(ns(*at), Line.from_ticks(sl, cl), Line.from_ticks(sr, cr), bool(ex))
        for at, sl, sr, cl, cr, ex in raw["breakpoints"]
    ]
    pieces = [Piece(ns(*a), ns(*b), Line.from_ticks(s, c)) for a, b, s, c in raw["pieces"]]
    return Sensitivity(
        param,
        float(lo),
        float(hi),
        params,
        bps,
        pieces,
        raw["evaluations"],
        raw["passes"],
        baseline=params.value(param),
    )


@dataclass
class Tolerance:
    """x % tolerances: the largest parameter value keeping T within (1 + x/100)·T(baseline)."""

    param: str
    baseline: float
    baseline_runtime: float
    rows: list = field(default_factory=list)  # dicts: pct, max (Fraction | None)
    params: object = None
    method: str = "engine"

    def max(self, pct) -> float | None:
        for r in self.rows:
            if float(r["pct"]) == float(pct):
                return None if r["max"] is None else float(r["max"])
        raise KeyError(pct)

    def delta(self, pct) -> float | None:
        m = self.max(pct)
        return None if m is None else m - self.baseline

    def to_dict(self) -> dict:
        """The stable JSON contract of `latitude tolerance --json` (docs/json.md)."""
        return {
            "param": self.param,
            "method": self.method,
            "baseline_ns": self.baseline,
            "baseline_runtime_ns": self.baseline_runtime,
            "tolerance": [
                {
                    "pct": float(r["pct"]),
                    "max_ns": None if r["max"] is None else float(r["max"]),
                    "delta_ns": None if r["max"] is None else float(r["max"]) - self.baseline,
                    "runtime_limit_ns": float(r["limit"]),
                }
                for r in self.rows
            ],
            "params": self.params.to_dict() if self.params else None,
        }

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.to_dict()["tolerance"])


def tolerance(core_graph, params, param: str, pcts, baseline: float | None = None) -> Tolerance:
    k = param_index(param, params)
    x0 = float(params.value(param) if baseline is None else baseline)
    base = params.with_values({param: x0})
    ratios = [ratio(p) for p in pcts]
    raw = core_graph.tolerance(base.to_core(), k, x0, ratios)
    t0 = ns(raw["t0"])
    rows = []
    for pct, (rn, rd), m in zip(pcts, ratios, raw["max"]):
        rows.append({"pct": Fraction(str(pct)), "max": None if m is None else ns(*m), "limit": t0 * Fraction(rn, rd)})
    return Tolerance(param, float(ns(raw["x0"])), float(t0), rows, base)


@dataclass
class ToleranceMap:
    """Boundary curves {(x, y): T(x, y) = (1 + p/100)·T₀} on a window of two named
    parameters (x = L and y = G unless `axes` says otherwise)."""

    l_range: tuple
    g_range: tuple
    baseline: dict
    baseline_runtime: float
    # pct -> list of (y, x, status): status "boundary" (exact point of the boundary),
    # "beyond" (the boundary lies above the x window: x = x_max of the window),
    # "outside" (T exceeds the limit already at x_min: x = None).
    curves: dict
    resolution: int
    params: object = None
    axes: tuple = ("L", "G")

    def _keys(self) -> tuple[str, str, str, str]:
        """Keys of the window and points: L and G keep their historical names."""
        x, y = self.axes
        if (x, y) == ("L", "G"):
            return "L_range_ns", "G_range_ns_per_byte", "G_ns_per_byte", "L_max_ns"
        unit = {"time": "ns", "gap": "ns_per_byte"}
        ux, uy = (unit[self.params.kind(a)] if self.params else "ns" for a in (x, y))
        return f"{x}_range_{ux}", f"{y}_range_{uy}", f"{y}_{uy}", f"{x}_max_{ux}"

    def to_dict(self) -> dict:
        xr, yr, yk, xk = self._keys()
        return {
            "axes": list(self.axes),
            xr: list(self.l_range),
            yr: list(self.g_range),
            "baseline": self.baseline,
            "baseline_runtime_ns": self.baseline_runtime,
            "resolution": self.resolution,
            "boundaries": [
                {
                    "pct": float(p),
                    "points": [{yk: float(g), xk: _f(l), "status": st} for g, l, st in pts],
                }
                for p, pts in self.curves.items()
            ],
        }

    def rows(self) -> list[dict]:
        _, _, yk, xk = self._keys()
        return [
            {"pct": float(p), yk: float(g), xk: _f(l), "status": st}
            for p, pts in self.curves.items()
            for g, l, st in pts
        ]

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows())


def tolerance_map(core_graph, params, l_range, g_range, pcts, resolution: int = 64, axes=("L", "G")) -> ToleranceMap:
    """Exact boundary points of the tolerance regions on a grid of the second axis (see
    module comment). The baseline is `params` with the first axis at its range's start."""
    (l_lo, l_hi), (g_lo, g_hi) = l_range, g_range
    xname, yname = axes
    if xname == yname:
        raise InputError("--map", f"expected two different parameters, got {xname} twice")
    kx, ky = param_index(xname, params), param_index(yname, params)
    if l_hi < l_lo or g_hi < g_lo:
        raise InputError("--map", f"empty {xname} or {yname} range")
    if resolution < 2:
        raise InputError("--resolution", "need at least 2 points")
    x0 = params.value(xname)
    t0_raw = core_graph.tolerance(params.to_core(), kx, x0, [(1, 1)])
    t0_ticks = t0_raw["t0"]
    targets = {p: Fraction(t0_ticks) * Fraction(*ratio(p)) for p in pcts}
    tgt = [(t.numerator, t.denominator) for t in targets.values()]
    gs = [Fraction(g_lo) + (Fraction(g_hi) - Fraction(g_lo)) * i / (resolution - 1) for i in range(resolution)]
    curves = {p: [] for p in pcts}
    for g in gs:
        at = params.with_values({yname: float(g), xname: l_lo})
        res = core_graph.max_below(at.to_core(), kx, float(l_lo), tgt)
        for p, (kind, num, den) in zip(pcts, res):
            if kind == "max" and ns(num, den) <= Fraction(l_hi):
                curves[p].append((g, ns(num, den), "boundary"))
            elif kind == "exceeded":
                curves[p].append((g, None, "outside"))
            else:
                curves[p].append((g, Fraction(l_hi), "beyond"))
    # Where a boundary leaves through x = x_lo, its y is exact too.
    at = params.with_values({xname: l_lo, yname: g_lo})
    res = core_graph.max_below(at.to_core(), ky, float(g_lo), tgt)
    for p, (kind, num, den) in zip(pcts, res):
        if kind == "max" and Fraction(g_lo) < ns(num, den) < Fraction(g_hi):
            curves[p].append((ns(num, den), Fraction(l_lo), "boundary"))
            curves[p].sort(key=lambda pt: pt[0])
    baseline = {xname: params.value(xname), yname: params.value(yname)}
    return ToleranceMap(
        (l_lo, l_hi), (g_lo, g_hi), baseline, float(ns(t0_ticks)), curves, resolution, params, (xname, yname)
    )
