//! Profiling driver for machines: `cargo run --release --example network_prof -- <ranks>
//! <rounds> <flat|fat_tree|torus> <predict|multi>`. Wall time; use with valgrind
//! --tool=callgrind for instruction counts that do not depend on machine load.

use std::sync::Arc;

use latitude_core::engine::multi::evaluate;
use latitude_core::engine::{predict, Plan};
use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::model::{p, Model, Point};
use latitude_core::net::{FatTree, Flat, Machine, Routes, Topology, Torus};

fn run<R: Routes>(g: &latitude_core::ExecGraph, plan: &Plan, net: &R, pt: &Point, what: &str) {
    match what {
        "predict" => println!("T = {} ns", predict(g, plan, net, pt).unwrap().runtime_ns()),
        _ => {
            let k = if pt.n > 5 { 5 } else { p::L };
            let pts: Vec<Point> = (0..8).map(|i| pt.at_ticks(k, (300 + 100 * i) * 1_000_000_000, 1)).collect();
            println!("T0 = {}", evaluate(g, plan, net, &pts, k).unwrap()[0].t);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ranks: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let rounds: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let kind = args.get(3).map(String::as_str).unwrap_or("flat");
    let what = args.get(4).map(String::as_str).unwrap_or("predict");
    let mut g = random_graph(&RandomSpec { ranks, rounds, seed: 1, ..Default::default() }).unwrap();
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let t = std::time::Instant::now();
    if kind == "flat" {
        let pt = Point::from_ns(&[3000.0, 1500.0, 0.0, 0.018, 0.0]).unwrap();
        run(&g, &plan, &Flat, &pt, what);
    } else {
        let topology = if kind == "torus" { Topology::Torus(Torus { dims: vec![8, 8, 8] }) } else { Topology::FatTree(FatTree { k: 16, levels: 3 }) };
        let classes = topology.classes().len();
        let m = Arc::new(Machine {
            nparams: 7 + classes,
            topology,
            class_param: (7..7 + classes as u16).collect(),
            ranks_per_node: 4,
            intra: Some((5, 6)),
            ..Machine::flat()
        });
        let net = m.bind(&g).unwrap();
        let mut vals = vec![0.0, 1500.0, 0.0, 0.018, 0.0, 300.0, 0.01];
        vals.extend((0..classes).map(|i| 274.0 - 50.0 * i as f64));
        run(&g, &plan, &net, &Point::from_ns(&vals).unwrap(), what);
    }
    eprintln!("{} vertices: {kind} {what} {:?}", g.len(), t.elapsed());
}
