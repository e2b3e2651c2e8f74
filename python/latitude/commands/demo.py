"""`latitude demo`: the full analysis of the bundled example, with nothing to prepare."""
from __future__ import annotations

from latitude.params import add_model_args, params_from_args


def register(sub) -> None:
    p = sub.add_parser("demo", help="analyse the bundled example (no input needed)",
                       description="Run Latitude's analysis on the bundled example: a 16-rank 2-D halo "
                                   "exchange with a periodic allreduce (see examples/).")
    add_model_args(p)
    p.add_argument("--out", metavar="DIR", default="latitude-demo", help="where plots and CSV go (default ./latitude-demo)")
    p.set_defaults(func=run)


def example_path(name: str = "halo2d-16.goal") -> str:
    from importlib import resources

    return str(resources.files("latitude").joinpath("data", "examples", name))


def run(args) -> int:
    from latitude.api import load
    from latitude.report import console, prediction_tables

    con = console()
    path = example_path()
    graph = load(path)
    con.print(f"[bold]Latitude demo[/bold]: {graph.info['ranks']}-rank halo exchange + allreduce ({path})\n")
    pred = graph.predict(params_from_args(args))
    for table in prediction_tables(pred, graph.info):
        con.print(table)
        con.print()
    return 0
