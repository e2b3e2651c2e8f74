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

__all__ = ["__version__", "load", "generate", "Graph", "Params", "InputError"]

from latitude.errors import InputError  # noqa: E402


def __getattr__(name):  # lazy: `import latitude` works before the extension is built
    if name in ("load", "Graph"):
        from latitude import api

        return getattr(api, name)
    if name == "generate":
        from latitude.jobs import generate

        return generate
    if name == "Params":
        from latitude.params import Params

        return Params
    raise AttributeError(name)
