"""Errors a user can cause, reported as one line: ``latitude: <where>: <what was expected>``.

Every layer raises :class:`InputError` (or the Rust core's ``latitude._core.InputError``,
which the CLI treats the same) for bad input; the CLI prints ``str(err)`` and exits 2.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def printable(text: str) -> str:
    """`text` with control characters escaped (``\\n``, ``\\x1b``): input shown in a message
    (a file name, a token, a program's output) cannot break the line or drive the terminal."""
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


class LatitudeError(Exception):
    """Base class for errors Latitude reports without a traceback."""

    exit_code = 1


class InputError(LatitudeError, ValueError):
    """Bad user input: a file, a command-line value, an environment setting.

    ``where`` is ``path:line`` (or ``path``, or an option name such as ``-L``).
    """

    exit_code = 2

    def __init__(self, where: str | None, what: str):
        self.where = printable(str(where)) if where is not None else None
        self.what = printable(str(what))
        where, what = self.where, self.what
        super().__init__(f"{where}: {what}" if where else what)


class ToolError(LatitudeError):
    """An external tool we drive (mpicc, mpirun, HiGHS) failed; the message says how."""

    exit_code = 1
