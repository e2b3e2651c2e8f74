"""Errors a user can cause, reported as one line: ``latitude: <where>: <what was expected>``.

Every layer raises :class:`InputError` (or the Rust core's ``latitude._core.InputError``,
which the CLI treats the same) for bad input; the CLI prints ``str(err)`` and exits 2.
"""

from __future__ import annotations


class LatitudeError(Exception):
    """Base class for errors Latitude reports without a traceback."""

    exit_code = 1


class InputError(LatitudeError, ValueError):
    """Bad user input: a file, a command-line value, an environment setting.

    ``where`` is ``path:line`` (or ``path``, or an option name such as ``-L``).
    """

    exit_code = 2

    def __init__(self, where: str | None, what: str):
        self.where = where
        self.what = what
        super().__init__(f"{where}: {what}" if where else what)


class ToolError(LatitudeError):
    """An external tool we drive (mpicc, mpirun, HiGHS) failed; the message says how."""

    exit_code = 1
