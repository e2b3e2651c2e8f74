"""`latitude schedule` end to end: the liballprof fixture, GOAL round trip, JSON, traces as
input of predict, collective selection."""

from __future__ import annotations

import json
import os

from conftest import ROOT, run_cli

# liballprof's own sample trace (4 ranks, 5 broadcasts), as liballprof writes it.
FIXTURE = os.path.join(ROOT, "tests", "data", "liballprof-bcast")


def test_fixture_summary_and_goal(tmp_path):
    out = tmp_path / "bcast.goal"
    proc = run_cli("schedule", FIXTURE, "-o", out)
    line = proc.stdout.strip()
    assert line.startswith(
        "4 ranks, 28 calls → 74 ops, 15 messages (180 B); collectives (calls on all ranks): bcast/binomial 20"
    )
    assert line.endswith(f"wrote {out}")
    text = out.read_text()
    assert text.startswith("num_ranks 4\n")
    assert text.count("send 12b to") == 15


def test_fixture_also_by_its_rank0_file_and_schedgen_choice():
    proc = run_cli("schedule", os.path.join(FIXTURE, "trace_bcast-0.dat"), "--coll", "schedgen", "--json")
    stats = json.loads(proc.stdout)
    assert stats["pattern"] == "trace_bcast-<r>.dat"
    assert stats["collectives"] == {"bcast schedgen": 20}
    assert stats["coll"] == "schedgen"
    assert stats["graph"]["messages"] == 15


def test_goal_round_trip_keeps_the_prediction(tmp_path):
    from latitude import ScheduleOptions, load

    goal = tmp_path / "fixture.goal"
    run_cli("schedule", FIXTURE, "-o", goal, "--coll", "bcast=linear")
    direct = load(FIXTURE, schedule=ScheduleOptions(coll="bcast=linear"))
    again = load(str(goal))
    for key in ("ranks", "vertices", "edges", "messages", "bytes"):
        assert direct.info[key] == again.info[key], key
    for L in ("0", "1us", "50us"):
        a, b = direct.predict(L=L), again.predict(L=L)
        assert a.runtime_ns == b.runtime_ns
        assert a.lambda_ == b.lambda_


def test_predict_reads_a_trace_directory():
    proc = run_cli("predict", FIXTURE, "-L", "1us", "-o", "0", "-G", "0", "--json")
    out = json.loads(proc.stdout)
    # Root computes 7 µs; the last bcast reaches the deepest leaf after 2 hops.
    assert out["runtime_ns"] == 9000.0
    assert out["lambda"]["L"] == 2
    proc = run_cli("predict", FIXTURE, "-L", "1us", "-o", "0", "-G", "0", "--json", "--coll", "bcast=linear")
    assert json.loads(proc.stdout)["lambda"]["L"] == 1


def test_collectives_can_be_dropped_and_time_becomes_computation():
    proc = run_cli("schedule", FIXTURE, "--no-collectives", "--json")
    stats = json.loads(proc.stdout)
    assert stats["graph"]["messages"] == 0
    assert stats["unmodelled"]["MPI_Bcast"]["calls"] == 20
    assert stats["unmodelled"]["MPI_Bcast"]["time_ns"] == 20 * 1000
    proc = run_cli("schedule", FIXTURE, "--no-collectives")
    assert "latitude: note: MPI_Bcast: 20 calls, 20 µs kept as computation" in proc.stderr


def test_load_tells_traces_from_goal(tmp_path, examples):
    from latitude.api import sniff

    assert sniff(str(tmp_path)).name == "trace"
    assert sniff(os.path.join(examples, "halo2d-16.goal")).name == "goal"
    t = tmp_path / "x-0.txt"
    t.write_text("# liballprof\nMPI_Init:-:1:2:3\n")
    assert sniff(str(t)).name == "trace"
    j = tmp_path / "w.txt"
    j.write_text("# a job\n\n[JOB] a  # comment\n")
    assert sniff(str(j)).name == "job"


def test_a_trace_timed_by_the_model_is_predicted_exactly(tmp_path):
    """Timestamps written as LogGPS (L = 1 µs, o = G = 0) would produce them: rank 0 computes
    100 µs, sends to rank 1, computes 50 µs, receives rank 1's reply, computes 10 µs; rank 1
    computes 30 µs, receives (the message arrives at 101), computes 200 µs, replies (arrives at
    302). Converting and predicting with the same parameters must give rank 0's end, 312 µs:
    gaps become computation, time inside calls is re-created by the model."""
    w = "0,{},2"
    (tmp_path / "t-0.txt").write_text(
        "MPI_Init:-:1:2:0\n"
        f"MPI_Send:100:9:1:1,8,8:1:0:{w.format(0)}:100\n"
        f"MPI_Recv:150:9:1:1,8,8:1:0:{w.format(0)}:0:302\n"
        "MPI_Finalize:312:-\n"
    )
    (tmp_path / "t-1.txt").write_text(
        "MPI_Init:-:1:2:0\n"
        f"MPI_Recv:30:9:1:1,8,8:0:0:{w.format(1)}:0:101\n"
        f"MPI_Send:301:9:1:1,8,8:0:0:{w.format(1)}:301\n"
        "MPI_Finalize:301:-\n"
    )
    out = json.loads(run_cli("predict", tmp_path, "-L", "1us", "-o", "0", "-G", "0", "--json").stdout)
    assert out["runtime_ns"] == 312_000.0
    assert out["lambda"]["L"] == 2
