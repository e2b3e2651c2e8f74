"""Arguments shared by the commands that build a PMPI library (or program) with the MPI's
compiler wrapper and run the user's launcher: trace, inject, calibrate, validate."""

from __future__ import annotations

from latitude.errors import InputError


def add_launch_args(
    p,
    builds: str,
    command_help: str,
    *,
    metavar: str = "-- LAUNCHER ARGS",
    rebuild: bool = True,
    print_command: bool = False,
    required: bool = True,
) -> None:
    """--mpicc, optionally --rebuild and --print-command, and the launch command itself;
    `builds` names what is built ("the tracer", "the injector", ...)."""
    p.add_argument(
        "--mpicc",
        metavar="PATH",
        help=f"MPI compiler wrapper to build {builds} with (default: the one next to the launcher, else mpicc on PATH)",
    )
    if rebuild:
        p.add_argument("--rebuild", action="store_true", help=f"rebuild the cached {builds.removeprefix('the ')}")
    if print_command:
        p.add_argument(
            "--print-command", action="store_true", help=f"print the launch command with {builds}'s options and exit"
        )
    p.add_argument("command", nargs="+" if required else "*", metavar=metavar, help=command_help)


def require_positive(args, names: tuple[str, ...], noun: str) -> None:
    """Each option (argparse dest) at least 1, else a one-line error naming it."""
    for name in names:
        value = getattr(args, name)
        if value < 1:
            raise InputError("--" + name.replace("_", "-"), f"expected a positive {noun}, got {value}")
