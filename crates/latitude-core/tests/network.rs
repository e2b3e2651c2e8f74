//! Machines with topologies, placements, intra-node parameters and per-pair matrices:
//! the engine against an independent reference, exact derivatives per named parameter,
//! the critical path's concrete costs and the pairwise sensitivities' identities.

mod common;

use std::sync::Arc;

use common::*;
use latitude_core::engine::pairs::pair_sensitivities;
use latitude_core::engine::{predict, Plan};
use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::gen::Rng;
use latitude_core::graph::{ExecGraph, GraphBuilder, Op};
use latitude_core::model::{p, Model, Point, Protocol, TICKS_PER_NS};
use latitude_core::net::{Dragonfly, FatTree, GraphNet, LatTerms, Machine, Matrix, Network, Placement, Routes, Topology, Torus, NO_ENTRY};

const NS: i128 = TICKS_PER_NS;

/// A random machine for `ranks` ranks and integer-ns values for its parameters; with
/// `copy`, the copy parameter C follows the machine's own (where a configuration puts it)
/// and its index is returned.
pub fn random_machine(rng: &mut Rng, ranks: u32, copy: bool) -> (Arc<Machine>, Vec<f64>, Option<u16>) {
    let rpn = 1 + rng.below(3) as u32;
    let nodes_needed = ranks.div_ceil(rpn);
    let topology = loop {
        let t = match rng.below(5) {
            0 => Topology::Flat,
            1 => Topology::FatTree(FatTree { k: [2, 4, 6][rng.below(3) as usize], levels: 1 + rng.below(3) as u32 }),
            2 => {
                let (g, a) = (2 + rng.below(3) as u32, 1 + rng.below(3) as u32);
                Topology::Dragonfly(Dragonfly { g, a, p: 1 + rng.below(2) as u32, h: (g - 1).div_ceil(a) })
            }
            3 => Topology::Torus(Torus { dims: (0..1 + rng.below(2)).map(|_| 2 + rng.below(3) as u32).collect() }),
            _ => {
                let n = nodes_needed + rng.below(3) as u32;
                Topology::Graph(random_net(rng, n))
            }
        };
        if t.nodes().is_none_or(|n| n >= nodes_needed as u64) {
            break t;
        }
    };
    let mut values =
        vec![rng.below(3000) as f64, rng.below(500) as f64, rng.below(100) as f64, [0.0, 1.0, 2.0][rng.below(3) as usize], [0.0, 1.0][rng.below(2) as usize]];
    if !matches!(topology, Topology::Flat) && rng.below(2) == 0 {
        values[p::L] = 0.0; // as a topology machine file defaults it
    }
    let next = |values: &mut Vec<f64>, rng: &mut Rng| {
        values.push(rng.below(600) as f64);
        (values.len() - 1) as u16
    };
    let class_param: Vec<u16> = topology.classes().iter().map(|_| next(&mut values, rng)).collect();
    let intra = (rng.below(2) == 0).then(|| (next(&mut values, rng), next(&mut values, rng)));
    let extra = next(&mut values, rng); // a machine parameter the matrix may use
    let copy = copy.then(|| {
        values.push([0.0, 1.0, 3.0][rng.below(3) as usize]);
        (values.len() - 1) as u16
    });
    let placement = match rng.below(3) {
        0 => Placement::Block,
        1 => Placement::RoundRobin,
        _ => {
            // a random valid map
            let cap = topology.nodes().unwrap_or(nodes_needed as u64 + 2) as u32;
            let mut load = vec![0u32; cap as usize];
            Placement::Explicit(
                (0..ranks)
                    .map(|_| loop {
                        let n = rng.below(cap as u64) as u32;
                        if load[n as usize] < rpn {
                            load[n as usize] += 1;
                            break n;
                        }
                    })
                    .collect(),
            )
        }
    };
    let lat_matrix = (rng.below(3) == 0).then(|| {
        let entries: Vec<LatTerms> = (0..3)
            .map(|i| {
                let mut t = LatTerms { c: rng.below(400) as i128 * NS, ..Default::default() };
                if i > 0 {
                    t.add(extra as usize, i);
                }
                t
            })
            .collect();
        let n = ranks as usize;
        let mut ids = vec![NO_ENTRY; n * n];
        for i in 0..n {
            for j in i..n {
                let id = if rng.below(3) == 0 { NO_ENTRY } else { rng.below(3) as u32 };
                ids[i * n + j] = id;
                ids[j * n + i] = id;
            }
        }
        Matrix { by_node: false, n, ids, entries }
    });
    let m = Machine {
        source: "random.toml".into(),
        nparams: values.len(),
        topology,
        class_param,
        ranks_per_node: rpn,
        placement,
        intra,
        lat_matrix,
        gap_matrix: None,
    };
    m.validate().unwrap();
    (Arc::new(m), values, copy)
}

/// A connected random network: a random tree over switches, nodes hung on switches, a few
/// extra switch links; two link classes.
fn random_net(rng: &mut Rng, nodes: u32) -> GraphNet {
    let switches = 1 + rng.below(4) as u32;
    let s = |i: u32| nodes + i;
    let mut links = Vec::new();
    for i in 1..switches {
        links.push((s(rng.below(i as u64) as u32), s(i), 1u8));
    }
    for n in 0..nodes {
        links.push((n, s(rng.below(switches as u64) as u32), 0));
    }
    for _ in 0..rng.below(3) {
        let (a, b) = (s(rng.below(switches as u64) as u32), s(rng.below(switches as u64) as u32));
        if a != b && !links.iter().any(|&(x, y, _)| (x, y) == (a, b) || (x, y) == (b, a)) {
            links.push((a, b, 1));
        }
    }
    GraphNet::new(nodes, switches, vec!["host".into(), "wire".into()], &links).unwrap()
}

fn random_model(rng: &mut Rng) -> Model {
    Model {
        protocol: [Protocol::Handshake, Protocol::LogGopSim][rng.below(2) as usize],
        eager_limit: [0, 1024, u64::MAX][rng.below(3) as usize],
        nic_serialization: rng.below(2) == 0,
        classes: None,
        // half the models price local copies with C (its index is set with the machine)
        copy: (rng.below(2) == 0).then_some(0),
        call: None,
    }
}

fn random_spec(rng: &mut Rng, seed: u64) -> RandomSpec {
    RandomSpec {
        ranks: 2 + rng.below(6) as u32,
        rounds: 1 + rng.below(7) as u32,
        seed,
        max_calc: [0, 10, 5000][rng.below(3) as usize],
        p_nonblocking: rng.unit(),
        p_extra_edge: rng.unit() * 0.5,
        p_copy: [0.0, 0.3][rng.below(2) as usize],
        ..Default::default()
    }
}

/// One random case: a graph, its plan under `model`, and a random machine bound to it.
struct Case {
    g: ExecGraph,
    model: Model,
    plan: Plan,
    machine: Arc<Machine>,
    net: Network,
    values: Vec<f64>,
}

fn random_case(rng: &mut Rng, seed: u64, model: Model, adjust: impl FnOnce(&mut Vec<f64>)) -> Case {
    let mut g = random_graph(&random_spec(rng, seed)).unwrap();
    let (machine, mut values, copy) = random_machine(rng, g.num_ranks(), model.copy.is_some());
    let model = Model { copy, ..model };
    let plan = Plan::prepare(&mut g, model).unwrap();
    adjust(&mut values);
    let net = machine.bind(&g).unwrap();
    Case { g, model, plan, machine, net, values }
}

#[test]
fn engine_equals_reference_on_random_machines() {
    let mut rng = Rng::new(18);
    for seed in 0..300 {
        let model = random_model(&mut rng);
        let Case { g, model, plan, machine, net, values } = random_case(&mut rng, seed, model, |_| {});
        let pt = Point::from_ns(&values).unwrap();
        let pr = predict(&g, &plan, &net, &pt).unwrap();
        let mut reference = Reference::on(&g, model, pt, &net);
        assert_eq!(pr.t, reference.runtime(), "seed {seed}: {machine:?}");
        check_path(&g, &net, &pr, seed);
    }
}

/// The path's concrete costs sum to T, its latency-term count is the right derivative in a
/// latency added to every message, every parameter's coefficient lies between the one-sided
/// derivatives, and the pairwise sensitivities rebuild the path's latency and gap terms.
fn check_path(g: &ExecGraph, net: &Network, pr: &latitude_core::engine::Prediction, seed: u64) {
    let pt = &pr.point;
    let (c, a) = pr.path_total_on(g, net);
    let total = c * pt.scale() + a.iter().enumerate().map(|(k, &x)| x as i128 * pt.theta[k]).sum::<i128>();
    assert_eq!(total, pr.t, "path sums to T (seed {seed})");
    for k in 0..pt.n {
        assert!(pr.left[k] <= a[k] && a[k] <= pr.right[k], "seed {seed} param {k}: {} ≤ {} ≤ {}", pr.left[k], a[k], pr.right[k]);
    }
    let pairs = pair_sensitivities(g, &pr.path);
    assert_eq!(pairs.iter().map(|x| x.lat).sum::<u64>(), pr.lat_right, "pairs sum to the latency terms (seed {seed})");
    assert_eq!(pr.path_total().a[p::L], pr.lat_right);
    let mut rebuilt = vec![0u64; pt.n];
    for x in &pairs {
        let r = net.route(x.a, x.b);
        for (k, n) in r.lat.terms() {
            rebuilt[k] += x.lat * n as u64;
        }
        for (k, n) in r.gap.terms() {
            rebuilt[k] += x.bytes * n as u64;
        }
    }
    for k in (0..pt.n).filter(|&k| ![p::O_MSG, p::G_MSG, p::O_BYTE, pr.model.copy_param()].contains(&k)) {
        assert_eq!(rebuilt[k], a[k], "seed {seed}: pairs × routes give the path's coefficient of parameter {k}");
    }
}

/// λ of every named parameter is the exact one-sided slope: with integer data no breakpoint
/// lies strictly between an integer θ_k and θ_k ± δ for δ below 1 / (largest slope).
#[test]
fn derivatives_per_parameter_are_exact_slopes() {
    let mut rng = Rng::new(1818);
    for seed in 0..150 {
        let model = random_model(&mut rng);
        let Case { g, plan, net, values, .. } = random_case(&mut rng, seed, model, |_| {});
        let base = Point::from_ns(&values).unwrap();
        let pr = predict(&g, &plan, &net, &base).unwrap();
        let k = rng.below(base.n as u64) as usize;
        let x = base.theta[k] / NS;
        let bound = 40 * g.len() as i128 + 2;
        let at = |num: i128| predict(&g, &plan, &net, &base.with_rational(k, num, bound)).unwrap().t;
        let t0 = pr.t * bound;
        assert_eq!(at(x * bound + 1) - t0, pr.right[k] as i128 * base.unit, "right slope of {k}, seed {seed}");
        if x > 0 {
            assert_eq!(t0 - at(x * bound - 1), pr.left[k] as i128 * base.unit, "left slope of {k}, seed {seed}");
        }
    }
}

/// Ping-pong between two ranks on nodes 0 and 2 of a 2-level fat tree with k = 4: 4 wires
/// and 3 switches each way. Worked by hand: each leg costs o + (4·274 + 3·108) + 1000·G + o
/// = 1000 + 1420 + 18 + 1000 = 3438 ns; T = 6876 ns.
#[test]
fn ping_pong_on_a_fat_tree_by_hand() {
    let mut b = GraphBuilder::new(2);
    let s0 = b.add(0, Op::send(1001, 1, 0)).unwrap();
    let r0 = b.add(0, Op::recv(1001, 1, 1)).unwrap();
    let r1 = b.add(1, Op::recv(1001, 0, 0)).unwrap();
    let s1 = b.add(1, Op::send(1001, 0, 1)).unwrap();
    b.requires(r0, s0).unwrap();
    b.requires(s1, r1).unwrap();
    let mut g = b.finish().unwrap();
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let machine = Arc::new(Machine {
        source: "ft.toml".into(),
        nparams: 7,
        topology: Topology::FatTree(FatTree { k: 4, levels: 2 }),
        class_param: vec![5, 6],
        ranks_per_node: 2,
        placement: Placement::Explicit(vec![0, 2]),
        ..Machine::flat()
    });
    let net = machine.bind(&g).unwrap();
    let pt = Point::from_ns(&[0.0, 1000.0, 0.0, 0.018, 0.0, 274.0, 108.0]).unwrap();
    let pr = predict(&g, &plan, &net, &pt).unwrap();
    assert_eq!(pr.runtime_ns(), 6876.0);
    assert_eq!(pr.right, [2, 4, 0, 2000, 2000, 8, 6]); // O is 0 but its bytes are on the path
    assert_eq!(pr.left, pr.right);
    let pairs = pair_sensitivities(&g, &pr.path);
    assert_eq!(pairs.len(), 1);
    assert_eq!((pairs[0].a, pairs[0].b, pairs[0].lat, pairs[0].bytes), (0, 1, 2, 2000));
    // on one node (block placement) the same program pays L (here 0) per message only
    let same = Arc::new(Machine { placement: Placement::Block, ..(*machine).clone() });
    let pr = predict(&g, &plan, &same.bind(&g).unwrap(), &pt).unwrap();
    assert_eq!(pr.runtime_ns(), 2.0 * (2000.0 + 18.0));
}

#[test]
fn bind_refuses_what_does_not_fit() {
    let g = random_graph(&RandomSpec { ranks: 9, rounds: 2, seed: 1, ..Default::default() }).unwrap();
    let ft = |k, levels, rpn| {
        Arc::new(Machine {
            source: "m.toml".into(),
            nparams: 7,
            topology: Topology::FatTree(FatTree { k, levels }),
            class_param: vec![5, 6],
            ranks_per_node: rpn,
            ..Machine::flat()
        })
    };
    let err = ft(4, 2, 1).bind(&g).unwrap_err();
    assert_eq!(err.location, "m.toml");
    assert!(err.message.starts_with("nodes: 9 ranks at 1 per node need 9 nodes, but the fat tree (k = 4, 2 levels) has 8"), "{}", err.message);
    assert!(ft(4, 2, 2).bind(&g).is_ok());
    let err = ft(5, 2, 2).bind(&g).unwrap_err();
    assert!(err.message.starts_with("topology.k: expected an even"), "{}", err.message);
}

/// The default simulator uses the same per-pair latencies and gaps: without CPU
/// serialization it is the engine on any machine (the flat case is sim_agreement.rs).
#[test]
fn simulator_equals_engine_on_random_machines() {
    use latitude_core::sim::{simulate, NoiseSpec, SimGraph, SimOptions};
    let mut rng = Rng::new(77);
    for seed in 0..300 {
        let model = Model { nic_serialization: false, ..random_model(&mut rng) };
        let Case { g, model, plan, machine, net, values } = random_case(&mut rng, seed, model, |v| v[p::G_MSG] = 0.0);
        let pt = Point::from_ns(&values).unwrap();
        let want = predict(&g, &plan, &net, &pt).unwrap().t;
        let sg = SimGraph::new(&g).unwrap();
        let opts = SimOptions { model, cpu_serialization: false, ..Default::default() };
        let r = simulate(&g, &sg, &net, &pt, &opts, &NoiseSpec::default(), 0).unwrap();
        assert_eq!(r.runtime() as i128 * r.unit_ticks as i128, want, "seed {seed}: {machine:?}");
    }
}
