"""The same real MPI run read two ways gives the same graph: traced with `latitude trace`
(our liballprof records) and described as the OTF2 archive Score-P's wrappers would have
written for the same calls at the same times (tests/scorep_describe.py). Same messages
(peers, tags, sizes, communicators), same computation (every calc), same structure."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("otf2")

from latitude import Graph  # noqa: E402
from scorep_describe import describe  # noqa: E402
from tracetools import ompi, trace  # noqa: E402

APPS = [
    # app, ranks, arguments: nonblocking halo + allreduce; sub-communicators, wildcard
    # receives, Waitany; persistent requests (Startall); blocking pipelined sweeps
    ("halo2d", 4, ["--iters", "20", "--nx", "64", "--ny", "64"]),
    ("subcomm", 4, ["--iters", "10"]),
    ("persistent", 2, ["--iters", "20", "--n", "1000"]),
    ("sweep3d", 4, ["--nx", "16", "--ny", "16", "--nz", "16"]),
]


def schedule(path, progress=False):
    g = Graph.from_trace(path, progress=progress)
    return g, g.report


def canonical(graph, path) -> str:
    graph.write_goal(str(path))
    names: dict[str, str] = {}
    return re.sub(r"tag (\d+)", lambda m: "tag " + names.setdefault(m.group(1), str(len(names))), path.read_text())


@pytest.mark.parametrize("app,ranks,args", APPS, ids=[a[0] for a in APPS])
def test_traced_run_and_its_otf2_description_give_the_same_graph(tmp_path, ompi_apps, app, ranks, args):
    traces = tmp_path / "traces"
    trace(traces, [*ompi(ranks), str(ompi_apps / app), *args])
    describe(traces, tmp_path / "otf2")
    g1, r1 = schedule(str(traces), progress=False)
    g2, r2 = schedule(str(tmp_path / "otf2" / "traces.otf2"), progress=False)
    assert r2.stats["source"]["format"] == "otf2"
    assert (g1.info["messages"], g1.info["bytes"]) == (g2.info["messages"], g2.info["bytes"])
    assert r1.stats["collectives"] == r2.stats["collectives"]
    assert canonical(g1, tmp_path / "a.goal") == canonical(g2, tmp_path / "b.goal")
    p1, p2 = g1.predict(L="3us", o="1us", G="0.1ns"), g2.predict(L="3us", o="1us", G="0.1ns")
    assert p1.runtime_ns == p2.runtime_ns and p1.lambda_ == p2.lambda_
