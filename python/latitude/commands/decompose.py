"""`latitude decompose GRAPH|TRACE`: each rank's predicted time split into computation,
network, MPI stack and synchronization, per rank, per MPI function and overall
(latitude.decomposition)."""

from __future__ import annotations

from latitude.commands.model_args import add_model_args, params_from_args
from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph


def register(sub) -> None:
    p = sub.add_parser(
        "decompose",
        help="where MPI time goes: computation, network, MPI stack, synchronization",
        description="Split every rank's predicted time into computation, network (latency and "
        "bandwidth terms), MPI software stack (o, O, protocol set-up) and synchronization (waiting "
        "for the partner), per rank, per MPI function and overall (docs/analysis.md). Given a "
        "trace, the measured time per MPI function stands beside the model's split.",
    )
    p.add_argument("graph", help="GOAL file, job file, or a trace (directory or rank-0 file)")
    add_schedule_args(p)
    add_cache_arg(p)
    add_model_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/json.md, times in ns)")
    p.add_argument("--csv", metavar="F", help="write the per-rank, per-call and total rows as CSV")
    p.add_argument("--plot", metavar="F", help="stacked bars per rank (PNG/SVG/PDF by extension; none: both)")
    p.set_defaults(func=run)


def run(args) -> int:
    from latitude import decomposition
    from latitude.report import print_json

    params = params_from_args(args)
    graph = load_graph(args, calls=True)
    calls = graph.report.stats.get("calls") if graph.report is not None else None
    d = graph.decompose(params)
    if args.csv:
        decomposition.write_csv(d, args.csv)
    if args.plot:
        decomposition.plot(d, args.plot)
    if args.json:
        print_json(d.to_dict())
        return 0
    _print(d, calls is not None)
    return 0


def _print(d, measured: bool) -> None:
    from rich.table import Table

    from latitude.report import console
    from latitude.units import fmt_time

    con = console()
    cols = ("compute_ns", "network_ns", "stack_ns", "sync_ns")
    t = Table(title=f"Where the time goes (T = {fmt_time(d.runtime_ns)}), summed over ranks")
    for c in ("", "computation", "network", "MPI stack", "synchronization"):
        t.add_column(c, justify="right")
    whole = sum(d.total[c] for c in cols) or 1.0
    t.add_row("time", *(fmt_time(d.total[c]) for c in cols))
    t.add_row("share", *(f"{100 * d.total[c] / whole:.1f} %" for c in cols))
    con.print(t)
    title = "Per MPI function (model; measured: the traced run's time in the calls)" if measured else "Per op kind"
    t = Table(title=title)
    for c in ("call", "calls", "network", "stack", "sync", "model MPI") + (("measured",) if measured else ()):
        t.add_column(c, justify="right" if c != "call" else "left", no_wrap=True)
    for c in d.per_call:
        mpi = c["network_ns"] + c["stack_ns"] + c["sync_ns"]
        row = [c["call"], f"{c['count']:,}", *(fmt_time(c[k]) for k in cols[1:]), fmt_time(mpi)]
        if measured:
            row.append(fmt_time(c["measured_ns"]))
        t.add_row(*row)
    con.print(t)
    title = "Per rank (model; measured: the traced run's span and its time in MPI calls)" if measured else "Per rank"
    t = Table(title=title)
    extra = ("measured span", "measured MPI") if measured else ()
    for c in ("rank", "computation", "network", "MPI stack", "synchronization", *extra):
        t.add_column(c, justify="right")
    for r in d.per_rank[:64]:
        more = [fmt_time(r[k]) for k in ("measured_span_ns", "measured_mpi_ns") if k in r]
        t.add_row(str(r["rank"]), *(fmt_time(r[c]) for c in cols), *more)
    if len(d.per_rank) > 64:
        t.caption = f"first 64 of {len(d.per_rank):,} ranks (--json or --csv for all)"
    con.print(t)
