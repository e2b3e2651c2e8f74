"""The copy cost C (docs/model.md §1): a named parameter for the per-byte cost of a local
memory copy (a collective's own block). A copy of s bytes costs b(s)·C when the point sets C
and b(s)·O as before when it does not. Worked by hand through predict, λ, decompose, the
simulator and the LP; machine files and the command line set it; tolerance and sensitivity
take it like any named parameter; machine files without C predict what they did."""

from __future__ import annotations

import json

import latitude
import pytest
from conftest import EXAMPLES, one_line, run_cli
from latitude import api
from latitude.errors import InputError
from latitude.params import Params

# rank 0: 1 µs of computation, a copy of 1001 bytes (a collective's own block), then an
# eager 11-byte message to rank 1.
COPY_GOAL = (
    "num_ranks 2\nrank 0 {\nl1: calc 1000\n//@copy 1001b\nl2: calc 0\nl2 requires l1\n"
    "l3: send 11b to 1 tag 0\nl3 requires l2\n}\nrank 1 {\nl1: recv 11b from 0 tag 0\n}\n"
)
P = dict(L=1000.0, o=100.0, g=0.0, G=0.0, O=0.01)


@pytest.fixture
def copy_graph(tmp_path):
    path = tmp_path / "copy.goal"
    path.write_text(COPY_GOAL)
    return api.load(str(path), progress=False)


def test_a_copy_costs_b_times_C_by_hand(copy_graph):
    # 1000 + 1000·0.5 (the copy), then o + L to the arrival, then the receive's o + 10·O.
    p = Params(**P, C=0.5)
    pred = copy_graph.predict(p)
    assert pred.runtime_ns == pytest.approx(1000 + 500 + 1100 + 100.1)
    assert (pred.lambda_["C"], pred.lambda_["O"]) == (1000, 10)
    assert pred.lambda_left["C"] == 1000
    d = copy_graph.decompose(p)
    assert d.runtime_ns == pytest.approx(pred.runtime_ns)
    assert [c for c in d.per_call if c["call"] == "copy"] == [
        {"call": "copy", "count": 1, "network_ns": 0.0, "stack_ns": 500.0, "sync_ns": 0.0}
    ]
    assert copy_graph.simulate(p).runtime_ns == pytest.approx(pred.runtime_ns)
    sol = copy_graph.lp(p).solve()
    assert sol["runtime_ns"] == pytest.approx(pred.runtime_ns)
    assert sol["reduced_costs"]["C"] == pytest.approx(1000)
    assert pred.to_dict()["params"]["C"] == 0.5 and pred.to_dict()["lambda"]["C"] == 1000


def test_without_C_the_copy_pays_O_as_before(copy_graph):
    p = Params(**P)
    assert "C" not in p.names and "C" not in p.to_dict()
    pred = copy_graph.predict(p)
    assert pred.runtime_ns == pytest.approx(1000 + 10 + 1100 + 100.1)
    assert pred.lambda_["O"] == 1010 and "C" not in pred.to_dict()["lambda"]
    # C = O prices the copy the same: the same T to the tick
    assert copy_graph.predict(p.replace(C=p.O)).runtime_ns == pred.runtime_ns


@pytest.mark.parametrize("seed", range(8))
def test_C_equal_to_O_is_the_old_model_on_random_graphs(seed):
    """A point without C and the same point with C = O: the same T and critical path; λ_O of
    the first is λ_O + λ_C of the second wherever T is differentiable."""
    g = latitude.Graph.random(ranks=4, rounds=6, seed=seed, p_copy=0.4, sizes=[0, 64, 4096, 300000])
    p = Params(L=800, o=120, G=0.02, O=0.03, S=65536)
    a, b = g.predict(p), g.predict(p.replace(C=0.03))
    assert a.runtime_ns == b.runtime_ns
    assert a.lambda_["O"] == b.lambda_["O"] + b.lambda_["C"]


def test_tolerance_and_sensitivity_take_C(copy_graph):
    p = Params(**P, C=0.5)
    tol = copy_graph.tolerance(pcts=(10,), param="C", params=p)
    # T = 2200.1 + 1000·C: 10 % of T(0.5) = 270.01 ns more, i.e. C up to 0.5 + 0.27001
    assert tol.to_dict()["tolerance"][0]["max_ns"] == pytest.approx(0.77001, rel=1e-9)
    s = copy_graph.sensitivity(0, 2, param="C", params=p)
    assert [pc["slope"] for pc in s.to_dict()["pieces"]] == [1000]


def test_machine_file_and_command_line_set_C(tmp_path):
    m = tmp_path / "m.toml"
    m.write_text('[loggps]\nL = "1us"\no = "200ns"\nO = "0.03ns"\nC = "0.075ns"\nS = "64KiB"\n')
    p = Params.from_machine(str(m))
    assert p.C == pytest.approx(0.075) and p.names[-1] == "C"
    assert Params(L="1us", o="200ns", O="0.03ns", S="64KiB").with_values(C="0.075ns").to_dict() == p.to_dict()
    goal = f"{EXAMPLES}/halo2d-16.goal"
    a = json.loads(run_cli("predict", goal, "--machine", m, "--json").stdout)
    b = run_cli("predict", goal, "-L", "1us", "-o", "200ns", "-O", "0.03ns", "-S", "64KiB", "-C", "0.075ns", "--json")
    c = run_cli(
        "predict", goal, "-L", "1us", "-o", "200ns", "-O", "0.03ns", "-S", "64KiB", "--set", "C=0.075ns", "--json"
    )
    assert json.loads(b.stdout) == json.loads(c.stdout)
    assert {k: v for k, v in json.loads(b.stdout).items() if k != "params"} == {
        k: v for k, v in a.items() if k != "params"
    }
    assert a["params"]["C"] == pytest.approx(0.075) and "C" in a["lambda"]


def test_old_machine_files_predict_what_they_did(tmp_path):
    """A machine file without C: no C anywhere in the output, and the numbers the model gave
    before C existed (worked by hand on the copy graph; halo2d has no copies, so C changes
    nothing there either)."""
    m = tmp_path / "old.toml"
    m.write_text('[loggps]\nL = "1us"\no = "100ns"\ng = "0ns"\nG = "0ns"\nO = "0.01ns"\n')
    goal = tmp_path / "copy.goal"
    goal.write_text(COPY_GOAL)
    out = json.loads(run_cli("predict", goal, "--machine", m, "--json").stdout)
    assert out["runtime_ns"] == pytest.approx(2210.1, abs=1e-9) and out["lambda"]["O"] == 1010
    assert "C" not in out["params"] and set(out["lambda"]) == {"L", "G", "o", "g", "O"}
    halo = f"{EXAMPLES}/halo2d-16.goal"
    old = json.loads(run_cli("predict", halo, "--machine", m, "--json").stdout)
    new = json.loads(run_cli("predict", halo, "--machine", m, "-C", "5ns", "--json").stdout)
    assert old["runtime_ns"] == new["runtime_ns"] and new["lambda"]["C"] == 0


def test_bad_C_is_one_line(tmp_path):
    m = tmp_path / "m.toml"
    m.write_text('[loggps]\nL = "1us"\nC = "fast"\n')
    one_line(run_cli("predict", f"{EXAMPLES}/halo2d-16.goal", "--machine", m, check=False), "m.toml:3")
    one_line(run_cli("predict", f"{EXAMPLES}/halo2d-16.goal", "-C", "-1ns", check=False), "-C")
    m.write_text('[loggps]\nL = "1us"\n\n[params]\nC = "1us"\n')
    one_line(run_cli("predict", f"{EXAMPLES}/halo2d-16.goal", "--machine", m, check=False), "params.C")
    with pytest.raises(InputError):
        Params(C=-0.5)


def test_loggopsim_compat_rounds_C_like_O(copy_graph):
    from latitude.simulation import loggopsim_params

    p, notes = loggopsim_params(Params(**P, C=0.4))
    assert p.C == 0.0 and "C 0.4 → 0 ns/B" in notes[0]
