"""The call cost K (docs/model.md §1): a named parameter for the MPI library's own cost of one
collective call on one rank beyond its messages, paid by the join that ends the rank's part
of the call. Worked by hand through predict, λ, decompose, the simulator and the LP; a traced
program's calls carry it through GOAL text (`//@call`) and .lgraph exactly; without K (or
with K = 0) a graph predicts what it did; a graph without calls says K prices nothing."""

from __future__ import annotations

import json
import os

import latitude
import pytest
from conftest import ROOT, one_line, run_cli
from latitude import api
from latitude.graph import Graph
from latitude.params import Params

# rank 0 sends 8 bytes to rank 1; each rank's part of the call (a bcast) ends at a join,
# then 400 ns of work.
CALL_GOAL = (
    "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n//@call bcast linear 2 8 1\nl2: calc 0\n"
    "l2 requires l1\nl3: calc 400\nl3 requires l2\n}\n"
    "rank 1 {\nl1: recv 8b from 0 tag 0\n//@call bcast linear 2 8 1\nl2: calc 0\n"
    "l2 requires l1\nl3: calc 400\nl3 requires l2\n}\n"
)
P = dict(L=1000.0, o=100.0, g=0.0, G=0.0, O=0.0)
TRACE = os.path.join(ROOT, "tests", "data", "liballprof-bcast")  # 4 ranks, 5 MPI_Bcast each


@pytest.fixture
def call_graph(tmp_path):
    path = tmp_path / "call.goal"
    path.write_text(CALL_GOAL)
    return api.load(str(path), progress=False)


def test_a_call_costs_K_at_its_end_by_hand(call_graph):
    # send o, L to the arrival, the receive's o (1200 ns), then the receiver's join K, its work
    p = Params(**P, K=2500)
    pred = call_graph.predict(p, path_steps=100)
    assert pred.runtime_ns == 1200 + 2500 + 400
    assert pred.lambda_["K"] == 1 and pred.lambda_left["K"] == 1
    assert call_graph.info["collective_calls"] == 2
    d = call_graph.decompose(p)
    assert d.runtime_ns == pred.runtime_ns
    assert d.total["stack_ns"] == pytest.approx(100 + 100 + 100 + 2 * 2500)  # both ranks pay K
    assert d.total["compute_ns"] == 800
    assert call_graph.simulate(p).runtime_ns == pred.runtime_ns
    sol = call_graph.lp(p).solve()
    assert sol["runtime_ns"] == pytest.approx(pred.runtime_ns)
    assert sol["reduced_costs"]["K"] == pytest.approx(1)
    out = pred.to_dict()
    assert out["params"]["K"] == 2500 and out["lambda"]["K"] == 1
    steps = [s["step"] for s in pred.path()]
    assert steps.count("call") == 1


def test_without_K_or_with_K_zero_a_call_costs_its_messages(call_graph):
    p = Params(**P)
    assert "K" not in p.names and "K" not in p.to_dict()
    pred = call_graph.predict(p)
    assert pred.runtime_ns == 1200 + 400 and "K" not in pred.to_dict()["lambda"]
    zero = call_graph.predict(p.replace(K=0))
    assert zero.runtime_ns == pred.runtime_ns and zero.lambda_["K"] == 1


def test_a_traced_programs_calls_keep_K_through_goal_and_lgraph(tmp_path):
    g = Graph.from_trace(TRACE, progress=False)
    assert g.info["collective_calls"] == 4 * 5
    base, with_k = Params(L=500, o=200), Params(L=500, o=200, K=1500)
    t0, pk = g.predict(base).runtime_ns, g.predict(with_k, path_steps=1000)
    # the binomial bcasts follow each other, so each of the 5 calls puts one K on the path
    assert pk.lambda_["K"] == 5 and [s["step"] for s in pk.path()].count("call") == 5
    assert pk.runtime_ns == pytest.approx(t0 + 5 * 1500)
    goal, lgraph = tmp_path / "b.goal", tmp_path / "b.lgraph"
    g.write_goal(str(goal))
    assert goal.read_text().count("//@call bcast binomial 4") == 20
    g.write_lgraph(str(lgraph))
    for other in (api.load(str(goal), progress=False), api.load(str(lgraph), progress=False)):
        o = other.predict(with_k)
        assert (o.runtime_ns, o.lambda_["K"]) == (pk.runtime_ns, pk.lambda_["K"])
    assert g.simulate(with_k).runtime_ns == pytest.approx(pk.runtime_ns)
    assert g.lp(with_k).solve()["runtime_ns"] == pytest.approx(pk.runtime_ns)


def test_machine_file_and_command_line_set_K(tmp_path, call_graph):
    m = tmp_path / "m.toml"
    m.write_text('[loggps]\nL = "1us"\no = "100ns"\nG = 0\nK = "2.5us"\n')
    assert Params.from_machine(str(m)).K == 2500
    goal = tmp_path / "call.goal"
    goal.write_text(CALL_GOAL)
    for how in (["--machine", m], ["-L", "1us", "-o", "100ns", "-G", "0", "-K", "2.5us"]):
        out = json.loads(run_cli("predict", goal, *how, "--json").stdout)
        assert (out["runtime_ns"], out["lambda"]["K"], out["warnings"]) == (4100, 1, [])
    out = json.loads(run_cli("predict", goal, "--machine", m, "--set", "K=0", "--json").stdout)
    assert out["runtime_ns"] == 1600
    bad = tmp_path / "bad.toml"
    bad.write_text('[loggps]\nK = "fast"\n')
    one_line(run_cli("predict", goal, "--machine", bad, check=False), f"{bad}:2")
    one_line(run_cli("predict", goal, "-K", "-3us", check=False), "-K")


def test_K_on_a_graph_without_calls_is_said(tmp_path):
    bare = tmp_path / "bare.goal"
    bare.write_text("".join(ln for ln in CALL_GOAL.splitlines(True) if not ln.startswith("//@call")))
    out = json.loads(run_cli("predict", bare, "-K", "1us", "--json").stdout)
    assert out["lambda"]["K"] == 0
    assert any("marks no collective calls" in w for w in out["warnings"])
    proc = run_cli("predict", bare, "-K", "1us")
    assert "K is set but the graph marks no collective calls" in proc.stderr
    assert latitude.load(str(bare), progress=False).info["collective_calls"] == 0
