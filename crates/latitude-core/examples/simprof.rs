//! Profiling driver for the simulator: `cargo run --release --example simprof -- RANKS ROUNDS REPS`
//! simulates a random program REPS times and prints events/s per run, measured in thread CPU
//! time (robust to other load on the machine). Use with `perf record` or
//! `valgrind --tool=cachegrind` (REPS = 0 measures the graph build alone).
use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::model::Point;
use latitude_core::net::Flat;
use latitude_core::sim::*;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let ranks: u32 = a.get(1).map(|s| s.parse().unwrap()).unwrap_or(64);
    let rounds: u32 = a.get(2).map(|s| s.parse().unwrap()).unwrap_or(2000);
    let reps: u32 = a.get(3).map(|s| s.parse().unwrap()).unwrap_or(5);
    let g = random_graph(&RandomSpec { ranks, rounds, seed: 1, ..Default::default() }).unwrap();
    let sg = SimGraph::new(&g).unwrap();
    let pt = Point::from_ns(&[3000.0, 1500.0, 0.0, 0.018, 0.0]).unwrap();
    let o = SimOptions::default();
    let ns = NoiseSpec::default();
    let mut r = Runner::new(&g, &sg, &Flat, &pt, &o, &ns).unwrap();
    let cpu = || -> f64 { std::fs::read_to_string("/proc/thread-self/schedstat").unwrap().split_whitespace().next().unwrap().parse::<f64>().unwrap() / 1e9 };
    for _ in 0..reps {
        let t = cpu();
        let x = r.run(0).unwrap();
        let e = cpu() - t;
        println!("{} vertices {} events {:.3}s {:.2e} ev/s", g.len(), x.events, e, x.events as f64 / e);
    }
}
