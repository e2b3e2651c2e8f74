"""Plots of the analyses (matplotlib, headless): what the LLAMP paper shows.

* `runtime_plot`: predicted runtime vs ΔL with the 1 / 2 / 5 % tolerance zones shaded and
  their ΔL annotated, critical latencies marked, optionally measured points ± std.
* `sensitivity_plot`: λ_L (a step function) and ρ_L vs ΔL.
* `map_plot`: the L × G tolerance regions.

The output format follows the file extension (.png, .svg, .pdf); without one, both a PNG
and an SVG are written. Each function returns the list of files written.
"""

from __future__ import annotations

import csv
import os

from latitude.errors import InputError
from latitude.outputs import atomic

ZONES = ((1, "#2ca02c"), (2, "#ff7f0e"), (5, "#d62728"))


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 11, "axes.grid": True, "grid.alpha": 0.3, "figure.dpi": 110})
    return plt


def _save(fig, path: str) -> list[str]:
    root, ext = os.path.splitext(path)
    paths = [path] if ext else [root + ".png", root + ".svg"]
    for p in paths:
        with atomic(p, "plot") as tmp:
            fig.savefig(tmp, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths


def _time_scale(max_ns: float) -> tuple[float, str]:
    for f, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if max_ns >= f:
            return f, unit
    return 1.0, "ns"


def read_measured(path: str) -> list[dict]:
    """Measured runtimes: CSV with delta_L_us and mean_us (or T_us), optional std_us."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            dl = float(r["delta_L_us"])
            mean = float(r.get("mean_us") or r["T_us"])
            std = float(r.get("std_us") or 0)
        except (KeyError, ValueError, TypeError):
            raise InputError(
                f"{path}:{i}", "expected columns delta_L_us, mean_us (or T_us) and optionally std_us"
            ) from None
        out.append({"delta_us": dl, "mean_us": mean, "std_us": std})
    return out


def runtime_plot(sens, tol, path: str, measured: list[dict] | None = None, title: str | None = None) -> list[str]:
    """T vs ΔL = L − L₀ with tolerance zones (sens over L, tol from the same baseline)."""
    plt = _mpl()
    base = tol.baseline
    curve = sens.curve(400)
    xs = [(r["x"] - base) / 1e3 for r in curve]
    tmax = max(r["T"] for r in curve)
    f, unit = _time_scale(tmax)
    ys = [r["T"] / f for r in curve]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    lo_x, hi_x = min(xs), max(xs)
    prev = 0.0
    t0 = tol.baseline_runtime
    for pct, color in ZONES:
        try:
            d = tol.delta(pct)
        except KeyError:
            continue
        end = hi_x if d is None else min(d / 1e3, hi_x)
        if end > prev:
            ax.axvspan(max(prev, lo_x), end, color=color, alpha=0.15, lw=0)
        label = "unbounded" if d is None else f"+{d / 1e3:.3g} µs"
        ax.axvline(end, color=color, lw=1.2, ls="--", label=f"{pct} % tolerance: ΔL ≤ {label}")
        # The runtime limit as a horizontal line and the crossing as a dot: visible even when
        # the tolerance is a sliver of the ΔL axis (NetPIPE: +0.009 µs of 200 µs).
        limit = t0 * (1 + pct / 100) / f
        ax.axhline(limit, color=color, lw=0.9, ls=":", alpha=0.9)
        if d is not None and d / 1e3 <= hi_x:
            ax.plot([d / 1e3], [limit], "o", color=color, ms=6, mec="black", mew=0.6, zorder=5)
        prev = max(prev, end)
    ax.plot(xs, ys, color="#1f77b4", lw=2, label="predicted runtime")
    bx = [(float(b.at) - base) / 1e3 for b in sens.breakpoints]
    by = [float(b.left(b.at)) / f for b in sens.breakpoints]
    if bx:
        ax.plot(bx, by, "o", ms=3.5, color="#1f77b4", alpha=0.7, label=f"critical latencies ({len(bx)})")
    if measured:
        ax.errorbar(
            [m["delta_us"] for m in measured],
            [m["mean_us"] * 1e3 / f for m in measured],
            yerr=[m["std_us"] * 1e3 / f for m in measured],
            fmt="s",
            color="black",
            ms=4,
            capsize=3,
            label="measured (mean ± std)",
        )
    ax.set_xlabel(f"added network latency ΔL (µs), baseline L₀ = {base / 1e3:.3g} µs")
    ax.set_ylabel(f"runtime ({unit})")
    ax.set_xlim(lo_x, hi_x)
    ax.set_title(title or "Predicted runtime and latency tolerance")
    ax.legend(loc="upper left", fontsize=9, framealpha=0.9)
    return _save(fig, path)


def sensitivity_plot(sens, path: str, title: str | None = None) -> list[str]:
    """λ (step function, left axis) and ρ (right axis) vs Δ of the swept parameter."""
    plt = _mpl()
    base = sens.baseline or 0.0
    curve = sens.curve(400)
    is_l = sens.param == "L"
    scale = 1e3 if is_l else 1.0
    xs = [(r["x"] - base) / scale for r in curve]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    ax.step(
        xs,
        [r["slope"] for r in curve],
        where="post",
        color="#9467bd",
        lw=2,
        label="λ_L = ∂T/∂L (messages on the critical path)" if is_l else "λ_G = ∂T/∂G (bytes on the critical path)",
    )
    ax.set_ylabel("λ_L" if is_l else "λ_G (bytes)")
    ax2 = ax.twinx()
    ax2.plot(
        xs,
        [100 * r["rho"] for r in curve],
        color="#17becf",
        lw=2,
        label="ρ_L: share of runtime in latency (%)" if is_l else "ρ_G: share of runtime in bandwidth (%)",
    )
    ax2.set_ylabel("ρ (%)")
    ax2.grid(False)
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper left", fontsize=9, framealpha=0.9)
    ax.set_xlabel(
        f"added network latency ΔL (µs), baseline {base / 1e3:.3g} µs"
        if is_l
        else f"added per-byte gap ΔG (ns/byte), baseline {base:.3g} ns/byte"
    )
    ax.set_xlim(min(xs), max(xs))
    ax.set_title(
        title
        or ("Latency sensitivity λ_L and latency ratio ρ_L" if is_l else "Bandwidth sensitivity λ_G and ratio ρ_G")
    )
    return _save(fig, path)


ZONE_FILL = {1: "#cfe9cf", 2: "#ffe0bf", 5: "#f6c9c9"}


def map_plot(tmap, path: str, title: str | None = None) -> list[str]:
    """Tolerance regions in the (L, G) plane: inside a curve T ≤ (1 + p/100)·T₀.

    Regions are painted from the loosest limit to the tightest, so each colour band is the
    set of (L, G) whose slowdown lies between two limits."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    (l_lo, l_hi), (g_lo, g_hi) = tmap.l_range, tmap.g_range
    colors = dict(ZONES)
    for pct, pts in sorted(tmap.curves.items(), key=lambda kv: -float(kv[0])):
        inside = [(float(g), float(l)) for g, l, st in pts if l is not None]
        if not inside:
            continue
        gs = [g for g, _ in inside]
        ls = [l / 1e3 for _, l in inside]
        key = float(pct)
        fill = ZONE_FILL.get(int(key), "#dddddd") if key.is_integer() else "#dddddd"
        ax.fill_betweenx(gs, l_lo / 1e3, ls, color=fill, lw=0, zorder=1)
        ax.plot(
            ls,
            gs,
            color=colors.get(int(key), "#555555") if key.is_integer() else "#555555",
            lw=2,
            zorder=2,
            label=f"T ≤ (1 + {key:g} %)·T₀",
        )
    ax.plot([tmap.baseline["L"] / 1e3], [tmap.baseline["G"]], "k*", ms=12, zorder=3, label="baseline (L₀, G₀)")
    ax.set_xlim(l_lo / 1e3, l_hi / 1e3)
    ax.set_ylim(g_lo, g_hi)
    ax.set_xlabel("network latency L (µs)")
    ax.set_ylabel("gap per byte G (ns/byte; bandwidth = 1/G GB/s)")
    ax.set_title(title or f"Joint latency / bandwidth tolerance (T₀ = {tmap.baseline_runtime / 1e3:,.4g} µs)")
    ax.legend(loc="upper right", fontsize=9, framealpha=0.9)
    return _save(fig, path)
