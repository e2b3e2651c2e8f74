"""Errors a user can cause, reported as one line: ``latitude: <where>: <what was expected>``.

:class:`InputError` (bad input; exit code 2) and :class:`LatitudeError` (the base of every
error reported without a traceback) are defined in the Rust core, which raises them too:
``latitude.errors.InputError is latitude._core.InputError``. ``InputError(where, what)``
prints as ``where: what`` and keeps both as attributes.
"""

from __future__ import annotations

import re

try:
    from latitude._core import InputError, LatitudeError
except ImportError as err:  # pragma: no cover - broken install
    raise ImportError(f"the Latitude extension module is not built ({err}); run `pip install .`") from None

__all__ = ["InputError", "LatitudeError", "ToolError", "printable"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def printable(text: str) -> str:
    """`text` with control characters escaped (``\\n``, ``\\x1b``): input shown in a message
    (a file name, a token, a program's output) cannot break the line or drive the terminal.
    InputError does the same to its `where` and `what` (in the core: text::escape_controls)."""
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


class ToolError(LatitudeError):
    """An external tool we drive (mpicc, mpirun, HiGHS) failed; the message says how (exit code 1)."""
