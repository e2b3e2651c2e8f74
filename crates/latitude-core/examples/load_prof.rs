//! Profiling driver for graph loading: `cargo run --release --example load_prof -- FILE`
//! (GOAL or .lgraph). Prints wall and process CPU time of load, plan and one prediction;
//! with a second argument OUT also writes the graph as .lgraph (or GOAL if OUT ends in .goal).

use latitude_core::engine::{predict, Plan};
use latitude_core::model::{Model, Point};
use latitude_core::net::Flat;
use latitude_core::{goal, lgraph};

/// Process CPU time (user + system) in seconds, from /proc/self/stat.
fn cpu() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = s.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / 100.0
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let (t, c) = (std::time::Instant::now(), cpu());
    let r = f();
    eprintln!("{what:>8}: {:.3} s wall, {:.2} s cpu", t.elapsed().as_secs_f64(), cpu() - c);
    r
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let mut g = timed("load", || if lgraph::is_lgraph(path) { lgraph::read(path) } else { goal::read_goal(path) }).unwrap();
    if let Some(out) = args.get(2) {
        timed("write", || if out.ends_with(".goal") { goal::write_goal(&g, out) } else { lgraph::write(&g, out, 0) }).unwrap();
    }
    let plan = timed("plan", || Plan::prepare(&mut g, Model::default())).unwrap();
    let pt = Point::from_ns(&[3000.0, 1500.0, 0.0, 0.018, 0.0]).unwrap();
    let pr = timed("predict", || predict(&g, &plan, &Flat, &pt)).unwrap();
    eprintln!("{} vertices, T = {} ns", g.len(), pr.runtime_ns());
}
