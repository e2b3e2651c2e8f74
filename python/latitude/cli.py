"""The ``latitude`` command: one entry point, one module per subcommand (latitude.commands)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from latitude import _core
from latitude.commands import COMMANDS
from latitude.errors import InputError, LatitudeError, printable
from latitude.launcher import Terminated, exit_on_signals


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`latitude predict: <what>`) and exit code 2."""

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or, when the command line `argv` names one, of that
    command alone (`latitude predict --help` is the same either way): each
    command module imports what its work needs, so registering all of them costs every
    command ~0.15 s of imports it never uses (python -X importtime)."""
    parser = _Parser(
        prog="latitude",
        description="Network latency and bandwidth tolerance of MPI applications "
        "(execution graphs priced with LogGPS).",
    )
    from latitude import __version__

    parser.add_argument("--version", action="version", version=f"latitude {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _named_command(argv) or COMMANDS:
        try:
            module = importlib.import_module(f"latitude.commands.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"latitude.commands.{name}":
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def _named_command(argv: list[str] | None) -> list[str]:
    """[the command] when the first argument names one; [] otherwise (no command, an option
    such as --help or --version, a misspelt name: the full parser lists and checks them)."""
    module = argv[0].replace("-", "_") if argv and "_" not in argv[0] else None
    return [module] if module in COMMANDS else []


def main(argv: list[str] | None = None) -> int:
    try:
        code = _run(argv)
        sys.stdout.flush()  # inside the try: a full disk or a closed pipe is reported here
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except OSError as err:  # writing stdout (`> /dev/full`) or a file no check caught first
        where = f"{err.filename}: " if err.filename is not None else "<stdout>: cannot write: "
        print(f"latitude: {printable(where)}{err.strerror or err}", file=sys.stderr)
        _drop_stdout()
        return 2


def _run(argv: list[str] | None) -> int:
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    exit_on_signals()  # SIGTERM/SIGHUP unwind the command: runs stopped, temp dirs removed
    try:
        _core.threads()  # a bad LATITUDE_THREADS is refused before any work
        return int(args.func(args) or 0)
    except InputError as err:
        print(f"latitude: {err}", file=sys.stderr)
        return 2
    except LatitudeError as err:
        print(f"latitude: {err}", file=sys.stderr)
        return 1
    except OverflowError as err:  # a value no check bounded; still the user's number
        print(f"latitude: a value is out of range: {printable(str(err))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("latitude: interrupted", file=sys.stderr)
        return 130
    except Terminated as sig:
        print(f"latitude: terminated by {sig}", file=sys.stderr)
        return 128 + sig.signum


def _quiet_broken_pipe() -> int:
    """`latitude ... | head -1`: the reader has what it wanted; exit quietly, as `cat` would
    (0: nothing went wrong on our side)."""
    _drop_stdout()
    return 0


def _drop_stdout() -> None:
    """Point fd 1 at /dev/null, so the interpreter's final flush of what is still buffered
    does not fail a second time (and print "Exception ignored ..." at exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
