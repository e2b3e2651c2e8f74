"""The noise-alone RRMSE of a validation study (latitude.validate_noise)."""

import math
import random

import pytest
from latitude import validate_noise as vn


def test_pooled_variance_takes_each_group_about_its_own_mean():
    var, dof = vn.pooled_variance([[1.0, 3.0], [10.0, 12.0, 14.0], [7.0]])
    # (2 + 8) / (1 + 2): the single-run group gives no degrees of freedom
    assert dof == 3 and var == pytest.approx(10 / 3)
    assert vn.pooled_variance([[5.0], [6.0]]) is None


def test_floor_of_a_study_that_never_repeated_is_unknown():
    assert vn.rrmse_floor([[100.0], [200.0]], [90.0]) is None


def test_floor_and_slope_by_hand():
    runs = [[49.0, 54.0], [94.0, 118.0], [157.0, 166.0]]
    traced = [81.0, 82.0]
    f = vn.rrmse_floor(runs, traced)
    var = (0.5 + 12.5 + 288 + 40.5) / 4
    assert f["dof"] == 4 and f["sigma_ns"] == pytest.approx(math.sqrt(var))
    mean = (51.5 + 106 + 161.5) / 3
    assert f["rrmse"] == pytest.approx(math.sqrt(var * 1.5) / mean)
    s = vn.slope_check(runs, [80.0, 123.0, 168.0], f["sigma_ns"])
    assert s["measured_ns"] == pytest.approx(110.0) and s["predicted_ns"] == pytest.approx(88.0)
    assert s["se_ns"] == pytest.approx(f["sigma_ns"])
    assert vn.slope_check(runs[:1], [80.0], 1.0) is None


@pytest.mark.parametrize("reps", [2, 5])
def test_an_exact_model_misses_by_about_the_floor(reps):
    """Simulated studies of an exact model: one traced run and reps runs per ΔL drawn around
    the true runtimes; the mean squared RRMSE over many studies matches the floor's square."""
    rng = random.Random(7)
    true = [50.0, 100.0, 150.0]
    sigma = 8.0
    errs, floors = [], []
    for _ in range(4000):
        delta = rng.gauss(0, sigma)  # the traced run's own deviation, in every prediction
        pred = [t + delta for t in true]
        runs = [[rng.gauss(t, sigma) for _ in range(reps)] for t in true]
        traced = [true[0] + delta, rng.gauss(true[0], sigma)]  # and one more traced run
        means = [sum(r) / reps for r in runs]
        rmse = math.sqrt(sum((m - p) ** 2 for m, p in zip(means, pred)) / 3)
        errs.append((rmse / (sum(means) / 3)) ** 2)
        floors.append(vn.rrmse_floor(runs, traced)["rrmse"] ** 2)
    expected = sigma**2 * (1 + 1 / reps) / 100**2
    assert sum(errs) / len(errs) == pytest.approx(expected, rel=0.06)
    assert sum(floors) / len(floors) == pytest.approx(expected, rel=0.06)


def test_middle_of_k_second_moments():
    # the lower of two normals is as spread as one; the median of three is known (≈ 0.4487)
    assert vn.middle_second_moment(1) == 1.0
    assert vn.middle_second_moment(2) == pytest.approx(1.0, abs=1e-6)
    assert vn.middle_second_moment(3) == pytest.approx(0.4487, abs=1e-4)
    assert vn.middle_second_moment(5) < vn.middle_second_moment(3)


@pytest.mark.parametrize("traces", [3, 5])
def test_an_exact_model_from_the_middle_trace_misses_by_about_its_floor(traces):
    """As above, but each study traces k times and predicts from the trace whose prediction is
    the middle one (validate --traces k): the trace's deviation shrinks, and so does the floor;
    the one-trace floor would overstate what noise explains."""
    rng = random.Random(11)
    true = [50.0, 100.0, 150.0]
    sigma, reps = 8.0, 5
    errs, floors, one_trace = [], [], []
    for _ in range(4000):
        deltas = sorted(rng.gauss(0, sigma) for _ in range(traces))
        delta = deltas[(traces - 1) // 2]
        pred = [t + delta for t in true]
        runs = [[rng.gauss(t, sigma) for _ in range(reps)] for t in true]
        traced = [true[0] + d for d in deltas]
        means = [sum(r) / reps for r in runs]
        rmse = math.sqrt(sum((m - p) ** 2 for m, p in zip(means, pred)) / 3)
        errs.append((rmse / (sum(means) / 3)) ** 2)
        floors.append(vn.rrmse_floor(runs, traced, traces)["rrmse"] ** 2)
        one_trace.append(vn.rrmse_floor(runs, traced)["rrmse"] ** 2)
    mean_err = sum(errs) / len(errs)
    assert sum(floors) / len(floors) == pytest.approx(mean_err, rel=0.08)
    assert sum(one_trace) / len(one_trace) > 1.3 * mean_err


def test_exceed_p_is_uniform_for_an_exact_model_and_small_for_a_biased_one():
    """Seeded studies of an exact model (the middle of 3 traces, 5 runs per ΔL): p below 0.05
    about 5 % of the time. A model 3σ too high at every ΔL: p below 0.05 nearly always."""
    rng = random.Random(3)
    true = [50.0, 100.0, 150.0]
    sigma, reps = 8.0, 5

    def study(bias):
        deltas = sorted(rng.gauss(0, sigma) for _ in range(3))
        pred = [t + deltas[1] + bias for t in true]
        runs = [[rng.gauss(t, sigma) for _ in range(reps)] for t in true]
        means = [sum(r) / reps for r in runs]
        rrmse = math.sqrt(sum((m - p) ** 2 for m, p in zip(means, pred)) / 3) / (sum(means) / 3)
        return vn.exceed_p(rrmse, runs, sigma, 3, draws=4000)

    exact = [study(0.0) for _ in range(300)]
    assert 0.01 <= sum(p < 0.05 for p in exact) / len(exact) <= 0.11
    assert 0.35 <= sum(exact) / len(exact) <= 0.65  # uniform on [0, 1]: mean one half
    biased = [study(3 * sigma) for _ in range(100)]
    assert sum(p < 0.05 for p in biased) / len(biased) >= 0.9
    assert vn.exceed_p(0.0, [[1.0, 2.0]], 1.0) == 1.0
