"""Issue 3: exact sensitivity curves, tolerances, the L × G map, plots, and engine = LP."""

import json
import os
import random
from fractions import Fraction

import latitude
import pytest
from conftest import run_cli
from latitude import Params


def fig4c(examples):
    return latitude.load(os.path.join(examples, "llamp-fig4c.goal"))


WORKED = Params(L=0, o=0, G=5)


def test_worked_example_critical_latency(examples):
    for method in ("engine", "lp"):
        s = fig4c(examples).sensitivity(0, 1000, params=WORKED, method=method)
        assert [(float(b.at), b.left.slope, b.right.slope) for b in s.breakpoints] == [(385.0, 0, 1)]
        assert s.runtime(0) == 1500 and s.runtime(1000) == 2115


def test_sensitivity_range_ends_given_as_floats(examples):
    """A float end point such as 88.13 ns lies a hair below the exact range end; it is on it."""
    s = fig4c(examples).sensitivity(88.13, 88.13 + 200e3, params=WORKED)
    assert s.runtime(88.13) == 1500 and s.slope(88.13) == 0
    assert s.runtime(88.13 + 200e3) == pytest.approx(88.13 + 200e3 + 1115)
    with pytest.raises(latitude.errors.InputError):
        s.runtime(80)


def test_worked_example_tolerance_2us(examples):
    """T ≤ 2 µs ⇔ L ≤ 0.885 µs (T(0) = 1.5 µs, so a 33⅓ % slowdown)."""
    g = fig4c(examples)
    tol = g.tolerance([Fraction(100, 3)], baseline=0, params=WORKED)
    assert tol.max(Fraction(100, 3)) == 885.0
    lp = g.tolerance([Fraction(100, 3)], baseline=0, params=WORKED, method="lp")
    assert lp.max(Fraction(100, 3)) == pytest.approx(885.0, abs=1e-6)


def test_cli_json_contracts(examples):
    g = os.path.join(examples, "llamp-fig4c.goal")
    s = json.loads(run_cli("sensitivity", g, "--range", "0:1us", "-o", "0", "-G", "5ns", "--json").stdout)
    assert s["param"] == "L" and s["range_ns"] == [0, 1000]
    assert s["breakpoints"][0] == {
        "at_ns": 385.0,
        "slope_left": 0,
        "slope_right": 1,
        "runtime_ns": 1500.0,
        "exact": True,
    }
    assert [p["slope"] for p in s["pieces"]] == [0, 1]
    assert {"from_ns", "to_ns", "slope", "runtime_from_ns"} <= set(s["pieces"][0])
    t = json.loads(run_cli("tolerance", g, "-L", "0", "-o", "0", "-G", "5ns", "--json").stdout)
    assert t["baseline_ns"] == 0 and t["baseline_runtime_ns"] == 1500
    assert [(r["pct"], r["max_ns"], r["delta_ns"]) for r in t["tolerance"]] == [
        (1, 400, 400),
        (2, 415, 415),
        (5, 460, 460),
    ]


def test_unbounded_tolerance(tmp_path):
    path = tmp_path / "flat.goal"
    path.write_text("num_ranks 2\nrank 0 {\nl1: calc 100\n}\nrank 1 {\nl1: calc 50\n}\n")
    t = json.loads(run_cli("tolerance", path, "--json").stdout)
    assert all(r["max_ns"] is None and r["delta_ns"] is None for r in t["tolerance"])
    assert "unbounded" in run_cli("tolerance", path).stdout


def random_graph(i):
    rng = random.Random(1000 + i)
    return latitude.Graph.random(
        ranks=rng.randint(2, 5), rounds=rng.randint(2, 7), seed=i, max_calc=20000, sizes=[0, 8, 1024, 100000]
    ), Params(
        L=rng.choice([0, 500, 2000]), o=rng.choice([0, 300]), G=rng.choice([0, 0.02]), S=rng.choice([4096, "inf"])
    )


@pytest.mark.parametrize("i", range(25))
def test_engine_equals_lp_curves_and_tolerances(i):
    g, p = random_graph(i)
    hi = p.L + 30000
    e = g.sensitivity(p.L, hi, params=p)
    lp = g.sensitivity(p.L, hi, params=p, method="lp")
    assert len(e.breakpoints) == len(lp.breakpoints), (e.to_dict()["breakpoints"], lp.to_dict()["breakpoints"])
    for a, b in zip(e.breakpoints, lp.breakpoints):
        assert float(b.at) == pytest.approx(float(a.at), rel=1e-7, abs=1e-5)
        assert (a.left.slope, a.right.slope) == (b.left.slope, b.right.slope)
    for x in (p.L, (p.L + hi) / 2, hi):
        assert lp.runtime(x) == pytest.approx(e.runtime(x), rel=1e-9)
    te = g.tolerance([1, 2, 5, 20], params=p)
    tl = g.tolerance([1, 2, 5, 20], params=p, method="lp")
    for pct in (1, 2, 5, 20):
        if te.max(pct) is None:
            assert tl.max(pct) is None
        else:
            assert tl.max(pct) == pytest.approx(te.max(pct), rel=1e-7, abs=1e-5)


@pytest.mark.parametrize("i", range(10))
def test_tolerance_monotone_in_pct(i):
    g, p = random_graph(100 + i)
    t = g.tolerance([0, 0.5, 1, 2, 5, 10, 50], params=p)
    vals = [t.max(x) for x in (0, 0.5, 1, 2, 5, 10, 50)]
    bounded = [v for v in vals if v is not None]
    assert bounded == sorted(bounded)
    assert vals.index(None) if None in vals else True  # once unbounded, stays unbounded
    if None in vals:
        assert all(v is None for v in vals[vals.index(None) :])


def test_g_parameter_sensitivity_and_tolerance():
    g, p = random_graph(7)
    s = g.sensitivity(0, 2.0, param="G", params=p)
    t = g.tolerance([1, 5], param="G", params=p)
    for pc in (1, 5):
        m = t.max(pc)
        if m is not None:
            # m is exact; predicting at its float rounds G to 10⁻⁹ ns
            assert g.predict(p.replace(G=m)).runtime_ns <= t.baseline_runtime * (1 + pc / 100) * (1 + 1e-9)
    assert all(b.left.slope < b.right.slope for b in s.breakpoints)


def test_step_keeps_breakpoints_apart(examples):
    g = latitude.load(os.path.join(examples, "halo2d-16.goal"))
    exact = g.sensitivity("3us", "60us")
    coarse = g.sensitivity("3us", "60us", step="5us")
    assert len(coarse.breakpoints) < len(exact.breakpoints)
    ats = [float(b.at) for b in coarse.breakpoints]
    assert all(b - a >= 5000 for a, b in zip(ats, ats[1:]))


def test_map_boundary_points_are_on_the_boundary(examples):
    g = latitude.load(os.path.join(examples, "halo2d-16.goal"))
    p = Params()
    m = g.tolerance_map((0, 8000), (0, 1.2), [1, 5], resolution=12, params=p)
    t0 = m.baseline_runtime
    for pct, pts in m.curves.items():
        limit = t0 * (1 + float(pct) / 100)
        for gval, l, status in pts:
            if status != "boundary":
                continue
            t = g.predict(p.replace(L=float(l), G=float(gval))).runtime_ns
            # Exact points; re-predicting at their float values rounds G and L to 10⁻⁹ ns.
            assert t == pytest.approx(limit, rel=1e-9), (pct, gval, l)


def test_plots_and_csv(examples, tmp_path):
    import pandas as pd

    g = os.path.join(examples, "halo2d-16.goal")
    measured = tmp_path / "measured.csv"
    measured.write_text("delta_L_us,mean_us,std_us\n0,920,5\n2,960,6\n")
    run_cli("tolerance", g, "--plot", tmp_path / "rt.png", "--measured", measured, "--csv", tmp_path / "tol.csv")
    run_cli("sensitivity", g, "--range", "3us:60us", "--plot", tmp_path / "sens", "--csv", tmp_path / "curve.csv")
    run_cli("tolerance", g, "--map", "L=0:8us,G=0:1.2ns", "--plot", tmp_path / "map.svg", "--csv", tmp_path / "map.csv")
    for f in ("rt.png", "sens.png"):
        data = (tmp_path / f).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
    for f in ("sens.svg", "map.svg"):
        assert "<svg" in (tmp_path / f).read_text()[:500]
    curve = pd.read_csv(tmp_path / "curve.csv")
    assert list(curve.columns) == ["L_us", "T_us", "lambda_L", "rho_L"] and len(curve) >= 100
    assert (curve["T_us"].diff().dropna() >= -1e-9).all()
    assert list(pd.read_csv(tmp_path / "tol.csv").columns)[:3] == ["pct", "max_ns", "delta_ns"]
    assert {"pct", "G_ns_per_byte", "L_max_ns", "status"} <= set(pd.read_csv(tmp_path / "map.csv").columns)


def test_api_frames(examples):
    g = latitude.load(os.path.join(examples, "halo2d-16.goal"))
    assert len(g.sensitivity("3us", "30us").to_frame()) >= 1
    assert list(g.tolerance().to_frame()["pct"]) == [1, 2, 5]
    assert g.predict().per_rank().index.name == "rank"


@pytest.mark.parametrize(
    "args,msg",
    [
        (["sensitivity", "--range", "5us"], "expected a range LO:HI"),
        (["sensitivity", "--range", "9us:1us"], "is empty"),
        (["tolerance", "--pct", "1,x"], "expected a percentage"),
        (["tolerance", "--pct", "-1"], "must be >= 0"),
        (["tolerance", "--map", "L=0:1us"], "expected L=A:B,G=C:D"),
    ],
)
def test_bad_analysis_input(examples, args, msg):
    proc = run_cli(args[0], os.path.join(examples, "llamp-fig4b.goal"), *args[1:], check=False)
    assert proc.returncode == 2 and msg in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("i", range(20))
def test_tolerance_read_off_a_sweep_equals_the_engine(i):
    # Sensitivity.tolerance answers from the pieces (no graph pass); it must give exactly
    # Graph.tolerance's answers, or None when an answer may lie beyond the range.
    g, p = random_graph(200 + i)
    pcts = [0, 1, 2, 5, 20]
    engine = g.tolerance(pcts, params=p)
    wide = g.sensitivity(0, p.L + 10**6, params=p).tolerance(pcts)
    if any(engine.max(x) is None for x in pcts):
        assert wide is None  # unbounded (or beyond the range) cannot be read off a range
    else:
        assert wide is not None
        assert wide.baseline_runtime == engine.baseline_runtime
        assert [r["max"] for r in wide.rows] == [r["max"] for r in engine.rows]  # exact Fractions
    narrow = g.sensitivity(p.L, p.L + 1, params=p).tolerance(pcts)
    if narrow is not None:
        assert [r["max"] for r in narrow.rows] == [r["max"] for r in engine.rows]
    assert g.sensitivity(p.L + 1, p.L + 2, params=p).tolerance(pcts) is None  # baseline outside


@pytest.fixture(scope="module")
def many_breakpoints(tmp_path_factory):
    """A random 16-rank graph with hundreds of critical latencies in [0, 200 µs]."""
    g = latitude.Graph.random(ranks=16, rounds=2000, seed=2, max_calc=200000)
    path = tmp_path_factory.mktemp("many") / "many.goal"
    g.write_goal(str(path))
    s = g.sensitivity(0, 200e3)
    assert len(s.breakpoints) > 100
    return path, s


def test_curve_in_one_pass_equals_exact_lookups(many_breakpoints):
    """The curve for plots and CSV walks points and pieces together in floats; each of its
    points must agree with the exact per-point lookup (bisection over the pieces)."""
    _, s = many_breakpoints
    rows = s.curve(300)
    assert len(rows) >= 300 + len(s.breakpoints) - 5
    assert [r["x"] for r in rows] == sorted(r["x"] for r in rows)
    at_bp = {float(b.at): b.right.slope for b in s.breakpoints}
    for r in rows:
        assert r["T"] == pytest.approx(s.runtime(r["x"]), rel=1e-12)
        assert r["slope"] == at_bp.get(r["x"], s.slope(r["x"]))
    for b in s.breakpoints[::7]:  # at a breakpoint: the value of both pieces, the right slope
        assert s.slope(b.at) == b.right.slope and s.runtime(b.at) == float(b.left(b.at))
        assert s.piece_at(b.at).line == b.left


def test_long_tables_summarised(many_breakpoints):
    path, s = many_breakpoints
    out = run_cli("sensitivity", path, "--range", "0:200us").stdout
    n = len(s.breakpoints)
    assert f"first and last 10 of {n:,} critical" in out and "--all prints every" in out
    assert out.count("⋮") >= 2 and len(out.splitlines()) < 80
    assert "(whole command" in out.splitlines()[-1]
    full = run_cli("sensitivity", path, "--range", "0:200us", "--all").stdout
    assert "⋮" not in full and sum(" → " in ln for ln in full.splitlines()) == n + 1  # and the header
