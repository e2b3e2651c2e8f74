"""Whether a rank's messages in flight at once share its bandwidth: latitude-calib's
`concurrent` lines, their place in the samples file, the decision (latitude.nic_fit) and
the machine file's `nic_serialization`, and one real calibration on this machine."""

from __future__ import annotations

import sys

import pytest
from latitude import calibrate, loggp_fit, nic_fit, tomlfile
from latitude.errors import InputError
from latitude.params import Params
from test_calibrate import synthetic
from tracetools import OMPI_RUN, run


def with_concurrent(m: calibrate.Measurements, pairs: dict) -> calibrate.Measurements:
    text = "\n".join(f"concurrent,{s},{a},{b}" for s, (a, b) in pairs.items())
    m.concurrent = calibrate.Measurements.parse("pingpong,8,1,1,1,1\n" + text).concurrent
    return m


def test_one_after_the_other_is_serialized():
    s = nic_fit.sharing({65536: (10.0, 19.0), 262144: (30.0, 61.0), 1048576: (100.0, 150.0)})
    assert s.serialize and s.share == pytest.approx(0.9)
    assert "nic_serialization = true" in s.notes[0] and "1.90×" in s.notes[0]


def test_side_by_side_is_not():
    s = nic_fit.sharing({65536: (10.0, 10.4), 262144: (30.0, 31.0)})
    assert not s.serialize and s.share == pytest.approx((0.04 + 1 / 30) / 2)
    assert "side by side" in s.notes[0]


def test_just_above_the_threshold_and_at_it():
    assert nic_fit.sharing({65536: (10.0, 15.1)}).serialize
    assert not nic_fit.sharing({65536: (10.0, 15.0)}).serialize


def test_not_measured_and_unusable_pairs():
    s = nic_fit.sharing({})
    assert s.share is None and not s.serialize and "not measured" in s.notes[0]
    s = nic_fit.sharing({65536: (0.0, 12.0), 262144: (10.0, 0.0)})
    assert s.share is None and not s.serialize


def test_line_parsed_and_malformed_refused():
    m = calibrate.Measurements.parse("pingpong,8,1,1,1,5\nconcurrent,65536,7.5,14.25\n")
    assert m.concurrent == {65536: (7.5, 14.25)}
    with pytest.raises(InputError) as e:
        calibrate.Measurements.parse("pingpong,8,1,1,1,5\nconcurrent,65536,7.5\n", "calib.csv")
    assert e.value.where == "calib.csv:2"


def test_runs_combined_per_size_by_the_median():
    runs = [
        with_concurrent(synthetic(700, 250, 0.03, 0.0, 16384), {65536: (a, b)})
        for a, b in ((10, 20), (12, 21), (30, 25))
    ]
    assert calibrate.combine(runs).concurrent == {65536: (12, 21)}


def test_machine_file_and_samples_keep_the_decision(tmp_path):
    serial = with_concurrent(synthetic(700, 250, 0.03, 0.0, 16384), {65536: (10.0, 19.8), 262144: (30.0, 59.0)})
    f = loggp_fit.fit(serial)
    assert f.nic_serialization and f.params().nic_serialization
    assert f.to_dict()["sharing"]["nic_serialization"] is True
    path = tmp_path / "m.toml"
    path.write_text(loggp_fit.to_toml(f, "test"))
    assert Params.from_machine(str(path)).nic_serialization
    assert tomlfile.read(path)[0]["fit"]["second_message_share"] == pytest.approx(f.sharing.share, abs=1e-4)
    # the samples file keeps both times per size, and a refit decides the same
    samples = tmp_path / "m.samples.csv"
    calibrate.write_samples([serial], str(samples))
    again = calibrate.read_samples(str(samples))[0]
    assert again.concurrent == {65536: (10.0, 19.8), 262144: (30.0, 59.0)}
    assert loggp_fit.fit(again).nic_serialization
    # side by side (or not measured, as in older files): no key, the default model
    f = loggp_fit.fit(with_concurrent(synthetic(700, 250, 0.03, 0.0, 16384), {65536: (10.0, 10.5)}))
    path.write_text(loggp_fit.to_toml(f, "test"))
    assert "nic_serialization" not in path.read_text() and not Params.from_machine(str(path)).nic_serialization


def test_samples_row_with_another_index_refused(tmp_path):
    bad = tmp_path / "s.csv"
    bad.write_text("run,kind,bytes,index,value_us\n1,pingpong,8,0,1.0\n1,concurrent,65536,2,3.0\n")
    with pytest.raises(InputError) as e:
        calibrate.read_samples(str(bad))
    assert e.value.where == f"{bad}:3"


def test_real_calibration_measures_concurrent_sends(ompi_apps, tmp_path):
    """On this machine: both sizes of 64 KiB and up measured in every run, two messages at once
    never faster than one, and the machine file's key follows the share it reports."""
    out = tmp_path / "machine.toml"
    short = ["--sizes", "8,1KiB,64KiB,256KiB", "--batches", "3", "--iters", "20", "--repeat", "2", "--allow-zero-L"]
    proc = run(
        [sys.executable, "-m", "latitude", "calibrate", "-o", out, *short, "--", OMPI_RUN, "-np", "2"], timeout=300
    )
    runs = calibrate.read_samples(str(tmp_path / "machine.samples.csv"))
    assert all(sorted(r.concurrent) == [65536, 262144] for r in runs)
    assert all(0 < one < two for r in runs for one, two in r.concurrent.values())
    data = tomlfile.read(out)[0]
    share = data["fit"]["second_message_share"]
    assert data["loggps"].get("nic_serialization", False) == (share > nic_fit.SERIAL_AT)
    assert "two messages in flight at once take" in proc.stdout
