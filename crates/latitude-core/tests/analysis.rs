mod common;

use common::*;
use latitude_core::engine::multi::evaluate;
use latitude_core::engine::parametric::{sweep, Sweep, SweepMethod, SweepOptions};
use latitude_core::engine::rational::{Line, Rat};
use latitude_core::engine::tolerance::tolerance;
use latitude_core::engine::Plan;
use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::gen::Rng;
use latitude_core::model::{p, Model, Point, Protocol, TICKS_PER_NS};
use latitude_core::net::Flat;

const NS: i128 = TICKS_PER_NS;

#[test]
fn worked_example_critical_latency_and_tolerance() {
    let mut g = worked_example(100);
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let base = point(0.0, 0.0, 0.0, 5.0, 0.0);
    let s = sweep(&g, &plan, &Flat, &base, p::L, 0, 1000 * NS, SweepOptions::default()).unwrap();
    assert_eq!(s.breakpoints.len(), 1);
    let bp = s.breakpoints[0];
    assert_eq!(bp.at, Rat::int(385 * NS));
    assert_eq!((bp.left.s, bp.right.s), (0, 1));
    assert_eq!(s.pieces.len(), 2);
    // T ≤ 2 µs ⇔ L ≤ 0.885 µs: with T(0) = 1.5 µs, 2 µs is a 33.3.. % increase: ratio 4/3.
    let (t0, res) = tolerance(&g, &plan, &Flat, &base, p::L, 0, &[(4, 3)]).unwrap();
    assert_eq!(t0, 1500 * NS);
    assert_eq!(res[0].max, Some(Rat::int(885 * NS)));
    // 1 % of 1.5 µs = 15 ns above the flat part: 385 + 15 = 400 ns.
    let (_, res) = tolerance(&g, &plan, &Flat, &base, p::L, 0, &[(101, 100)]).unwrap();
    assert_eq!(res[0].max, Some(Rat::int(400 * NS)));
}

#[test]
fn flat_runtime_is_unbounded() {
    // Late receiver: the message never matters when rank 1 computes long enough before...
    // ...but L still adds to the message path, so T is eventually increasing: use a graph
    // without messages instead.
    let mut b = latitude_core::graph::GraphBuilder::new(2);
    b.add(0, latitude_core::graph::Op::calc(1000)).unwrap();
    b.add(1, latitude_core::graph::Op::calc(2000)).unwrap();
    let mut g = b.finish().unwrap();
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let (_, res) = tolerance(&g, &plan, &Flat, &point(0.0, 0.0, 0.0, 0.0, 0.0), p::L, 0, &[(101, 100)]).unwrap();
    assert_eq!(res[0].max, None);
}

fn t_at(g: &latitude_core::ExecGraph, plan: &Plan, base: &Point, k: usize, x: Rat) -> (Rat, u64, u64) {
    let e = evaluate(g, plan, &Flat, &[base.at_ticks(k, x.num, x.den)], k).unwrap()[0];
    (Rat::new(e.t, x.den), e.left, e.right)
}

#[test]
fn breakpoints_are_real_and_none_is_missed() {
    let mut rng = Rng::new(11);
    for seed in 0..60 {
        let spec = RandomSpec { ranks: 2 + (seed % 5) as u32, rounds: 2 + (seed % 7) as u32, seed, max_calc: 20_000, ..Default::default() };
        let mut g = random_graph(&spec).unwrap();
        let model = Model { eager_limit: [u64::MAX, 4096][(seed % 2) as usize], ..Default::default() };
        let plan = Plan::prepare(&mut g, model).unwrap();
        let base = point(0.0, rng.below(300) as f64, 0.0, [0.0, 0.01][rng.below(2) as usize], 0.0);
        let (lo, hi) = (0i128, 20_000 * NS);
        let s = sweep(&g, &plan, &Flat, &base, p::L, lo, hi, SweepOptions::default()).unwrap();
        // Every breakpoint is a real slope change with the reported slopes.
        for bp in &s.breakpoints {
            let (t, left, right) = t_at(&g, &plan, &base, p::L, bp.at);
            assert_eq!((left, right), (bp.left.s, bp.right.s), "seed {seed}");
            assert!(left < right);
            assert_eq!(bp.left.value(bp.at), t);
            assert_eq!(bp.right.value(bp.at), t);
        }
        // Dense grid: T equals the piece's line and the slope is the piece's slope.
        for i in 0..=400 {
            let x = Rat::new(lo + (hi - lo) * i / 400 + 7, 1).min(Rat::int(hi));
            let piece = s.pieces.iter().find(|pc| pc.from <= x && x <= pc.to).unwrap();
            let (t, left, right) = t_at(&g, &plan, &base, p::L, x);
            assert_eq!(piece.line.value(x), t, "seed {seed} x {x:?}");
            if piece.from < x && x < piece.to {
                assert_eq!((left, right), (piece.line.s, piece.line.s), "seed {seed}: missed breakpoint near {x:?}");
            }
        }
    }
}

#[test]
fn tolerance_is_exact_and_monotone() {
    for seed in 0..60 {
        let spec = RandomSpec { ranks: 3, rounds: 4 + (seed % 5) as u32, seed, ..Default::default() };
        let mut g = random_graph(&spec).unwrap();
        let plan = Plan::prepare(&mut g, Model::default()).unwrap();
        let base = point(0.0, 100.0, 0.0, 0.018, 0.0);
        let x0 = 1000 * NS;
        let ratios = [(100, 100), (101, 100), (102, 100), (105, 100), (3, 2)];
        let (t0, res) = tolerance(&g, &plan, &Flat, &base, p::L, x0, &ratios).unwrap();
        let mut prev = Rat::int(x0);
        for (r, tr) in ratios.iter().zip(&res) {
            let tau = Rat::new(t0 * r.0, r.1);
            let Some(x) = tr.max else { continue };
            assert!(x >= prev, "monotone in x");
            prev = x;
            let (t, _, right) = t_at(&g, &plan, &base, p::L, x);
            assert!(t <= tau);
            assert!(right > 0 || t == tau);
            // Just above x the runtime exceeds the target.
            let above = Rat::new(x.num * 1_000_000 + 1, x.den * 1_000_000);
            let (t2, _, _) = t_at(&g, &plan, &base, p::L, above);
            assert!(t2 > tau, "seed {seed}: not the largest x");
        }
    }
}

#[test]
fn step_merges_close_breakpoints() {
    let spec = RandomSpec { ranks: 6, rounds: 12, seed: 5, max_calc: 20_000, ..Default::default() };
    let mut g = random_graph(&spec).unwrap();
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let base = point(0.0, 100.0, 0.0, 0.0, 0.0);
    let exact = sweep(&g, &plan, &Flat, &base, p::L, 0, 50_000 * NS, SweepOptions::default()).unwrap();
    let step = 5_000 * NS;
    let coarse = sweep(&g, &plan, &Flat, &base, p::L, 0, 50_000 * NS, SweepOptions { step: Some(step), ..Default::default() }).unwrap();
    assert!(coarse.breakpoints.len() <= exact.breakpoints.len());
    for w in coarse.breakpoints.windows(2) {
        assert!(w[1].at >= w[0].at.plus_int(step));
    }
    let _ = Line { s: 0, c: 0 };
}

#[test]
fn random_sweeps_have_breakpoints() {
    let mut total = 0;
    for seed in 0..60 {
        let spec = RandomSpec { ranks: 2 + (seed % 5) as u32, rounds: 2 + (seed % 7) as u32, seed, max_calc: 20_000, ..Default::default() };
        let mut g = random_graph(&spec).unwrap();
        let plan = Plan::prepare(&mut g, Model::default()).unwrap();
        total += sweep(&g, &plan, &Flat, &point(0.0, 100.0, 0.0, 0.0, 0.0), p::L, 0, 20_000 * NS, SweepOptions::default()).unwrap().breakpoints.len();
    }
    eprintln!("breakpoints over 60 graphs: {total}");
    assert!(total > 60, "the property tests above must see breakpoints ({total})");
}

#[test]
fn threaded_multi_point_passes_equal_single_points() {
    // Large enough for the threaded path; 13 points = several chunks of unequal size.
    let spec = RandomSpec { ranks: 32, rounds: 700, seed: 8, ..Default::default() };
    let mut g = random_graph(&spec).unwrap();
    assert!(g.len() >= 50_000, "{}", g.len());
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let base = point(0.0, 300.0, 0.0, 0.018, 0.0);
    let pts: Vec<Point> = (0..13).map(|i| base.at_ticks(p::L, i * 2_500 * NS, 1)).collect();
    let all = evaluate(&g, &plan, &Flat, &pts, p::L).unwrap();
    for (pt, e) in pts.iter().zip(&all) {
        let one = evaluate(&g, &plan, &Flat, std::slice::from_ref(pt), p::L).unwrap()[0];
        assert_eq!(*e, one);
        let pr = latitude_core::engine::predict(&g, &plan, &Flat, pt).unwrap();
        assert_eq!((e.t, e.right, e.left), (pr.t, pr.right[p::L], pr.left[p::L]));
    }
}

fn both_methods(g: &latitude_core::ExecGraph, plan: &Plan, base: &Point, k: usize, lo: i128, hi: i128) -> (Sweep, Sweep) {
    let env = sweep(g, plan, &Flat, base, k, lo, hi, SweepOptions::default()).unwrap();
    let tan = sweep(g, plan, &Flat, base, k, lo, hi, SweepOptions { method: SweepMethod::Tangents, ..Default::default() }).unwrap();
    (env, tan)
}

#[test]
fn envelope_pass_equals_tangent_refinement() {
    // Every protocol / eager limit / NIC chain combination, in L and in G.
    let mut rng = Rng::new(29);
    let (mut bps, mut copy_bps) = (0, 0);
    for seed in 0..80u64 {
        // every fourth graph copies (collectives' own blocks), priced by C: swept in C too
        let copies = seed % 4 == 3;
        let p_copy = if copies { 0.3 } else { 0.0 };
        let spec = RandomSpec { ranks: 2 + (seed % 6) as u32, rounds: 2 + (seed % 9) as u32, seed, max_calc: 20_000, p_copy, ..Default::default() };
        let mut g = random_graph(&spec).unwrap();
        let model = Model {
            protocol: [Protocol::Handshake, Protocol::LogGopSim][(seed / 2 % 2) as usize],
            eager_limit: [u64::MAX, 4096][(seed % 2) as usize],
            nic_serialization: seed % 3 == 0,
            ..Model::default()
        };
        let model = if copies { copy_model(model) } else { model };
        let at = |pt: Point| if copies { with_c(&pt, 0.07) } else { pt };
        let plan = Plan::prepare(&mut g, model).unwrap();
        let base = at(point(0.0, rng.below(300) as f64, rng.below(50) as f64, [0.0, 0.01][rng.below(2) as usize], 0.0));
        let (env, tan) = both_methods(&g, &plan, &base, p::L, rng.below(1000) as i128 * NS, 20_000 * NS);
        assert_eq!(env.breakpoints, tan.breakpoints, "seed {seed} (L)");
        assert_eq!(env.pieces, tan.pieces, "seed {seed} (L)");
        bps += env.breakpoints.len();
        let base = at(point(0.0, 1000.0, 10.0, 0.0, 0.0));
        let (env, tan) = both_methods(&g, &plan, &base, p::G_BYTE, 0, NS);
        assert_eq!(env.breakpoints, tan.breakpoints, "seed {seed} (G)");
        assert_eq!(env.pieces, tan.pieces, "seed {seed} (G)");
        bps += env.breakpoints.len();
        if copies {
            let base = at(point(500.0, 1000.0, 10.0, 0.01, 0.0));
            let (env, tan) = both_methods(&g, &plan, &base, C_INDEX as usize, 0, NS);
            assert_eq!(env.breakpoints, tan.breakpoints, "seed {seed} (C)");
            assert_eq!(env.pieces, tan.pieces, "seed {seed} (C)");
            copy_bps += env.breakpoints.len();
        }
    }
    assert!(copy_bps > 0, "the sweeps in C must see breakpoints");
    assert!(bps > 100, "the comparison must see breakpoints ({bps})");
}

#[test]
fn threaded_envelope_equals_tangents_on_a_large_graph() {
    // ≥ 50 000 vertices: the interval is cut into one part per core; the compaction of the
    // envelope arena runs many times.
    let spec = RandomSpec { ranks: 32, rounds: 700, seed: 8, max_calc: 20_000, ..Default::default() };
    let mut g = random_graph(&spec).unwrap();
    assert!(g.len() >= 50_000, "{}", g.len());
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let base = point(0.0, 300.0, 0.0, 0.018, 0.0);
    let (env, tan) = both_methods(&g, &plan, &base, p::L, 0, 30_000 * NS);
    assert!(tan.breakpoints.len() > 10, "{}", tan.breakpoints.len());
    assert_eq!(env.breakpoints, tan.breakpoints);
    assert_eq!(env.pieces, tan.pieces);
}
