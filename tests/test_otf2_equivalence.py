"""The same real MPI run read two ways gives the same graph: traced with `latitude trace`
(our liballprof records) and described as the OTF2 archive Score-P's wrappers would have
written for the same calls at the same times (tests/scorep_describe.py). Same messages
(peers, tags, sizes, communicators), same computation (every calc), same structure."""

from __future__ import annotations

import pytest

pytest.importorskip("otf2")

from latitude import Graph  # noqa: E402
from scorep_describe import describe  # noqa: E402
from tracetools import assert_same_graph, ompi, trace  # noqa: E402

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


@pytest.mark.parametrize("app,ranks,args", APPS, ids=[a[0] for a in APPS])
def test_traced_run_and_its_otf2_description_give_the_same_graph(tmp_path, ompi_apps, app, ranks, args):
    traces = tmp_path / "traces"
    trace(traces, [*ompi(ranks), str(ompi_apps / app), *args])
    describe(traces, tmp_path / "otf2")
    g1, _ = schedule(str(traces), progress=False)
    g2, r2 = schedule(str(tmp_path / "otf2" / "traces.otf2"), progress=False)
    assert r2.stats["source"]["format"] == "otf2"
    assert_same_graph(g1, g2, tmp_path)
