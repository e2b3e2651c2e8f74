"""Keep what dependencies print out of our output.

Some releases of highspy print a banner to file descriptor 1 when ``highspy.Highs()`` is
constructed, before ``output_flag`` can be switched off; C code writes to the descriptor,
not to ``sys.stdout``, so only redirecting the descriptor itself keeps ``--json`` output
clean whatever a future release prints.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys


@contextlib.contextmanager
def stdout_silenced():
    """Send everything written to file descriptor 1 (by Python or C) to /dev/null."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    try:
        saved = os.dup(1)
    except OSError:  # no descriptor 1 at all: nothing can reach it
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        _flush_c_stdio()  # printf output still buffered in the C library goes to /dev/null too
        os.dup2(saved, 1)
        os.close(saved)


def _flush_c_stdio() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # pragma: no cover - no C library to ask
        pass


def new_highs():
    """A ``highspy.Highs`` that prints nothing (banner, log or solution)."""
    import highspy

    with stdout_silenced():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("log_to_console", False)
    return h
