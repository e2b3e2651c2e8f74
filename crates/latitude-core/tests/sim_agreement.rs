//! The default simulator against the engine (docs/model.md): equal wherever the semantics
//! coincide, and the documented differences where they do not.
mod common;

use common::*;
use latitude_core::engine::{predict, Plan};
use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::gen::Rng;
use latitude_core::graph::{ExecGraph, GraphBuilder, Op, ANY};
use latitude_core::model::{Model, Point, Protocol};
use latitude_core::net::Flat;
use latitude_core::sim::{simulate, simulate_samples, Dist, NoiseSpec, OsNoise, SimGraph, SimOptions, SimResult};

fn opts(model: Model, cpu_serialization: bool) -> SimOptions {
    SimOptions { model, cpu_serialization, ..Default::default() }
}

/// Simulated T in ticks (exact: the simulator's unit is a whole number of ticks).
fn ticks(r: &SimResult) -> i128 {
    r.runtime() as i128 * r.unit_ticks as i128
}

fn sim(g: &ExecGraph, o: &SimOptions, pt: &Point) -> SimResult {
    let sg = SimGraph::new(g).unwrap();
    simulate(g, &sg, &Flat, pt, o, &NoiseSpec::default(), 0).unwrap()
}

/// Engine T in ticks of 10⁻⁹ ns (after preparing, which may reorder g).
fn engine_ticks(g: &mut ExecGraph, model: Model, pt: &Point) -> i128 {
    let plan = Plan::prepare(g, model).unwrap();
    predict(g, &plan, &Flat, pt).unwrap().t
}

fn models() -> Vec<Model> {
    let mut out = Vec::new();
    for protocol in [Protocol::Handshake, Protocol::LogGopSim] {
        for eager_limit in [0, 1024, u64::MAX] {
            let m = Model { protocol, eager_limit, nic_serialization: false, ..Model::default() };
            out.push(m);
            out.push(copy_model(m)); // copies priced by C, a parameter of their own
            out.push(call_model(m)); // and the ends of collective calls by K
        }
    }
    out
}

/// A random point for `model` (with C when the model has a copy parameter).
fn random_point(r: &mut Rng, gap: bool, model: &Model) -> Point {
    let pick = |r: &mut Rng, xs: &[f64]| xs[r.below(xs.len() as u64) as usize];
    let l = pick(r, &[0.0, 500.0, 3000.0, 1234.5]);
    let o = pick(r, &[0.0, 100.0, 1500.0]);
    let gb = pick(r, &[0.0, 0.018, 5.0]);
    let ob = pick(r, &[0.0, 0.5]);
    let g = if gap { pick(r, &[0.0, 700.0, 20000.0]) } else { 0.0 };
    let pt = point(l, o, g, gb, ob);
    if model.call.is_some() {
        with_ck(&pt, pick(r, &[0.0, 0.25, 3.0, 0.075]), pick(r, &[0.0, 700.0, 2500.0]))
    } else if model.copy.is_some() {
        with_c(&pt, pick(r, &[0.0, 0.25, 3.0, 0.075]))
    } else {
        pt
    }
}

fn spec(seed: u64, p_nonblocking: f64) -> RandomSpec {
    let mut r = Rng::new(seed * 7919 + 11);
    RandomSpec {
        ranks: 2 + r.below(6) as u32,
        rounds: 1 + r.below(8) as u32,
        seed,
        max_calc: [0, 10, 5000][r.below(3) as usize],
        p_nonblocking,
        p_extra_edge: r.unit() * 0.5,
        // every third graph has computations that copy (collectives' own blocks)
        p_copy: if seed % 3 == 2 { 0.3 } else { 0.0 },
        // every fourth has computations that end collective calls (priced K)
        p_call: if seed % 4 == 1 { 0.4 } else { 0.0 },
        ..Default::default()
    }
}

#[test]
fn worked_example_reproduces_the_paper() {
    for (c0, l, want) in [(1000, 0.0, 2015.0), (1000, 3000.0, 5015.0), (100, 0.0, 1500.0), (100, 385.0, 1500.0), (100, 885.0, 2000.0)] {
        let g = worked_example(c0);
        let r = sim(&g, &SimOptions::default(), &point(l, 0.0, 0.0, 5.0, 0.0));
        assert_eq!(r.runtime_ns(), want, "c0 {c0} L {l}");
        assert_eq!((r.unit_ticks, r.exact), (1_000_000_000, true), "integer parameters: ns");
        assert_eq!(r.static_mismatches, 0);
    }
}

/// One operation at a time per rank (blocking programs), g = 0: simulator = engine,
/// exactly (integer times), for every protocol and eager limit.
#[test]
fn blocking_programs_agree_with_engine_on_1000_random_graphs() {
    let mut compared = 0;
    for seed in 0..1000 {
        let mut g = random_graph(&spec(seed, 0.0)).unwrap();
        let mut r = Rng::new(seed);
        for model in models() {
            let pt = random_point(&mut r, false, &model);
            let want = engine_ticks(&mut g, model, &pt);
            let got = sim(&g, &opts(model, true), &pt);
            assert_eq!(ticks(&got), want, "seed {seed} {model:?} {pt:?}");
            assert!((got.runtime_ns() - want as f64 / 1e9).abs() <= 1e-9 * got.runtime_ns().max(1.0));
            assert_eq!(got.static_mismatches, 0);
            compared += 1;
        }
    }
    assert!(compared >= 12000);
}

/// Without CPU serialization the simulator is the engine's max-plus model on any graph,
/// nonblocking overlap included.
#[test]
fn without_cpu_serialization_agrees_on_nonblocking_graphs() {
    for seed in 0..400 {
        let mut g = random_graph(&spec(seed, 0.6)).unwrap();
        let mut r = Rng::new(seed + 99);
        for model in models() {
            let pt = random_point(&mut r, false, &model);
            let want = engine_ticks(&mut g, model, &pt);
            assert_eq!(ticks(&sim(&g, &opts(model, false), &pt)), want, "seed {seed} {model:?}");
        }
    }
}

/// With CPU serialization the simulator never beats the engine (contention only delays).
#[test]
fn cpu_serialization_only_delays() {
    let mut slower = 0;
    for seed in 0..300 {
        let mut g = random_graph(&spec(seed, 0.8)).unwrap();
        let mut r = Rng::new(seed + 5);
        let model = models()[r.below(models().len() as u64) as usize];
        let pt = random_point(&mut r, false, &model);
        let want = engine_ticks(&mut g, model, &pt);
        let got = ticks(&sim(&g, &opts(model, true), &pt));
        assert!(got >= want, "seed {seed}: sim {got} < engine {want}");
        slower += (got > want) as u32;
    }
    assert!(slower > 50, "contention should show on nonblocking graphs ({slower})");
}

/// NIC serialization (g > 0): the engine chains sends in trace order, the simulator in
/// start order; on blocking programs the orders coincide.
#[test]
fn nic_serialization_agrees_on_blocking_programs() {
    for seed in 0..300 {
        let mut g = random_graph(&spec(seed, 0.0)).unwrap();
        let mut r = Rng::new(seed + 1234);
        for mut model in models() {
            model.nic_serialization = true;
            let pt = random_point(&mut r, true, &model);
            let want = engine_ticks(&mut g, model, &pt);
            assert_eq!(ticks(&sim(&g, &opts(model, true), &pt)), want, "seed {seed} {model:?}");
        }
    }
}

/// Difference 1 (documented): overlapping nonblocking ops share the CPU.
/// rank 0: Isend(8 B) s; calc 1000 c irequires s; rank 1: recv. o = 100, L = 1000.
/// Engine: c runs [0, 1000] beside s's overhead → rank 0 ends at 1000.
/// Simulator: s holds the CPU [0, 100], c runs [100, 1100].
#[test]
fn overlapping_ops_queue_for_the_cpu() {
    let mut b = GraphBuilder::new(2);
    let s = b.add(0, Op::send(8, 1, 0)).unwrap();
    let c = b.add(0, Op::calc(1000)).unwrap();
    b.irequires(c, s).unwrap();
    b.add(1, Op::recv(8, 0, 0)).unwrap();
    let mut g = b.finish().unwrap();
    let pt = point(1000.0, 100.0, 0.0, 0.0, 0.0);
    let model = Model::default();
    // recv: arrives 0 + 100 + 1000, + o = 1200 on rank 1
    assert_eq!(engine_ticks(&mut g, model, &pt), 1200 * 1_000_000_000);
    let r = sim(&g, &opts(model, true), &pt);
    assert_eq!(r.rank_end_ns(), vec![1100.0, 1200.0]);
    let free = sim(&g, &opts(model, false), &pt);
    assert_eq!(free.rank_end_ns(), vec![1000.0, 1200.0]);
}

/// Difference 2 (documented): the NIC serves sends in start order. Trace order is
/// c (calc 5000 on CPU 1) → A (send, requires c), then B (send, no dependency): B starts
/// first. g = 2000, o = 10, L = 100: B at 0, A at max(5000, 0 + 2000) = 5000; in trace
/// order (the engine's chain) B would wait until S(A) + g = 7000.
#[test]
fn nic_serves_sends_in_start_order() {
    let mut b = GraphBuilder::new(2);
    let c = b.add(0, Op::calc(5000).on_cpu(1)).unwrap();
    let a = b.add(0, Op::send(1, 1, 0)).unwrap();
    b.add(0, Op::send(1, 1, 1)).unwrap();
    b.requires(a, c).unwrap();
    b.add(1, Op::recv(1, 0, 0)).unwrap();
    b.add(1, Op::recv(1, 0, 1)).unwrap();
    let g = b.finish().unwrap();
    let model = Model { nic_serialization: true, ..Model::default() };
    let r = sim(&g, &opts(model, true), &point(100.0, 10.0, 2000.0, 0.0, 0.0));
    // rank 0: B [0, 10] on CPU 0 beside the calc on CPU 1, A [5000, 5010]
    // rank 1: B arrives 110 → [110, 120]; A arrives 5110 → [5110, 5120]
    assert_eq!(r.rank_end_ns(), vec![5010.0, 5120.0]);
}

/// ANY_SOURCE receives are matched in arrival order; the engine cannot run this graph.
#[test]
fn wildcard_receives_match_in_arrival_order() {
    let mut b = GraphBuilder::new(3);
    let c1 = b.add(1, Op::calc(3000)).unwrap();
    let s1 = b.add(1, Op::send(8, 0, 5)).unwrap();
    b.requires(s1, c1).unwrap();
    b.add(2, Op::send(8, 0, 5)).unwrap();
    let r1 = b.add(0, Op::recv(8, ANY, 5)).unwrap();
    let x = b.add(0, Op::calc(100)).unwrap();
    let r2 = b.add(0, Op::recv(8, ANY, ANY)).unwrap();
    b.requires(x, r1).unwrap();
    b.requires(r2, x).unwrap();
    let mut g = b.finish().unwrap();
    assert!(Plan::prepare(&mut g, Model::default()).is_err());
    let r = sim(&g, &SimOptions::default(), &point(1000.0, 10.0, 0.0, 0.0, 0.0));
    // rank 2's message arrives first (1010): r1 = [1010, 1020], x to 1120; rank 1's arrives
    // at 3000 + 10 + 1000 = 4010: r2 = [4010, 4020].
    assert_eq!(r.rank_end_ns(), vec![4020.0, 3010.0, 10.0]);
}

#[test]
fn rendezvous_deadlock_is_reported() {
    // Both ranks send 1 MiB first: fine eagerly, deadlock under rendezvous.
    let mut b = GraphBuilder::new(2);
    for (me, other) in [(0, 1), (1, 0)] {
        let s = b.add(me, Op::send(1 << 20, other, 0)).unwrap();
        let r = b.add(me, Op::recv(1 << 20, other, 0)).unwrap();
        b.requires(r, s).unwrap();
    }
    let g = b.finish().unwrap();
    let eager = Model { eager_limit: u64::MAX, ..Model::default() };
    assert!(sim(&g, &opts(eager, true), &point(100.0, 1.0, 0.0, 0.0, 0.0)).runtime() > 0);
    let sg = SimGraph::new(&g).unwrap();
    let err = simulate(&g, &sg, &Flat, &point(100.0, 1.0, 0.0, 0.0, 0.0), &SimOptions::default(), &NoiseSpec::default(), 0).unwrap_err();
    assert!(err.message.contains("was never received"), "{err}");
    assert!(err.message.contains("2 messages never received, 2 operations never started"), "{err}");
}

#[test]
fn unmatched_wildcard_receive_is_reported() {
    let mut b = GraphBuilder::new(2);
    b.add(0, Op::recv(8, ANY, 3)).unwrap();
    b.add(1, Op::calc(5)).unwrap();
    let g = b.finish().unwrap();
    let sg = SimGraph::new(&g).unwrap();
    let err = simulate(&g, &sg, &Flat, &point(1.0, 1.0, 0.0, 0.0, 0.0), &SimOptions::default(), &NoiseSpec::default(), 0).unwrap_err();
    assert!(err.message.contains("rank 0 recv #0 from rank any tag 3 was never matched"), "{err}");
}

#[test]
fn noise_is_deterministic_and_thread_independent() {
    let mut g = random_graph(&RandomSpec { ranks: 6, rounds: 20, seed: 3, ..Default::default() }).unwrap();
    Plan::prepare(&mut g, Model::default()).unwrap();
    let sg = SimGraph::new(&g).unwrap();
    let pt = point(3000.0, 1500.0, 0.0, 0.018, 0.0);
    let noise = NoiseSpec {
        calc: Some(Dist::Gaussian { sigma: 0.1, relative: true }),
        latency: Some(Dist::LogNormal { sigma: 0.3 }),
        os: vec![OsNoise::Periodic { period_ns: 100_000.0, duration_ns: 2_000.0, synchronized: false }],
        coll: Vec::new(),
    };
    let o = SimOptions::default();
    let a = simulate(&g, &sg, &Flat, &pt, &o, &noise, 7).unwrap();
    let b = simulate(&g, &sg, &Flat, &pt, &o, &noise, 7).unwrap();
    let c = simulate(&g, &sg, &Flat, &pt, &o, &noise, 8).unwrap();
    let quiet = simulate(&g, &sg, &Flat, &pt, &o, &NoiseSpec::default(), 7).unwrap();
    assert_eq!(a.rank_end, b.rank_end);
    assert_ne!(a.rank_end, c.rank_end);
    assert_ne!(a.rank_end, quiet.rank_end);
    let one = simulate_samples(&g, &sg, &Flat, &pt, &o, &noise, 7, 0, 12, 1).unwrap();
    assert_eq!(one[0].runtime_ns, a.runtime_ns(), "a single run is sample 0");
    let two = simulate_samples(&g, &sg, &Flat, &pt, &o, &noise, 7, 0, 12, 2).unwrap();
    assert_eq!(one, two);
    let tail = simulate_samples(&g, &sg, &Flat, &pt, &o, &noise, 7, 5, 7, 2).unwrap();
    assert_eq!(&one[5..], &tail[..]);
    assert!(one.windows(2).any(|w| w[0].runtime_ns != w[1].runtime_ns));
}

#[test]
fn critical_path_of_the_worked_example() {
    let g = worked_example(1000);
    let o = SimOptions { record: true, ..Default::default() };
    let r = sim(&g, &o, &point(500.0, 0.0, 0.0, 5.0, 0.0));
    let rec = r.record.as_ref().unwrap();
    let cp = rec.critical_path(&g);
    let names: Vec<(u32, &str)> =
        cp.slices.iter().map(|&i| (rec.slices[i as usize].rank, latitude_core::sim::SLICE_NAMES[rec.slices[i as usize].kind as usize])).collect();
    assert_eq!(names, vec![(0, "calc"), (0, "send"), (1, "recv"), (1, "calc")]);
    assert_eq!(cp.messages.len(), 1);
    // every op has a start and an end; the waits include rank 1's recv waiting for data
    assert!(rec.end.iter().all(|&e| e != u64::MAX));
    let waits = rec.waits(&g);
    assert_eq!(waits.len(), 1);
    assert_eq!(r.to_ns(waits[0].2 - waits[0].1), 1515.0 - 500.0); // posted at 500, data at 1515
}

/// The unit is the coarsest in which the parameters are exact (G = 0.018 ns: ps). A run
/// that would overflow it is redone in a coarser one: G = 2.5·10⁻⁷ ns needs ticks (range
/// 4.6 s), a 5 s calc overflows them, so the run is redone in fs, where G rounds to 0.
#[test]
fn units_follow_the_parameters_and_fall_back_on_overflow() {
    let build = |calc: u64| {
        let mut b = GraphBuilder::new(2);
        let c = b.add(0, Op::calc(calc)).unwrap();
        let s = b.add(0, Op::send(8, 1, 0)).unwrap();
        b.requires(s, c).unwrap();
        b.add(1, Op::recv(8, 0, 0)).unwrap();
        b.finish().unwrap()
    };
    let mut g = build(5_000_000_000_000); // 5000 s
    let pt = point(3000.0, 1500.0, 0.0, 0.018, 0.0);
    let r = sim(&g, &SimOptions::default(), &pt);
    assert_eq!((r.unit_ticks, r.exact), (1_000_000, true));
    assert_eq!(ticks(&r), engine_ticks(&mut g, Model::default(), &pt));
    let mut g = build(5_000_000_000); // 5 s
    let pt = point(3000.0, 1500.0, 0.0, 2.5e-7, 0.0);
    let r = sim(&g, &SimOptions::default(), &pt);
    assert_eq!((r.unit_ticks, r.exact), (1_000, false));
    assert_eq!(r.runtime_ns(), 5_000_006_000.0);
    let exact = engine_ticks(&mut g, Model::default(), &pt);
    assert_eq!(exact, 5_000_006_000 * 1_000_000_000 + 7 * 250);
    assert!((ticks(&r) - exact).abs() as f64 <= 1e-9 * exact as f64);
}
