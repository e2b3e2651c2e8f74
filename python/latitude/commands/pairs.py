"""`latitude pairs GRAPH --machine m.toml`: pairwise sensitivities λ_L^{ij}, λ_G^{ij}."""

from __future__ import annotations

from latitude.commands.model_args import add_model_args, params_from_args
from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph
from latitude.outputs import refuse_input

EPILOG = """\
examples:
  latitude pairs app.goal --machine m.toml -o pairs.csv --plot pairs.png
  latitude pairs app.goal --machine m.toml --nodes nodes.csv --json

λ_L^{ij} = ∂T/∂L_ij counts the latency terms the critical path's messages between ranks i
and j pay (L_ij: the pair's end-to-end latency on the machine), λ_G^{ij} their bytes. Only
pairs on the critical path are listed (sparse); they sum to the path's latency terms.
See docs/network.md."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser(
        "pairs",
        help="pairwise latency and bandwidth sensitivities per pair of ranks (and nodes)",
        description="Pairwise sensitivities λ_L^{ij} = ∂T/∂L_ij and λ_G^{ij} = ∂T/∂G_ij, read exactly "
        "off the critical path of one prediction, per pair of ranks and per pair of nodes.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("graph", help="GOAL file, job file, or a trace (directory or rank-0 file)")
    add_schedule_args(p)
    add_cache_arg(p)
    add_model_args(p, output_o=True)
    p.add_argument("-o", "--output", metavar="CSV", help="rank pairs as CSV (with their nodes, λ_L, λ_G, time)")
    p.add_argument("--nodes", metavar="CSV", help="node pairs as CSV (the rank pairs summed per node pair)")
    p.add_argument("--plot", metavar="FILE", help="heat maps of λ_L per rank pair and per node pair (.png/.svg)")
    p.add_argument("--top", type=int, default=10, metavar="N", help="pairs shown in the table (default 10)")
    p.add_argument("--json", action="store_true", help="machine-readable output (every pair, times in ns)")
    p.set_defaults(func=run)


def run(args) -> int:
    from rich.table import Table

    from latitude.plots import pairs_heatmap
    from latitude.report import console, print_json
    from latitude.units import fmt_time

    params = params_from_args(args)
    refuse_input(args.nodes, args.graph, "--nodes")  # load_graph checks -o and --plot
    graph = load_graph(args)
    pairs = graph.pairs(params)
    written = []
    if args.output:
        pairs.write_csv(args.output)
        written.append(args.output)
    if args.nodes:
        pairs.write_csv(args.nodes, nodes=True)
        written.append(args.nodes)
    if args.plot:
        written += pairs_heatmap(pairs, args.plot)
    if args.json:
        print_json(pairs.to_dict())
        return 0
    pred = pairs.prediction
    con = console()
    con.print(
        f"T = {fmt_time(pred.runtime_ns)}; {len(pairs):,} rank pairs ({len(pairs.node_rows()):,} node pairs) on the "
        f"critical path, {pairs.lambda_L_total:,} latency terms (Σ λ_L^ij)"
    )
    for title, rows, ka, kb in (
        ("rank pairs", pairs.rows(), "rank_a", "rank_b"),
        ("node pairs", pairs.node_rows(), "node_a", "node_b"),
    ):
        rows = sorted(rows, key=lambda r: (-r["time_ns"], r[ka], r[kb]))[: args.top]
        t = Table(title=f"Top {len(rows)} {title} by network time on the critical path")
        for col in (ka.split("_")[0] + "s", "λ_L", "λ_G (bytes)", "network time", "share of T"):
            t.add_column(col, justify="right")
        for r in rows:
            share = r["time_ns"] / pred.runtime_ns if pred.runtime_ns else 0.0
            t.add_row(
                f"{r[ka]} – {r[kb]}",
                f"{r['lambda_L']:,}",
                f"{r['lambda_G']:,}",
                fmt_time(r["time_ns"]),
                f"{100 * share:.2f} %",
            )
        con.print(t)
    for path in written:
        con.print(f"wrote {path}")
    return 0
