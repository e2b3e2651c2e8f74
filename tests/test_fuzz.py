"""The bad-input fuzzer (tests/fuzz.py) itself: cases replay from (seed, case), a few cases
pass, and its verdict catches what must never happen. CI runs it for two minutes."""

from __future__ import annotations

import subprocess

import fuzz


def test_cases_replay_from_seed_and_index(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    for k in range(12):
        args_a = fuzz.build_case(5, k, str(a))
        args_b = fuzz.build_case(5, k, str(b))
        assert [x.replace(str(a), "") for x in args_a] == [x.replace(str(b), "") for x in args_b]


def test_verdict():
    def done(code, err):
        return subprocess.CompletedProcess([], code, "", err)

    assert fuzz.verdict(done(0, "")) is None
    assert fuzz.verdict(done(2, "latitude: x.goal:3: expected a number\n")) is None
    assert fuzz.verdict(done(1, "Traceback (most recent call last):\n  ...\nValueError\n")) == "traceback"
    assert fuzz.verdict(done(-11, "")) == "killed by signal 11"
    assert fuzz.verdict(done(2, "latitude: a\nlatitude: b\n")) is not None
    assert fuzz.verdict(done(134, "memory allocation failed\n")) is not None


def test_a_few_cases_behave(tmp_path):
    assert fuzz.main(["--seed", "20261124", "--cases", "12", "--seconds", "600", "--keep", str(tmp_path)]) == 0
