"""The RRMSE a validation study would show from run-to-run noise alone, with an exact model.

A study compares the prediction from one traced run with the mean of n_i injected runs at each
ΔL_i. Both are samples of the same program on the same node. When one whole launch can run
slower or faster than the next (another core pairing, memory placement, a busy neighbour), an
exact model still misses in two ways:

* the trace is one run: its deviation δ from the program's mean runtime is in every prediction
  of the study, the same δ at every ΔL. With one traced run E[δ²] = σ². When the study
  traced k times and used the trace whose prediction is the middle one (validate's
  ``--traces k``: the lower middle for even k), δ is that order statistic of k deviations,
  and E[δ²] = c_k·σ², with c_k the second moment of the middle of k standard normals
  (c₁ = c₂ = 1, c₃ = c₄ ≈ 0.449, c₅ ≈ 0.287; computed by quadrature below);
* each measured mean holds its runs' own noise, variance σ²/n_i.

So the expected squared error at point i is σ²(c_k + 1/n_i), and the RRMSE of an exact model
is about

    floor = σ · sqrt(c_k + mean_i 1/n_i) / mean_i(measured_i)

σ² is estimated by pooling the sample variances of every group of runs the study made: the
traced runs (with ``--traces`` k ≥ 2) and the injected runs at each ΔL. Each group has its own
mean and contributes its own degrees of freedom. Pooling assumes that the noise is the same
size at every ΔL. An estimate from few degrees of freedom is rough, so the floor tells how to
read an RRMSE on a noisy node. It is no replacement for ``--max-rrmse`` and does not move its
bound. The slope check does not hold δ:

    Δ_meas − Δ_pred  with  se = σ · sqrt(1/n_first + 1/n_last)

Here Δ is the change from the smallest ΔL to the largest. It judges the model's latency
sensitivity without the trace's own deviation.

The floor is the root of an expected square, and the square is mostly one draw (the trace's
deviation), so an exact model's RRMSE lands above its floor about a third of the time. Whether
a study's RRMSE says more than the noise does is the chance that an exact model would miss by
as much:

    p = P[ sqrt(mean_i (δ + ε_i)²) / mean ≥ RRMSE ],  δ the middle of k draws of N(0, σ²),
                                                      ε_i ~ N(0, σ²/n_i)

estimated from 20,000 seeded draws (``exceed_p``). A small p (below 0.05) is a model error
the noise does not explain; a larger one is a miss the noise can explain.
"""

from __future__ import annotations

import functools
import math

import numpy as np


def pooled_variance(groups: list[list[float]]) -> tuple[float, int] | None:
    """(σ², degrees of freedom) pooled over the groups with two or more samples."""
    ss, dof = 0.0, 0
    for g in groups:
        if len(g) >= 2:
            m = sum(g) / len(g)
            ss += sum((x - m) ** 2 for x in g)
            dof += len(g) - 1
    return (ss / dof, dof) if dof else None


def _mean_runtime(runs: list[list[float]]) -> float:
    """The mean over the ΔL points of each point's mean runtime (the RRMSE's denominator)."""
    return sum(sum(r) / len(r) for r in runs) / len(runs)


@functools.cache
def middle_second_moment(k: int) -> float:
    """E[X²] of the lower middle ((k+1)//2-th smallest) of k standard normal samples: its
    density is k!/((r−1)!(k−r)!)·Φ^(r−1)·(1−Φ)^(k−r)·φ, integrated by the trapezoid rule."""
    if k <= 1:
        return 1.0
    r = (k + 1) // 2
    coef = math.factorial(k) / (math.factorial(r - 1) * math.factorial(k - r))
    h, total = 0.002, 0.0
    for i in range(-5000, 5001):  # x in [-10, 10]: the tails beyond hold nothing at double precision
        x = i * h
        cdf = 0.5 * (1 + math.erf(x / math.sqrt(2)))
        total += x * x * cdf ** (r - 1) * (1 - cdf) ** (k - r) * math.exp(-x * x / 2)
    return coef * total * h / math.sqrt(2 * math.pi)


def rrmse_floor(runs: list[list[float]], traced: list[float], chosen_of: int = 1) -> dict | None:
    """The noise-alone RRMSE of a study (runs: each ΔL's injected runtimes; traced: the traced
    runs' runtimes; chosen_of: how many traces the used one was the middle of), with σ and its
    degrees of freedom; None when no group repeated."""
    pooled = pooled_variance([list(traced)] + [list(r) for r in runs])
    if pooled is None or not runs or not all(runs):
        return None
    var, dof = pooled
    mean = _mean_runtime(runs)
    trace_share = middle_second_moment(chosen_of)
    floor = math.sqrt(var * (trace_share + sum(1 / len(r) for r in runs) / len(runs))) / mean
    return {"rrmse": floor, "sigma_ns": math.sqrt(var), "dof": dof, "traces": max(chosen_of, 1)}


def slope_check(runs: list[list[float]], predicted: list[float], sigma_ns: float) -> dict | None:
    """The measured and predicted change from the first to the last ΔL, with the measured
    change's standard error; None with fewer than two points."""
    if len(runs) < 2:
        return None
    first, last = runs[0], runs[-1]
    measured = sum(last) / len(last) - sum(first) / len(first)
    return {
        "measured_ns": measured,
        "predicted_ns": predicted[-1] - predicted[0],
        "se_ns": sigma_ns * math.sqrt(1 / len(first) + 1 / len(last)),
    }


def exceed_p(rrmse: float, runs: list[list[float]], sigma_ns: float, chosen_of: int = 1, draws: int = 20_000) -> float:
    """The chance that an exact model shows an RRMSE of at least `rrmse` in a study with these
    runs per ΔL, σ per run and the trace chosen as the middle of `chosen_of` (seeded draws)."""
    rng = np.random.default_rng(20261208)
    k = max(chosen_of, 1)
    deltas = np.sort(rng.normal(0, sigma_ns, (draws, k)), axis=1)[:, (k - 1) // 2]
    se = np.array([sigma_ns / math.sqrt(len(r)) for r in runs])
    eps = rng.normal(0, 1, (draws, len(runs))) * se
    mean = _mean_runtime(runs)
    sim = np.sqrt(((deltas[:, None] + eps) ** 2).mean(axis=1)) / mean
    return float((sim >= rrmse).mean())
