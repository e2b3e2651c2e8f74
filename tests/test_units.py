"""Units parsing (latitude.units): the values people write, and input built to be slow."""

from __future__ import annotations

import subprocess
import sys

import pytest
from latitude.errors import InputError
from latitude.units import parse_gap, parse_time


@pytest.mark.parametrize(
    "text,ns",
    [("3us", 3000.0), ("1.5µs", 1500.0), ("500ns", 500.0), ("7.e2ns", 700.0), (".5ms", 5e5), (" 2 us ", 2000.0)],
)
def test_times(text, ns):
    assert parse_time(text) == pytest.approx(ns)


def test_gaps_and_bandwidths():
    assert parse_gap("0.018ns") == pytest.approx(0.018)
    assert parse_gap("8GB/s") == pytest.approx(0.125)


@pytest.mark.parametrize("text", ["abc", "3 parsecs", "1e", "-3us", "3us4"])
def test_not_a_time_is_one_input_error(text):
    with pytest.raises(InputError):
        parse_time(text)


def test_a_long_digit_run_is_refused_at_once():
    """The fuzzer's case: a --noise sigma of 65,000 digits, a '%', a newline and the spec again.
    The number's pattern could split a failing digit run in n ways (minutes for this input);
    run in a child with a deadline so the old pattern fails the test instead of stalling it."""
    digits = "5" + "7" * 65_000
    text = f"{digits}%\\ncalc:gaussian:sigma={digits}"
    code = (
        "from latitude.units import parse_time\nfrom latitude.errors import InputError\n"
        f"try:\n    parse_time('{text}')\nexcept InputError:\n    print('refused')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "refused", out.stderr
