"""Polling codes, wildcard receives and cancelled requests, end to end (apps/polls.c reproduces
HPCC's patterns): unsuccessful MPI_Test*/MPI_Iprobe calls fold into "#@ polls" records that
still account for every call, cancelled requests leave the graph, every wildcard receive is
resolved, and the trace schedules and predicts."""

from __future__ import annotations

import json

import pytest
import tracecheck
from conftest import run_cli
from latitude import tracer
from tracetools import assert_counts_match, deterministic, mpich, ompi, run, trace


def _polls_records(d) -> list[tuple[int, str]]:
    """(n, call name) of every "#@ polls" record in a trace directory."""
    traces, errors = tracecheck.check([str(d)])
    assert not errors, errors[:10]
    return [(int(v.split()[0][2:]), r.name) for t in traces for r in t.records for k, v in r.ext if k == "polls"]


def _schedule(d, *opts) -> dict:
    return json.loads(run_cli("schedule", d, "--json", *opts).stdout)


@pytest.mark.parametrize("mpi", ["ompi", "mpich"])
def test_hpcc_pattern(request, tmp_path, mpi):
    apps = request.getfixturevalue(f"{mpi}_apps")
    launch = [
        *(ompi if mpi == "ompi" else mpich)(2),
        apps / "polls",
        "--iters",
        "300",
        "--work",
        "50",
        "--report-calls",
    ]
    plain = run(launch)
    traced = trace(tmp_path, launch)
    assert deterministic(traced.stdout) == deterministic(plain.stdout)
    assert "receives cancelled 2" in plain.stdout  # the wildcard and the persistent receive
    counts = assert_counts_match(tmp_path, traced.stdout, 2)  # a folded record counts as its n calls
    folded = _polls_records(tmp_path)
    assert all(n >= 2 and name in ("MPI_Test", "MPI_Testany") for n, name in folded)
    assert "unsuccessful polls folded" in traced.stderr or not folded

    stats = _schedule(tmp_path)
    assert stats["extended"] and stats["unresolved_wildcards"] == 0
    # per rank: the last wildcard receive and the persistent one (their completions say
    # "cancelled"), and the receive cancelled then freed (assumed)
    assert (stats["cancelled_recvs"], stats["assumed_cancelled"]) == (4, 2)
    # every poll that completed nothing is counted (MPI time when waiting, computation in a work loop)
    polls = sum(c["MPI_Test"] + c["MPI_Testany"] for c in counts.values())
    assert 0 < stats["polls"] <= polls and stats["poll_records"] <= stats["polls"]
    # point-to-point messages: 300 each, the Sendrecv, and the send whose cancellation failed
    # (neither Open MPI nor MPICH cancels a send: the next rank receives it)
    p2p = _schedule(tmp_path, "--no-collectives")
    assert p2p["graph"]["messages"] == 2 * (300 + 1 + 1) and p2p["graph"]["messages"] > 0
    out = json.loads(run_cli("predict", tmp_path, "--json").stdout)
    assert out["runtime_ns"] > 0


def test_iprobe_polling(ompi_apps, tmp_path):
    launch = [*ompi(2), ompi_apps / "polls", "--mode", "iprobe", "--iters", "30", "--report-calls"]
    traced = trace(tmp_path, launch)
    counts = assert_counts_match(tmp_path, traced.stdout, 2)
    assert counts[0]["MPI_Iprobe"] > 30
    assert {name for _, name in _polls_records(tmp_path)} == {"MPI_Iprobe"}  # rank 0 polls ~50x a message
    stats = _schedule(tmp_path)
    assert stats["polls"] >= counts[0]["MPI_Iprobe"] - 30  # the successful ones are MPI time too
    assert stats["unresolved_wildcards"] == 0


def test_folding_can_be_switched_off(ompi_apps, tmp_path):
    launch = [*ompi(2), ompi_apps / "polls", "--iters", "100", "--work", "20", "--report-calls"]
    traced = trace(tmp_path, launch, opts=("--no-fold",))
    assert_counts_match(tmp_path, traced.stdout, 2)
    assert _polls_records(tmp_path) == []


@pytest.mark.parametrize("form", ["--plain", "--compress"])
def test_folds_across_buffer_windows(ompi_apps, tmp_path, form):
    """A small buffer moves its window (plain: the mapped window of the file; compressed: the
    heap buffer deflated into a gzip member) often, also while a poll's extension lines are
    written and while a fold is pending: every record stays whole and every call is counted."""
    launch = [*ompi(2), ompi_apps / "polls", "--iters", "3000", "--work", "20", "--report-calls"]
    traced = trace(tmp_path, launch, opts=("--buffer", "64KiB", form))
    assert_counts_match(tmp_path, traced.stdout, 2)
    _polls_records(tmp_path)  # the format check
    files = tracer.trace_files(tmp_path)
    assert len(files) == 2 and all(tracer.is_compressed(f) == (form == "--compress") for f in files)
    # the path under test: unsuccessful Test records ("#@ done -") were written, ~20 windows
    text = b"".join(tracer.open_trace(f).read() for f in files)
    assert text.count(b"\n#@ done -\n") > 10
