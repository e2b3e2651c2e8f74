"""`latitude decompose`: hand-worked cases (a receiver waiting for a late sender, a rendezvous
sender waiting for a late receive, nonblocking receives waited for early and late), the
parts summing to every rank's finish time and to T on random graphs, call names and measured
times from a trace, and the CSV / plot / JSON outputs."""

from __future__ import annotations

import csv
import json
import os

import pytest
from conftest import EXAMPLES, ROOT, run_cli
from latitude import _core, api
from latitude.graph import Graph
from latitude.params import Params

TRACE = os.path.join(ROOT, "tests", "data", "liballprof-bcast")
# L = 1 µs, o = 100 ns, no bandwidth or per-byte terms: every number below by hand.
P = dict(L=1000.0, o=100.0, g=0.0, G=0.0, O=0.0)


def goal(tmp_path, text: str) -> Graph:
    path = tmp_path / "g.goal"
    path.write_text(text)
    return api.load(str(path), progress=False)


def rank(d, r) -> tuple:
    x = d.per_rank[r]
    return (x["compute_ns"], x["network_ns"], x["stack_ns"], x["sync_ns"])


def test_a_receiver_waiting_for_a_late_sender_syncs_for_the_senders_delay(tmp_path):
    g = goal(
        tmp_path,
        "num_ranks 2\nrank 0 {\nl1: calc 10000\nl2: send 8b to 1 tag 0\nl2 requires l1\n}\n"
        "rank 1 {\nl1: recv 8b from 0 tag 0\n}\n",
    )
    d = g.decompose(Params(**P))
    # The sender: 10 µs computation, then its o. The receiver posts at 0 and waits for the
    # sender's start (sync = its delay, 10 µs), its o (stack), L (network), then its own o.
    assert rank(d, 0) == (10000, 0, 100, 0)
    assert rank(d, 1) == (0, 1000, 200, 10000)
    assert d.runtime_ns == 11200 == sum(rank(d, 1))


@pytest.mark.parametrize("protocol", ["handshake", "loggopsim"])
def test_a_rendezvous_sender_waits_for_a_late_receive(tmp_path, protocol):
    g = goal(
        tmp_path,
        "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n"
        "rank 1 {\nl1: calc 10000\nl2: recv 8b from 0 tag 0\nl2 requires l1\n}\n",
    )
    d = g.decompose(Params(**P, S=0, protocol=protocol))  # every message is rendezvous
    if protocol == "handshake":
        # The receive is posted 10 µs after the send: the sender syncs those 10 µs (its RTS,
        # o + L, is long there), then the handshake: read request and receive overheads 2o,
        # 3L with the FIN back.
        assert rank(d, 0) == (0, 3000, 200, 10000)
        assert rank(d, 1) == (10000, 2000, 200, 0)
    else:
        # LogGOPSim: the sender completes at the match; the data is long there for the receiver.
        assert rank(d, 0) == (0, 0, 0, 10000)
        assert rank(d, 1) == (10000, 0, 100, 0)
    assert d.runtime_ns == max(sum(rank(d, r)) for r in (0, 1))


NONBLOCKING = (
    "num_ranks 2\nrank 0 {{\nl1: recv 8b from 1 tag 0\nl2: calc 5000\nl2 irequires l1\n"
    "l3: calc 100\nl3 requires l1\nl3 requires l2\n}}\n"
    "rank 1 {{\nl1: calc {delay}\nl2: send 8b to 0 tag 0\nl2 requires l1\n}}\n"
)


def test_a_nonblocking_receive_waited_for_before_the_data_is_there(tmp_path):
    """Irecv, 5 µs computation, Wait: the sender starts at 20 µs, so the wait after the
    computation is sync up to the message's flight, then L and the receive's o."""
    d = Graph.decompose(goal(tmp_path, NONBLOCKING.format(delay=20000)), Params(**P))
    # The Wait starts at 5 µs, the send at 20 µs: sync 15 µs (the study's eq. 4), then the
    # sender's o, L and the receive's o.
    assert rank(d, 0) == (5100, 1000, 200, 15000)
    assert sum(rank(d, 0)) == 21300


def test_a_late_wait_finds_the_message_there_and_costs_nothing(tmp_path):
    """The message arrives at 2.1 µs, during the computation: the Wait at 5 µs is free and
    the receive's whole cost is hidden."""
    d = goal(tmp_path, NONBLOCKING.format(delay=1000)).decompose(Params(**P))
    assert rank(d, 0) == (5100, 0, 0, 0)
    assert d.runtime_ns == 5100


def test_a_collectives_own_block_copy_is_stack_and_counts_in_lambda_O(tmp_path):
    # 1 µs of computation, then a copy of 1001 bytes (a collective's own block) at O = 0.5 ns/B:
    # b(s)·O = 500 ns of MPI stack, and 1000 bytes in ∂T/∂O.
    g = goal(tmp_path, "num_ranks 1\nrank 0 {\nl1: calc 1000\n//@copy 1001b\nl2: calc 0\nl2 requires l1\n}\n")
    p = Params(**{**P, "O": 0.5})
    d = g.decompose(p)
    assert rank(d, 0) == (1000, 0, 500, 0)
    assert d.per_call == [{"call": "copy", "count": 1, "network_ns": 0.0, "stack_ns": 500.0, "sync_ns": 0.0}]
    pred = g.predict(p)
    assert pred.runtime_ns == d.runtime_ns == 1500
    assert pred.lambda_["O"] == 1000
    assert g.simulate(p).runtime_ns == 1500


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "S,protocol,nic", [(262144, "handshake", False), (0, "handshake", True), (100, "loggopsim", False)]
)
def test_parts_sum_to_every_ranks_end_and_to_T(seed, S, protocol, nic):
    copies = 0.3 if seed % 2 else 0.0  # calcs that copy (collectives' own blocks): stack
    h = _core.Graph.random(
        ranks=5, rounds=8, seed=seed, sizes=[0, 1, 64, 4096, 100000], p_nonblocking=0.5, p_copy=copies
    )
    g = Graph(h)
    p = Params(L=1234.5, o=210.0, g=55.0 if nic else 0.0, G=0.7, O=0.03, S=S, protocol=protocol, nic_serialization=nic)
    d = g.decompose(p)
    raw = h.decompose(p.to_core())
    assert raw["residual"] == 0  # exact, in ticks
    ends = raw["rank_end_ns"]
    for r in range(len(d.per_rank)):
        assert sum(rank(d, r)) == pytest.approx(ends[r], rel=1e-12, abs=1e-6)
        assert min(rank(d, r)) >= 0
    assert max(ends) == pytest.approx(g.predict(p).runtime_ns, rel=1e-12)
    mpi = sum(d.total[k] for k in ("network_ns", "stack_ns", "sync_ns"))
    by_call = sum(c[k] for c in d.per_call for k in ("network_ns", "stack_ns", "sync_ns"))
    assert by_call == pytest.approx(mpi, rel=1e-9)


def test_a_trace_names_the_mpi_functions_and_their_measured_time():
    g = Graph.from_trace(TRACE, calls=True, progress=False)
    d = g.decompose(Params())
    calls = {c["call"]: c for c in d.per_call}
    assert calls["MPI_Bcast"]["count"] == 20 and calls["MPI_Init"]["count"] == 4
    mpi = sum(d.total[k] for k in ("network_ns", "stack_ns", "sync_ns"))
    bcast = calls["MPI_Bcast"]
    assert bcast["network_ns"] + bcast["stack_ns"] + bcast["sync_ns"] == pytest.approx(mpi)
    assert bcast["measured_ns"] > 0
    # The measured time is the traced calls' durations, whatever the model says.
    times = _core.trace_times(TRACE)
    want = sum(float((r["end_ns"] - r["start_ns"])[r["name"] == r["names"].index("MPI_Bcast")].sum()) for r in times)
    assert bcast["measured_ns"] == pytest.approx(want)


def test_each_ranks_computation_is_its_traced_time_outside_mpi():
    """The model's computation is the trace's: a rank's span less its measured MPI time, so
    the MPI time the model misses is the rank's prediction error (T_r against the span)."""
    g = Graph.from_trace(TRACE, calls=True, progress=False)
    times = _core.trace_times(TRACE)
    for L in (0.0, 5000.0):  # whatever the model's MPI time
        d = g.decompose(Params(L=L, o=100.0))
        for r, t in zip(d.per_rank, times):
            fin = t["start_ns"][t["name"] == t["names"].index("MPI_Finalize")]
            assert r["measured_span_ns"] == fin.min()
            assert r["compute_ns"] == r["measured_span_ns"] - r["measured_mpi_ns"]
            model_mpi = r["network_ns"] + r["stack_ns"] + r["sync_ns"]
            T_r = r["compute_ns"] + model_mpi
            assert r["measured_mpi_ns"] - model_mpi == pytest.approx(r["measured_span_ns"] - T_r)


def test_cli_writes_json_csv_and_plot(tmp_path):
    goal_file = os.path.join(EXAMPLES, "halo2d-16.goal")
    out = json.loads(
        run_cli("decompose", goal_file, "--json", "--csv", tmp_path / "d.csv", "--plot", tmp_path / "d.png").stdout
    )
    assert [r["rank"] for r in out["per_rank"]] == list(range(16))
    assert {c["call"] for c in out["per_call"]} == {"send", "recv"}
    rows = list(csv.DictReader(open(tmp_path / "d.csv", encoding="utf-8")))
    assert [r["scope"] for r in rows].count("rank") == 16
    total = next(r for r in rows if r["scope"] == "total")
    assert float(total["sync_ns"]) == pytest.approx(out["total"]["sync_ns"])
    assert (tmp_path / "d.png").stat().st_size > 10_000
    text = run_cli("decompose", TRACE).stdout
    assert "MPI_Bcast" in text and "measured" in text
