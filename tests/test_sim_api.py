"""The simulator from Python: noise spec parsing and the API (no subprocess)."""

from __future__ import annotations

import os

import latitude
import numpy as np
import pytest
from conftest import EXAMPLES
from latitude.errors import InputError
from latitude.noise import parse_all, parse_noise
from latitude.params import Params
from latitude.simulation import SimOptions


@pytest.mark.parametrize(
    "spec,want",
    [
        ("calc:gaussian:sigma=5%", {"target": "calc", "dist": "gaussian", "sigma": 0.05, "relative": True}),
        ("calc:gaussian:sigma=200ns", {"target": "calc", "dist": "gaussian", "sigma": 200.0, "relative": False}),
        ("latency:lognormal:sigma=0.2", {"target": "latency", "dist": "lognormal", "sigma": 0.2}),
        ("calc:uniform:0:2us", {"target": "calc", "dist": "uniform", "lo": 0.0, "hi": 2000.0}),
        ("os:period=1ms,duration=20us", {"target": "os", "period": 1e6, "duration": 2e4, "synchronized": False}),
        ("os:period=1ms,duration=20us,sync", {"target": "os", "period": 1e6, "duration": 2e4, "synchronized": True}),
        ("trace:/tmp/n.txt", {"target": "trace", "path": "/tmp/n.txt", "cosched": False}),
    ],
)
def test_noise_specs_parse(spec, want):
    assert parse_noise(spec) == want


@pytest.mark.parametrize(
    "spec",
    [
        "cpu:gaussian:sigma=1",
        "calc:normal:sigma=1",
        "calc:gaussian",
        "calc:gaussian:sigma=-5%",
        "calc:lognormal:sigma=5%",
        "calc:uniform:1us",
        "os:period=1ms",
        "os:period=1us,duration=1us",
        "os:period=1ms,duration=1us,every=2",
        "trace:",
        "latency:gaussian:width=3",
    ],
)
def test_bad_noise_specs_are_input_errors(spec):
    with pytest.raises(InputError) as err:
        parse_noise(spec)
    assert err.value.where == "--noise"


def test_one_jitter_per_target_and_cosched():
    with pytest.raises(InputError):
        parse_all(["calc:gaussian:sigma=1%", "calc:lognormal:sigma=0.1"])
    assert parse_all(["os:period=1ms,duration=1us"], cosched=True)[0]["synchronized"] is True


def test_api_simulate_and_samples():
    g = latitude.load(os.path.join(EXAMPLES, "halo2d-16.goal"))
    quiet = g.simulate()
    assert quiet.runtime_ns == pytest.approx(float(np.max(quiet.rank_end_ns)))
    assert g.simulate(cpu_serialization=False).runtime_ns == pytest.approx(g.predict().runtime_ns, rel=1e-12)
    noisy = dict(noise=["calc:gaussian:sigma=10%", "os:period=20us,duration=2us"], seed=9)
    one = g.simulate(**noisy)
    mc1 = g.simulate_samples(12, threads=1, **noisy)
    mc2 = g.simulate_samples(12, threads=2, **noisy)
    assert np.array_equal(mc1.runtime_ns, mc2.runtime_ns)
    assert mc1.runtime_ns[0] == pytest.approx(one.runtime_ns, rel=1e-15)
    assert len(set(mc1.runtime_ns.tolist())) > 1
    sync = g.simulate(noise=["os:period=20us,duration=2us,sync"], seed=9).runtime_ns
    indep = g.simulate(noise=["os:period=20us,duration=2us"], seed=9).runtime_ns
    assert sync != indep and min(sync, indep) > quiet.runtime_ns


def test_api_loggopsim_semantics_gives_integer_ns():
    g = latitude.load(os.path.join(EXAMPLES, "llamp-fig4b.goal"))
    ends = g.simulate(semantics="loggopsim", L=1000, o=50, G=0).rank_end_exact()
    # rank 0: calc, send (o), calc; rank 1: calc 500, recv pre-posted, message at
    # 1000 + 50 + 1000 processed for o, calc 1000
    assert ends == [2050, 3100] and all(isinstance(x, int) for x in ends)


def test_chunked_samples_with_progress_equal_one_call():
    g = latitude.load(os.path.join(EXAMPLES, "halo2d-16.goal"))
    opts = SimOptions(noise=("calc:uniform:0:1us",), seed=4)
    seen = []
    chunked = g.simulate_samples(7, Params(), opts, threads=2, progress=lambda d, t: seen.append((d, t)))
    whole = g.simulate_samples(7, Params(), opts, threads=2)
    assert np.array_equal(chunked.runtime_ns, whole.runtime_ns)
    assert seen[-1] == (7, 7) and len(seen) > 1
