"""`latitude demo`: the full analysis of the bundled example, with nothing to prepare."""

from __future__ import annotations

from latitude.commands.model_args import add_model_args, params_from_args


def register(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="analyse the bundled example (no input needed)",
        description="Run Latitude's analysis on the bundled example: a 16-rank 2-D halo "
        "exchange with a periodic allreduce (see examples/).",
    )
    add_model_args(p)
    p.add_argument(
        "--out", metavar="DIR", default="latitude-demo", help="where plots and CSV go (default ./latitude-demo)"
    )
    p.set_defaults(func=run)


def example_path(name: str = "halo2d-16.goal") -> str:
    from importlib import resources

    return str(resources.files("latitude").joinpath("data", "examples", name))


def run(args) -> int:
    import os
    import time

    from latitude.api import load
    from latitude.commands.sensitivity import print_tables, timing_line
    from latitude.commands.tolerance import report
    from latitude.plots import runtime_plot, sensitivity_plot
    from latitude.report import console, prediction_tables

    con = console()
    path = example_path()
    graph = load(path)
    params = params_from_args(args)
    con.print(f"[bold]Latitude demo[/bold]: {graph.info['ranks']}-rank halo exchange + allreduce ({path})\n")
    pred = graph.predict(params)
    for table in prediction_tables(pred, graph.info):
        con.print(table)
        con.print()
    t = time.perf_counter()
    tol = graph.tolerance((1, 2, 5), params=params)
    report(_Quiet(), graph, tol, time.perf_counter() - t)
    bounded = [r["max_ns"] for r in tol.to_dict()["tolerance"] if r["max_ns"] is not None]
    hi = params.L + 1.5 * max([m - params.L for m in bounded] + [20_000.0])
    t = time.perf_counter()
    sens = graph.sensitivity(params.L, max(hi, params.L + 60_000), params=params)
    elapsed = time.perf_counter() - t
    con.print()
    print_tables(sens, con)
    con.print(timing_line(sens, elapsed, time.perf_counter() - t))
    os.makedirs(args.out, exist_ok=True)
    written = runtime_plot(
        graph.sensitivity(params.L, hi, params=params),
        tol,
        os.path.join(args.out, "runtime.png"),
        title="Demo: predicted runtime vs added latency",
    )
    written += sensitivity_plot(
        sens, os.path.join(args.out, "sensitivity.png"), title="Demo: λ_L and ρ_L vs added latency"
    )
    con.print()
    for w in written:
        con.print(f"wrote {w}")
    return 0


class _Quiet:
    """Arguments for the tolerance report: a table only."""

    csv = plot = None
    json = False
