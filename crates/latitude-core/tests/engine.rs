mod common;

use common::*;
use latitude_core::engine::{predict, Plan};
use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::gen::Rng;
use latitude_core::graph::{GraphBuilder, Op};
use latitude_core::model::{p, Model, Point, Protocol};
use latitude_core::net::Flat;

fn ns(pred: &latitude_core::engine::Prediction) -> f64 {
    pred.runtime_ns()
}

#[test]
fn worked_example_late_sender() {
    // c0 = c1 = c3 = 1 µs, c2 = 0.5 µs, s = 4 B, o = 0, G = 5 ns: T = L + 2.015 µs.
    let mut g = worked_example(1000);
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    for l in [0.0, 385.0, 500.0, 3000.0] {
        let pr = predict(&g, &plan, &Flat, &point(l, 0.0, 0.0, 5.0, 0.0)).unwrap();
        assert_eq!(ns(&pr), l + 2015.0);
        assert_eq!(pr.right[p::L], 1);
        assert_eq!(pr.left[p::L], 1);
        assert_eq!(pr.right[p::G_BYTE], 3);
    }
}

#[test]
fn worked_example_critical_latency() {
    // c0 = 0.1 µs: T = max(L + 1.115 µs, 1.5 µs), L_c = 0.385 µs.
    let mut g = worked_example(100);
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let at = |l: f64| predict(&g, &plan, &Flat, &point(l, 0.0, 0.0, 5.0, 0.0)).unwrap();
    assert_eq!(ns(&at(0.0)), 1500.0);
    assert_eq!(at(0.0).right[p::L], 0);
    assert_eq!(ns(&at(200.0)), 1500.0);
    assert_eq!(ns(&at(500.0)), 1615.0);
    assert_eq!(at(500.0).right[p::L], 1);
    let kink = at(385.0);
    assert_eq!(ns(&kink), 1500.0);
    assert_eq!((kink.left[p::L], kink.right[p::L]), (0, 1));
    assert_eq!(ns(&at(885.0)), 2000.0);
}

#[test]
fn worked_example_path_breakdown() {
    let mut g = worked_example(1000);
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let pr = predict(&g, &plan, &Flat, &point(500.0, 0.0, 0.0, 5.0, 0.0)).unwrap();
    let total = pr.path_total();
    assert_eq!(total.c, 2000); // c0 + c3
    assert_eq!(total.a[p::L], 1);
    assert_eq!(total.a[p::G_BYTE], 3);
    assert_eq!(pr.summary(&g, &Flat).messages, 1);
    assert_eq!(pr.summary(&g, &Flat).rank_messages, vec![0, 1]);
    assert_eq!(total.eval(&pr.point), pr.t);
}

/// A copy of 1001 bytes before an eager message (a collective's own block): with the copy
/// parameter C it costs 1000·C and λ_C = 1000, O keeps only the message's bytes; without C
/// it costs 1000·O, as before; with C = O both models give the same T.
#[test]
fn a_copy_is_priced_by_c_by_hand() {
    let mut b = GraphBuilder::new(2);
    let c = b.add(0, Op::copy(1001)).unwrap();
    let s = b.add(0, Op::send(11, 1, 0)).unwrap();
    let r = b.add(1, Op::recv(11, 0, 0)).unwrap();
    b.requires(s, c).unwrap();
    let _ = r;
    let mut g = b.finish().unwrap();
    let m = copy_model(Model::default());
    let plan = Plan::prepare(&mut g, m).unwrap();
    let base = point(1000.0, 100.0, 0.0, 0.0, 0.25);
    // copy 1000·0.5, then o + L (+ 10·G = 0) to the arrival, then the receive's o + 10·O
    let pr = predict(&g, &plan, &Flat, &with_c(&base, 0.5)).unwrap();
    assert_eq!(ns(&pr), 500.0 + 1100.0 + 102.5);
    assert_eq!((pr.right[C_INDEX as usize], pr.right[p::O_BYTE]), (1000, 10));
    let summary = pr.summary(&g, &Flat);
    assert_eq!(summary.overhead_ns, 500.0 + 100.0 + 102.5, "the copy is overhead on the path, priced by C");
    let old = Plan::prepare(&mut g, Model::default()).unwrap();
    let pr_o = predict(&g, &old, &Flat, &base).unwrap();
    assert_eq!((ns(&pr_o), pr_o.right[p::O_BYTE]), (250.0 + 1100.0 + 102.5, 1010));
    assert_eq!(predict(&g, &plan, &Flat, &with_c(&base, 0.25)).unwrap().t, pr_o.t, "C = O: the same T");
}

/// A 2-rank exchange ended by a collective call's join on each rank, then 400 ns of work:
/// with the call cost K each join lasts K, so T grows by exactly K (both ranks pay it side
/// by side), λ_K = 1, the path's overhead holds it and decompose counts it as stack, not
/// computation; without K the same graph prices as before.
#[test]
fn a_call_end_is_priced_by_k_by_hand() {
    let mut b = GraphBuilder::new(2);
    let s = b.add(0, Op::send(8, 1, 0)).unwrap();
    let j0 = b.add(0, Op::calc(0)).unwrap();
    let w0 = b.add(0, Op::calc(400)).unwrap();
    let r = b.add(1, Op::recv(8, 0, 0)).unwrap();
    let j1 = b.add(1, Op::calc(0)).unwrap();
    let w1 = b.add(1, Op::calc(400)).unwrap();
    for (a, z) in [(j0, s), (w0, j0), (j1, r), (w1, j1)] {
        b.requires(a, z).unwrap();
    }
    b.mark_collective(j0, "bcast", "linear", 2, 8, 1);
    b.mark_collective(j1, "bcast", "linear", 2, 8, 1);
    let mut g = b.finish().unwrap();
    let base = point(1000.0, 100.0, 0.0, 0.0, 0.0);
    let m = call_model(Model::default());
    let plan = Plan::prepare(&mut g, m).unwrap();
    // send o 100, arrival at o + L = 1100, recv o to 1200, join K = 2500, work 400
    let pr = predict(&g, &plan, &Flat, &with_ck(&base, 0.0, 2500.0)).unwrap();
    assert_eq!(ns(&pr), 1200.0 + 2500.0 + 400.0);
    assert_eq!(pr.right[K_INDEX as usize], 1, "λ_K: one call on the critical path");
    assert_eq!(pr.summary(&g, &Flat).overhead_ns, 100.0 + 100.0 + 2500.0, "K is overhead on the path");
    let d = latitude_core::engine::decompose::decompose(&g, &plan, &Flat, &with_ck(&base, 0.0, 2500.0)).unwrap();
    assert_eq!(d.residual, 0);
    let parts = &d.rank_parts_ns[1]; // compute, latency, bandwidth, stack, sync
                                     // the receiver waits through the sender's o (stack) and L, then pays its own o and K
    assert_eq!((parts[0], parts[1], parts[3]), (400.0, 1000.0, 100.0 + 100.0 + 2500.0), "the receiver: K is stack, not computation");
    let old = Plan::prepare(&mut g, Model::default()).unwrap();
    assert_eq!(ns(&predict(&g, &old, &Flat, &base).unwrap()), 1600.0, "without K a join costs nothing");
}

fn random_specs(n: u64) -> impl Iterator<Item = RandomSpec> {
    (0..n).map(|seed| {
        let mut r = Rng::new(seed * 7919 + 3);
        RandomSpec {
            ranks: 2 + r.below(5) as u32,
            rounds: 1 + r.below(8) as u32,
            seed,
            max_calc: [0, 10, 5000][r.below(3) as usize],
            p_nonblocking: r.unit(),
            p_extra_edge: r.unit() * 0.5,
            // every third graph has computations that copy (collectives' own blocks)
            p_copy: if seed % 3 == 2 { 0.3 } else { 0.0 },
            // every fourth has computations that end collective calls (priced K)
            p_call: if seed % 4 == 1 { 0.4 } else { 0.0 },
            ..Default::default()
        }
    })
}

fn models() -> Vec<Model> {
    let mut out = Vec::new();
    for protocol in [Protocol::Handshake, Protocol::LogGopSim] {
        for eager_limit in [0, 1024, u64::MAX] {
            for nic in [false, true] {
                let m = Model { protocol, eager_limit, nic_serialization: nic, ..Model::default() };
                out.push(m);
                out.push(copy_model(m)); // copies priced by C, a parameter of their own
                out.push(call_model(m)); // and the ends of collective calls by K
            }
        }
    }
    out
}

#[test]
fn engine_equals_reference_on_random_graphs() {
    let mut rng = Rng::new(42);
    for spec in random_specs(300) {
        let g0 = random_graph(&spec).unwrap();
        for m in models() {
            let mut g = g0.clone();
            let plan = Plan::prepare(&mut g, m).unwrap();
            let mut pt = point(
                rng.below(3000) as f64,
                rng.below(500) as f64,
                rng.below(100) as f64,
                [0.0, 0.018, 1.0][rng.below(3) as usize],
                [0.0, 0.5][rng.below(2) as usize],
            );
            if m.call.is_some() {
                pt = with_ck(&pt, [0.0, 0.25, 3.0][rng.below(3) as usize], [0.0, 700.0, 2500.5][rng.below(3) as usize]);
            } else if m.copy.is_some() {
                pt = with_c(&pt, [0.0, 0.25, 3.0][rng.below(3) as usize]);
            }
            let pr = predict(&g, &plan, &Flat, &pt).unwrap();
            let mut reference = Reference::new(&g, m, pt);
            assert_eq!(pr.t, reference.runtime(), "seed {} model {m:?}", spec.seed);
            let (c, a) = pr.path_total_on(&g, &Flat);
            let total = c * pt.scale() + a.iter().enumerate().map(|(k, &x)| x as i128 * pt.theta[k]).sum::<i128>();
            assert_eq!(total, pr.t, "path sums to T (seed {})", spec.seed);
            assert_eq!(pr.path_total().a[p::L], pr.right[p::L], "path slope is the right derivative");
            for k in 0..pt.n {
                assert!(pr.left[k] <= a[k] && a[k] <= pr.right[k], "seed {} param {k}: path coefficient within λ", spec.seed);
            }
        }
    }
}

/// Exact one-sided derivatives: with integer data, no breakpoint lies strictly between an
/// integer L and L ± δ when δ < 1 / (max slope), so T(L ± δ) − T(L) = ±δ·λ±.
#[test]
fn derivatives_are_exact_one_sided_slopes() {
    let mut rng = Rng::new(7);
    for spec in random_specs(200) {
        let g0 = random_graph(&spec).unwrap();
        for m in models().into_iter().step_by(3) {
            let mut g = g0.clone();
            let plan = Plan::prepare(&mut g, m).unwrap();
            let l = 1 + rng.below(40) as i128 * 50;
            let base = point(l as f64, 100.0, 0.0, 1.0, 0.0);
            let pr = predict(&g, &plan, &Flat, &base).unwrap();
            let bound = 3 * g.len() as i128 + 2;
            let eval = |num: i128, den: i128| {
                let q = base.with_rational(p::L, num, den);
                let t = predict(&g, &plan, &Flat, &q).unwrap().t;
                (t, q.unit)
            };
            let (t_hi, u_hi) = eval(l * bound + 1, bound);
            let (t_lo, _) = eval(l * bound - 1, bound);
            let t0 = pr.t * bound; // same unit as the rational evaluations
            assert_eq!(u_hi, base.unit * bound);
            assert_eq!(t_hi - t0, pr.right[p::L] as i128 * base.unit, "right slope, seed {}", spec.seed);
            assert_eq!(t0 - t_lo, pr.left[p::L] as i128 * base.unit, "left slope, seed {}", spec.seed);
        }
    }
}

#[test]
fn unsafe_exchanges_deadlock_only_under_rendezvous() {
    let mut found = false;
    for seed in 0..200 {
        let spec = RandomSpec { ranks: 3, rounds: 6, seed, unsafe_exchanges: true, p_nonblocking: 0.0, sizes: vec![1 << 20], ..Default::default() };
        let g0 = random_graph(&spec).unwrap();
        if g0.order_kind() == latitude_core::graph::OrderKind::AnyProtocol {
            continue;
        }
        found = true;
        let mut g = g0.clone();
        assert!(Plan::prepare(&mut g, Model { eager_limit: u64::MAX, ..Default::default() }).is_ok());
        let mut g = g0.clone();
        let err = Plan::prepare(&mut g, Model { eager_limit: 1024, ..Default::default() }).err().expect("deadlock");
        assert!(err.message.contains("deadlock under the rendezvous protocol"), "{err}");
    }
    assert!(found, "the generator produced no eager-only graph");
}

#[test]
fn runtime_is_monotone_and_convex_in_l() {
    let spec = RandomSpec { ranks: 5, rounds: 10, seed: 99, ..Default::default() };
    let mut g = random_graph(&spec).unwrap();
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let ts: Vec<i128> = (0..60).map(|i| predict(&g, &plan, &Flat, &point(i as f64 * 100.0, 50.0, 0.0, 0.5, 0.0)).unwrap().t).collect();
    for w in ts.windows(3) {
        assert!(w[1] >= w[0]);
        assert!(w[2] - w[1] >= w[1] - w[0], "convex");
    }
    let _ = Point::from_ns(&[0.0; 5]);
}

/// Schedgen's shape of an Irecv-first ring exchange (the usual halo pattern): each op
/// requires the computation before it, which `irequires` the previous op. A computation
/// that only overlaps a rendezvous recv must not wait for the pair's end, so this graph
/// is valid for every eager limit.
const SCHEDGEN_RING: &str = "num_ranks 3
rank 0 {
l1: recv 100000b from 2 tag 0
l2: calc 100
l1 requires l2
l3: send 100000b to 1 tag 0
l4: calc 50
l3 requires l4
l4 irequires l1
l5: calc 0
l5 requires l1
l5 requires l3
l6: calc 30
l5 requires l6
l6 irequires l3
}
rank 1 {
l1: recv 100000b from 0 tag 0
l2: calc 200
l1 requires l2
l3: send 100000b to 2 tag 0
l4: calc 60
l3 requires l4
l4 irequires l1
l5: calc 0
l5 requires l1
l5 requires l3
l6: calc 40
l5 requires l6
l6 irequires l3
}
rank 2 {
l1: recv 100000b from 1 tag 0
l2: calc 300
l1 requires l2
l3: send 100000b to 0 tag 0
l4: calc 70
l3 requires l4
l4 irequires l1
l5: calc 0
l5 requires l1
l5 requires l3
l6: calc 50
l5 requires l6
l6 irequires l3
}
";

#[test]
fn schedgen_irecv_ring_is_valid_for_every_protocol() {
    let g0 = latitude_core::goal::read_goal_from(SCHEDGEN_RING.as_bytes(), "ring.goal").unwrap();
    assert_eq!(g0.order_kind(), latitude_core::graph::OrderKind::AnyProtocol);
    for m in models() {
        let mut g = g0.clone();
        let plan = Plan::prepare(&mut g, m).unwrap();
        let pt = point(3000.0, 1500.0, 0.0, 0.018, 0.0);
        let pr = predict(&g, &plan, &Flat, &pt).unwrap();
        assert_eq!(pr.t, Reference::new(&g, m, pt).runtime(), "{m:?}");
    }
}
