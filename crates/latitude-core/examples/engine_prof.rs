//! Profiling driver: `cargo run --release --example engine_prof -- <ranks> <rounds> <what>`
//! where what = predict | multi | plan. Prints wall time; use with valgrind --tool=callgrind
//! for instruction counts that do not depend on machine load.

use latitude_core::engine::multi::evaluate;
use latitude_core::engine::{predict, Plan};
use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::model::{p, Model, Point};
use latitude_core::net::Flat;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ranks: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let rounds: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let what = args.get(3).map(String::as_str).unwrap_or("predict");
    let mut g = random_graph(&RandomSpec { ranks, rounds, seed: 1, ..Default::default() }).unwrap();
    let pt = Point::from_ns(&[3000.0, 1500.0, 0.0, 0.018, 0.0]).unwrap();
    let t = std::time::Instant::now();
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let t_plan = t.elapsed();
    let t = std::time::Instant::now();
    match what {
        "predict" => {
            let pr = predict(&g, &plan, &Flat, &pt).unwrap();
            println!("T = {} ns", pr.runtime_ns());
        }
        "multi" => {
            let pts: Vec<Point> = (0..8).map(|i| pt.at_ticks(p::L, (3000 + 1000 * i) * 1_000_000_000, 1)).collect();
            let e = evaluate(&g, &plan, &Flat, &pts, p::L).unwrap();
            println!("T0 = {}", e[0].t);
        }
        _ => {}
    }
    eprintln!("{} vertices, {} slots: plan {:?}, {what} {:?}", g.len(), plan.nslots(), t_plan, t.elapsed());
}
