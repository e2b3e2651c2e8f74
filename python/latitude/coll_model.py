"""Latency models of bcast and reduce algorithms fitted to measurements (`latitude coll-model`),
after Tallone's report on modelling MPI_Bcast and MPI_Reduce.

**Point-to-point composition.** Each algorithm is a tree over the P ranks (root 0):

* linear: the root is the parent of every rank;
* chain: rank i is the parent of rank i + 1;
* binary: heap order, children 2i + 1 and 2i + 2;
* binomial: the parent of v is v − lowbit(v), its children v + 2^k for 2^k < lowbit(v)
  (every 2^k < P for the root), as MPICH's and Open MPI's binomial trees.

A message of m bytes over channel c costs the Hockney time t_c(m) = α_c + β_c·m; a parent
that sends to its n children at once (non-blocking) delivers each after γ(n, m)·t_c(m), the
parallelisation factor γ(n, m) = T_n(m) / T_1(m) measured from fan-outs of n non-blocking
sends (γ(1, m) = 1; n = 1 for every chain link). A rank has the data when its parent has it
plus that delay, so

    T_bcast = max over ranks j of Σ along the path root → j of γ(n_parent, m)·t_c(parent, j)(m)

and reduce is the mirror image (the same tree, messages towards the root; the reduction's own
computation is not modelled). α_c, β_c are fitted per channel by least squares on the median
half round trips between rank 0 and its peers (channel "shm" within a host, "network"
between hosts; the hosts come from the samples' placement); γ by interpolation in log m
between measured sizes (clamped outside), in n between measured widths.

**Regression.** Per collective and algorithm, least squares of the median latency on
1, m, P − 1, (P − 1)·m, I_node, I_node·m, where I_node = 1 when the ranks span hosts.
Columns constant over the data (one P, one host) drop out (minimum-norm solution): that
regression then only interpolates over m, which is all a single-configuration data set can
support.

**Comparison.** Per collective and algorithm over its measured sizes and P: R² = 1 −
SS_res / SS_tot and RRMSE = sqrt(mean((ŷ − y)²)) / mean(y) of the medians; the model with the
lower RRMSE wins. The regression is evaluated on the data it was fitted to (in-sample); the
composition model never saw the collective's timings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from latitude.coll_names import MODELLED, TREES  # noqa: F401 (this module's names too)
from latitude.errors import InputError


def parents(alg: str, p: int) -> list[int]:
    """parent[v] of every rank (parent[0] = -1) of the algorithm's tree."""
    if alg == "linear":
        return [-1] + [0] * (p - 1)
    if alg == "chain":
        return [-1] + list(range(p - 1))
    if alg == "binary":
        return [-1] + [(v - 1) // 2 for v in range(1, p)]
    if alg == "binomial":
        return [-1] + [v - (v & -v) for v in range(1, p)]
    raise InputError("--algorithm", f"no composition model for {alg!r} (modelled: {', '.join(TREES)})")


def compose(alg: str, p: int, m: float, t_of, gamma) -> float:
    """Composed latency (µs) of `alg` on p ranks for m bytes: `t_of(i, j, m)` the Hockney
    time of the message i → j, `gamma(n, m)` the fan-out factor."""
    par = parents(alg, p)
    fan = [0] * p
    for v in range(1, p):
        fan[par[v]] += 1
    ready = [0.0] * p
    for v in range(1, p):  # parents precede children in every tree here
        u = par[v]
        ready[v] = ready[u] + gamma(fan[u], m) * t_of(u, v, m)
    return max(ready)


@dataclass
class Hockney:
    alpha: float  # µs
    beta: float  # µs per byte

    def __call__(self, m: float) -> float:
        return self.alpha + self.beta * m


def fit_hockney(sizes, times) -> Hockney:
    """α, β by least squares (β ≥ 0, α ≥ 0)."""
    m = np.asarray(sizes, float)
    y = np.asarray(times, float)
    if len(set(m)) < 2:
        raise InputError("samples", "the p2p measurements need at least two message sizes to fit α and β")
    beta, alpha = np.polyfit(m, y, 1)
    return Hockney(max(float(alpha), 0.0), max(float(beta), 0.0))


@dataclass
class Gamma:
    """γ(n, m) from fan-out medians: table[n][m] = T_n(m) / T_1(m)."""

    table: dict = field(default_factory=dict)  # n -> {m: factor}

    def __call__(self, n: int, m: float) -> float:
        if n <= 1 or not self.table:
            return 1.0
        widths = sorted(self.table)
        if n in self.table:
            return self._in_m(self.table[n], m)
        lo = max((w for w in widths if w < n), default=1)
        hi = min((w for w in widths if w > n), default=None)
        g_lo = 1.0 if lo == 1 else self._in_m(self.table[lo], m)
        if hi is None:  # beyond the widest fan-out measured: extrapolate linearly in n
            return g_lo * n / lo
        g_hi = self._in_m(self.table[hi], m)
        return g_lo + (g_hi - g_lo) * (n - lo) / (hi - lo)

    @staticmethod
    def _in_m(row: dict, m: float) -> float:
        ms = sorted(row)
        if m <= ms[0]:
            return row[ms[0]]
        if m >= ms[-1]:
            return row[ms[-1]]
        x = math.log2(max(m, 1))
        for a, b in zip(ms, ms[1:]):
            if a <= m <= b:
                xa, xb = math.log2(max(a, 1)), math.log2(max(b, 1))
                return row[a] + (row[b] - row[a]) * ((x - xa) / (xb - xa) if xb > xa else 0)
        return row[ms[-1]]


def regression_features(m: float, p: int, spans_nodes: bool) -> list[float]:
    i = 1.0 if spans_nodes else 0.0
    return [1.0, m, p - 1.0, (p - 1.0) * m, i, i * m]


def fit_regression(points: list[tuple[float, int, bool, float]]) -> list[float]:
    """Coefficients for regression_features from (m, P, spans_nodes, median µs) points."""
    x = np.array([regression_features(m, p, s) for m, p, s, _ in points])
    y = np.array([t for *_, t in points])
    keep = np.ptp(x, axis=0) > 0
    keep[0] = True  # the intercept
    coef = np.zeros(x.shape[1])
    coef[keep] = np.linalg.lstsq(x[:, keep], y, rcond=None)[0]
    return coef.tolist()


def predict_regression(coef: list[float], m: float, p: int, spans_nodes: bool) -> float:
    return float(np.dot(coef, regression_features(m, p, spans_nodes)))


def r2_rrmse(y, yhat) -> tuple[float, float]:
    y, yhat = np.asarray(y, float), np.asarray(yhat, float)
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    ss_res = float(np.sum((y - yhat) ** 2))
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else math.nan
    return r2, math.sqrt(ss_res / len(y)) / float(y.mean())
