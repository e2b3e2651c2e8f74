"""`latitude report`: one self-contained HTML page (latitude.htmlpage) about one input at one
parameter point: the prediction and its critical-path breakdown, the runtime-vs-ΔL curve with
the 1 / 2 / 5 % zones and the critical latencies, λ_L and ρ_L along it, the per-rank table,
the L × G tolerance map when asked, a topology comparison when asked, where the time goes
(latitude.decomposition), and the inputs with the exact command.

The page is a list of sections built by the functions in :data:`SECTIONS`, in order; each
takes the :class:`Context` and returns a Section or None (nothing to show). A new analysis
is one more function in that list.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass, field

from latitude import htmlpage, plots
from latitude.compare import plot as plot_comparison
from latitude.decomposition import plot as decomposition_plot
from latitude.htmlpage import Section, esc, figure, key_values, table
from latitude.report import PATH_COMPONENTS, tolerance_rows
from latitude.units import fmt_time

# Ranks shown in the per-rank table (largest critical-path time first).
MAX_RANK_ROWS = 256
# Critical latencies listed (the first ones after the baseline).
MAX_BREAKPOINT_ROWS = 50
# MPI functions listed in the decomposition (most MPI time first).
MAX_CALL_ROWS = 30
# Graphs above this size get no decomposition in the report (it holds ~76 bytes per operation).
MAX_DECOMPOSE_VERTICES = 20_000_000


@dataclass
class Context:
    """Everything a section may draw on."""

    graph: object  # latitude.graph.Graph
    params: object  # latitude.params.Params
    pcts: list
    command: str
    inputs: list  # (what, path) pairs
    curve_range: object = None  # (lo, hi) ns of L, or a function of the Tolerance giving it
    tolerance_map: object | None = None  # analysis.ToleranceMap, when asked
    version: str = ""
    comparison: object | None = None  # compare.Comparison over machine files, when asked
    cache: dict = field(default_factory=dict)

    def prediction(self):
        if "pred" not in self.cache:
            self.cache["pred"] = self.graph.predict(self.params)
        return self.cache["pred"]

    def tolerance(self):
        if "tol" not in self.cache:
            self.cache["tol"] = self.graph.tolerance(self.pcts, param="L", params=self.params)
        return self.cache["tol"]

    def sensitivity(self):
        """T(L) on the curve's range: its pieces and critical latencies, exact."""
        if "sens" not in self.cache:
            rng = self.curve_range
            lo, hi = rng(self.tolerance()) if callable(rng) else rng
            self.cache["sens"] = self.graph.sensitivity(lo, hi, param="L", params=self.params)
        return self.cache["sens"]


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "–"


def prediction_section(ctx: Context) -> Section:
    p = ctx.prediction()
    info = ctx.graph.info
    lam, lam_left = p.lambda_, p.lambda_left
    slope_l = f"{lam['L']:,}" if lam["L"] == lam_left["L"] else f"{lam['L']:,} (right) / {lam_left['L']:,} (left)"
    body = f'<p class="big" id="runtime">T = {esc(fmt_time(p.runtime_ns))}</p>' + key_values(
        [
            ("graph", f"{info['ranks']:,} ranks, {info['vertices']:,} operations, {info['messages']:,} messages"),
            ("parameters", ctx.params.describe()),
            ("runtime T", f"{p.runtime_ns:,.3f} ns"),
            ("λ_L = ∂T/∂L", f"{slope_l} latency terms on the critical path"),
            ("λ_G = ∂T/∂G", f"{lam['G']:,} bytes on the critical path (minus one per message)"),
            ("λ_o = ∂T/∂o", f"{lam['o']:,}"),
            ("ρ_L", f"{p.rho_L:.4f}: share of T spent in network latency (L·λ_L/T)"),
        ]
    )
    return Section("prediction", "Prediction", body)


def critical_path_section(ctx: Context) -> Section:
    p = ctx.prediction()
    cp = p.critical_path
    rows = [(name, fmt_time(cp[key]), _pct(cp[key], p.runtime_ns)) for name, key in PATH_COMPONENTS]
    body = f"<p>{cp['messages']:,} messages and {cp['steps']:,} steps on the critical path; its steps sum to T.</p>"
    return Section("critical-path", "Critical path", body + table(["component", "time", "share of T"], rows))


def tolerance_section(ctx: Context) -> Section:
    tol = ctx.tolerance()
    rows = tolerance_rows(tol)
    sens = ctx.sensitivity()
    curve = figure(
        plots.runtime_plot,
        sens,
        tol,
        caption="Predicted runtime vs added latency; shaded: the 1 / 2 / 5 % zones; dots: critical latencies.",
    )
    body = (
        f"<p>The largest L keeping T within x % of T(L₀ = {esc(fmt_time(tol.baseline))}) = "
        f"{esc(fmt_time(tol.baseline_runtime))}, the other parameters fixed (exact).</p>"
        + table(["slowdown ≤", "largest L", "ΔL over baseline", "runtime limit"], rows)
        + curve
    )
    return Section("tolerance", "Latency tolerance", body)


def sensitivity_section(ctx: Context) -> Section:
    sens = ctx.sensitivity()
    bps = sens.breakpoints
    rows = [
        (f"+{fmt_time(float(b.at) - ctx.params.L)}", fmt_time(float(b.at)), b.left.slope, b.right.slope)
        for b in bps[:MAX_BREAKPOINT_ROWS]
    ]
    more = (
        f"<p class='note'>{len(bps) - MAX_BREAKPOINT_ROWS:,} more not listed.</p>"
        if len(bps) > MAX_BREAKPOINT_ROWS
        else ""
    )
    body = (
        f"<p>{len(bps):,} critical latencies on [{esc(fmt_time(sens.lo))}, {esc(fmt_time(sens.hi))}]: "
        "where λ_L changes (the critical path changes).</p>"
        + figure(plots.sensitivity_plot, sens, caption="λ_L (step function) and ρ_L along the same range.")
        + (table(["ΔL", "L", "λ_L left", "λ_L right"], rows, left=0) if rows else "")
        + more
    )
    return Section("sensitivity", "Latency sensitivity λ_L and ρ_L", body)


def ranks_section(ctx: Context) -> Section:
    rows = ctx.prediction().per_rank_rows()

    def total(r):
        return r["calc_ns"] + r["overhead_ns"] + r["network_ns"] + r["gap_ns"]

    on_path = sorted((r for r in rows if total(r) > 0), key=lambda r: -total(r))
    shown = [
        (
            r["rank"],
            fmt_time(r["calc_ns"]),
            fmt_time(r["overhead_ns"]),
            fmt_time(r["network_ns"]),
            fmt_time(r["gap_ns"]),
            r["messages"],
        )
        for r in on_path[:MAX_RANK_ROWS]
    ]
    note = f"<p>{len(on_path):,} of {len(rows):,} ranks lie on the critical path (largest share first)"
    note += f"; the first {MAX_RANK_ROWS} shown.</p>" if len(on_path) > MAX_RANK_ROWS else ".</p>"
    headers = ["rank", "computation", "overhead", "network wait", "NIC gap", "messages in"]
    return Section("ranks", "Per rank", note + f'<div class="scroll">{table(headers, shown, left=0)}</div>')


def map_section(ctx: Context) -> Section | None:
    tmap = ctx.tolerance_map
    if tmap is None:
        return None
    body = "<p>The (L, G) points whose runtime stays within x % of T at the baseline (exact boundary points).</p>"
    return Section("map", "L × G tolerance map", body + figure(plots.map_plot, tmap))


def comparison_section(ctx: Context) -> Section | None:
    cmp = ctx.comparison
    if cmp is None:
        return None
    first = cmp.results[0].params
    fx = fmt_time if first.kind(cmp.param) == "time" else (lambda x: f"{x:.6g} ns/B")
    rows = []
    for r in cmp.results:
        tols = ["unbounded" if t["max_ns"] is None else fx(t["max_ns"]) for t in r.tolerance.to_dict()["tolerance"]]
        net = r.params.machine.describe(short=True) if r.params.machine else "flat network"
        lam = r.prediction.lambda_.get(cmp.param, 0)
        rows.append((r.name, net, fx(r.params.value(cmp.param)), fmt_time(r.prediction.runtime_ns), f"{lam:,}", *tols))
    headers = ["machine", "network", cmp.param, "T", f"λ_{cmp.param}"] + [
        f"largest {cmp.param} at {float(p):g} %" for p in cmp.pcts
    ]
    body = (
        f"<p>The same workload on {len(cmp.results)} machine files: T at each machine's own values, the links of "
        f"class {esc(cmp.param)} crossed on the critical path (λ), and the largest {esc(cmp.param)} keeping each "
        "machine within x % of its own T, the other parameters fixed (exact).</p>"
        + table(headers, rows, left=2)
        + figure(plot_comparison, cmp, caption=f"Runtime and slowdown against {cmp.param}, one curve per machine.")
    )
    return Section("comparison", "Topology comparison", body)


def decomposition_section(ctx: Context) -> Section | None:
    """Where the time goes: the decomposition (latitude.decomposition) of every rank's time."""
    if ctx.graph.info["vertices"] > MAX_DECOMPOSE_VERTICES:
        body = (
            f"<p class='note'>Not computed for a graph this large (more than {MAX_DECOMPOSE_VERTICES:,} "
            "operations: about 76 bytes per operation); run <code>latitude decompose</code>.</p>"
        )
        return Section("decomposition", "Where the time goes", body)
    d = ctx.graph.decompose(ctx.params)
    whole = sum(d.total.values())
    parts = [
        ("computation", "compute_ns"),
        ("network", "network_ns"),
        ("MPI stack", "stack_ns"),
        ("synchronization", "sync_ns"),
    ]
    totals = [(name, fmt_time(d.total[key]), _pct(d.total[key], whole)) for name, key in parts]
    measured = any("measured_ns" in c for c in d.per_call)
    calls = sorted(d.per_call, key=lambda c: -(c["network_ns"] + c["stack_ns"] + c["sync_ns"]))[:MAX_CALL_ROWS]
    rows = [
        (c["call"], f"{c['count']:,}", fmt_time(c["network_ns"]), fmt_time(c["stack_ns"]), fmt_time(c["sync_ns"]))
        + ((fmt_time(c["measured_ns"]) if c.get("measured_ns") is not None else "–",) if measured else ())
        for c in calls
    ]
    headers = ["MPI function", "calls", "network", "stack", "sync"] + (["measured"] if measured else [])
    body = (
        "<p>Every rank's predicted time split into computation, network (latency and bandwidth terms), "
        "the MPI software stack (o, O, protocol set-up) and synchronization (waiting for the partner); "
        "each rank's parts sum to its finish time. Summed over ranks:</p>"
        + table(["part", "time (all ranks)", "share"], totals)
        + figure(decomposition_plot, d, caption="Each rank's time by part (stacked).")
        + f"<p>Per MPI function ({'measured time beside the model' if measured else 'a GOAL or job graph: named by operation'}):</p>"
        + table(headers, rows)
    )
    return Section("decomposition", "Where the time goes", body)


def inputs_section(ctx: Context) -> Section:
    rows = []
    for what, path in ctx.inputs:
        if path and os.path.exists(path):
            st = os.stat(path)
            stamp = datetime.datetime.fromtimestamp(st.st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            size = f"{st.st_size:,} bytes" if os.path.isfile(path) else "directory"
            rows.append((what, os.path.abspath(path), size, stamp))
        else:
            rows.append((what, path or "–", "", ""))
    made = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    body = (
        table(["input", "path", "size", "modified"], rows, left=2)
        + f"<p>Command (run in {esc(os.getcwd())}):</p><pre id='command'>{esc(ctx.command)}</pre>"
        + f"<p class='note'>latitude {esc(ctx.version)}, {esc(made)}. Parameters: {esc(ctx.params.describe())}</p>"
    )
    return Section("inputs", "Inputs and command", body)


SECTIONS = [
    prediction_section,
    critical_path_section,
    tolerance_section,
    sensitivity_section,
    ranks_section,
    map_section,
    comparison_section,
    decomposition_section,
    inputs_section,
]


def build(ctx: Context, title: str) -> str:
    sections = [s for s in (build_section(ctx) for build_section in SECTIONS) if s is not None]
    return htmlpage.page(title, ctx.params.describe(), sections)


def write_report(ctx: Context, path: str, title: str) -> None:
    htmlpage.write(path, build(ctx, title))
