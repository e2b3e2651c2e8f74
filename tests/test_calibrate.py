"""Calibration: the fit recovers LogGPS parameters from measurements generated with the
model's formulas (exactly, and within noise for random machines), the machine file it writes
is what --machine reads, bad measurement output is reported by line, and a real short run
works."""

from __future__ import annotations

import json
import random
import statistics
import sys

import pytest
from jsonschemas import check
from latitude import calibrate
from latitude.errors import InputError
from latitude.params import Params
from tracetools import OMPI_RUN, run

SIZES = [0, 8, 64, 256, 1024, 2048, 4096, 16384, 65536, 262144, 1048576]


def synthetic(L, o, G, O, S, noise=0.0, rng=None) -> calibrate.Measurements:
    """latitude-calib's output for a machine that follows the model (µs)."""

    def jitter(v):
        return v * (1 + rng.uniform(-noise, noise)) if noise else v

    lines = []
    for s in SIZES:
        b = max(s - 1, 0)
        half = L + 2 * o + b * (G + O) if s <= S else 3 * L + 3 * o + b * G
        h = jitter(half) / 1e3
        lines.append(f"pingpong,{s},{h:.6f},{h:.6f},{h:.6f},11")
        ov = (o + b * O) / 1e3
        lines.append(f"o_send,{s},{jitter(ov):.6f}")
        lines.append(f"o_recv,{s},{jitter(ov):.6f}")
        lines.append(f"stream,{s},{jitter(ov):.6f}")
    lines.append(f"eager,{S}")
    return calibrate.Measurements.parse("\n".join(lines))


def test_fit_recovers_exact_parameters():
    f = calibrate.fit(synthetic(L=3000, o=1500, G=0.018, O=0.002, S=65536))
    assert f.L == pytest.approx(3000, rel=1e-4) and f.o == pytest.approx(1500, rel=1e-4)
    assert f.G == pytest.approx(0.018, rel=1e-3) and f.O == pytest.approx(0.002, rel=1e-3)
    assert f.S == 65536 and f.g == 0.0 and f.r2 == pytest.approx(1.0)
    assert f.max_rel_error < 1e-4
    assert {r["protocol"] for r in f.rows} == {"eager", "rendezvous"}
    assert "R² =" in calibrate.table(f)
    check("calibrate", f.to_dict())


def test_fit_random_machines_with_noise():
    """Property: for random machines with 2 % measurement noise the fitted model reproduces
    the noiseless half round trips within 6 % at every size."""
    rng = random.Random(7)
    for _ in range(25):
        L, o = rng.uniform(100, 5000), rng.uniform(50, 2000)
        G, O = rng.uniform(0.005, 0.5), rng.uniform(0, 0.05)
        S = rng.choice([1024, 4096, 65536])
        f = calibrate.fit(synthetic(L, o, G, O, S, noise=0.02, rng=rng))
        for s in SIZES:
            b = max(s - 1, 0)
            true = L + 2 * o + b * (G + O) if s <= S else 3 * L + 3 * o + b * G
            model = (f.L + 2 * f.o + b * (f.G + f.O)) if s <= S else 3 * f.L + 3 * f.o + b * f.G
            assert model == pytest.approx(true, rel=0.06), (L, o, G, O, S, s)


def test_g_visible_only_when_streaming_is_slower_than_o():
    m = synthetic(L=1000, o=500, G=0.01, O=0.0, S=4096)
    assert calibrate.fit(m).g == 0.0
    m.stream[0] = 2.0  # 2 µs per back-to-back message, o_send 0.5 µs
    f = calibrate.fit(m)
    assert f.g == pytest.approx(2000) and any("g = 2000" in n for n in f.notes)


def test_machine_file_round_trip(tmp_path):
    f = calibrate.fit(synthetic(L=2500, o=700, G=0.02, O=0.001, S=8192))
    path = tmp_path / "m.toml"
    path.write_text(calibrate.to_toml(f, "mpirun -np 2 latitude-calib"))
    p = Params.from_machine(str(path))
    assert p.L == pytest.approx(f.L, rel=1e-3) and p.o == pytest.approx(f.o, rel=1e-3)
    assert p.G == pytest.approx(f.G, rel=1e-5) and p.O == pytest.approx(f.O, rel=1e-4)
    assert p.S == 8192 and p.protocol == "handshake"
    f.S = None  # no eager limit found: every message eager
    path.write_text(calibrate.to_toml(f, "x"))
    assert Params.from_machine(str(path)).S >= 2**62


def test_repeated_runs_are_combined_by_per_size_medians():
    """Three runs, one of them disturbed (every time doubled, a different eager limit): the
    combined measurements are the per-size medians, the fit recovers the undisturbed machine,
    and the notes show how far the single runs' fits are apart."""
    good = dict(L=3000, o=1500, G=0.018, O=0.002)
    runs = [synthetic(**good, S=65536), synthetic(**good, S=65536), synthetic(**good, S=4096)]
    slow = runs[2]
    slow.pingpong = {s: tuple(2 * v for v in t) for s, t in slow.pingpong.items()}
    slow.o_send = {s: 2 * v for s, v in slow.o_send.items()}
    del runs[1].stream[0]  # a statistic one run lacks: the median of the others
    m = calibrate.combine(runs)
    assert m.pingpong == runs[0].pingpong and m.o_send == runs[0].o_send and m.eager == 65536
    assert m.stream[0] == pytest.approx(statistics.median([runs[0].stream[0], runs[2].stream[0]]))
    f = calibrate.fit(m)
    assert f.L == pytest.approx(3000, rel=1e-4) and f.G == pytest.approx(0.018, rel=1e-3)
    spread = [n for n in f.notes if n.startswith("3 measurement runs")]
    assert len(spread) == 1 and "L 3000–" in spread[0], f.notes
    assert calibrate.combine(runs[:1]) is runs[0]
    # No eager limit in two of three runs: none in the median either.
    none = [synthetic(**good, S=65536), synthetic(**good, S=65536), synthetic(**good, S=4096)]
    none[0].eager = none[1].eager = None
    assert calibrate.combine(none).eager is None


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
    assert p.o > 0 and p.G > 0 and p.protocol == "handshake"
    assert 0 < p.S < 1 << 20  # Open MPI's shared memory switches protocol well below 1 MiB


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
