"""Measured latency against the two models per collective and algorithm (`latitude coll-model
fit --plot`), as the figures of Tallone's report: one panel per collective and algorithm,
latency against message size on log axes, the measured medians as points, the composed
and the regression predictions as lines."""

from __future__ import annotations

from latitude.outputs import atomic


def fit_plot(model, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels: dict[tuple, list] = {}
    for r in model.rows:
        panels.setdefault((r["coll"], r["algorithm"], r["procs"]), []).append(r)
    keys = sorted(panels)
    ncol = min(4, max(1, len(keys)))
    nrow = max(1, (len(keys) + ncol - 1) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.8 * ncol, 3.1 * nrow), dpi=110, squeeze=False)
    for ax, key in zip(axes.flat, keys):
        rows = sorted(panels[key], key=lambda r: r["bytes"])
        x = [max(r["bytes"], 1) for r in rows]
        ax.plot(x, [r["measured_us"] for r in rows], "o", color="#222222", label="measured (median)")
        if rows[0]["composition_us"] is not None:
            ax.plot(x, [r["composition_us"] for r in rows], "-", color="#4c72b0", label="p2p composition")
        # a regression line can go below zero at small sizes: not drawn there (log axis)
        ax.plot(
            x,
            [r["regression_us"] if r["regression_us"] > 0 else float("nan") for r in rows],
            "--",
            color="#dd8452",
            label="regression",
        )
        ax.plot(x, [r["graph_us"] for r in rows], ":", color="#55a868", label="Latitude graph (LogGPS)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{key[0]} {key[1]}, P = {key[2]}", fontsize=9)
        ax.set_xlabel("bytes", fontsize=8)
        ax.set_ylabel("latency (µs)", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(keys) :]:
        ax.set_visible(False)
    if keys:
        axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    try:
        with atomic(path, "plot") as tmp:
            fig.savefig(tmp)
    finally:
        plt.close(fig)
