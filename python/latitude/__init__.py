"""Latitude: how much network latency and bandwidth loss an MPI application tolerates, and why.

From one traced run Latitude builds the application's execution graph, prices it with the
LogGPS model and answers: predicted runtime T(L, G, o, ...), latency sensitivity
lambda_L = dT/dL, the latency ratio rho_L, critical latencies and x % tolerances.

    import latitude
    g = latitude.load("app.goal")
    r = g.predict(L="3us", o="1.5us", G="0.018ns")
    w = latitude.generate("cfd.job")      # a synthetic workload (docs/workloads.md)
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "load", "generate", "Graph", "Prediction", "Params", "ScheduleOptions", "InputError"]

from latitude.errors import InputError  # noqa: E402


def __getattr__(name):  # on first use: `import latitude` (and so the CLI) stays cheap
    if name == "load":
        from latitude.api import load

        return load
    if name in ("Graph", "Prediction", "generate"):
        from latitude.graph import Graph, Prediction

        return {"Graph": Graph, "Prediction": Prediction, "generate": Graph.from_job}[name]
    if name == "Params":
        from latitude.params import Params

        return Params
    if name == "ScheduleOptions":
        from latitude.traces import ScheduleOptions

        return ScheduleOptions
    raise AttributeError(name)
