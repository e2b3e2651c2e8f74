"""validate's posterior predictive band (latitude.bayes.predictive_band, validate --posterior):
on a posterior without spread and 7 runs of relative spread s the band is the model's T times
1 ± 2.45·s·√(8/7), the predictive interval of one more run (Student-t, 6 degrees of freedom),
so which measured points fall inside is known by hand; without runs it is the mean's band; the JSON
carries the band per point and the shares, and follows the schema; a posterior with
protocol-class columns lands in the engine's named parameters."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES
from jsonschemas import check
from latitude import bayes, validate
from latitude.api import load
from latitude.errors import InputError
from latitude.params import Params

SIGMA = 0.01
Z975 = 2.446912  # the 97.5 % quantile of Student-t with 6 degrees of freedom
RUNS = 7  # runs behind the spread: t with RUNS - 1 = 6 degrees of freedom
WIDTH = SIGMA * (1 + 1 / RUNS) ** 0.5  # one more run's spread around a mean of RUNS


def fixed_posterior(params: Params, sigma: float = SIGMA, extra: dict | None = None) -> bayes.Posterior:
    """A posterior whose every draw is `params` (no spread) with round-trip noise `sigma`."""
    names = bayes.PARAMS + tuple(extra or ()) + bayes.NOISE
    row = [params.L, params.o, params.G, params.O, *(extra or {}).values(), sigma, 0.05]
    return bayes.Posterior(np.array([row] * 50, dtype=float), 1.0, columns=names)


@pytest.fixture(scope="module")
def graph():
    return load(os.path.join(EXAMPLES, "halo2d-16.goal"), progress=False)


def test_band_of_a_posterior_without_spread_is_the_noise_term_by_hand(graph):
    params = Params(L="2us", o="1us", G="0.05ns")
    deltas = [0.0, 20_000.0]
    bands = bayes.predictive_band(graph, params, fixed_posterior(params), deltas, n=200, spread=(SIGMA, RUNS))
    for d, b in zip(deltas, bands):
        T = graph.predict(params.replace(L=params.L + d)).runtime_ns
        assert b["mean_lo"] == pytest.approx(T) and b["mean_hi"] == pytest.approx(T)
        # 4,000 t draws: the 2.5 % and 97.5 % quantiles within 0.3 w of ±2.45 w (about four standard errors)
        assert b["lo"] == pytest.approx(T * (1 - Z975 * WIDTH), abs=0.3 * WIDTH * T)
        assert b["hi"] == pytest.approx(T * (1 + Z975 * WIDTH), abs=0.3 * WIDTH * T)
        assert b["median"] == pytest.approx(T, abs=0.1 * WIDTH * T)
    T0 = graph.predict(params).runtime_ns
    T1 = bands[1]["median"]
    # means: T0 inside, T1 + 3 w outside -> 1 of 2
    assert bayes.share_inside([T0, T1 * (1 + 3 * WIDTH)], bands) == 0.5
    # runs: +1 w inside, −3 w outside, at ΔL = 20 µs T1 inside -> 2 of 3
    assert bayes.share_inside([[T0 * (1 + WIDTH), T0 * (1 - 3 * WIDTH)], [T1]], bands) == pytest.approx(2 / 3)
    # no runs behind a spread: the band is the mean's (here a point)
    (b,) = bayes.predictive_band(graph, params, fixed_posterior(params), [0.0], n=50)
    assert b["lo"] == b["hi"] == pytest.approx(T0)


def test_run_spread_is_the_relative_sample_deviation():
    assert bayes.run_spread([100.0, None]) is None
    s, k = bayes.run_spread([90.0, 100.0, 110.0])
    assert k == 3 and s == pytest.approx(0.1)


def test_a_spread_posterior_gives_a_credible_band_of_the_mean_inside_the_predictive_one(graph):
    """Draws of L spread by 10 %: the mean's band is wide (λ_L·L is ~4 % of T: > 1 %), holds T at the central L, and the
    predictive band (plus 1 % noise) holds the mean's band."""
    params = Params(L="2us", o="1us", G="0.05ns")
    rng = np.random.default_rng(3)
    rows = [[params.L * (1 + 0.1 * rng.standard_normal()), params.o, params.G, 0.0, 0.01, 0.05] for _ in range(400)]
    (b,) = bayes.predictive_band(graph, params, bayes.Posterior(np.array(rows), 1.0), [0.0], n=100, spread=(0.01, 5))
    T = graph.predict(params).runtime_ns
    assert b["mean_lo"] < T < b["mean_hi"] and b["mean_hi"] - b["mean_lo"] > 0.01 * T
    assert b["lo"] < b["mean_lo"] and b["mean_hi"] < b["hi"]


def test_validation_json_keys_and_table_with_a_band(tmp_path):
    params = Params(L="2us", o="1us")
    pts = [validate.Point(0.0, 1e6, 10, [1_000_000, 1_020_000]), validate.Point(1e4, 1.1e6, 10, [1_300_000])]
    pts[0].band = {"lo": 0.98e6, "median": 1e6, "hi": 1.02e6, "mean_lo": 1e6, "mean_hi": 1e6}
    pts[1].band = {"lo": 1.08e6, "median": 1.1e6, "hi": 1.12e6, "mean_lo": 1.1e6, "mean_hi": 1.1e6}
    v = validate.Validation(pts, params, 1.0, 0.01, Path("t"), Path("m.toml"), {}, None, 2000.0, [])
    v.posterior = {
        "path": "p.csv",
        "draws": 50,
        "level": 0.95,
        "noise": "the 3 traced runs' spread (1.00 %), Student-t with 2 degrees of freedom",
        "share_inside": bayes.share_inside([p.mean_ns for p in pts], [p.band for p in pts]),
        "share_runs_inside": bayes.share_inside([p.runs_ns for p in pts], [p.band for p in pts]),
    }
    s = check("validate", json.loads(json.dumps(v.summary())))
    assert s["posterior"]["share_inside"] == 0.5 and s["posterior"]["share_runs_inside"] == pytest.approx(2 / 3)
    rows = s["points"]
    assert [r["mean_inside"] for r in rows] == [True, False] and [r["runs_inside"] for r in rows] == [2, 0]
    assert rows[0]["band_lo_us"] == 980.0 and rows[0]["band_hi_us"] == 1020.0 and rows[0]["band_median_us"] == 1000.0
    text = validate.table(v)
    assert "50 % of the measured means and 67 % of the runs inside the 95 % predictive band" in text
    assert "[1.080, 1.120] outside" in text
    # without a posterior neither key appears
    v.posterior = None
    for p in pts:
        p.band = None
    s = v.summary()
    assert "posterior" not in s and "band_lo_us" not in s["points"][0]


def test_class_columns_reach_the_engine_parameters(tmp_path):
    params = Params(L="2us", o="1us", S1=0)
    post = fixed_posterior(params, extra={"large.L": 3000.0, "small.o": 100.0})
    path = tmp_path / "p.csv"
    post.write(str(path))
    back = bayes.Posterior.read(str(path))
    assert back.columns == post.columns and back.model_names[-2:] == ("large.L", "small.o")
    p = back.apply(params, back.samples[0])
    assert p.value("large.L") == 3000.0 and p.value("small.o") == 100.0 and p.L == 2000.0
    with pytest.raises(InputError, match="large.L"):
        back.apply(Params(), back.samples[0])  # a machine without classes has no such parameter


def test_injector_offset_by_hand():
    """D = mean(injected at ΔL = 0) − mean(traced), se² = v_inj/n + v_tr/k, ν = min(k, n) − 1."""
    D, se, dof = bayes.injector_offset([100.0, 110.0, 90.0], [120.0, 130.0, 110.0, 120.0, 120.0])
    assert D == pytest.approx(20.0) and se == pytest.approx((50 / 5 + 100 / 3) ** 0.5) and dof == 2
    # one trace: its variance is the injected runs'; ν = n − 1
    D, se, dof = bayes.injector_offset([100.0], [120.0, 130.0, 110.0, 120.0, 120.0])
    assert D == pytest.approx(20.0) and se == pytest.approx((50 / 5 + 50 / 1) ** 0.5) and dof == 4
    assert bayes.injector_offset([100.0, 110.0], [120.0]) is None  # one injected run: no variance
    assert bayes.injector_offset([None], [120.0, 121.0]) is None


def test_band_with_the_injector_offset_moves_by_it(graph):
    params = Params(L="2us", o="1us", G="0.05ns")
    T = graph.predict(params).runtime_ns
    (b,) = bayes.predictive_band(graph, params, fixed_posterior(params), [0.0], n=50, offset=(5000.0, 0.0, 3))
    assert b["lo"] == b["hi"] == pytest.approx(T + 5000.0) and b["mean_lo"] == pytest.approx(T)
    (b,) = bayes.predictive_band(graph, params, fixed_posterior(params), [0.0], n=400, offset=(5000.0, 100.0, 3))
    assert b["lo"] < T + 5000.0 < b["hi"] and b["hi"] - b["lo"] < 2 * 3.2 * 100.0 * 1.3


def test_validate_band_holds_a_constant_injector_cost_and_judges_the_other_points(graph):
    """Injected runs 2 % of T slower than the traced runs at every ΔL (a cost per call, as the
    injector's): without the offset both points' means are outside a 1 % band; with it the
    ΔL = 20 µs point is inside, and the ΔL = 0 point, which measured the offset, is not judged."""
    params = Params(L="2us", o="1us", G="0.05ns")
    T0 = graph.predict(params).runtime_ns
    T1 = graph.predict(params.replace(L=params.L + 20_000)).runtime_ns
    extra = 0.02 * T0
    traced = [T0 * (1 + e) for e in (-0.002, 0.0, 0.002)]
    pts = [
        validate.Point(0.0, T0, 1, [T0 + extra + T0 * e for e in (-0.002, 0.0, 0.002, 0.001, -0.001)]),
        validate.Point(20_000.0, T1, 1, [T1 + extra + T0 * e for e in (-0.002, 0.0, 0.002, 0.001, -0.001)]),
    ]
    block = validate.posterior_band(graph, params, fixed_posterior(params), pts, traced, 50)
    off = block["offset"]
    assert off["ns"] == pytest.approx(extra) and off["points_excluded"] == 1 and off["dof"] == 2
    assert block["share_inside"] == 1.0 and block["share_runs_inside"] == 1.0
    assert pts[1].band["lo"] < T1 + extra < pts[1].band["hi"]
    v = validate.Validation(pts, params, 1.0, 0.01, Path("t"), Path("m.toml"), {}, None, 2000.0, [])
    v.posterior = {"path": "p.csv"} | block
    check("validate", json.loads(json.dumps(v.summary())))
    assert "injector's own cost" in validate.table(v)
    # the old band (no offset): neither mean inside
    plain = bayes.predictive_band(graph, params, fixed_posterior(params), [0.0, 20_000.0], 50, spread=(0.002, 3))
    assert bayes.share_inside([p.mean_ns for p in pts], plain) == 0.0
    # no ΔL = 0 in the grid: no offset, every point judged
    block = validate.posterior_band(graph, params, fixed_posterior(params), pts[1:], traced, 50)
    assert block["offset"] is None and block["share_inside"] == 0.0
