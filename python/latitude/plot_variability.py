"""Histogram of Monte Carlo runtimes (`latitude simulate --samples N --hist out.png`).

The runtime distribution under noise is typically skewed with a long tail (Salimi Beni et
al.), so the plot marks the median and the tail percentiles p90 and p99 rather than a mean
± σ. PNG or SVG by extension; matplotlib with the Agg backend (no display needed).
"""

from __future__ import annotations

import os

import numpy as np

from latitude.errors import InputError
from latitude.outputs import atomic

FORMATS = (".png", ".svg")


def _time_unit(x: np.ndarray) -> tuple[str, float]:
    top = float(np.max(x)) if len(x) else 0.0
    for name, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if top >= scale:
            return name, scale
    return "ns", 1.0


def runtime_histogram(samples, path: str, title: str = "", baseline_ns: float | None = None) -> None:
    """Write the histogram of `samples.runtime_ns` with p50/p90/p99 lines (and the
    noise-free runtime when given)."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise InputError("--hist", f"expected a .png or .svg path, got {path!r}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.asarray(samples.runtime_ns, dtype=float)
    unit, scale = _time_unit(x)
    xs = x / scale
    stats = samples.stats()
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    bins = min(60, max(5, int(np.sqrt(len(xs))) * 2)) if np.ptp(xs) > 0 else 1
    ax.hist(xs, bins=bins, color="#4c72b0", alpha=0.85, edgecolor="white", linewidth=0.5, label=f"{len(xs):,} samples")
    for key, colour, style in (("p50", "#222222", "-"), ("p90", "#dd8452", "--"), ("p99", "#c44e52", ":")):
        v = stats[f"{key}_ns"] / scale
        ax.axvline(v, color=colour, linestyle=style, linewidth=1.8, label=f"{key} = {v:.6g} {unit}")
    if baseline_ns is not None:
        ax.axvline(
            baseline_ns / scale,
            color="#55a868",
            linestyle="-.",
            linewidth=1.8,
            label=f"noise-free = {baseline_ns / scale:.6g} {unit}",
        )
    ax.set_xlabel(f"simulated runtime ({unit})")
    ax.set_ylabel("samples")
    ax.set_title(title or "Simulated runtime under noise", fontsize=10)
    ax.legend(loc="best", fontsize=9, framealpha=0.9)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    try:
        with atomic(path, "plot") as tmp:
            fig.savefig(tmp)
    finally:
        plt.close(fig)
