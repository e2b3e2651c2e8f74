"""`latitude schedule TRACE --timeline OUT.json`: the traced run's measured timeline (Chrome
trace / Perfetto) — every call with its measured times, computation between calls, and the
messages the schedule pairs — from a real MPI run, and the same from its OTF2 description."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from tracetools import ompi, trace

P2P_SEND = ("MPI_Isend", "MPI_Send", "MPI_Sendrecv")


@pytest.fixture(scope="module")
def halo(tmp_path_factory, ompi_apps):
    d = tmp_path_factory.mktemp("halo")
    trace(d / "traces", [*ompi(4), str(ompi_apps / "halo2d"), "--iters", "10", "--nx", "64", "--ny", "64"])
    return d


def timeline(trace_path, out):
    proc = run_cli("schedule", trace_path, "--timeline", out, "--json")
    return json.loads(proc.stdout), json.load(open(out))


def test_calls_computation_and_messages(halo, tmp_path):
    stats, doc = timeline(halo / "traces", tmp_path / "t.json")
    ev = doc["traceEvents"]
    calls = [e for e in ev if e["ph"] == "X" and e["cat"] == "mpi"]
    assert len(calls) == stats["events"] == stats["timeline"]["calls"]
    for r in range(4):
        mine = [e for e in ev if e["ph"] == "X" and e["pid"] == r]
        assert mine[0]["name"] == "MPI_Init" and mine[0]["ts"] == 0
        assert mine[-1]["name"] == "MPI_Finalize"
        ends = [(e["ts"], e["ts"] + e["dur"]) for e in mine]
        assert all(a <= b for a, b in ends) and all(b1 <= a2 + 1e-6 for (_, b1), (a2, _) in zip(ends, ends[1:]))
        assert any(e["cat"] == "calc" for e in mine)  # the halo's computation between calls
    starts = [e for e in ev if e["ph"] == "s"]
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    assert len(starts) == len(ends) == stats["graph"]["messages"] == stats["timeline"]["messages"]
    at_start = {(e["pid"], e["ts"]): e["name"] for e in calls}
    at_end = {(e["pid"], round(e["ts"] + e["dur"], 6)): e["name"] for e in calls}
    kinds = set()
    for s in starts:
        f = ends[s["id"]]
        assert s["pid"] != f["pid"]
        kinds.add(s["cat"])
        sent, received = at_start[(s["pid"], s["ts"])], at_end.get((f["pid"], f["ts"]))
        if s["cat"] == "msg":
            assert sent in P2P_SEND
        else:  # a collective's algorithm: between the same collective on two ranks
            assert sent == received and sent.startswith("MPI_") and "send" not in sent.lower()
    assert kinds == {"msg", "collective"}


def test_bad_output_path(halo, tmp_path):
    proc = run_cli("schedule", halo / "traces", "--timeline", tmp_path / "t.txt", check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("latitude: --timeline: expected a .json")
    proc = run_cli("schedule", halo / "traces", "--timeline", tmp_path / "missing" / "t.json", check=False)
    assert proc.returncode == 2 and "cannot write the timeline" in proc.stderr
    assert not (tmp_path / "missing").exists()


def test_otf2_description_gives_the_same_timeline(halo, tmp_path):
    pytest.importorskip("otf2")
    from scorep_describe import describe

    describe(halo / "traces", tmp_path / "otf2")
    _, ours = timeline(halo / "traces", tmp_path / "a.json")
    _, theirs = timeline(tmp_path / "otf2" / "traces.otf2", tmp_path / "b.json")

    def flows(doc):
        return sorted((e["ph"], e["pid"], e["ts"], e["name"], e["cat"]) for e in doc["traceEvents"] if e["ph"] in "sf")

    def calls(doc):
        return {(e["pid"], e["name"], e["ts"], e["dur"]) for e in doc["traceEvents"] if e.get("cat") == "mpi"}

    assert flows(ours) == flows(theirs) and flows(ours)
    # Score-P records no event for calls on MPI_PROC_NULL (the halo's edges): those are
    # computation there; every other call is the same, at the same times
    missing = calls(ours) - calls(theirs)
    assert calls(theirs) <= calls(ours) and {name for _, name, _, _ in missing} <= {"MPI_Isend", "MPI_Irecv"}
