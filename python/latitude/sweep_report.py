"""`latitude sweep ... --report F.html`: a self-contained HTML summary of a sweep's results
(latitude.htmlpage): counts, the best configurations, one heat map per pair of swept
dimensions, the failed points, and the spec with the command.

"Best" is read two ways: the largest latency headroom (how much L may grow within the first
tolerance limit, tol_L_<pct>pct − L) and the lowest runtime. A heat map shows the headroom
over two swept dimensions, each cell the median over the other dimensions (the median keeps
one extreme input from colouring a whole row).
"""

from __future__ import annotations

import math
import os
import shlex
import statistics
import sys

from latitude import htmlpage
from latitude.htmlpage import Section, esc, figure, key_values, table
from latitude.plots import _mpl, _save
from latitude.sweep_eval import tol_column
from latitude.sweep_store import read_table
from latitude.units import fmt_size, fmt_time

BEST_ROWS = 10
MAX_HEATMAPS = 15


def label(dim: str, value) -> str:
    """A dimension's value as a person reads it."""
    if value is None:
        return "–"
    if dim in ("input", "machine") or dim == "placement" and value not in ("block", "round-robin"):
        return os.path.basename(os.path.normpath(value))
    if dim in ("L", "o", "g"):
        return fmt_time(value)
    if dim in ("G", "O"):
        return f"{value:g} ns/B"
    if dim == "S":
        return "∞" if value >= 2**62 else fmt_size(value)
    return str(value)


def headroom(row: dict, column: str) -> float | None:
    """How much L may grow within the tolerance (ns); None for a failed point."""
    if row.get("error") or row.get(column) is None:
        return None
    return row[column] - row["L"]


def write_sweep_report(spec, output: str, path: str) -> None:
    rows = read_table(output)
    dims = spec.swept()
    tol = tol_column("L", spec.pcts[0]) if "L" in spec.tolerance else None
    sections = [
        _summary(spec, rows, output),
        _best(rows, dims, tol, spec.pcts[0]),
        _heatmaps(rows, dims, tol, spec.pcts[0]),
        _failures(rows),
        _inputs(spec),
    ]
    title = f"Latitude sweep: {os.path.basename(spec.path)}"
    subtitle = f"{len(rows):,} points over {', '.join(dims) or 'one point'}"
    htmlpage.write(path, htmlpage.page(title, subtitle, [s for s in sections if s]))


def _summary(spec, rows: list, output: str) -> Section:
    failed = sum(1 for r in rows if r.get("error"))
    seconds = sum(r.get("seconds") or 0 for r in rows)
    dims = [(d, ", ".join(label(d, v) for v in _values(rows, d))) for d in spec.swept()]
    body = f"<p>{len(rows):,} points, {failed:,} failed; {seconds:,.3g} s of evaluation in all.</p>" + key_values(
        [("results", os.path.abspath(output))] + dims
    )
    return Section("summary", "Summary", body)


def _best(rows: list, dims: list, tol: str | None, pct: str) -> Section:
    ok = [r for r in rows if not r.get("error")]
    cols = dims or ["input"]
    parts = []
    if tol:
        ranked = sorted(ok, key=lambda r: -headroom(r, tol))[:BEST_ROWS]
        parts.append(
            f"<p>Largest latency headroom: how much L may grow with T within {esc(pct)} %.</p>"
            + table(
                cols + ["T", f"ΔL within {pct} %", "ρ_L"],
                [
                    [label(d, r[d]) for d in cols]
                    + [fmt_time(r["T_ns"]), _delta(headroom(r, tol)), f"{r['rho_L']:.3f}"]
                    for r in ranked
                ],
                left=len(cols),
            )
        )
    fastest = sorted(ok, key=lambda r: r["T_ns"])[:BEST_ROWS]
    parts.append(
        "<p>Lowest predicted runtime.</p>"
        + table(
            cols + ["T", "λ_L", "ρ_L"],
            [
                [label(d, r[d]) for d in cols] + [fmt_time(r["T_ns"]), r["lambda_L"], f"{r['rho_L']:.3f}"]
                for r in fastest
            ],
            left=len(cols),
        )
    )
    return Section("best", "Best configurations", "".join(parts))


def _delta(ns: float) -> str:
    return "unbounded" if math.isinf(ns) else "+" + fmt_time(ns)


def _values(rows: list, dim: str) -> list:
    return sorted({r[dim] for r in rows if r.get(dim) is not None}, key=lambda v: (isinstance(v, str), v))


def _heatmaps(rows: list, dims: list, tol: str | None, pct: str) -> Section | None:
    pairs = [(a, b) for i, a in enumerate(dims) for b in dims[i + 1 :]][:MAX_HEATMAPS]
    if not pairs:
        return None
    metric = (lambda r: headroom(r, tol) / 1e3) if tol else (lambda r: r["T_ns"] / 1e3)
    name = f"median ΔL within {pct} % (µs)" if tol else "median T (µs)"
    figs = [figure(_heatmap_plot, rows, a, b, metric, name) for a, b in pairs]
    body = f"<p>One map per pair of swept dimensions: {esc(name)}, over the other dimensions.</p>" + "".join(figs)
    return Section("heatmaps", "Heat maps", body)


def _heatmap_plot(rows: list, xdim: str, ydim: str, metric, name: str, path: str) -> list:
    ok = [r for r in rows if not r.get("error")]
    xs, ys = _values(ok, xdim), _values(ok, ydim)
    cells = {}
    for r in ok:
        cells.setdefault((r[xdim], r[ydim]), []).append(metric(r))
    grid = [[statistics.median(cells[(x, y)]) if (x, y) in cells else math.nan for x in xs] for y in ys]
    finite = [v for row in grid for v in row if math.isfinite(v)]
    top = max(finite) if finite else 1.0
    shown = [[top if math.isinf(v) else v for v in row] for row in grid]
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(max(4.5, 0.9 * len(xs) + 2.5), max(3.0, 0.5 * len(ys) + 1.8)))
    im = ax.imshow(shown, cmap="viridis", aspect="auto", origin="lower")
    ax.grid(False)
    ax.set_xticks(range(len(xs)), [label(xdim, x) for x in xs], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(ys)), [label(ydim, y) for y in ys], fontsize=8)
    ax.set_xlabel(xdim)
    ax.set_ylabel(ydim)
    if len(xs) * len(ys) <= 100:
        for j, row in enumerate(grid):
            for i, v in enumerate(row):
                text = "∞" if math.isinf(v) else ("" if math.isnan(v) else f"{v:.3g}")
                bright = math.isfinite(v) and finite and (v - min(finite)) > 0.6 * (top - min(finite))
                ax.text(i, j, text, ha="center", va="center", fontsize=7, color="black" if bright else "white")
    fig.colorbar(im, ax=ax, label=name)
    ax.set_title(f"{ydim} × {xdim}")
    return _save(fig, path)


def _failures(rows: list) -> Section | None:
    bad = [r for r in rows if r.get("error")]
    if not bad:
        return None
    by_error = {}
    for r in bad:
        by_error.setdefault(r["error"], []).append(r)
    listed = [(len(v), label("input", v[0]["input"]), err) for err, v in by_error.items()]
    return Section("failures", "Failed points", table(["points", "first input", "error"], listed, left=0))


def _inputs(spec) -> Section:
    with open(spec.path, encoding="utf-8") as f:
        text = f.read()
    command = "latitude " + shlex.join(sys.argv[1:])
    body = f"<p>Spec {esc(os.path.abspath(spec.path))}:</p><pre>{esc(text)}</pre>"
    body += f"<p>Command (run in {esc(os.getcwd())}):</p><pre id='command'>{esc(command)}</pre>"
    return Section("inputs", "Spec and command", body)
