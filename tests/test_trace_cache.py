"""The graph of a trace is cached (latitude.trace_cache): a second command on an unchanged
trace maps the cached .lgraph instead of scheduling again, with exactly the same outputs; a
touched rank file or another conversion option schedules again; the cache lives in
$XDG_CACHE_HOME, never in the trace's directory, is bounded, and one that cannot be written
or is damaged just means no cache."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, run_cli
from latitude import api, trace_cache

# A two-rank trace of our tracer whose run was disturbed: predict warns (traced_run, warnings).
TRACE = Path(ROOT) / "tests" / "data" / "fuzz_seeds" / "trace_alltoall"


@pytest.fixture
def trace(tmp_path, monkeypatch):
    """A copy of TRACE, and a fresh cache home for this test."""
    monkeypatch.delenv("LATITUDE_CACHE_DIR", raising=False)
    monkeypatch.delenv("LATITUDE_CACHE", raising=False)
    monkeypatch.delenv("LATITUDE_CACHE_SIZE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    d = tmp_path / "tr"
    shutil.copytree(TRACE, d)
    return d


def graphs(tmp_path) -> Path:
    return tmp_path / "xdg" / "latitude" / "graphs"


def entries(tmp_path) -> dict[str, int]:
    """The cached .lgraph files: name -> modification time (ns)."""
    d = graphs(tmp_path)
    return {p.name: p.stat().st_mtime_ns for p in d.glob("*.lgraph")} if d.exists() else {}


def listing(d: Path) -> dict:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in d.iterdir()}


def predict(path, *args) -> dict:
    return json.loads(run_cli("predict", path, "--json", *args).stdout)


def test_second_run_maps_the_cached_graph_with_identical_outputs(trace, tmp_path):
    before = listing(trace)
    first = predict(trace)
    assert first["traced_run"] is not None and first["warnings"], first  # what the cache must keep
    cached = entries(tmp_path)
    assert len(cached) == 1
    metas = {p.name: p.stat().st_mtime_ns for p in graphs(tmp_path).glob("*.json")}
    assert predict(trace) == first
    assert entries(tmp_path) == cached  # mapped, not written again
    assert {p.name: p.stat().st_mtime_ns for p in graphs(tmp_path).glob("*.json")} == metas
    assert predict(trace, "--no-cache") == first
    assert listing(trace) == before  # nothing written into the user's trace directory


def test_cached_graph_is_the_scheduled_graph(trace):
    fresh = api.load(str(trace), trace_cache=False)
    assert fresh.cache_entry is None
    api.load(str(trace))  # schedules and caches
    cached = api.load(str(trace))
    assert cached.cache_entry is not None and cached.cache_entry.meta
    a, b = fresh.arrays(), cached.arrays()
    assert a.keys() == b.keys() and cached.info == fresh.info
    for name in a:
        assert np.array_equal(np.asarray(a[name]), np.asarray(b[name])), name
    assert cached.report.to_dict() == fresh.report.to_dict()
    assert cached.report.notes() == fresh.report.notes()


def test_touched_rank_file_or_other_options_schedule_again(trace, tmp_path):
    first = predict(trace)
    [(name, mtime)] = entries(tmp_path).items()
    st = (trace / "pmpi-trace-rank-1.txt").stat()
    os.utime(trace / "pmpi-trace-rank-1.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert predict(trace) == first
    assert entries(tmp_path)[name] != mtime  # same entry, written again
    again = entries(tmp_path)[name]
    predict(trace, "--coll", "schedgen")
    after = entries(tmp_path)
    assert len(after) == 2 and after[name] == again  # another entry; the first one stays
    predict(trace)
    assert entries(tmp_path) == after
    # a file that is not a rank file (an output next to the trace) does not invalidate it
    (trace / "notes.txt").write_text("x")
    predict(trace)
    assert entries(tmp_path) == after


def test_rank_zero_file_is_cached_too(trace, tmp_path):
    first = predict(trace / "pmpi-trace-rank-0.txt")
    cached = entries(tmp_path)
    assert len(cached) == 1
    assert predict(trace / "pmpi-trace-rank-0.txt") == first
    assert entries(tmp_path) == cached


def test_unwritable_or_damaged_cache_is_no_cache(trace, tmp_path, monkeypatch):
    first = predict(trace)
    [lgraph] = graphs(tmp_path).glob("*.lgraph")
    lgraph.write_bytes(b"\x89LGRAPH\n" + b"\0" * 100)  # damaged: rebuilt silently
    assert predict(trace) == first
    assert api.load(str(trace)).cache_entry.meta  # the rebuilt entry is read
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # cannot be a directory
    proc = run_cli("predict", trace, "--json")
    assert json.loads(proc.stdout) == first and proc.stderr == ""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "off"))
    monkeypatch.setenv("LATITUDE_CACHE", "0")
    assert predict(trace) == first
    assert not (tmp_path / "off").exists()


def test_cache_is_bounded(trace, tmp_path, monkeypatch):
    predict(trace)
    [lgraph] = graphs(tmp_path).glob("*.lgraph")
    monkeypatch.setenv("LATITUDE_CACHE_SIZE", str(lgraph.stat().st_size * 3 // 2))
    predict(trace, "--coll", "schedgen")
    [kept] = graphs(tmp_path).glob("*.lgraph")  # the oldest went, with its JSON
    assert kept != lgraph and len(list(graphs(tmp_path).glob("*.json"))) == 1


def test_limit_and_switch_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("LATITUDE_CACHE_SIZE", "1GiB")
    assert trace_cache.limit() == 1 << 30
    monkeypatch.setenv("LATITUDE_CACHE_SIZE", "lots")
    assert trace_cache.limit() == trace_cache.DEFAULT_LIMIT
    monkeypatch.setenv("LATITUDE_CACHE", "off")
    assert not trace_cache.enabled()


def test_trace_changed_while_scheduled_is_not_cached(trace, tmp_path, monkeypatch):
    """A rank file rewritten while the trace is being read (a tracer still writing it): the
    graph may be of either version, so it is not kept."""
    schedule = trace_cache.Graph.from_trace

    def while_written(path, options, progress):
        graph = schedule(path, options, progress)
        rank1 = trace / "pmpi-trace-rank-1.txt"
        rank1.write_bytes(rank1.read_bytes())
        return graph

    monkeypatch.setattr(trace_cache.Graph, "from_trace", while_written)
    assert api.load(str(trace)).report is not None
    assert entries(tmp_path) == {}
    monkeypatch.setattr(trace_cache.Graph, "from_trace", schedule)
    api.load(str(trace))
    assert len(entries(tmp_path)) == 1
