"""Bayesian calibration (latitude.bayes, `calibrate --bayes`, `predict --posterior`): the
posterior's 95 % intervals cover the true parameters of synthetic measurements (Gaussian
relative noise, as the likelihood assumes) in at least 90 % of seeded trials; the CLI saves
the posterior next to the machine file, plots its marginals, and predict reports T's
credible interval from it; bad posterior files and priors are refused in one line."""

from __future__ import annotations

import json
import os
import random

import pytest
from conftest import EXAMPLES, one_line, run_cli
from jsonschemas import check
from latitude import bayes, calibrate, loggp_fit

SIZES = [0, 8, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576]


def synthetic_run(L, o, G, O, S, noise, rng) -> calibrate.Measurements:
    """One latitude-calib run of a machine that follows the model, with Gaussian relative
    noise on every sample (11 round-trip batches, 21 timed calls per size)."""
    lines = []
    for s in SIZES:
        b = max(s - 1, 0)
        half = L + 2 * o + b * (G + O) if s <= S else 3 * L + 3 * o + b * G
        batches = [half * (1 + rng.gauss(0, noise)) / 1e3 for _ in range(11)]
        med = sorted(batches)[5]
        lines.append(f"pingpong,{s},{min(batches):.6f},{med:.6f},{sum(batches) / 11:.6f},11")
        lines.append(f"samples,pingpong,{s}," + ";".join(f"{v:.6f}" for v in batches))
        for kind in ("o_send", "o_recv"):
            calls = [(o + b * O) * (1 + rng.gauss(0, noise)) / 1e3 for _ in range(21)]
            lines.append(f"{kind},{s},{sorted(calls)[10]:.6f}")
            lines.append(f"samples,{kind},{s}," + ";".join(f"{v:.6f}" for v in calls))
    lines.append(f"eager,{S}")
    return calibrate.Measurements.parse("\n".join(lines))


def test_the_posterior_covers_the_true_parameters_in_90_percent_of_trials():
    inside = total = 0
    for trial in range(30):
        rng = random.Random(trial)
        truth = {"L": rng.uniform(200, 4000), "o": rng.uniform(50, 1500), "G": rng.uniform(0.01, 0.2), "O": 0.002}
        noise = rng.choice([0.01, 0.03])
        m = synthetic_run(**truth, S=65536, noise=noise, rng=rng)
        f = loggp_fit.fit(m)
        post = bayes.sample(m, f, bayes.Priors.around(f), steps=800, seed=trial)
        for name, value in truth.items():
            lo, hi = post.interval(name)
            inside += lo <= value <= hi
            total += 1
        lo, hi = post.interval("sigma_h")
        assert lo < noise * 1.5 and hi > noise / 1.5, (trial, lo, hi, noise)
    assert inside >= 0.9 * total, f"{inside} of {total} true values inside the 95 % intervals"


def test_calibrate_bayes_cli_and_predict_posterior(tmp_path):
    rng = random.Random(7)
    runs = [synthetic_run(2000, 800, 0.05, 0.001, 65536, 0.02, rng) for _ in range(2)]
    samples = tmp_path / "m.samples.csv"
    calibrate.write_samples(runs, str(samples))
    machine, plot = tmp_path / "m.toml", tmp_path / "post.png"
    out = run_cli(
        "calibrate", "--from-samples", samples, "-o", machine, "--bayes", "--steps", "600", "--plot", plot, "--json"
    )
    doc = check("calibrate", json.loads(out.stdout))
    post_path = tmp_path / "m.posterior.csv"
    assert doc["posterior"]["path"] == str(post_path) and post_path.exists()
    lo, hi = doc["posterior"]["params"]["L"]["ci95"]
    assert lo < 2000 < hi
    assert plot.stat().st_size > 20_000
    assert f"predict --posterior {post_path}" in machine.read_text()
    goal = os.path.join(EXAMPLES, "halo2d-16.goal")
    pred = json.loads(
        run_cli("predict", goal, "--machine", machine, "--posterior", post_path, "--draws", "20", "--json").stdout
    )
    c = pred["posterior"]["runtime_ns"]
    assert c["ci95"][0] <= c["median"] <= c["ci95"][1]
    assert c["ci95"][0] <= pred["runtime_ns"] * 1.01 and pred["runtime_ns"] * 0.99 <= c["ci95"][1]
    assert "credible interval" in run_cli("predict", goal, "--posterior", post_path, "--draws", "5").stdout
    tol = json.loads(
        run_cli("tolerance", goal, "--machine", machine, "--posterior", post_path, "--draws", "10", "--json").stdout
    )
    point = {r["pct"]: r["delta_ns"] for r in tol["tolerance"]}
    for r in tol["posterior"]["tolerance"]:
        lo, hi = r["delta_ns"]["ci95"]
        assert lo <= r["delta_ns"]["median"] <= hi and r["unbounded_draws"] == 0
        assert 0.5 * point[r["pct"]] < r["delta_ns"]["median"] < 2 * point[r["pct"]]
    assert "posterior (3 draws)" in run_cli("tolerance", goal, "--posterior", post_path, "--draws", "3").stdout


def test_bad_posterior_and_prior_are_one_line(tmp_path):
    bad = tmp_path / "p.csv"
    bad.write_text("a,b\n1,2\n")
    goal = os.path.join(EXAMPLES, "halo2d-16.goal")
    one_line(run_cli("predict", goal, "--posterior", bad, check=False), "p.csv:1", "expected the header")
    with pytest.raises(Exception, match="NAME=LO:HI"):
        bayes.Priors.around(loggp_fit.fit(synthetic_run(1, 1, 0.1, 0, 65536, 0.0, random.Random(1))), "Q=1:2")
