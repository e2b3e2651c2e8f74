"""Calibration: each parameter is identified by the measurement that isolates it (o from the
calls' own times, L from the round trip minus them, per protocol, G from large messages, C
from cold memory copies, K from collective calls against exchanges of the same bytes) and
recovered from measurements generated with the model's formulas (exactly, and within noise
for random machines, with the uncertainty covering the error); L = 0 is refused; a noisy
machine is flagged; samples are saved and fit again; the machine file is what --machine reads;
bad measurement output is reported by line, and a real short run works."""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
from pathlib import Path

import pytest
from jsonschemas import check
from latitude import calibrate, loggp_fit, tomlfile, tracer
from latitude.errors import InputError, ToolError
from latitude.params import Params
from tracetools import OMPI_RUN, run

SIZES = [0, 8, 64, 256, 1024, 2048, 4096, 16384, 65536, 262144, 1048576]


COPY_SIZES = [65536, 262144, 1048576, 2097152, 4194304]


def synthetic(L, o, G, O, S, noise=0.0, rng=None, L_r=None, C=None, K=None, scale=1.0) -> calibrate.Measurements:
    """latitude-calib's output for a machine that follows the model (µs); with noise, the
    samples behind each statistic too (11 batches, 21 calls). L_r: the rendezvous messages'
    own latency (MPI's rendezvous set-up beyond the model's). C: cold copies of b·C + 1 µs
    (None: no copy lines, as latitude-calib printed before it measured them). K: exchanges of
    1 µs (0 B) and 1.2 µs (8 B) per call, a barrier K + 0.3 µs above the first and an allreduce
    K − 0.3 µs above the second (None: no coll lines). `scale` multiplies every time (a run in
    a slower machine state)."""
    L_r = L if L_r is None else L_r

    def jitter(v):
        return scale * v * (1 + rng.uniform(-noise, noise)) if noise else scale * v

    lines = []
    for s in SIZES:
        b = max(s - 1, 0)
        half = L + 2 * o + b * (G + O) if s <= S else 3 * L_r + 3 * o + b * G
        batches = [jitter(half) / 1e3 for _ in range(11)]
        h = statistics.median(batches)
        lines.append(f"pingpong,{s},{min(batches):.6f},{h:.6f},{statistics.fmean(batches):.6f},11")
        lines.append(f"samples,pingpong,{s}," + ";".join(f"{v:.6f}" for v in batches))
        ov = (o + b * O) / 1e3
        for kind in ("o_send", "o_recv"):
            calls = [jitter(ov) for _ in range(21)]
            lines.append(f"{kind},{s},{statistics.median(calls):.6f}")
            lines.append(f"samples,{kind},{s}," + ";".join(f"{v:.6f}" for v in calls))
        lines.append(f"stream,{s},{jitter(ov):.6f}")
    lines.append(f"eager,{S}")
    lines.append("timer,25.0")
    for s in COPY_SIZES if C is not None else ():
        batches = [jitter(1000 + (s - 1) * C) / 1e3 for _ in range(11)]
        lines.append(f"samples,copy,{s}," + ";".join(f"{v:.6f}" for v in batches))
        lines.append(f"copy,{s},{statistics.median(batches):.6f}")
    if K is not None:
        base = {("exchange", 0): 1000, ("barrier", 0): 1300 + K, ("exchange", 8): 1200, ("allreduce", 8): 900 + K}
        for (name, s), ns in base.items():
            batches = [jitter(ns) / 1e3 for _ in range(11)]
            lines.append(f"samples,coll_{name},{s}," + ";".join(f"{v:.6f}" for v in batches))
            lines.append(f"coll,{name},{s},{statistics.median(batches):.6f}")
    return calibrate.Measurements.parse("\n".join(lines))


def test_fit_recovers_exact_parameters():
    f = loggp_fit.fit(synthetic(L=3000, o=1500, G=0.018, O=0.002, S=65536))
    assert f.L == pytest.approx(3000, rel=1e-4) and f.o == pytest.approx(1500, rel=1e-4)
    assert f.G == pytest.approx(0.018, rel=1e-3) and f.O == pytest.approx(0.002, rel=1e-3)
    assert f.S == 65536 and f.g == 0.0 and f.r2 == pytest.approx(1.0)
    assert f.max_rel_error < 1e-4
    assert {r["protocol"] for r in f.rows} == {"eager", "rendezvous"}
    assert "R² =" in loggp_fit.table(f)
    check("calibrate", f.to_dict())


def test_fit_random_machines_with_noise():
    """Property: for random machines with 2 % measurement noise the fitted model reproduces
    the noiseless half round trips within 6 % at every size."""
    rng = random.Random(7)
    for _ in range(25):
        L, o = rng.uniform(100, 5000), rng.uniform(50, 2000)
        G, O = rng.uniform(0.005, 0.5), rng.uniform(0, 0.05)
        S = rng.choice([1024, 4096, 65536])
        f = loggp_fit.fit(synthetic(L, o, G, O, S, noise=0.02, rng=rng))
        for s in SIZES:
            b = max(s - 1, 0)
            true = L + 2 * o + b * (G + O) if s <= S else 3 * L + 3 * o + b * G
            model = (f.L + 2 * f.o + b * (f.G + f.O)) if s <= S else 3 * f.L + 3 * f.o + b * f.G
            assert model == pytest.approx(true, rel=0.06), (L, o, G, O, S, s)


def test_g_visible_only_when_streaming_is_slower_than_o():
    m = synthetic(L=1000, o=500, G=0.01, O=0.0, S=4096)
    assert loggp_fit.fit(m).g == 0.0
    m.stream[0] = 2.0  # 2 µs per back-to-back message, o_send 0.5 µs
    f = loggp_fit.fit(m)
    assert f.g == pytest.approx(2000) and any("g = 2000" in n for n in f.notes)


def test_machine_file_round_trip(tmp_path):
    f = loggp_fit.fit(synthetic(L=2500, o=700, G=0.02, O=0.001, S=8192))
    path = tmp_path / "m.toml"
    path.write_text(loggp_fit.to_toml(f, "mpirun -np 2 latitude-calib"))
    p = Params.from_machine(str(path))
    assert p.L == pytest.approx(f.L, rel=1e-3) and p.o == pytest.approx(f.o, rel=1e-3)
    assert p.G == pytest.approx(f.G, rel=1e-5) and p.O == pytest.approx(f.O, rel=1e-4)
    assert p.S == 8192 and p.protocol == "handshake"
    f.S = None  # no eager limit found: every message eager
    path.write_text(loggp_fit.to_toml(f, "x"))
    assert Params.from_machine(str(path)).S >= 2**62


def test_copy_cost_is_the_slope_of_cold_copies(tmp_path):
    """C is the per-byte slope of the copies (their fixed cost aside), with its spread over
    the runs; it goes to the machine file's [loggps] with C_std in [fit], and --machine reads
    it back; a calibration without copy samples has no C and says copies are priced by O."""
    rng = random.Random(11)
    runs = [synthetic(L=700, o=250, G=0.03, O=0.01, S=16384, noise=0.03, rng=rng, C=0.075) for _ in range(3)]
    f = loggp_fit.fit(calibrate.combine(runs))
    assert f.C == pytest.approx(0.075, rel=0.05) and f.O == pytest.approx(0.01, rel=0.1)
    assert 0 < f.uncertainty["C"]["std"] < 0.01 and f.uncertainty["C"]["n"] == 3
    assert any(n.startswith("C = 0.07") for n in f.notes) and "C = 0.07" in loggp_fit.table(f)
    check("calibrate", f.to_dict())
    path = tmp_path / "m.toml"
    text = loggp_fit.to_toml(f, "x")
    assert "C_std = " in text
    path.write_text(text)
    assert Params.from_machine(str(path)).C == pytest.approx(f.C, rel=1e-5)
    old = loggp_fit.fit(synthetic(L=700, o=250, G=0.03, O=0.01, S=16384))
    assert old.C is None and "C =" not in loggp_fit.to_toml(old, "x")
    assert any("priced by O" in n for n in old.notes) and old.to_dict()["C_ns"] is None
    check("calibrate", old.to_dict())


def test_samples_without_copies_still_load_and_refit(tmp_path):
    """A samples file written before the copies were measured (no copy rows) still loads;
    one with them refits C."""
    rng = random.Random(12)
    runs = [synthetic(L=700, o=250, G=0.03, O=0.0, S=16384, noise=0.02, rng=rng, C=0.2) for _ in range(2)]
    calibrate.write_samples(runs, str(tmp_path / "new.csv"))
    lines = (tmp_path / "new.csv").read_text().splitlines()
    assert any(",copy,4194304," in ln for ln in lines)
    (tmp_path / "old.csv").write_text("\n".join(ln for ln in lines if ",copy," not in ln) + "\n")
    new = loggp_fit.fit(calibrate.combine(calibrate.read_samples(str(tmp_path / "new.csv"))))
    old = loggp_fit.fit(calibrate.combine(calibrate.read_samples(str(tmp_path / "old.csv"))))
    assert new.C == pytest.approx(0.2, rel=0.05) and old.C is None
    assert (old.L, old.o, old.G) == (new.L, new.o, new.G)


def coll_text(exchange0, barrier, exchange8, allreduce) -> str:
    """latitude-calib's coll lines for the given per-batch µs per call."""
    lines = []
    for (name, s), vals in zip(calibrate.COLLS, (exchange0, barrier, exchange8, allreduce)):
        lines.append(f"samples,coll_{name},{s}," + ";".join(map(str, vals)))
        lines.append(f"coll,{name},{s},{statistics.median(vals)}")
    return "\n".join(lines)


def test_collective_cost_is_the_calls_beyond_their_messages(tmp_path):
    """K is the median over batches of ((barrier − 0 B exchange) + (allreduce − 8 B exchange)) / 2,
    batch i of each kind paired: a batch slower in all four (preempted) changes nothing; it
    goes to [loggps] with K_std in [fit] and a note, and to the JSON as K_ns."""
    pp = "".join(f"{k},0,{v}\nsamples,{k},0,{v};{v};{v}\n" for k, v in (("o_send", 0.2), ("o_recv", 0.2)))
    pp += "pingpong,0,1.0,1.0,1.0,3\nsamples,pingpong,0,1.0;1.0;1.0\neager,4096\n"
    # per batch: (2.0 + 2.4) / 2 = 2.2, (1.8 + 2.0) / 2 = 1.9, (3.0 + 3.0) / 2 = 3.0 µs -> 2.2 µs
    m = calibrate.Measurements.parse(
        pp + coll_text([1.0, 1.0, 9.0], [3.0, 2.8, 12.0], [1.2, 1.2, 9.0], [3.6, 3.2, 12.0])
    )
    assert m.coll[("barrier", 0)] == 3.0 and m.coll[("allreduce", 8)] == 3.6
    assert loggp_fit.coll_cost(m) == pytest.approx(2200)
    f = loggp_fit.fit(m)
    assert f.K == pytest.approx(2200) and f.uncertainty["K"]["method"] == "bootstrap"
    note = next(n for n in f.notes if n.startswith("K = "))
    assert note.startswith("K = 2.20 ± ") and "priced once per rank per collective call" in note, note
    assert "2-rank barrier − 0 B exchange, allreduce of 8 B − 8 B exchange" in note
    assert "K = 2200.0" in loggp_fit.table(f)
    check("calibrate", f.to_dict())
    # three noisy runs of the synthetic machine: K within the noise, its spread over the runs
    rng = random.Random(13)
    runs = [synthetic(L=700, o=250, G=0.03, O=0.01, S=16384, noise=0.02, rng=rng, K=2100) for _ in range(3)]
    f = loggp_fit.fit(calibrate.combine(runs))
    assert f.K == pytest.approx(2100, rel=0.05) and f.to_dict()["K_ns"] == f.K
    assert 0 < f.uncertainty["K"]["std"] < 100 and f.uncertainty["K"]["n"] == 3
    assert f.K == statistics.median(loggp_fit.coll_cost(r) for r in runs)
    text = loggp_fit.to_toml(f, "x")
    data = tomlfile.tomllib.loads(text)
    assert data["loggps"]["K"] == f"{f.K:.6g}ns" and data["fit"]["K_std"] == pytest.approx(
        f.uncertainty["K"]["std"], rel=1e-5
    )
    exact = loggp_fit.fit(synthetic(L=700, o=250, G=0.03, O=0.01, S=16384, K=2100))
    assert exact.K == pytest.approx(2100) and 'K = "2100ns"' in loggp_fit.to_toml(exact, "x")


def test_collective_cost_not_positive_or_within_its_spread_is_zero_with_a_note():
    """K ≤ 0 (a barrier no slower than its exchange), or a K smaller than its spread over the
    runs, is written as K = 0, never silently."""
    f = loggp_fit.fit(synthetic(L=700, o=250, G=0.03, O=0.01, S=16384, K=-150))
    assert f.K == 0.0 and 'K = "0ns"' in loggp_fit.to_toml(f, "x")
    note = next(n for n in f.notes if n.startswith("K = "))
    assert note.startswith("K = -150.0 ± 0.0 ns measured") and "not positive" in note and note.endswith(": K = 0"), note
    check("calibrate", f.to_dict())
    runs = [synthetic(L=700, o=250, G=0.03, O=0.01, S=16384, K=k) for k in (50, 400, -300)]
    f = loggp_fit.fit(calibrate.combine(runs))
    assert f.K == 0.0 and f.uncertainty["K"]["std"] > 50
    assert any("smaller than its spread" in n and n.endswith(": K = 0") for n in f.notes), f.notes


def test_samples_without_collectives_still_load_and_have_no_K(tmp_path):
    """A samples file written before the collectives were measured (no coll_* rows) still
    loads and has no K (none in the machine file, a note saying so); one with them refits the
    same K as the measurements it was written from."""
    rng = random.Random(14)
    runs = [synthetic(L=700, o=250, G=0.03, O=0.0, S=16384, noise=0.02, rng=rng, K=800) for _ in range(2)]
    calibrate.write_samples(runs, str(tmp_path / "new.csv"))
    lines = (tmp_path / "new.csv").read_text().splitlines()
    assert {ln.split(",")[1] for ln in lines if ",coll_" in ln} == {"coll_exchange", "coll_barrier", "coll_allreduce"}
    (tmp_path / "old.csv").write_text("\n".join(ln for ln in lines if ",coll_" not in ln) + "\n")
    new = loggp_fit.fit(calibrate.combine(calibrate.read_samples(str(tmp_path / "new.csv"))))
    old = loggp_fit.fit(calibrate.combine(calibrate.read_samples(str(tmp_path / "old.csv"))))
    assert new.K == pytest.approx(loggp_fit.fit(calibrate.combine(runs)).K, abs=0.1)
    assert new.K == pytest.approx(800, rel=0.1) and old.K is None
    assert (old.L, old.o, old.G) == (new.L, new.o, new.G)
    assert "K =" not in loggp_fit.to_toml(old, "x") and "K_std" not in loggp_fit.to_toml(old, "x")
    assert any(n.startswith("K not measured") for n in old.notes) and old.to_dict()["K_ns"] is None
    check("calibrate", old.to_dict())


def test_repeated_runs_are_combined_by_per_size_medians():
    """Three runs, one of them disturbed (every time doubled, a different eager limit): the
    combined measurements are the per-size medians, the fit recovers the undisturbed machine,
    and the uncertainty is the spread of the single runs' estimates."""
    good = dict(L=3000, o=1500, G=0.018, O=0.002)
    runs = [synthetic(**good, S=65536), synthetic(**good, S=65536), synthetic(**good, S=4096)]
    slow = runs[2]
    slow.pingpong = {s: tuple(2 * v for v in t) for s, t in slow.pingpong.items()}
    slow.o_send = {s: 2 * v for s, v in slow.o_send.items()}
    del runs[1].stream[0]  # a statistic one run lacks: the median of the others
    m = calibrate.combine(runs)
    assert m.pingpong == runs[0].pingpong and m.o_send == runs[0].o_send and m.eager == 65536
    assert m.stream[0] == pytest.approx(statistics.median([runs[0].stream[0], runs[2].stream[0]]))
    f = loggp_fit.fit(m)
    assert f.L == pytest.approx(3000, rel=1e-4) and f.G == pytest.approx(0.018, rel=1e-3)
    assert f.runs == 3 and f.uncertainty["L"]["method"] == "runs" and f.uncertainty["L"]["n"] == 3
    assert f.uncertainty["o"]["max"] > f.uncertainty["o"]["min"] == pytest.approx(1500, rel=1e-4)
    assert any(n.startswith("uncertainty (over 3 runs") for n in f.notes), f.notes
    assert calibrate.combine(runs[:1]) is runs[0]
    # No eager limit in two of three runs: none in the median either.
    none = [synthetic(**good, S=65536), synthetic(**good, S=65536), synthetic(**good, S=4096)]
    none[0].eager = none[1].eager = None
    assert calibrate.combine(none).eager is None


def test_o_and_L_identified_separately():
    """Half round trips alone only see L + 2o (eager) and 3L + 3o (rendezvous); with the
    calls' own times, a machine with a small L and a large o is told from one with a large L
    and a small o, and the rendezvous messages' latency is reported beside the eager one."""
    a = loggp_fit.fit(synthetic(L=100, o=1000, G=0.05, O=0.0, S=4096, L_r=900))
    b = loggp_fit.fit(synthetic(L=1900, o=100, G=0.05, O=0.0, S=4096, L_r=900))
    assert (a.L, a.o) == (pytest.approx(100, abs=1), pytest.approx(1000, rel=1e-4))
    assert (b.L, b.o) == (pytest.approx(1900, rel=1e-4), pytest.approx(100, rel=1e-4))
    assert a.L_rendezvous == pytest.approx(900, rel=1e-3) and a.G == pytest.approx(0.05, rel=1e-4)
    assert any("handshake rendezvous is 2400 ns short" in n for n in a.notes), a.notes


def test_uncertainty_covers_the_error_of_noisy_runs():
    """Property: for random machines measured 3 times with 5 % noise, the fitted L, o and G
    lie within 4 standard deviations (over the runs) plus 2 % of the truth."""
    rng = random.Random(11)
    for _ in range(20):
        L, o = rng.uniform(200, 3000), rng.uniform(100, 1500)
        G, S = rng.uniform(0.01, 0.3), rng.choice([4096, 65536])
        runs = [synthetic(L, o, G, 0.0, S, noise=0.05, rng=rng) for _ in range(3)]
        f = loggp_fit.fit(calibrate.combine(runs))
        for name, true in (("L", L), ("o", o), ("G", G)):
            err = abs(getattr(f, name) - true)
            assert err <= 4 * f.uncertainty[name]["std"] + 0.02 * true + 20, (
                name,
                true,
                getattr(f, name),
                f.uncertainty,
            )


def test_single_run_uncertainty_is_a_bootstrap_of_its_samples():
    rng = random.Random(5)
    f = loggp_fit.fit(synthetic(L=800, o=300, G=0.02, O=0.0, S=8192, noise=0.05, rng=rng))
    assert f.runs == 1 and f.uncertainty["L"]["method"] == "bootstrap" and f.uncertainty["L"]["std"] > 0
    assert f.noise is not None and 0 < f.noise < 0.1 and not f.too_noisy


def test_L_zero_refused_unless_allowed():
    """A half round trip no longer than the calls' own times: L is not identified."""
    f = loggp_fit.fit(synthetic(L=-50, o=400, G=0.02, O=0.0, S=8192))
    with pytest.raises(ToolError, match="L is not identified"):
        loggp_fit.require_identified(f)
    assert loggp_fit.require_identified(f, allow_zero=True)
    assert f.L == 0 and any(n.endswith(": L = 0") for n in f.notes)
    assert not loggp_fit.require_identified(loggp_fit.fit(synthetic(L=50, o=400, G=0.02, O=0.0, S=8192)))


def test_noisy_machine_flagged_with_what_to_do():
    rng = random.Random(3)
    runs = [synthetic(L=500, o=300, G=0.02, O=0.0, S=8192, noise=0.4, rng=rng) for _ in range(3)]
    f = loggp_fit.fit(calibrate.combine(runs))
    assert f.too_noisy and f.noise > loggp_fit.NOISE_MAX
    note = next(n for n in f.notes if "too noisy" in n)
    assert "idle node" in note and "--bind-to core" in note and "--repeat" in note
    assert "too_noisy = true" in loggp_fit.to_toml(f, "x")


def test_two_machine_states_named_with_their_runs():
    """Five runs, two of them 2× slower at every size (a VM whose virtual CPUs sometimes share a
    cache and sometimes not): a note names those runs and the ratio; five runs with 10 % of
    noise and no such split, or two runs only, give none."""
    rng = random.Random(5)
    machine = dict(L=300, o=250, G=0.15, O=0.0, S=4096)
    runs = [synthetic(**machine, noise=0.05, rng=rng) for _ in range(5)]
    for slow in (runs[1], runs[4]):
        slow.pingpong = {s: tuple(2 * v for v in t) for s, t in slow.pingpong.items()}
    notes = [n for n in loggp_fit.fit(calibrate.combine(runs)).notes if "two machine states" in n]
    assert len(notes) == 1 and "runs 2, 5 of 5 2.0× slower" in notes[0], notes
    calm = [synthetic(**machine, noise=0.1, rng=rng) for _ in range(5)]
    assert not any("two machine states" in n for n in loggp_fit.fit(calibrate.combine(calm)).notes)
    assert not any("two machine states" in n for n in loggp_fit.fit(calibrate.combine(runs[:2])).notes)
    # round trips that read 0 in most runs (a broken samples file) name no states and raise nothing
    for r in runs[:3]:
        r.pingpong = {s: (0.0, 0.0, 0.0) for s in r.pingpong}
    assert loggp_fit._two_states(runs) == []


def test_samples_saved_and_fit_again(tmp_path):
    rng = random.Random(9)
    runs = [synthetic(L=700, o=250, G=0.03, O=0.001, S=16384, noise=0.03, rng=rng) for _ in range(2)]
    path = tmp_path / "m.samples.csv"
    calibrate.write_samples(runs, str(path))
    import pandas as pd

    df = pd.read_csv(path)
    assert list(df.columns) == calibrate.SAMPLES_HEADER and set(df["run"]) == {1, 2}
    assert (df[(df.kind == "pingpong") & (df.run == 1)].groupby("bytes").size() == 11).all()
    again = calibrate.read_samples(str(path))
    assert [r.eager for r in again] == [16384, 16384] and again[0].timer_ns == pytest.approx(25.0)
    f1, f2 = loggp_fit.fit(calibrate.combine(runs)), loggp_fit.fit(calibrate.combine(again))
    for name in ("L", "o", "G", "O"):
        assert getattr(f2, name) == pytest.approx(getattr(f1, name), rel=1e-3, abs=1e-3)


def test_from_samples_cli(tmp_path):
    rng = random.Random(4)
    runs = [synthetic(L=700, o=250, G=0.03, O=0.0, S=16384, noise=0.02, rng=rng) for _ in range(3)]
    calibrate.write_samples(runs, str(tmp_path / "s.csv"))
    out = tmp_path / "m.toml"
    proc = run([sys.executable, "-m", "latitude", "calibrate", "--from-samples", tmp_path / "s.csv", "-o", out])
    p = Params.from_machine(str(out))
    assert p.L == pytest.approx(700, rel=0.1) and p.S == 16384 and "± " in proc.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("run,kind,bytes,index,value_us\n1,pingpong,eight,0,1.0\n")
    proc = run([sys.executable, "-m", "latitude", "calibrate", "--from-samples", bad], check=False)
    assert proc.returncode == 2 and proc.stderr.startswith(f"latitude: {bad}:2:"), proc.stderr


@pytest.mark.parametrize(
    "text,line",
    [
        ("pingpong,8,1.0,1.0,1.0,5\npingpong,x,1,1,1,5\n", 2),
        ("# header\npingpong,8,1.0\n", 2),
        ("o_send,8\n", 1),
    ],
)
def test_bad_measurement_lines(text, line):
    with pytest.raises(InputError) as e:
        calibrate.Measurements.parse(text, "calib.csv")
    assert e.value.where == f"calib.csv:{line}"


def test_calibrate_real_short_run(ompi_apps, tmp_path):
    out = tmp_path / "machine.toml"
    proc = run(
        [
            sys.executable,
            "-m",
            "latitude",
            "calibrate",
            "-o",
            out,
            "--sizes",
            "8,1KiB,8KiB,64KiB",
            "--batches",
            "3",
            "--iters",
            "20",
            "--json",
            "--",
            OMPI_RUN,
            "-np",
            "2",
        ],
        timeout=300,
    )
    s = check("calibrate", json.loads(proc.stdout))
    assert [r["bytes"] for r in s["rows"]] == [8, 1024, 8192, 65536] and s["r2"] <= 1
    p = Params.from_machine(str(out))
    assert p.L > 0 and p.o > 0 and p.G > 0 and p.protocol == "handshake"
    assert 0 < p.S < 1 << 20  # Open MPI's shared memory switches protocol well below 1 MiB
    runs = calibrate.read_samples(str(tmp_path / "machine.samples.csv"))
    assert len(runs) == 3 and all(len(r.samples[("pingpong", 8)]) == 3 for r in runs)
    # C, the cold copies' slope: positive and between 0.01 and 1 ns/B (1 to 100 GB/s; 0.07–0.3
    # on the development VM, idle to loaded), with its spread in the file
    assert 0.01 < p.C < 1.0 and s["C_ns"] == pytest.approx(p.C, rel=1e-5)
    assert all(len(r.samples[("copy", 4194304)]) == 3 for r in runs)
    assert "C_std = " in out.read_text()


def test_calibrate_real_measures_K(ompi_apps, tmp_path):
    """A real 2-rank calibration writes K ≥ 0 in [loggps] with K_std in [fit], keeps the
    collectives' per-batch samples, and --from-samples on them writes the same K. (The machine
    file is read as TOML: what --machine makes of K is the model's, not calibrate's.)"""
    out, again = tmp_path / "machine.toml", tmp_path / "again.toml"
    short = ["--sizes", "8,1KiB", "--batches", "3", "--iters", "20", "--repeat", "2", "--allow-zero-L"]
    run([sys.executable, "-m", "latitude", "calibrate", "-o", out, *short, "--", OMPI_RUN, "-np", "2"], timeout=300)
    data = tomlfile.read(out)[0]
    K = data["loggps"]["K"]
    assert K.endswith("ns") and float(K[:-2]) >= 0 and data["fit"]["K_std"] >= 0
    samples = tmp_path / "machine.samples.csv"
    runs = calibrate.read_samples(str(samples))
    assert len(runs) == 2 and all(len(r.samples[("coll_barrier", 0)]) == 3 for r in runs)
    run([sys.executable, "-m", "latitude", "calibrate", "--from-samples", samples, "-o", again, "--allow-zero-L"])
    assert tomlfile.read(again)[0]["loggps"]["K"] == K


def test_calibrate_under_the_tracer(ompi_apps, tmp_path):
    """--under-tracer measures with the tracer preloaded (the machine a traced run sees) and
    keeps no trace: the records go to a temporary directory that is removed."""
    out = tmp_path / "machine.toml"
    before = set(Path(tempfile.gettempdir()).glob("latitude-calib-trace-*"))
    cmd = [sys.executable, "-m", "latitude", "calibrate", "--under-tracer", "-o", out, "--sizes", "8,1KiB,64KiB"]
    # 3 batches of 20 round trips: too few to identify L every time (1 run in 4 refused L < 0);
    # what is tested here is the tracer's wiring, so L = 0 may be written
    run(
        [*cmd, "--batches", "3", "--iters", "20", "--repeat", "1", "--allow-zero-L", "--", OMPI_RUN, "-np", "2"],
        timeout=300,
        cwd=tmp_path,
    )
    text = out.read_text()
    assert "(under the tracer)" in text and "under_tracer = true" in text and "under_injector = false" in text
    assert Params.from_machine(str(out)).o > 0
    assert set(Path(tempfile.gettempdir()).glob("latitude-calib-trace-*")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["machine.samples.csv", "machine.toml"]


def test_tracer_gap_is_taken_out_of_what_was_timed_from_outside(tmp_path):
    """Under the tracer the calls timed from outside hold the tracer's own work around each
    record once; a traced graph has that work as computation between the records, so it is
    the median MPI_Recv end → MPI_Send start gap of rank 1 and is subtracted from the half
    round trips, the calls' own times and back-to-back sends, not from copies or the
    collective calls (whose K is a difference of two calls that both hold it)."""
    t = tmp_path / "t"
    t.mkdir()
    (t / "pmpi-trace-rank-0.txt").write_text("MPI_Send:1.000:x:1.100\n")
    (t / "pmpi-trace-rank-1.txt").write_text(
        "".join(
            f"MPI_Recv:{10 * i}.000:x:{10 * i + 1}.000\nMPI_Send:{10 * i + 1 + g:.3f}:x:{10 * i + 2}.500\n"
            for i, g in enumerate((0.05, 0.04, 0.06, 2.0, 0.05))
        )
        + "MPI_Recv:90.000:x:91.000\nMPI_Barrier:91.500:x:92.000\nMPI_Send:93.000:x:93.100\n"
    )
    assert calibrate.tracer_gap_us(t) == pytest.approx(0.05)
    m = synthetic(400, 200, 0.1, 0.05, 4096, C=0.2, K=50)
    before = synthetic(400, 200, 0.1, 0.05, 4096, C=0.2, K=50)
    m.less_tracer_gap(0.05)
    assert m.tracer_gap_ns == pytest.approx(50)
    for s, v in before.pingpong.items():
        assert m.pingpong[s] == pytest.approx(tuple(x - 0.05 for x in v))
    for kind in ("o_send", "o_recv", "stream"):
        for s, v in getattr(before, kind).items():
            assert getattr(m, kind)[s] == pytest.approx(v - 0.05)
    assert m.copy == before.copy and m.coll == before.coll
    f = loggp_fit.fit(m)
    assert "outside the records (50 ns" in f.notes[0]


def test_calibration_program_reads_no_traced_clock(ompi_apps, tmp_path):
    """latitude-calib times with clock_gettime, never MPI_Wtime: the tracer records every
    MPI_Wtime like any MPI call, so reads of it inside the timed round trips made each half
    round trip under --under-tracer ~80 ns longer than a traced program's (NetPIPE's 8 B:
    0.40 against 0.50 µs), and every prediction of a traced run came out high."""
    from latitude import inject

    prog = inject.build_with_spinner(inject.Launch.resolve([OMPI_RUN, "-np", "2"], None), inject.CALIB_PROGRAM)
    what = ["--what", "pingpong,overhead,stream,eager,coll", "--sizes", "8,65536", "--batches", "2", "--iters", "5"]
    cmd = [sys.executable, "-m", "latitude", "trace", "-o", tmp_path / "t", "--", OMPI_RUN, "-np", "2", prog, *what]
    run(cmd, timeout=300, cwd=tmp_path)
    text = ""
    for f in tracer.trace_files(tmp_path / "t"):
        with tracer.open_trace(f) as t:
            text += t.read().decode()
    assert "MPI_Send:" in text and "MPI_Barrier:" in text  # the measurements were traced
    assert "MPI_Wtime:" not in text and "MPI_Wtick:" not in text


@pytest.mark.parametrize(
    "opts,where",
    [
        (["--sizes", "8"], "--sizes"),
        (["--sizes", "8,lots"], "--sizes"),
        (["--batches", "0"], "--batches"),
        (["--repeat", "0"], "--repeat"),
    ],
)
def test_calibrate_bad_input(tracer_cache, opts, where):
    proc = run([sys.executable, "-m", "latitude", "calibrate", *opts, "--", OMPI_RUN, "-np", "2"], check=False)
    assert proc.returncode == 2 and proc.stderr.startswith(f"latitude: {where}"), proc.stderr
    assert proc.stderr.count("\n") == 1


def synthetic_classes(S1, medium_o, medium_L, noise=0.0, seed=0, scale=1.0) -> calibrate.Measurements:
    """latitude-calib's output for a machine with a cheaper small-message path: sizes above
    S1 (and up to S = 64 KiB) pay medium_o more per call and medium_L more latency; `scale`
    multiplies every time (a run in a slower machine state)."""
    L, o, G, O, S = 2000.0, 300.0, 0.02, 0.001, 65536
    rng = random.Random(seed)

    def jitter(v):
        return scale * v * (1 + rng.uniform(-noise, noise)) if noise else scale * v

    lines = []
    for s in SIZES:
        bb = max(s - 1, 0)
        xo, xl = (medium_o, medium_L) if S1 < s <= S else (0.0, 0.0)
        half = L + xl + 2 * (o + xo) + bb * (G + O) if s <= S else 3 * L + 3 * o + bb * G
        lines.append(f"pingpong,{s},{jitter(half) / 1e3:.6f},{jitter(half) / 1e3:.6f},{half / 1e3:.6f},11")
        for kind in ("o_send", "o_recv"):
            lines.append(f"{kind},{s},{jitter(o + xo + bb * O) / 1e3:.6f}")
    lines.append(f"eager,{S}")
    return calibrate.Measurements.parse("\n".join(lines))


def test_protocol_classes_found_with_their_cut_off_and_costs(tmp_path):
    from latitude import protocol_fit

    m = synthetic_classes(S1=1024, medium_o=150, medium_L=600)
    c = protocol_fit.fit_classes(m, loggp_fit.fit(m))
    assert c.S1 == 1024
    assert c.values["medium.o"] == pytest.approx(150, abs=1) and c.values["medium.L"] == pytest.approx(600, abs=2)
    assert c.values["small.o"] == pytest.approx(0, abs=1) and c.values["small.L"] == pytest.approx(0, abs=2)
    # the calibration's table shows the model with the classes: every size as measured
    rows = protocol_fit.with_classes(loggp_fit.fit(m).rows, loggp_fit.fit(m), c)
    assert max(abs(r["classes_ns"] - r["measured_ns"]) / r["measured_ns"] for r in rows) < 1e-3
    assert max(abs(r["rel_error"]) for r in rows) > 0.05  # the one-class model alone is not
    assert "+classes µs" in loggp_fit.table(loggp_fit.fit(m), rows)
    machine = tmp_path / "m.toml"
    f = loggp_fit.fit(m)
    machine.write_text(loggp_fit.to_toml(f, "test") + "\n".join(c.toml()) + "\n")
    p = Params.from_machine(str(machine))
    assert p.S1 == 1024 and p.value("medium.L") == pytest.approx(600, abs=2)


def test_a_step_every_run_shows_is_a_class_though_one_run_is_slower():
    """Five runs, one in a machine state 1.3x slower at every size: the spread between the
    runs' round trips is large, the step of 100 ns above 1 KiB inside each run is not. The
    step is judged by its own spread over the runs, so the class is found; without the step
    (the same runs) one class stays enough."""
    from latitude import protocol_fit

    def runs(medium_L):
        return [synthetic_classes(1024, 0, medium_L, 0.002, seed, 1.3 if seed == 2 else 1.0) for seed in range(5)]

    m = calibrate.combine(runs(100))
    f = loggp_fit.fit(m)
    assert f.noise > 0.05  # the slow run: judged by the levels' spread, the step is noise
    c = protocol_fit.fit_classes(m, f)
    assert c.S1 == 1024 and c.values["medium.L"] == pytest.approx(100, abs=15)
    m = calibrate.combine(runs(0))
    assert protocol_fit.fit_classes(m, loggp_fit.fit(m)).S1 is None


def test_one_class_is_enough_without_a_step():
    from latitude import protocol_fit

    m = synthetic_classes(S1=1024, medium_o=0, medium_L=0, noise=0.01, seed=3)
    c = protocol_fit.fit_classes(m, loggp_fit.fit(m))
    assert c.S1 is None and c.toml() == []
    assert "one eager class is enough" in c.notes[0]


def test_a_rendezvous_set_up_alone_is_a_large_class():
    """One eager class, but rendezvous messages 3 µs slower per latency term than L (a
    shared-memory rendezvous set-up): S1 = 0 and large.L = 3 µs."""
    from latitude import protocol_fit

    m = synthetic(L=2000, o=300, G=0.02, O=0.001, S=65536, L_r=5000)
    c = protocol_fit.fit_classes(m, loggp_fit.fit(m))
    assert c.S1 == 0 and c.values["large.L"] == pytest.approx(3000, rel=1e-3)
    assert "[protocols]" in c.toml() and "rendezvous messages add" in c.notes[-1]


@pytest.mark.parametrize("set_up", [1000.0, 0.0])
def test_a_rendezvous_set_up_every_run_shows_is_kept_though_one_run_is_slower(set_up):
    """Three runs, one in a machine state 1.8x slower at every size (the eighth validation
    study's CG calibration): the spread between the runs' levels is 80 %, the rendezvous
    set-up (1 µs per latency term, half of a 16 KiB round trip) inside each run is not noise.
    Judged by the levels' spread it was dropped; by each run's own share it is kept, and
    without a set-up (the same runs) there is no large class."""
    from latitude import protocol_fit

    runs = [
        synthetic(
            300, 150, 0.1, 0.02, 4096, 0.002, random.Random(seed), L_r=300 + set_up, scale=1.8 if seed == 1 else 1.0
        )
        for seed in range(3)
    ]
    m = calibrate.combine(runs)
    f = loggp_fit.fit(m)
    assert f.noise > 0.5  # what refused the class before
    c = protocol_fit.fit_classes(m, f)
    if set_up:
        assert c.S1 == 0 and c.values["large.L"] == pytest.approx(set_up, rel=0.05)
    else:
        assert c.S1 is None and c.toml() == []
