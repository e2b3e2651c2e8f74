"""Computation drift: does the program's own computation change with ΔL?

The model keeps every computation block at its traced duration; only the network terms move
with ΔL. The injector measures each rank's *busy* time, its span outside the injector's
waiting loops (its computation and the calls that do not wait). If the busy time grows with
ΔL, the injected runs slow down by more than any network model can predict. It does on a
machine whose caches other work takes over while a rank waits (a virtual machine sharing its
host): the block after a longer wait starts with colder caches (docs/validation.md,
"Computation after a wait").

Per grid point, with busy_max = the largest rank's busy time of a run, averaged over the
point's runs, and ΔL₀ the grid's smallest ΔL:

    drift(ΔL) = busy_max(ΔL) − busy_max(ΔL₀)
    RRMSE_drift = RRMSE of the measured means against predicted(ΔL) + drift(ΔL)

RRMSE_drift is a diagnostic, first order: it assumes the larger rank's extra busy time lands
on the critical path whole, which holds for ranks that synchronise every step (halo
exchanges, allreduces). Where it is far below the RRMSE, the machine's computation, not the
network model, makes the difference; it never replaces the RRMSE the study reports.
"""

from __future__ import annotations

import math


def mean_busy_ns(runs: list[list[int]]) -> float:
    """Mean over a point's runs of the largest rank's busy time."""
    return sum(max(r) for r in runs) / len(runs)


def drift(points) -> dict | None:
    """The busy-time drift over the grid (None when a run carries no busy times: an injector
    report without wait_ns). `points` are validate's Points (delta_ns, predicted_ns, runs_ns,
    busy_ns: one list of per-rank busy times per run)."""
    if not points or any(not p.busy_ns or len(p.busy_ns) != len(p.runs_ns) for p in points):
        return None
    ref = min(points, key=lambda p: p.delta_ns)
    base = mean_busy_ns(ref.busy_ns)
    rows, sq = [], 0.0
    for p in points:
        busy = mean_busy_ns(p.busy_ns)
        grown = busy - base
        rows.append({
            "delta_L_us": p.delta_ns / 1e3,
            "busy_us": busy / 1e3,
            "growth_us": grown / 1e3,
            "growth_pct": 100 * grown / base if base else 0.0,
        })  # fmt: skip
        sq += (p.mean_ns - (p.predicted_ns + grown)) ** 2
    mean_measured = sum(p.mean_ns for p in points) / len(points)
    return {
        "reference_delta_L_us": ref.delta_ns / 1e3,
        "points": rows,
        "rrmse_with_drift": math.sqrt(sq / len(points)) / mean_measured,
    }


def note(d: dict | None, rrmse: float) -> str | None:
    """One line for validate's table: how much the computation moved, and what it explains."""
    if d is None:
        return None
    last = max(d["points"], key=lambda r: r["delta_L_us"])
    return (
        f"computation (the largest rank's time outside MPI waits) changed by {last['growth_us'] / 1e3:+.3f} ms "
        f"({last['growth_pct']:+.1f} %) from ΔL = {d['reference_delta_L_us']:g} to {last['delta_L_us']:g} µs; "
        f"the model keeps it fixed — with that change added to the predictions RRMSE would be "
        f"{100 * d['rrmse_with_drift']:.2f} % (against {100 * rrmse:.2f} %)"
    )
