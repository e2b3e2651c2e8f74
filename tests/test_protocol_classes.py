"""Protocol size classes (docs/model.md §1): small (s ≤ S1), medium (eager, S1 < s ≤ S) and
large (rendezvous) messages, each class adding its own o_c to every overhead and l_c to every
latency. Engine = LP = simulator = decomposition on random graphs, the class parameters'
derivatives, a hand-worked message per class, and the two-protocol model unchanged when no
classes are set."""

from __future__ import annotations

import random

import latitude
import pytest
from latitude import Params
from latitude.params import CLASS_PARAMS


def random_case(i):
    rng = random.Random(1000 + i)
    spec = dict(
        ranks=rng.randint(2, 6),
        rounds=rng.randint(1, 8),
        seed=i,
        max_calc=rng.choice([0, 50, 5000, 100000]),
        p_nonblocking=rng.random(),
        p_extra_edge=rng.random() * 0.5,
        sizes=[0, 8, 512, 4096, 70000, 300000],
    )
    S = rng.choice([1024, 65536, 262144])
    params = Params(
        L=rng.choice([0, 500, 3000, rng.uniform(0, 10000)]),
        o=rng.choice([0, 100, 1500]),
        G=rng.choice([0, 0.018, 1.0]),
        O=rng.choice([0, 0.01]),
        g=rng.choice([0, 0, 200]),
        S=S,
        protocol=rng.choice(["handshake", "loggopsim"]),
        S1=rng.choice([0, 64, 1000]),
        classes=tuple(rng.choice([0, 50, 700, rng.uniform(0, 3000)]) for _ in CLASS_PARAMS),
    )
    if params.g:
        params = params.replace(nic_serialization=True)
    if i % 3 == 2:  # local copies, priced by the copy cost C (no class term: a copy is no message)
        spec["p_copy"] = 0.3
        params = params.replace(C=rng.choice([0.0, 0.07, 2.0]))
    return spec, params


@pytest.mark.parametrize("block", range(4))
def test_engine_lp_simulator_and_decomposition_agree(block):
    for i in range(block * 60, (block + 1) * 60):
        spec, params = random_case(i)
        g = latitude.Graph.random(**spec)
        pred = g.predict(params)
        t = pred.runtime_ns
        sol = g.lp(params).solve()
        assert sol["status"] == "optimal", (i, sol)
        assert abs(sol["runtime_ns"] - t) <= 1e-9 * max(t, 1.0), (i, t, sol["runtime_ns"])
        sim = g.simulate(params, cpu_serialization=False)
        assert sim.runtime_ns == pytest.approx(t, rel=1e-12, abs=1e-6), (i, t, sim.runtime_ns)
        d = g.decompose(params)
        assert d.runtime_ns == pytest.approx(t, rel=1e-12)
        # The critical path's steps, priced with the classes, sum to T.
        assert sum(s["cost_ns"] for s in g.predict(params, path_steps=10**9).path()) == pytest.approx(t, rel=1e-9)


def test_one_message_per_class_by_hand():
    """Three sends 0 → 1 in a row, sizes 8 (small), 100 (medium), 1000 (large, handshake)."""
    from latitude import _core

    text = (
        "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 1\nl2: send 100b to 1 tag 2\nl2 requires l1\n"
        "l3: send 1000b to 1 tag 3\nl3 requires l2\n}\n"
        "rank 1 {\nl1: recv 8b from 0 tag 1\nl2: recv 100b from 0 tag 2\nl2 requires l1\n"
        "l3: recv 1000b from 0 tag 3\nl3 requires l2\n}\n"
    )
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.goal")
        open(path, "w").write(text)
        g = latitude.load(path)
        base = Params(L=1000, o=100, G=0, S=500)
        # small: o+10, L+1; medium: o+20, L+2; large: o+30, L+3 (ns)
        p = base.replace(S1=64, classes=(10, 1, 20, 2, 30, 3))
        pred = g.predict(p)
        # Receiver: small arrives at o+L = 110+1001, ends +110 → 1221; medium sent at 110,
        # arrives 110+120+1002 = 1232 > 1221, ends 1232+120 = 1352; large: send starts at 230,
        # RTS at 230+130+1003 = 1363 ≥ recv post 1352: h = 1363, E(recv) = h + 2·130 + 2·1003.
        assert pred.runtime_ns == pytest.approx(1363 + 260 + 2006 + 1003)  # the sender's FIN
        # The critical path is the sender's: the small and medium sends' o, then the large
        # one's RTS (o, L) and its handshake (2o, 3L).
        for name, lam in zip(CLASS_PARAMS, (1, 0, 1, 0, 3, 4)):
            assert pred.lambda_[name] == lam, name
        assert base.replace(S1=64).names[-6:] == CLASS_PARAMS
        # All class parameters zero: the two-protocol model.
        assert g.predict(base.replace(S1=64)).runtime_ns == g.predict(base).runtime_ns
    assert _core.NPARAM == 5


def test_bad_class_settings_are_refused():
    with pytest.raises(latitude.errors.InputError, match="below the eager limit"):
        Params(S=1024, S1=4096)
    with pytest.raises(latitude.errors.InputError, match="need the small limit"):
        Params(classes=(1, 2, 3, 4, 5, 6))


def test_machine_file_and_cli_set_the_classes(tmp_path, cli):
    m = tmp_path / "m.toml"
    m.write_text(
        '[loggps]\nL = "1us"\no = "200ns"\nS = "64KiB"\n\n[protocols]\nS1 = "1KiB"\n'
        'medium = { o = "100ns", L = "300ns" }\nlarge = { L = "3us" }\n'
    )
    p = Params.from_machine(str(m))
    assert (p.S1, p.classes) == (1024, (0.0, 0.0, 100.0, 300.0, 0.0, 3000.0))
    q = Params(L="1us", o="200ns", S="64KiB", S1="1KiB").with_values(
        {"medium.o": "100ns", "medium.L": 300, "large.L": "3us"}
    )
    assert q.to_dict() == p.to_dict()
    from conftest import EXAMPLES, one_line, run_cli

    goal = f"{EXAMPLES}/halo2d-16.goal"
    a = run_cli("predict", goal, "--machine", m, "--json").stdout
    b = run_cli(
        "predict",
        goal,
        "-L",
        "1us",
        "-o",
        "200ns",
        "-S",
        "64KiB",
        "--small-limit",
        "1KiB",
        "--set",
        "medium.o=100ns",
        "--set",
        "medium.L=300ns",
        "--set",
        "large.L=3us",
        "--json",
    ).stdout
    assert a == b
    m.write_text('[protocols]\nS1 = "1KiB"\nhuge = { o = "1us" }\n')
    one_line(run_cli("predict", goal, "--machine", m, check=False), "m.toml:3", "unknown key 'huge'")
