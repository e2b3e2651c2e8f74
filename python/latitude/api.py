"""`latitude.load`: any input Latitude reads, as a Graph (latitude.graph).

    import latitude
    g = latitude.load("app.goal")      # GOAL text, a trace (directory or rank-0 file), a job file
    p = g.predict(L="3us", o="1.5us", G="0.018ns")

The input's kind is decided once, from its path and first bytes, by the first entry of
:data:`KINDS` that matches; a new input format is one more entry there (before the GOAL
fallback) with its Graph constructor.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, field
from typing import Callable

from latitude.errors import InputError
from latitude.formats import foreign
from latitude.graph import LGRAPH_MAGIC, Graph, Prediction
from latitude.traces import ScheduleOptions

__all__ = ["KINDS", "Graph", "InputKind", "LoadOptions", "Prediction", "load", "sniff"]

# Enough of a file to recognise its kind.
_HEAD_BYTES = 4096


@dataclass(frozen=True)
class LoadOptions:
    """How `load` builds the graph: progress bars, trace conversion, job-file seed."""

    progress: bool = True
    schedule: ScheduleOptions = field(default_factory=ScheduleOptions)
    seed: int = 1
    max_ops: int | None = None  # job files: refuse a larger graph (None: what memory holds)
    cache: bool = False
    """Keep a binary copy of a GOAL file next to it (`PATH.lgraph`) and map it while valid."""
    trace_cache: bool = True
    """Reuse a trace's graph from the user's cache while the trace is unchanged (latitude.trace_cache)."""


@dataclass(frozen=True)
class InputKind:
    """One kind of input: `matches(path, head)` sees the path and the file's first bytes
    (None for a directory); `load(path, options)` builds its Graph."""

    name: str
    matches: Callable[[str, bytes | None], bool]
    load: Callable[[str, LoadOptions], Graph]


def _first_statement(head: bytes, comment: bytes | None) -> bytes:
    """The first line that is not blank (or only a comment, when `comment` is given)."""
    for line in head.splitlines():
        text = (line.split(comment, 1)[0] if comment else line).strip()
        if text:
            return text
    return b""


def _is_job(path: str, head: bytes | None) -> bool:
    """A `.job` file, or one whose first statement (after blank and `#` lines) is a `[SECTION]`."""
    if head is None:
        return False
    return path.endswith(".job") or _first_statement(head, b"#").startswith(b"[")


def _is_trace(path: str, head: bytes | None) -> bool:
    """A directory, or a file that reads like liballprof text (`#` header, `MPI_` calls)."""
    if head is None:
        return True
    first = _first_statement(head, None)
    return first.startswith(b"#") or first.startswith(b"MPI_")


def _load_trace(path: str, o: LoadOptions) -> Graph:
    """A trace's graph, from the user's cache while the trace is unchanged (latitude.trace_cache,
    imported here: start-up of the commands on a GOAL or .lgraph file does not pay for it)."""
    from latitude import trace_cache

    return (trace_cache.load if o.trace_cache else Graph.from_trace)(path, o.schedule, o.progress)


def _is_lgraph(path: str, head: bytes | None) -> bool:
    """Latitude's binary graph, by its magic bytes (whatever the file's name)."""
    return head is not None and head.startswith(LGRAPH_MAGIC)


KINDS: list[InputKind] = [
    InputKind("lgraph", _is_lgraph, lambda path, o: Graph.from_lgraph(path)),
    InputKind(
        "foreign trace",
        lambda path, head: foreign.kind(path) is not None,
        lambda path, o: Graph.from_trace(path, o.schedule, o.progress),
    ),
    InputKind(
        "job",
        _is_job,
        lambda path, o: Graph.from_job(path, seed=o.seed, coll=o.schedule.coll, progress=o.progress, max_ops=o.max_ops),
    ),
    InputKind(
        "trace",
        _is_trace,
        _load_trace,
    ),
    InputKind(
        "goal",
        lambda path, head: True,
        lambda path, o: (Graph.cached_goal if o.cache else Graph.from_goal)(path, o.progress),
    ),
]


def _head(path: str) -> bytes | None:
    if os.path.isdir(path):
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return b""  # unreadable: the GOAL reader reports why
    if head.startswith(b"\x1f\x8b"):  # gzip: a compressed trace is told by its text
        try:
            return _gunzip_head(head)
        except zlib.error:
            return head
    return head


def _gunzip_head(data: bytes) -> bytes:
    """The text at the start of gzip data, across members (the tracer writes one per buffer)."""
    text = b""
    while data and len(text) < _HEAD_BYTES:
        z = zlib.decompressobj(wbits=31)
        text += z.decompress(data, _HEAD_BYTES - len(text))
        if not z.eof:
            break
        data = z.unused_data
    return text


def sniff(path: str) -> InputKind:
    """The kind of input at `path` (read once)."""
    head = _head(path)
    return next(kind for kind in KINDS if kind.matches(path, head))


def load(
    path: str,
    progress: bool = True,
    schedule: ScheduleOptions | None = None,
    seed: int = 1,
    max_ops: int | None = None,
    cache: bool = False,
    trace_cache: bool = True,
) -> Graph:
    """The graph of an .lgraph file (mapped), a GOAL file (through a binary kept next to it
    with `cache`), a liballprof trace (directory or rank-0 file; converted with `schedule`)
    or a job file (generated with `seed`, and `schedule.coll` for collective motifs without
    alg=; refused if its graph would exceed `max_ops`, by default what the available memory
    holds). A trace's graph is reused from the user's cache while the trace and `schedule`
    are unchanged, unless `trace_cache` is False or LATITUDE_CACHE=0 (latitude.trace_cache)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(path, "no such file or directory")
    options = LoadOptions(progress, schedule or ScheduleOptions(), seed, max_ops, cache, trace_cache)
    return sniff(path).load(path, options)
