"""Traces in other tools' formats: recognising them, and converting them into a temporary
directory of Latitude trace files for the scheduler (the directory is removed afterwards).

Errors the scheduler reports at a line of a converted file are given back in terms of the
original trace: the ``#~`` comment above each converted call names its rank, location or
file line and time there (``trace_writer.origin_of_line``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile

from latitude.errors import InputError
from latitude.formats import dumpi_file
from latitude.formats.trace_writer import origin_of_line
from latitude.progress import progress as bar

OTF2 = "otf2"
DUMPI = "dumpi"


def _head(path: str, n: int = 4096) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def _is_anchor(path: str) -> bool:
    return os.path.isfile(path) and b"OTF2" in _head(path, 16)


def otf2_anchor(path: str) -> str | None:
    """The anchor file (``traces.otf2``) of an OTF2 archive given as the file itself or as
    the directory holding it (a Score-P experiment directory)."""
    if os.path.isdir(path):
        try:
            found = sorted(e.path for e in os.scandir(path) if e.name.endswith(".otf2") and _is_anchor(e.path))
        except OSError:  # unreadable: not ours to report, the trace reader says what is wrong
            return None
        return found[0] if len(found) == 1 else None
    return path if (path.endswith(".otf2") or _is_anchor(path)) and _is_anchor(path) else None


def kind(path: str) -> str | None:
    """OTF2, DUMPI or None (Latitude's own format, or not a trace)."""
    if otf2_anchor(path):
        return OTF2
    if dumpi_file.meta_for(path):
        return DUMPI
    return None


@contextlib.contextmanager
def converted(path: str, fmt: str, progress: bool = True):
    """Convert the trace at `path` (of kind `fmt`); yields (directory, Conversion)."""
    tmp = tempfile.mkdtemp(prefix=f"latitude-{fmt}-")
    try:
        conv = _convert(path, fmt, tmp, progress)
        try:
            yield tmp, conv
        except InputError as err:
            raise translate(err, tmp, conv) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _convert(path: str, fmt: str, out: str, progress: bool):
    # The converters are imported here, not at the top: every command that loads a graph
    # imports this module to recognise foreign traces, and the converters' imports were
    # ~50 ms of every start-up (python -X importtime) for a trace few commands are given.
    from latitude.formats import dumpi_run
    from latitude.formats.otf2_archive import convert

    if fmt == DUMPI:
        meta = dumpi_file.meta_for(path)
        with bar(f"reading {os.path.basename(meta)}") as update:
            return dumpi_run.convert(meta, out, update if progress else None)
    anchor = otf2_anchor(path)
    with bar(f"reading {os.path.basename(anchor)}") as update:
        return convert(anchor, out, update if progress else None)


def translate(err: InputError, tmp: str, conv) -> InputError:
    """An error at `tmp/<file>:<line>` restated at the call of the original trace it came
    from."""
    where = err.where or ""
    if not where.startswith(tmp):
        return err
    m = re.match(r"(.*):(\d+)$", where)
    path, line = (m.group(1), int(m.group(2))) if m else (where, None)
    origin = origin_of_line(path, line) if line else None
    rank = re.search(r"rank-(\d+)\.txt$", path)
    if origin is None:
        return InputError(conv.origin_file, f"rank {rank.group(1)}: {err.what}" if rank else err.what)
    place, prefix = conv.place(origin, int(rank.group(1)) if rank else 0)
    return InputError(place, f"{prefix}: {err.what}" if prefix else err.what)
