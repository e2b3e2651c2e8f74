"""Human-readable reports (rich tables on stdout) and JSON output helpers."""

from __future__ import annotations

import json
import math
import sys

from latitude.units import fmt_time

# The critical path's components, as tables name them, and their keys in Prediction.critical_path.
PATH_COMPONENTS = (
    ("computation", "calc_ns"),
    ("latency (L)", "latency_ns"),
    ("bandwidth (G)", "bandwidth_ns"),
    ("overhead (o, O)", "overhead_ns"),
    ("NIC gap (g)", "gap_ns"),
)


def console():
    """The stdout console of reports. A closed pipe (`| head -1`) is raised as
    BrokenPipeError for the CLI to end quietly; rich's own handler exits with status 1."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _Console(highlight=False, soft_wrap=False)


def print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2, default=_jsonable, allow_nan=False)
    sys.stdout.write("\n")


def _jsonable(x):
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


# Long tables show their first and last rows with a count of the rest (--all: every row).
HEAD_ROWS = TAIL_ROWS = 10


def add_rows(table, rows, fmt, show_all: bool = False, what: str = "rows") -> None:
    """Add fmt(row) for each row to a rich table, or, for more than HEAD_ROWS + TAIL_ROWS + 1
    rows without show_all, the first and last ones around a row of ⋮ and a caption counting
    the rest. `rows` is a sequence; only the rows shown are formatted."""
    n = len(rows)
    if show_all or n <= HEAD_ROWS + TAIL_ROWS + 1:
        for r in rows:
            table.add_row(*fmt(r))
        return
    for r in rows[:HEAD_ROWS]:
        table.add_row(*fmt(r))
    table.add_row(*(["⋮"] * len(table.columns)))
    for r in rows[n - TAIL_ROWS :]:
        table.add_row(*fmt(r))
    table.caption = f"first and last {HEAD_ROWS} of {n:,} {what}; --all prints every one"


def write_csv_rows(path: str, columns, rows) -> None:
    """Rows (dicts) as CSV with these columns, written atomically (latitude.outputs)."""
    import csv

    from latitude.outputs import open_atomic

    with open_atomic(path, "CSV", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:5.1f} %" if whole else "    –"


def prediction_tables(pred, info: dict | None = None, top_ranks: int = 8):
    """Tables for one prediction: summary, critical-path breakdown, top ranks."""
    from rich.table import Table

    t = pred.runtime_ns
    lam, lam_l = pred.lambda_, pred.lambda_left
    head = Table(title="Prediction", show_header=False, box=None, pad_edge=False)
    head.add_column(style="bold")
    head.add_column()
    if info:
        head.add_row("graph", f"{info['ranks']} ranks, {info['vertices']:,} ops, {info['messages']:,} messages")
    head.add_row("parameters", pred.params.describe())
    head.add_row("runtime T", f"{fmt_time(t)}  ({t:,.3f} ns)")

    def slope(k, unit=""):
        r, l = lam[k], lam_l[k]
        return f"{r:,}{unit}" if r == l else f"{r:,}{unit} (right) / {l:,}{unit} (left: critical point)"

    m = pred.params.machine
    if m is None:
        head.add_row("λ_L = ∂T/∂L", slope("L") + "  latency terms on the critical path")
    else:
        head.add_row("machine", m.describe())
        what = "latency terms between nodes" if m.has_network else "latency terms between nodes (L)"
        head.add_row("λ_L = ∂T/∂L", slope("L") + f"  {what}")
    head.add_row("λ_G = ∂T/∂G", slope("G") + "  bytes on the critical path (minus one per message)")
    head.add_row("λ_o = ∂T/∂o", slope("o"))
    if m is not None:
        for name in m.param_names:
            unit = " (bytes)" if pred.params.kind(name) == "gap" else ""
            head.add_row(f"λ_{name}", slope(name) + unit + f"  ρ = {pred.rho[name]:.4f}")
        head.add_row("latency terms", f"{pred.latency_terms:,}  every pair's latency paid on the critical path")
    head.add_row("ρ_L", f"{pred.rho_L:.4f}  share of T spent in network latency (L·λ_L/T)")

    cp = pred.critical_path
    br = Table(title=f"Critical path: {cp['messages']:,} messages, {cp['steps']:,} steps")
    br.add_column("component")
    br.add_column("time", justify="right")
    br.add_column("share", justify="right")
    pair_labels = {"latency_ns": "latency (pairs' L)", "bandwidth_ns": "bandwidth (pairs' G)"}
    for name, key in PATH_COMPONENTS:
        if m is not None:
            name = pair_labels.get(key, name)
        if key == "gap_ns" and not cp[key]:
            continue
        br.add_row(name, fmt_time(cp[key]), pct(cp[key], t))
    rows = sorted(
        pred.per_rank_rows(), key=lambda r: -(r["calc_ns"] + r["overhead_ns"] + r["network_ns"] + r["gap_ns"])
    )
    rows = [r for r in rows if r["calc_ns"] + r["overhead_ns"] + r["network_ns"] + r["gap_ns"] > 0][:top_ranks]
    ranks = Table(title=f"Ranks on the critical path (top {len(rows)})")
    for col in ("rank", "computation", "overhead", "network wait", "messages in"):
        ranks.add_column(col, justify="right")
    for r in rows:
        ranks.add_row(
            str(r["rank"]),
            fmt_time(r["calc_ns"]),
            fmt_time(r["overhead_ns"]),
            fmt_time(r["network_ns"]),
            str(r["messages"]),
        )
    return [head, br, ranks]


def tolerance_rows(tol, fx=fmt_time) -> list:
    """One row per limit: slowdown, largest value, its excess over the baseline, runtime limit."""
    rows = []
    for r in tol.to_dict()["tolerance"]:
        m = r["max_ns"]
        rows.append(
            (
                f"{r['pct']:g} %",
                "unbounded" if m is None else fx(m),
                "unbounded" if m is None else "+" + fx(r["delta_ns"]),
                fmt_time(r["runtime_limit_ns"]),
            )
        )
    return rows
