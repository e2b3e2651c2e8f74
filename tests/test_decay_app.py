"""apps/decay, the probe behind bench/compute_decay.py: one line per gap, ratios against the
first gap, and a refused --gaps-us."""

from __future__ import annotations

import re

from tracetools import ompi, run


def test_decay_reports_every_gap(ompi_apps):
    out = run([*ompi(2), ompi_apps / "decay", "--kib", "512", "--gaps-us", "0,300", "--sweeps", "3", "--blocks", "2"])
    lines = re.findall(r"decay kib=512 gap_us=(\S+) sweep_us=(\S+) ratio=(\S+)", out.stdout)
    assert [g for g, _, _ in lines] == ["0", "300"], out.stdout
    (_, t0, r0), (_, t1, r1) = lines
    assert float(r0) == 1 and float(t0) > 0 and abs(float(r1) / (float(t1) / float(t0)) - 1) < 1e-3, out.stdout


def test_decay_refuses_a_bad_gap(ompi_apps):
    out = run([*ompi(2), ompi_apps / "decay", "--gaps-us", "0,soon"], check=False)
    assert out.returncode != 0 and "--gaps-us" in out.stderr, out.stderr
