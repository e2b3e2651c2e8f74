"""Engine = LP on random graphs (issue 2 property suite) and the paper's worked example.

For ≥ 1,000 random MPI-like programs (2–7 ranks, blocking and nonblocking rounds, eager
and rendezvous sizes, both rendezvous protocols, with and without NIC serialization, local
copies priced by O or by the copy cost C, collective calls' ends priced by the call cost K) the
HiGHS optimum equals the engine's T within 1e-9 relative, and the reduced cost of `l`
equals λ_L wherever T is differentiable in L (left = right derivative); at a critical
latency it is a subgradient, λ_left ≤ rc ≤ λ_right (with three or more critical paths
meeting there it can be a slope strictly between the one-sided ones).
"""

import random

import latitude
import pytest
from latitude import Params

N_GRAPHS = 1200


def random_case(i):
    rng = random.Random(i)
    spec = dict(
        ranks=rng.randint(2, 7),
        rounds=rng.randint(1, 9),
        seed=i,
        max_calc=rng.choice([0, 50, 5000, 100000]),
        p_nonblocking=rng.random(),
        p_extra_edge=rng.random() * 0.5,
        sizes=rng.choice([[0, 1, 8, 64], [1024, 4096, 65536, 1 << 20], [0, 8, 512, 300000]]),
    )
    params = Params(
        L=rng.choice([0, 1, 500, 3000, rng.uniform(0, 10000)]),
        o=rng.choice([0, 100, 1500]),
        G=rng.choice([0, 0.018, 1.0]),
        O=rng.choice([0, 0, 0.01]),
        g=rng.choice([0, 0, 200]),
        S=rng.choice([0, 1024, 65536, "inf"]),
        protocol=rng.choice(["handshake", "loggopsim"]),
    )
    if params.g:
        params = params.replace(nic_serialization=True)
    if i % 4 == 3:  # computations that copy (collectives' own blocks), priced b·O
        spec["p_copy"] = 0.3
    if i % 8 == 7:  # ... or b·C, the copy cost of its own (docs/model.md §1)
        params = params.replace(C=rng.choice([0.07, 0.5, 3.0]))
    if i % 6 == 5:  # computations that end collective calls, priced K (docs/model.md §1)
        spec["p_call"] = 0.4
        params = params.replace(K=rng.choice([0, 250, 2500.5]))
    return spec, params


@pytest.mark.parametrize("block", range(12))
def test_engine_equals_lp_on_random_graphs(block):
    per = N_GRAPHS // 12
    kinks, calls = [0], 0
    for i in range(block * per, (block + 1) * per):
        spec, params = random_case(i)
        g = latitude.Graph.random(**spec)
        pred = g.predict(params)
        sol = g.lp(params).solve()
        assert sol["status"] == "optimal", (i, sol)
        t = pred.runtime_ns
        assert abs(sol["runtime_ns"] - t) <= 1e-9 * max(t, 1.0), (i, t, sol["runtime_ns"])
        rc = sol["reduced_cost_l"]
        left, right = pred.lambda_left["L"], pred.lambda_["L"]
        assert left - 1e-6 <= rc <= right + 1e-6, (i, rc, left, right)
        if left == right:
            assert abs(rc - right) < 1e-6, (i, rc, right)
        else:
            kinks[0] += 1
        if params.C is not None:  # the copy cost's column: a subgradient of T in C
            rc_c = sol["reduced_costs"]["C"]
            assert pred.lambda_left["C"] - 1e-6 <= rc_c <= pred.lambda_["C"] + 1e-6, (i, rc_c)
        if params.K is not None:  # the call cost's column: a subgradient of T in K
            rc_k = sol["reduced_costs"]["K"]
            assert pred.lambda_left["K"] - 1e-6 <= rc_k <= pred.lambda_["K"] + 1e-6, (i, rc_k)
            calls += pred.lambda_["K"]
    assert kinks[0] < per // 2, "most sampled points should be differentiable"
    assert calls > 0, "some collective calls' ends lie on critical paths"


def test_worked_example_fig4b(examples):
    g = latitude.load(f"{examples}/llamp-fig4b.goal")
    for L in (0, 385, 500, 3000):
        p = g.predict(L=L, o=0, G=5)
        assert p.runtime_ns == L + 2015
        assert p.lambda_["L"] == 1


def test_worked_example_fig4c(examples):
    g = latitude.load(f"{examples}/llamp-fig4c.goal")
    assert g.predict(L=0, o=0, G=5).runtime_ns == 1500
    assert g.predict(L=385, o=0, G=5).runtime_ns == 1500
    kink = g.predict(L=385, o=0, G=5)
    assert (kink.lambda_left["L"], kink.lambda_["L"]) == (0, 1)
    assert g.predict(L=600, o=0, G=5).runtime_ns == 600 + 1115
    assert g.predict(L=885, o=0, G=5).runtime_ns == 2000
    sol = g.lp(L=600, o=0, G=5).solve()
    assert sol["runtime_ns"] == pytest.approx(1715) and sol["reduced_cost_l"] == pytest.approx(1)
    sol = g.lp(L=100, o=0, G=5).solve()
    assert sol["runtime_ns"] == pytest.approx(1500) and sol["reduced_cost_l"] == pytest.approx(0)


def test_predict_cli_done_when(cli, examples):
    """Issue 2 'done when': predict on the worked example gives 2515 ns and λ_L = 1."""
    import json

    out = json.loads(
        cli("predict", f"{examples}/llamp-fig4b.goal", "-L", "0.5us", "-o", "0", "-G", "5ns", "--json").stdout
    )
    assert out["runtime_ns"] == 2515
    assert out["lambda"]["L"] == 1
    for key in ("runtime_ns", "lambda", "lambda_left", "rho_L", "critical_path", "params"):
        assert key in out
    for key in ("messages", "calc_ns", "latency_ns", "bandwidth_ns", "overhead_ns"):
        assert key in out["critical_path"]
    assert set(out["lambda"]) >= {"L", "G", "o"}
    cp = out["critical_path"]
    assert cp["calc_ns"] + cp["latency_ns"] + cp["bandwidth_ns"] + cp["overhead_ns"] == pytest.approx(2515)
    assert out["rho_L"] == pytest.approx(500 / 2515)


def test_lp_cli_export_and_solve(cli, examples, tmp_path):
    import json

    g = f"{examples}/halo2d-16.goal"
    for ext in ("mps", "lp"):
        path = tmp_path / f"halo.{ext}"
        out = json.loads(cli("lp", g, "--export", path, "--solve", "--json").stdout)
        assert out["status"] == "optimal"
        text = path.read_text()
        assert " l " in text or "\n l" in text or "l " in text
        assert len(text) > 1000
    pred = json.loads(cli("predict", g, "--json").stdout)
    assert out["runtime_ns"] == pytest.approx(pred["runtime_ns"], rel=1e-9)
    assert out["reduced_cost_l"] == pytest.approx(pred["lambda"]["L"])
    # The exported model solves to the same optimum in a fresh HiGHS.
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(tmp_path / "halo.mps"))
    h.run()
    assert h.getInfo().objective_function_value == pytest.approx(pred["runtime_ns"], rel=1e-9)
