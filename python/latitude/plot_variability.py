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


# ---- measured collectives (`latitude variability --violin / --hist`) ----
def _check_ext(path: str, option: str) -> None:
    if os.path.splitext(path)[1].lower() not in FORMATS:
        raise InputError(option, f"expected a .png or .svg path, got {path!r}")


def _panels(groups: dict) -> dict[str, list]:
    """Configurations per collective (one panel each), sorted by algorithm, P and size."""
    out: dict[str, list] = {}
    for key in sorted(groups):
        out.setdefault(key[0], []).append(key)
    return out


def collective_violins(cols: dict, groups: dict, path: str) -> None:
    """One panel per collective; per configuration (algorithm, P, size) a violin of its
    latencies on a log axis with the median and p99 marked."""
    _check_ext(path, "--violin")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = _panels(groups)
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(max(7.5, 0.55 * max(map(len, panels.values())) + 2), 3.4 * len(panels)),
        dpi=110,
        squeeze=False,
    )
    for ax, (coll, keys) in zip(axes[:, 0], panels.items()):
        data = [np.log10(np.maximum(cols["time_us"][groups[k]], 1e-3)) for k in keys]
        parts = ax.violinplot(data, showextrema=False, widths=0.85)
        for body in parts["bodies"]:
            body.set_facecolor("#4c72b0")
            body.set_alpha(0.55)
        pos = np.arange(1, len(keys) + 1)
        ax.scatter(pos, [np.median(d) for d in data], color="#222222", s=12, zorder=3, label="median")
        ax.scatter(pos, [np.percentile(d, 99) for d in data], color="#c44e52", marker="_", s=120, zorder=3, label="p99")
        ax.set_xticks(pos, [f"{k[1]}\nP={k[2]} {_size(k[3])}" for k in keys], fontsize=7)
        ticks = np.arange(np.floor(min(d.min() for d in data)), np.ceil(max(d.max() for d in data)) + 1)
        ax.set_yticks(ticks, [f"{10**t:g}" for t in ticks])
        ax.set_ylabel("latency (µs, log)")
        ax.set_title(f"MPI_{coll.capitalize()}: latency per call", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    _save_fig(fig, path)


def collective_histograms(cols: dict, groups: dict, path: str) -> None:
    """One panel per configuration: the latency histogram with median, p90 and p99."""
    _check_ext(path, "--hist")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    keys = sorted(groups)
    ncol = min(3, len(keys))
    nrow = (len(keys) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.0 * nrow), dpi=110, squeeze=False)
    for ax, key in zip(axes.flat, keys):
        x = np.maximum(cols["time_us"][groups[key]], 1e-3)
        # log-spaced bins: the tails of these distributions reach 100x the median
        lo, hi = float(x.min()), float(x.max())
        bins = np.geomspace(lo, hi * 1.0001, 60) if hi > lo else 1
        ax.hist(x, bins=bins, color="#4c72b0", alpha=0.85, edgecolor="white", linewidth=0.3)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        for q, colour, style in ((50, "#222222", "-"), (90, "#dd8452", "--"), (99, "#c44e52", ":")):
            v = np.percentile(x, q)
            ax.axvline(v, color=colour, linestyle=style, linewidth=1.4, label=f"p{q} {v:.3g} µs")
        ax.set_title(f"{key[0]} {key[1]} P={key[2]} {_size(key[3])}", fontsize=9)
        ax.set_xlabel("latency (µs, log)", fontsize=8)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(keys) :]:
        ax.set_visible(False)
    fig.tight_layout()
    _save_fig(fig, path)


def _size(n: int) -> str:
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f and n % f == 0:
            return f"{n // f} {unit}"
    return f"{n} B"


def _save_fig(fig, path: str) -> None:
    import matplotlib.pyplot as plt

    try:
        with atomic(path, "plot") as tmp:
            fig.savefig(tmp)
    finally:
        plt.close(fig)
