"""`latitude simulate` end to end: agreement with `predict`, LogGOPSim compatibility, noise,
Monte Carlo outputs, timelines (checked against the trace-event rules) and bad input."""

from __future__ import annotations

import json
import os

import pytest
from conftest import EXAMPLES, run_cli
from trace_rules import check_trace

FIG4B = os.path.join(EXAMPLES, "llamp-fig4b.goal")
HALO = os.path.join(EXAMPLES, "halo2d-16.goal")


def sim_json(*args):
    return json.loads(run_cli("simulate", *args, "--json").stdout)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_worked_example_equals_predict():
    out = sim_json(FIG4B, "-L", "500ns", "-o", "0", "-G", "5ns")
    assert out["runtime_ns"] == 2515.0  # L + 2.015 µs
    assert out["rank_end_ns"] == [2000.0, 2515.0]
    pred = json.loads(run_cli("predict", FIG4B, "-L", "500ns", "-o", "0", "-G", "5ns", "--json").stdout)
    assert pred["runtime_ns"] == out["runtime_ns"]


def test_generated_blocking_programs_equal_predict(tmp_path):
    import latitude

    for seed in range(5):
        g = latitude.Graph.random(ranks=5, rounds=12, seed=seed, p_nonblocking=0.0)
        path = str(tmp_path / f"g{seed}.goal")
        g.write_goal(path)
        for proto in ("handshake", "loggopsim"):
            args = (path, "-S", "4KiB", "--rendezvous", proto)
            sim = sim_json(*args)
            pred = json.loads(run_cli("predict", *args, "--json").stdout)
            assert sim["runtime_ns"] == pytest.approx(pred["runtime_ns"], rel=1e-9)


def test_cpu_serialization_makes_overlap_slower_than_predict():
    sim = sim_json(HALO)["runtime_ns"]
    free = sim_json(HALO, "--no-cpu-serialization")["runtime_ns"]
    pred = json.loads(run_cli("predict", HALO, "--json").stdout)["runtime_ns"]
    assert free == pytest.approx(pred, rel=1e-9)
    assert sim > pred


ZERO_BYTES = """num_ranks 2
rank 0 {
a: send 0b to 1 tag 0
b: send 8b to 1 tag 1
b requires a
}
rank 1 {
recv 0b from 0 tag 0
recv 8b from 0 tag 1
}
"""


def test_loggopsim_compat_reproduces_the_zero_byte_wrap(tmp_path):
    path = write(tmp_path, "zero.goal", ZERO_BYTES)
    out = sim_json(path, "--loggopsim-compat", "-L", "1000", "-o", "50", "-G", "5", "-O", "0", "-S", "65535")
    # hand-computed in docs/simulator.md (quirk 3): integer ns, wrapped
    assert out["rank_end_ns"] == [45, 1180]
    assert out["runtime_ns"] == 1180
    assert out["semantics"] == "loggopsim"


def test_loggopsim_compat_rounds_fractional_parameters_with_a_note():
    """LogGOPSim takes whole ns: a calibrated machine (sub-ns G) is rounded, not refused, and
    the output says what changed; the result is the simulation of the rounded values."""
    out = sim_json(FIG4B, "--loggopsim-compat", "-L", "999.6ns", "-o", "50", "-G", "0.3ns", "-O", "0")
    exact = sim_json(FIG4B, "--loggopsim-compat", "-L", "1000", "-o", "50", "-G", "0", "-O", "0")
    assert out["runtime_ns"] == exact["runtime_ns"] and out["params"]["L"] == 1000 and out["params"]["G"] == 0
    assert len(out["notes"]) == 1 and "L 999.6 → 1000 ns" in out["notes"][0] and "G 0.3 → 0 ns/B" in out["notes"][0]
    assert "no per-byte cost" in out["notes"][0]
    assert exact["notes"] == []
    table = run_cli("simulate", FIG4B, "--loggopsim-compat", "-G", "0.3ns").stdout
    assert "note" in table and "rounded" in table


def test_simulate_takes_a_trace_with_schedule_options(ompi_apps, tmp_path):
    """Like every other command: a trace directory, scheduled with --coll etc.; the same
    result as simulating the GOAL file `latitude schedule` writes with the same options."""
    from tracetools import ompi, trace

    traces = tmp_path / "tr"
    trace(traces, [*ompi(2), ompi_apps / "halo2d", "--iters", "10", "--nx", "64", "--ny", "64"])
    run_cli("schedule", traces, "-o", tmp_path / "g.goal", "--coll", "allreduce=ring")
    direct = sim_json(traces, "--coll", "allreduce=ring")
    via = sim_json(tmp_path / "g.goal")
    assert direct["runtime_ns"] == via["runtime_ns"] and direct["events"] == via["events"] > 0
    assert sim_json(traces)["events"] != direct["events"]  # the option reached the scheduler


def test_wildcard_graph_runs_only_in_the_simulator(tmp_path):
    path = write(
        tmp_path,
        "any.goal",
        "num_ranks 3\nrank 0 {\nl1: recv 8b from -1 tag -1\nl2: recv 8b from -1 tag -1\n}\n"
        "rank 1 {\nl1: send 8b to 0 tag 4\n}\nrank 2 {\nl1: calc 5000\nl2: send 8b to 0 tag 9\nl2 requires l1\n}\n",
    )
    out = sim_json(path, "-L", "1us", "-o", "100ns", "-G", "0")
    # rank 0's receives complete at 1.1 + 0.1 µs and 5 + 0.1 + 1 + 0.1 µs
    assert out["rank_end_ns"] == [6200.0, 100.0, 5100.0]
    p = run_cli("predict", path, check=False)
    assert p.returncode == 2 and "ANY_SOURCE" in p.stderr


def test_noise_is_deterministic_per_seed():
    args = (HALO, "--noise", "calc:lognormal:sigma=0.3", "--noise", "latency:gaussian:sigma=500ns")
    a, b = sim_json(*args, "--seed", "4"), sim_json(*args, "--seed", "4")
    c = sim_json(*args, "--seed", "5")
    assert a == b
    assert a["runtime_ns"] != c["runtime_ns"]
    assert a["baseline_runtime_ns"] == sim_json(HALO)["runtime_ns"]


def test_samples_report_percentiles_and_write_outputs(tmp_path):
    png, svg, csv = (str(tmp_path / n) for n in ("h.png", "h.svg", "s.csv"))
    args = (HALO, "--noise", "calc:gaussian:sigma=10%", "--noise", "os:period=50us,duration=3us", "--samples", "40")
    out = sim_json(*args, "--hist", png, "--csv", csv, "--seed", "2")
    st = out["samples"]
    assert st["n"] == 40
    assert st["p50_ns"] <= st["p90_ns"] <= st["p99_ns"] <= st["max_ns"]
    assert st["min_ns"] <= st["mean_ns"] <= st["max_ns"] and st["std_ns"] > 0
    assert st["p50_ns"] > out["baseline_runtime_ns"]  # noise only delays
    rows = open(csv).read().splitlines()
    assert rows[0] == "sample,seed,runtime_us,slowest_rank" and len(rows) == 41
    assert float(rows[1].split(",")[2]) * 1000 == pytest.approx(out["runtime_ns"], rel=1e-9)  # sample 0 = the run
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    run_cli("simulate", *args, "--hist", svg, "--seed", "2", "--threads", "1")
    assert "<svg" in open(svg).read(2000)
    # the thread count does not change the samples
    again = sim_json(*args, "--seed", "2", "--threads", "1")
    assert again["samples"] == st


def test_timeline_follows_the_trace_event_rules(tmp_path):
    out = str(tmp_path / "t.json")
    res = sim_json(FIG4B, "-L", "500ns", "-o", "0", "-G", "5ns", "--timeline", out)
    doc = json.load(open(out))
    assert check_trace(doc) == []
    ev = doc["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X" and e["pid"] < 2]
    assert {(e["pid"], e["name"], e["ts"], e["dur"]) for e in xs} >= {(0, "calc", 0.0, 1.0), (1, "calc", 1.515, 1.0)}
    crit = [e for e in ev if e["ph"] == "X" and e["pid"] == 2]
    assert [e["name"] for e in crit] == ["rank 0: calc", "rank 0: send 4 B → 1", "rank 1: recv 4 B ← 0", "rank 1: calc"]
    assert all(e["args"]["critical"] and "critical" in e["cat"] for e in crit)
    assert crit[-1]["ts"] + crit[-1]["dur"] == pytest.approx(res["runtime_ns"] / 1000)
    assert [e["cat"] for e in ev if e["ph"] == "s"] == ["msg,critical"]
    assert res["timeline"]["critical_messages"] == 1


def critical_chain(doc, ranks):
    """The critical path's phases in time order: (first start, last end, overlaps)."""
    cr = sorted((e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == ranks), key=lambda e: e["ts"])
    overlaps = sum(b["ts"] < a["ts"] + a["dur"] - 1e-6 for a, b in zip(cr, cr[1:]))
    return cr[0]["ts"], cr[-1]["ts"] + cr[-1]["dur"], overlaps


@pytest.mark.parametrize("compat", [(), ("--loggopsim-compat", "-G", "0")])
def test_critical_path_is_a_chain_from_zero_to_the_runtime(tmp_path, compat):
    out = str(tmp_path / "halo.json")
    res = sim_json(HALO, *compat, "--timeline", out)
    doc = json.load(open(out))
    assert check_trace(doc) == []
    first, last, overlaps = critical_chain(doc, 16)
    assert (first, overlaps) == (0.0, 0)
    assert last == pytest.approx(res["runtime_ns"] / 1000, abs=1e-6)
    assert res["timeline"]["critical_messages"] > 10


def test_timeline_of_a_nonblocking_program_is_valid(tmp_path):
    out = str(tmp_path / "halo.json")
    run_cli("simulate", HALO, "--timeline", out, "--timeline-window", "0:200us")
    doc = json.load(open(out))
    assert check_trace(doc) == []
    phases = {e["ph"] for e in doc["traceEvents"]}
    assert phases == {"M", "X", "b", "e", "s", "f"}
    assert max(e["ts"] for e in doc["traceEvents"] if e["ph"] == "X") <= 200.0
    free = str(tmp_path / "free.json")
    run_cli("simulate", HALO, "--no-cpu-serialization", "--timeline", free, "--timeline-window", "0:100us")
    doc = json.load(open(free))
    assert check_trace(doc) == []
    assert any(e["ph"] == "M" and "overlap" in e["args"].get("name", "") for e in doc["traceEvents"])


def test_trace_rules_catch_violations():
    bad = {
        "traceEvents": [
            {"ph": "X", "name": "a", "ts": 0, "dur": 2, "pid": 0, "tid": 0},
            {"ph": "X", "name": "b", "ts": 1, "dur": 2, "pid": 0, "tid": 0},
            {"ph": "s", "name": "m", "cat": "msg", "id": 1, "ts": 5, "pid": 0, "tid": 0},
            {"ph": "f", "name": "m", "cat": "msg", "id": 1, "ts": 0.5, "pid": 0, "tid": 0},
            {"ph": "b", "name": "w", "cat": "wait", "id": "0x1", "ts": 3, "pid": 0, "tid": 0},
        ]
    }
    errs = "\n".join(check_trace(bad))
    for what in ("without nesting", "bp", "ends before it starts", "not inside a slice", "async"):
        assert what in errs


@pytest.mark.parametrize(
    "args,where",
    [
        (("--noise", "calc:gauss:sigma=1"), "--noise"),
        (("--noise", "os:period=1us,duration=2us"), "--noise"),
        (("--noise", "calc:uniform:2us:1us"), "--noise"),
        (("--hist", "x.png"), "--hist"),
        (("--samples", "0"), "--samples"),
        (("--timeline", "out.txt"), "--timeline"),
        (("--timeline", "t.json", "--timeline-max-events", "3"), "--timeline"),
        (("--loggopsim-compat", "--rendezvous", "handshake", "-G", "0"), "--rendezvous"),
    ],
)
def test_bad_options_give_one_line_errors(args, where, tmp_path):
    p = run_cli("simulate", FIG4B, *args, check=False, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"latitude: {where}: ")
    assert len(p.stderr.strip().splitlines()) == 1


def test_bad_noise_trace_names_file_and_line(tmp_path):
    trace = write(tmp_path, "noise.txt", "# start\tduration\n100\t5\n300\tfive\n")
    p = run_cli("simulate", FIG4B, "--noise", f"trace:{trace}", check=False)
    assert p.returncode == 2
    assert p.stderr.strip() == f"latitude: {trace}:3: expected the duration in ns (a number), found 'five'"
    good = write(tmp_path, "ok.txt", "0\t50\n100\t50\n")
    out = sim_json(FIG4B, "--noise", f"trace:{good}")
    assert out["runtime_ns"] > out["baseline_runtime_ns"]


def test_stalled_simulation_names_the_operation(tmp_path):
    path = write(
        tmp_path, "dead.goal", "num_ranks 2\nrank 0 {\nl1: recv 8b from -1 tag 7\n}\nrank 1 {\nl1: calc 10\n}\n"
    )
    p = run_cli("simulate", path, check=False)
    assert p.returncode == 2
    assert p.stderr.startswith(f"latitude: {path}:3: rank 0 recv #0")
    assert "was never matched" in p.stderr
