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

import numpy as np

from latitude.errors import InputError
from latitude.outputs import atomic
from latitude.units import fmt_time

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


def _added(name: str) -> str:
    """Axis label of an added time parameter."""
    return "added network latency ΔL" if name == "L" else f"added {name} latency Δ{name}"


def runtime_plot(sens, tol, path: str, measured: list[dict] | None = None, title: str | None = None) -> list[str]:
    """T vs Δx = x − x₀ with tolerance zones (sens over a time parameter x, L by default; tol
    from the same baseline)."""
    plt = _mpl()
    name = tol.param
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
        ax.axvline(end, color=color, lw=1.2, ls="--", label=f"{pct} % tolerance: Δ{name} ≤ {label}")
        # The runtime limit as a horizontal line and the crossing as a dot: visible even when
        # the tolerance is a sliver of the axis (NetPIPE: +0.009 µs of 200 µs).
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
    if measured and "band_lo_us" in measured[0]:
        ax.fill_between(
            [m["delta_us"] for m in measured],
            [m["band_lo_us"] * 1e3 / f for m in measured],
            [m["band_hi_us"] * 1e3 / f for m in measured],
            color="#1f77b4",
            alpha=0.2,
            lw=0,
            label="95 % predictive band (posterior)",
        )
    if measured and "with_drift_us" in measured[0]:
        ax.plot(
            [m["delta_us"] for m in measured],
            [m["with_drift_us"] * 1e3 / f for m in measured],
            "--",
            color="#7f7f7f",
            lw=1.3,
            label="predicted + the computation's measured change",
        )
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
    ax.set_xlabel(f"{_added(name)} (µs), baseline {name}₀ = {base / 1e3:.3g} µs")
    ax.set_ylabel(f"runtime ({unit})")
    ax.set_xlim(lo_x, hi_x)
    ax.set_title(
        title
        or ("Predicted runtime and latency tolerance" if name == "L" else f"Predicted runtime and {name} tolerance")
    )
    ax.legend(loc="upper left", fontsize=9, framealpha=0.9)
    return _save(fig, path)


def sensitivity_plot(sens, path: str, title: str | None = None) -> list[str]:
    """λ (step function, left axis) and ρ (right axis) vs Δ of the swept parameter."""
    plt = _mpl()
    base = sens.baseline or 0.0
    curve = sens.curve(400)
    name = sens.param
    is_time = sens.params.kind(name) == "time"
    scale = 1e3 if is_time else 1.0
    xs = [(r["x"] - base) / scale for r in curve]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    what = {"L": "messages", "G": "bytes"}.get(name, "terms" if is_time else "bytes")
    ax.step(
        xs,
        [r["slope"] for r in curve],
        where="post",
        color="#9467bd",
        lw=2,
        label=f"λ_{name} = ∂T/∂{name} ({what} on the critical path)",
    )
    ax.set_ylabel(f"λ_{name}" if is_time else f"λ_{name} (bytes)")
    ax2 = ax.twinx()
    ax2.plot(
        xs,
        [100 * r["rho"] for r in curve],
        color="#17becf",
        lw=2,
        label=f"ρ_{name}: share of runtime in "
        + ("latency" if name == "L" else name if is_time else "bandwidth")
        + " (%)",
    )
    ax2.set_ylabel("ρ (%)")
    ax2.grid(False)
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper left", fontsize=9, framealpha=0.9)
    ax.set_xlabel(
        f"{_added(name)} (µs), baseline {base / 1e3:.3g} µs"
        if is_time
        else f"added per-byte gap Δ{name} (ns/byte), baseline {base:.3g} ns/byte"
    )
    ax.set_xlim(min(xs), max(xs))
    default = {
        "L": "Latency sensitivity λ_L and latency ratio ρ_L",
        "G": "Bandwidth sensitivity λ_G and ratio ρ_G",
    }.get(name, f"Sensitivity λ_{name} and ratio ρ_{name}")
    ax.set_title(title or default)
    return _save(fig, path)


ZONE_FILL = {1: "#cfe9cf", 2: "#ffe0bf", 5: "#f6c9c9"}


def map_plot(tmap, path: str, title: str | None = None) -> list[str]:
    """Tolerance regions in the plane of two parameters (L and G by default): inside a curve
    T ≤ (1 + p/100)·T₀.

    Regions are painted from the loosest limit to the tightest, so each colour band is the
    set of points whose slowdown lies between two limits."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    (l_lo, l_hi), (g_lo, g_hi) = tmap.l_range, tmap.g_range
    xname, yname = tmap.axes
    kinds = [tmap.params.kind(a) if tmap.params else ("time" if a == "L" else "gap") for a in tmap.axes]
    xs_scale = 1e3 if kinds[0] == "time" else 1.0
    ys_scale = 1e3 if kinds[1] == "time" else 1.0
    colors = dict(ZONES)
    for pct, pts in sorted(tmap.curves.items(), key=lambda kv: -float(kv[0])):
        inside = [(float(g), float(l)) for g, l, st in pts if l is not None]
        if not inside:
            continue
        gs = [g / ys_scale for g, _ in inside]
        ls = [l / xs_scale for _, l in inside]
        key = float(pct)
        fill = ZONE_FILL.get(int(key), "#dddddd") if key.is_integer() else "#dddddd"
        ax.fill_betweenx(gs, l_lo / xs_scale, ls, color=fill, lw=0, zorder=1)
        ax.plot(
            ls,
            gs,
            color=colors.get(int(key), "#555555") if key.is_integer() else "#555555",
            lw=2,
            zorder=2,
            label=f"T ≤ (1 + {key:g} %)·T₀",
        )
    ax.plot(
        [tmap.baseline[xname] / xs_scale],
        [tmap.baseline[yname] / ys_scale],
        "k*",
        ms=12,
        zorder=3,
        label=f"baseline ({xname}₀, {yname}₀)",
    )
    ax.set_xlim(l_lo / xs_scale, l_hi / xs_scale)
    ax.set_ylim(g_lo / ys_scale, g_hi / ys_scale)

    def label(name, kind):
        if name == "L":
            return "network latency L (µs)"
        if name == "G":
            return "gap per byte G (ns/byte; bandwidth = 1/G GB/s)"
        return f"{name} latency (µs)" if kind == "time" else f"{name} (ns/byte)"

    ax.set_xlabel(label(xname, kinds[0]))
    ax.set_ylabel(label(yname, kinds[1]))
    joint = "latency / bandwidth" if tmap.axes == ("L", "G") else f"{xname} / {yname}"
    ax.set_title(title or f"Joint {joint} tolerance (T₀ = {tmap.baseline_runtime / 1e3:,.4g} µs)")
    ax.legend(loc="upper right", fontsize=9, framealpha=0.9)
    return _save(fig, path)


def pairs_heatmap(pairs, path: str, title: str | None = None) -> list[str]:
    """A `latitude.pairs.Pairs`: λ_L^{ij} by rank pair and by node pair, side by side (log colour scale; white: not on
    the critical path)."""
    from matplotlib.colors import LogNorm, Normalize

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(12.5, 5.4), layout="constrained")
    for ax, nodes in zip(axes, (False, True)):
        m, per = pairs.dense(nodes)
        shown = np.ma.masked_where(m <= 0, m)
        what = "node" if nodes else "rank"
        if shown.count():
            lo, hi = max(float(shown.min()), 1.0), max(float(shown.max()), 1.0)
            norm = LogNorm(vmin=lo, vmax=hi) if hi / lo > 50 else Normalize(vmin=0, vmax=hi)
            im = ax.imshow(shown, cmap="viridis", norm=norm, origin="lower", interpolation="nearest")
            fig.colorbar(im, ax=ax, shrink=0.85, label="λ_L (latency terms)")
        else:
            ax.text(0.5, 0.5, "no messages on the critical path", ha="center", va="center", transform=ax.transAxes)
        unit = f" (bins of {per})" if per > 1 else ""
        ax.set_xlabel(f"{what}{unit}")
        ax.set_ylabel(f"{what}{unit}")
        ax.set_title(f"λ_L per {what} pair")
        ax.grid(False)
    pred = pairs.prediction
    fig.suptitle(
        title
        or f"Pairwise latency sensitivity: {len(pairs):,} rank pairs on the critical path, "
        f"{pred.latency_terms:,} latency terms, T = {fmt_time(pred.runtime_ns)}"
    )
    return _save(fig, path)
