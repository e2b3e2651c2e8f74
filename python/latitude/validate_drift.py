"""Computation drift: does the program's own computation change with ΔL?

The model keeps every computation block at its traced duration; only the network terms move
with ΔL. The injector measures each rank's *busy* time, its span outside the injector's
waiting loops (its computation and the calls that do not wait). If the busy time grows with
ΔL, the injected runs slow down by more than any network model can predict. It does on a
machine whose caches other work takes over while a rank waits (a virtual machine sharing its
host): the block after a longer wait starts with colder caches (docs/validation.md,
"Computation after a wait").

Per grid point, means over the point's runs, busy = the largest rank's busy time of a run,
and ΔL₀ the grid's smallest ΔL:

    drift(ΔL)    = busy(ΔL) − busy(ΔL₀)                   the computation's change
    growth(ΔL)   = measured(ΔL) − measured(ΔL₀)           what the runs added
    model(ΔL)    = predicted(ΔL) − predicted(ΔL₀)         what the model adds

Growths are compared, not runtimes, so that an offset at ΔL₀ (a traced run made in another
machine state than the injected runs) does not mix in. At the largest ΔL the summary gives the
model's miss, (model − growth) / growth, and the same with the computation's change added,
(model + drift − growth) / growth. The second is a diagnostic, first order: it adds the larger
rank's extra busy time to the critical path whole, which holds for ranks that synchronise
every step (halo exchanges, allreduces). Where it is far smaller than the first, the machine's
computation, not the network model, makes the difference.
"""

from __future__ import annotations


def mean_busy_ns(runs: list[list[int]]) -> float:
    """Mean over a point's runs of the largest rank's busy time."""
    return sum(max(r) for r in runs) / len(runs)


def drift(points) -> dict | None:
    """The busy-time drift over the grid (None when a run carries no busy times, an injector
    report without wait_ns, or the grid has one point). `points` are validate's Points
    (delta_ns, predicted_ns, runs_ns, busy_ns: one list of per-rank busy times per run)."""
    if len(points) < 2 or any(not p.busy_ns or len(p.busy_ns) != len(p.runs_ns) for p in points):
        return None
    ref = min(points, key=lambda p: p.delta_ns)
    base = mean_busy_ns(ref.busy_ns)
    rows = []
    for p in sorted(points, key=lambda p: p.delta_ns):
        busy = mean_busy_ns(p.busy_ns)
        rows.append({
            "delta_L_us": p.delta_ns / 1e3,
            "busy_us": busy / 1e3,
            "drift_us": (busy - base) / 1e3,
            "drift_pct": 100 * (busy - base) / base if base else 0.0,
            "growth_us": (p.mean_ns - ref.mean_ns) / 1e3,
            "model_growth_us": (p.predicted_ns - ref.predicted_ns) / 1e3,
        })  # fmt: skip
    last = rows[-1]
    summary = {"reference_delta_L_us": ref.delta_ns / 1e3, "points": rows}
    if last["growth_us"] > 0:
        summary["model_growth_error_pct"] = 100 * (last["model_growth_us"] / last["growth_us"] - 1)
        summary["with_drift_growth_error_pct"] = 100 * (
            (last["model_growth_us"] + last["drift_us"]) / last["growth_us"] - 1
        )
    return summary


def note(d: dict | None) -> str | None:
    """One line for validate's table: how much the computation moved, and what it explains."""
    if d is None:
        return None
    last = d["points"][-1]
    line = (
        f"computation (the largest rank's time outside MPI waits) changed by {last['drift_us'] / 1e3:+.3f} ms "
        f"({last['drift_pct']:+.1f} %) from ΔL = {d['reference_delta_L_us']:g} to {last['delta_L_us']:g} µs, "
        "which the model keeps fixed"
    )
    if "model_growth_error_pct" not in d:
        return line
    return line + (
        f": the runs grew by {last['growth_us'] / 1e3:.3f} ms, the model by {last['model_growth_us'] / 1e3:.3f} ms "
        f"({d['model_growth_error_pct']:+.1f} %), the model plus that change by "
        f"{(last['model_growth_us'] + last['drift_us']) / 1e3:.3f} ms ({d['with_drift_growth_error_pct']:+.1f} %)"
    )
