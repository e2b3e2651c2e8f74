"""The same analyses through the LP and HiGHS (`--method lp`), as LLAMP computes them.

* Critical latencies: the LLAMP paper's Algorithm 2. Solve with the parameter's lower bound
  at the top of the range; the reduced cost is the slope there and the bound's ranging limit
  (Gurobi's SALBLow; HiGHS's `col_bound_dn`) the lowest bound for which the basis stays
  optimal. HiGHS's `getRanging` ranges every row and column; we need one column, so we do
  its ratio test directly: lowering the bound by δ moves the basic variables by δ·B⁻¹a_k
  (HiGHS's basis is over [A I], row slacks = −activity), and the limit is where the first
  basic variable reaches a bound (checked against `getRanging` in the tests);
  move the bound just below it (by ε, or by `step` if larger) and re-solve (warm start),
  until the range is covered. A slope change between consecutive solves is a critical point
  at the previous ranging limit.
* Tolerance: maximise the parameter subject to t ≤ (1 + p/100)·T₀ with the other
  parameters fixed at their values (LLAMP's "buffer" analysis); an unbounded LP means the
  runtime never exceeds the limit.

Both are floating point (HiGHS tolerances ~1e-7); the engine's answers are exact.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from latitude.analysis import PARAM_INDEX, Breakpoint, Line, Piece, Sensitivity, Tolerance, param_index, ratio
from latitude.errors import ToolError
from latitude.lp import build as build_lp
from latitude.silence import stdout_silenced


def _solve(h) -> None:
    with stdout_silenced():
        h.run()
    status = h.modelStatusToString(h.getModelStatus())
    if status == "Time limit reached":
        raise TimeoutError("HiGHS: time limit reached")
    if status != "Optimal":
        raise ToolError(f"HiGHS: {status}")


def _line(h, k: int) -> Line:
    """The piece at the current bound: slope = reduced cost, intercept from the optimum."""
    slope = int(round(h.getSolution().col_dual[k]))
    x = Fraction(h.getLp().col_lower_[k])
    t = Fraction(h.getInfo().objective_function_value)
    return Line(slope, t - slope * x)


class _Bounds:
    """Column and row bounds of the LP (cached: only column k's lower bound changes)."""

    def __init__(self, h):
        lp = h.getLp()
        self.col_lo = np.asarray(lp.col_lower_, dtype=float)
        self.col_up = np.asarray(lp.col_upper_, dtype=float)
        # Row slack s = -activity, so its bounds are [-upper, -lower].
        self.slack_lo = -np.asarray(lp.row_upper_, dtype=float)
        self.slack_up = -np.asarray(lp.row_lower_, dtype=float)


def bound_down_limit(h, k: int, b: _Bounds) -> float:
    """Lowest lower bound of nonbasic column k keeping the current basis primal feasible."""
    _, basic = h.getBasicVariables()
    _, d = h.getReducedColumn(k)
    sol = h.getSolution()
    basic = np.asarray(basic)
    d = np.asarray(d)
    is_col = basic >= 0
    cols, rows = basic[is_col], -basic[~is_col] - 1
    v = np.empty(len(basic))
    lo = np.empty(len(basic))
    up = np.empty(len(basic))
    v[is_col], lo[is_col], up[is_col] = np.asarray(sol.col_value)[cols], b.col_lo[cols], b.col_up[cols]
    v[~is_col], lo[~is_col], up[~is_col] = -np.asarray(sol.row_value)[rows], b.slack_lo[rows], b.slack_up[rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.where(d > 1e-9, (up - v) / d, np.where(d < -1e-9, (lo - v) / d, np.inf))
    delta = max(0.0, float(steps.min())) if len(steps) else float("inf")
    return float(b.col_lo[k]) - delta


def sensitivity(
    core_graph, params, param: str, lo: float, hi: float, step: float | None = None, max_seconds: float | None = None
) -> Sensitivity:
    """Algorithm 2. With `max_seconds`, stop early: the result then covers [x, hi] only and has
    `complete = False` (used by benchmarks)."""
    import time

    deadline = None if max_seconds is None else time.perf_counter() + max_seconds
    k = param_index(param, params)
    lp = build_lp(core_graph, params.with_values({param: hi}))
    h = lp.highs()
    inf = float("inf")
    x = float(hi)
    _solve(h)
    h.setOptionValue("presolve", "off")  # re-solves start from the previous basis
    bounds = _Bounds(h)
    solves = 1
    right = _line(h, k)
    end = Fraction(hi)
    pieces, bps = [], []
    while True:
        dn = bound_down_limit(h, k, bounds)
        if dn <= lo:
            pieces.append(Piece(Fraction(lo), end, right))
            break
        eps = max(1e-6, 1e-9 * abs(dn))
        x = min(x - step, dn - eps) if step else dn - eps
        x = max(x, float(lo))
        h.changeColBounds(k, x, inf)
        bounds.col_lo[k] = x
        _solve(h)
        solves += 1
        left = _line(h, k)
        if left.slope != right.slope:
            at = Fraction(dn)
            pieces.append(Piece(at, end, right))
            bps.append(Breakpoint(at, left, right, exact=False))
            end, right = at, left
        if x <= lo:
            pieces.append(Piece(Fraction(lo), end, right))
            break
        if deadline is not None and time.perf_counter() > deadline:
            pieces.append(Piece(Fraction(x), end, right))
            break
    pieces.reverse()
    bps.reverse()
    out = Sensitivity(
        param,
        float(pieces[0].start),
        float(hi),
        params,
        bps,
        pieces,
        evaluations=solves,
        passes=0,
        method="lp",
        baseline=params.value(param),
    )
    out.complete = float(pieces[0].start) <= lo
    return out


def tolerance(
    core_graph, params, param: str, pcts, baseline: float | None = None, max_seconds: float | None = None
) -> Tolerance:
    """Max-ℓ LPs. With `max_seconds` (benchmarks), HiGHS's time limit (its clock runs over
    all solves of one instance) bounds them together; TimeoutError when it is reached."""
    import highspy

    k = param_index(param, params)
    x0 = float(params.value(param) if baseline is None else baseline)
    base = params.with_values({param: x0})
    lp = build_lp(core_graph, base)
    h = lp.highs()
    if max_seconds is not None:
        h.setOptionValue("time_limit", float(max_seconds))
    _solve(h)
    t0 = h.getInfo().objective_function_value
    t_col = int(lp.a["t_col"])
    # Maximise the parameter; fix the others; cap t.
    n = lp.num_cols
    cost = np.zeros(n)
    cost[k] = 1.0
    h.changeColsCost(n, np.arange(n, dtype=np.int32), cost)
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    for j, v in enumerate(base.theta):
        if j != k:
            h.changeColBounds(j, v, v)
    rows = []
    for pct in pcts:
        rn, rd = ratio(pct)
        limit = t0 * rn / rd
        h.changeColBounds(t_col, 0.0, limit)
        with stdout_silenced():
            h.run()
        status = h.modelStatusToString(h.getModelStatus())
        if status == "Time limit reached":
            raise TimeoutError(f"the {pct} % tolerance LP hit the {max_seconds:.0f} s limit")
        if status == "Optimal":
            value = Fraction(h.getSolution().col_value[k])
        elif status in ("Unbounded", "Primal unbounded", "Unbounded or infeasible"):
            value = None
        else:
            raise ToolError(f"HiGHS: {status} for the {pct} % tolerance LP")
        rows.append({"pct": Fraction(str(pct)), "max": value, "limit": Fraction(limit)})
    return Tolerance(param, x0, float(t0), rows, base, method="lp")


__all__ = ["sensitivity", "tolerance", "PARAM_INDEX"]
