"""The RRMSE a validation study would show from run-to-run noise alone, with an exact model.

A study compares the prediction from one traced run with the mean of n_i injected runs at each
ΔL_i. Both are samples of the same program on the same node. When one whole launch can run
slower or faster than the next (another core pairing, memory placement, a busy neighbour), an
exact model still misses in two ways:

* the trace is one run: its deviation δ from the program's mean runtime is in every prediction
  of the study, the same δ at every ΔL (variance σ²);
* each measured mean holds its runs' own noise, variance σ²/n_i.

So the expected squared error at point i is σ²(1 + 1/n_i), and the RRMSE of an exact model is
about

    floor = σ · sqrt(1 + mean_i 1/n_i) / mean_i(measured_i)

σ² is estimated by pooling the sample variances of every group of runs the study made: the
traced runs (with ``--traces`` k ≥ 2) and the injected runs at each ΔL. Each group has its own
mean and contributes its own degrees of freedom. Pooling assumes that the noise is the same
size at every ΔL. An estimate from few degrees of freedom is rough, so the floor tells how to
read an RRMSE on a noisy node. It is no replacement for ``--max-rrmse`` and does not move its
bound. The slope check does not hold δ:

    Δ_meas − Δ_pred  with  se = σ · sqrt(1/n_first + 1/n_last)

Here Δ is the change from the smallest ΔL to the largest. It judges the model's latency
sensitivity without the trace's own deviation.
"""

from __future__ import annotations

import math


def pooled_variance(groups: list[list[float]]) -> tuple[float, int] | None:
    """(σ², degrees of freedom) pooled over the groups with two or more samples."""
    ss, dof = 0.0, 0
    for g in groups:
        if len(g) >= 2:
            m = sum(g) / len(g)
            ss += sum((x - m) ** 2 for x in g)
            dof += len(g) - 1
    return (ss / dof, dof) if dof else None


def rrmse_floor(runs: list[list[float]], traced: list[float]) -> dict | None:
    """The noise-alone RRMSE of a study (runs: each ΔL's injected runtimes; traced: the traced
    runs' runtimes), with σ and its degrees of freedom; None when no group repeated."""
    pooled = pooled_variance([list(traced)] + [list(r) for r in runs])
    if pooled is None or not runs or not all(runs):
        return None
    var, dof = pooled
    mean = sum(sum(r) / len(r) for r in runs) / len(runs)
    floor = math.sqrt(var * (1 + sum(1 / len(r) for r in runs) / len(runs))) / mean
    return {"rrmse": floor, "sigma_ns": math.sqrt(var), "dof": dof}


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
