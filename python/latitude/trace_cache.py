"""The graphs of traces, cached: a trace is scheduled once, not by every command run on it.

Scheduling a large trace takes most of a `predict` (54 s on HPCC); a user asks many questions
of one trace. So a graph made from a trace (our tracer's or liballprof's: a directory or a
rank-0 file) is kept as an `.lgraph` (docs/graph-format.md) in
`$XDG_CACHE_HOME/latitude/graphs/` (or `$LATITUDE_CACHE_DIR/graphs/`) — never in the trace's
directory, which is the user's — with a JSON file beside it holding what the graph alone does
not: the schedule report's stats (notes, cancelled requests, pattern, ...) and, once a command
has computed it, the traced run's analysis (latitude.traced_run).

An entry is named by a hash of its *identity*: the absolute trace path, the path as given
(notes name it), every conversion option and the entry format's version. Its *key*
(`_core.lgraph_key`, recorded in the .lgraph header) covers the size, modification time and
name of every file the graph was made from — the trace's rank files and the tracer's rank
files of its directory (added or removed ones included) — the core extension itself (a
rebuilt core may schedule differently) and the identity. A graph is reused only while its
key matches, so any touched or changed rank file or different option re-schedules.

The cache never matters for correctness: a cache that cannot be read or written means no
cache, a damaged entry is rebuilt. It is bounded: after a write, the oldest entries beyond
`LATITUDE_CACHE_SIZE` (default 4 GiB) are removed. `LATITUDE_CACHE=0` or `--no-cache` turns
it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from pathlib import Path

from latitude import _core, tracer
from latitude.errors import InputError
from latitude.graph import Graph, ScheduleReport
from latitude.outputs import atomic, cache_dir, rank_regex
from latitude.traces import ScheduleOptions
from latitude.units import parse_size

DEFAULT_LIMIT = 4 << 30  # bytes of .lgraph files kept
ENTRY_VERSION = 1  # of what an entry's JSON holds: a new one ignores older entries


def enabled() -> bool:
    """False when LATITUDE_CACHE is 0/no/off/false."""
    return os.environ.get("LATITUDE_CACHE", "1").strip().lower() not in ("0", "no", "off", "false")


def limit() -> int:
    """LATITUDE_CACHE_SIZE in bytes (default 4 GiB); an unreadable value is the default."""
    try:
        return parse_size(os.environ.get("LATITUDE_CACHE_SIZE", DEFAULT_LIMIT), "LATITUDE_CACHE_SIZE")
    except InputError:
        return DEFAULT_LIMIT


def load(path: str, options: ScheduleOptions, progress: bool = True) -> Graph:
    """The graph of the trace at `path`: the cached one while its key matches, else scheduled
    (and cached)."""
    if not enabled():
        return Graph.from_trace(path, options, progress)
    entry = Entry(path, options)
    graph = entry.read()
    if graph is None:
        before = _directory_state(path)
        graph = Graph.from_trace(path, options, progress)
        if before is not None and before == _directory_state(path):  # not changed while read
            entry.write(graph)
    graph.cache_entry = entry
    return graph


class Entry:
    """One cached graph: `<id>.lgraph` and `<id>.json` in the cache directory."""

    def __init__(self, path: str, options: ScheduleOptions):
        self.path = path
        self.identity = json.dumps(
            {
                "path": os.path.abspath(path),
                "given": path,
                "options": options.to_dict(),
                "entry": ENTRY_VERSION,
            },
            sort_keys=True,
        )
        name = hashlib.sha256(self.identity.encode()).hexdigest()[:32]
        self.dir = cache_dir("graphs")
        self.lgraph = os.path.join(self.dir, name + ".lgraph")
        self.meta_path = os.path.join(self.dir, name + ".json")
        self.meta: dict = {}

    def key(self, pattern: str) -> int | None:
        """The key of the files the graph is made from now (None: one cannot be read)."""
        files = sorted(set(map(str, _source_files(self.path, pattern))))
        return _core.lgraph_key([_core.__file__, *files], self.identity.encode())

    def read(self) -> Graph | None:
        """The cached graph, if there is one and its key matches the files as they are now."""
        try:
            with open(self.meta_path, encoding="utf-8") as f:
                meta = json.load(f)
            if meta.get("identity") != self.identity:
                return None
            key = self.key(meta["pattern"])
            if key is None or key != meta["key"]:
                return None
            handle = _core.Graph.load_lgraph_if_key(self.lgraph, key)
        except (OSError, ValueError, KeyError, TypeError, InputError):
            return None
        if handle is None:
            return None
        self.meta = meta
        graph = Graph(handle, self.path)
        graph.report = ScheduleReport(meta["stats"], graph.info)
        return graph

    def write(self, graph: Graph) -> None:
        """Cache `graph` (just scheduled from the trace), then keep the cache within its limit."""
        stats = graph.report.stats
        key = self.key(stats["pattern"])
        if key is None or json.loads(json.dumps(stats)) != stats:  # JSON must give them back exactly
            return
        self.meta = {"identity": self.identity, "pattern": stats["pattern"], "key": key, "stats": stats}
        with contextlib.suppress(OSError, InputError, TypeError, ValueError):
            graph.write_lgraph(self.lgraph, key)
            self._write_meta()
            _evict(self.dir, limit())

    def remembered(self, name: str):
        """(True, value) if a result `name` was stored with this entry, else (False, None)."""
        return (name in self.meta, self.meta.get(name))

    def remember(self, name: str, value) -> None:
        """Store a result computed from the same trace (JSON-able) with this entry."""
        if not self.meta:
            return
        self.meta[name] = value
        with contextlib.suppress(OSError, InputError, TypeError, ValueError):
            self._write_meta()

    def _write_meta(self) -> None:
        with atomic(self.meta_path, "graph cache") as tmp, open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.meta, f)


def _source_files(path: str, pattern: str) -> list[Path]:
    """Every file the graph (and the traced-run analysis) is read from: the rank files of
    `pattern` in the trace's directory and our tracer's rank files there."""
    d = Path(path) if os.path.isdir(path) else Path(path).parent
    ranks = re.compile(rank_regex(pattern))
    return [d / n for n in os.listdir(d) if ranks.fullmatch(n)] + tracer.trace_files(d)


def _directory_state(path: str) -> int | None:
    """A key of every file in the trace's directory (names, sizes, modification times)."""
    return _core.lgraph_key([path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))], b"")


def _evict(directory: str, max_bytes: int) -> None:
    """Remove the oldest entries (by the .lgraph's modification time) beyond `max_bytes`."""
    entries = []
    for e in os.scandir(directory):
        if e.name.endswith(".lgraph") and e.is_file():
            st = e.stat()
            entries.append((st.st_mtime_ns, st.st_size, e.path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= max_bytes:
            break
        for victim in (path, path[: -len(".lgraph")] + ".json"):
            with contextlib.suppress(OSError):
                os.remove(victim)
        total -= size
