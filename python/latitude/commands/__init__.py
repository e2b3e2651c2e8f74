"""CLI subcommands, one module each.

A command module defines ``register(subparsers)``, which adds its subparser and sets
``func`` to a ``run(args) -> int`` callable. :mod:`latitude.cli` imports the modules
listed in ``COMMANDS`` in this order (the order of ``latitude --help``).
"""

COMMANDS = [
    "demo",
    "trace",
    "schedule",
    "predict",
    "sensitivity",
    "tolerance",
    "lp",
    "pairs",
    "place",
    "compare",
    "decompose",
    "simulate",
    "generate",
    "convert",
    "calibrate",
    "measure_coll",
    "variability",
    "coll_model",
    "inject",
    "validate",
    "sweep",
    "report",
]
