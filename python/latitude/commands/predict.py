"""`latitude predict GRAPH`: runtime, λ_L, λ_G, λ_o, ρ_L and the critical path at one point."""

from __future__ import annotations

import sys

from latitude.commands.model_args import add_model_args, add_posterior_args, params_from_args
from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph


def register(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="predict runtime, latency sensitivity and the critical path",
        description="Price an execution graph with LogGPS in one pass: T, exact right/left "
        "derivatives λ_L, λ_G, λ_o, ρ_L and the critical path.",
    )
    p.add_argument("graph", help="GOAL or .lgraph file, a trace (directory or rank-0 file) or a job file")
    add_schedule_args(p)
    add_cache_arg(p)
    add_model_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/json.md, times in ns)")
    p.add_argument("--path", type=int, default=0, metavar="N", help="also show the last N steps of the critical path")
    add_posterior_args(p, "T's 95 %% credible interval", "one engine pass per draw")
    p.set_defaults(func=run)


def traced_run_check(graph, predicted_ns: float):
    """For a trace: how the traced run went (latitude.traced_run) and a warning if the
    prediction falls short of it for a reason the trace shows (a disturbed run). The
    analysis reads the whole trace: it is kept with the trace's cached graph."""
    from latitude.api import sniff

    if sniff(graph.path).name != "trace":
        return None, None
    from latitude import traced_run  # after the sniff: a GOAL or .lgraph does not pay for it

    entry = graph.cache_entry
    known, stored = entry.remembered("traced_run") if entry else (False, None)
    if known:
        run = traced_run.TracedRun(**stored) if stored is not None else None
    else:
        run = traced_run.analyse(graph.path)
        if entry:
            entry.remember("traced_run", run.to_dict() if run is not None else None)
    return run, traced_run.check(run, predicted_ns)


def machine_state(args, run) -> tuple[tuple[float | None, float | None], str | None]:
    """The traced run's probes (MPI_Init, MPI_Finalize) over its machine file's, and a warning
    when either differs by another machine state (latitude.traced_run.state_check)."""
    if run is None or not getattr(args, "machine", None):
        return (None, None), None
    from latitude import tomlfile, traced_run

    probe = tomlfile.read(args.machine)[0].get("fit", {}).get("probe_ns")
    ratios = traced_run.state_ratios(run, probe if isinstance(probe, (int, float)) else None)
    return ratios, traced_run.state_check(ratios, args.machine)


def call_cost_unused(graph, params) -> str | None:
    """A K the graph cannot use: it marks no collective call (a generated job, GOAL text
    without `//@call` lines), so K prices nothing and λ_K is 0."""
    if params.K and not graph.info.get("collective_calls"):
        return "K is set but the graph marks no collective calls (a generated job or GOAL text without //@call): K prices nothing here"
    return None


def credible(args, graph, params):
    """T's posterior predictive (latitude.bayes.credible) when --posterior is given."""
    if not args.posterior:
        return None
    from latitude import bayes
    from latitude.commands.launch_args import require_positive

    require_positive(args, ("draws",), "count")
    return bayes.credible(graph, params, bayes.Posterior.read(args.posterior), args.draws)


def run(args) -> int:
    from latitude.report import console, prediction_tables, print_json

    params = params_from_args(args)
    graph = load_graph(args)
    pred = graph.predict(params, path_steps=args.path)
    run_info, warning = traced_run_check(graph, pred.runtime_ns)
    (ratio, end_ratio), state = machine_state(args, run_info)
    warnings = [w for w in (warning, state, call_cost_unused(graph, params)) if w]
    cred = credible(args, graph, params)
    if args.json:
        out = pred.to_dict()
        if cred is not None:
            out["posterior"] = cred
        if args.path:
            out["path"] = pred.path()
        if run_info is not None:
            ratios = {"state_ratio": ratio, "end_state_ratio": end_ratio}
            out["traced_run"] = run_info.to_dict() | {k: v for k, v in ratios.items() if v is not None}
        out["warnings"] = warnings
        print_json(out)
        return 0
    for w in warnings:
        print(f"latitude: warning: {w}", file=sys.stderr)
    con = console()
    for table in prediction_tables(pred, graph.info):
        con.print(table)
        con.print()
    if cred is not None:
        from latitude.units import fmt_time

        r = cred["runtime_ns"]
        con.print(
            f"posterior ({cred['draws']} draws of {', '.join(cred['params'])}): T = {fmt_time(r['median'])}, "
            f"95 % credible interval [{fmt_time(r['ci95'][0])}, {fmt_time(r['ci95'][1])}]"
        )
    if args.path:
        from rich.table import Table

        from latitude.units import fmt_time

        t = Table(title=f"Last {len(pred.path())} steps of the critical path")
        for col in ("rank", "op", "step", "cost", "source"):
            t.add_column(col)
        for s in pred.path():
            t.add_row(str(s["rank"]), f"#{s['op']}", s["step"], fmt_time(s["cost_ns"]), s["where"])
        con.print(t)
    return 0
