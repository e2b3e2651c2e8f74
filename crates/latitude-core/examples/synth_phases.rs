//! Profiling driver for generated workloads: `cargo run --release --example synth_phases --
//! JOB [what]`, what = all (default) | build | graph | predict | sweep (one envelope pass, one
//! thread) | sweep2 (the exact sweep) | tangents (the tangent method) | multi; JOB =
//! random:ROUNDS for the analysis bench's 64-rank random graph. Prints the wall time of each
//! phase and the peak RSS after it; use under `perf record` or callgrind.

use latitude_core::engine::multi::evaluate;
use latitude_core::engine::{parametric, predict, tolerance, Plan};
use latitude_core::model::{p, Model, Point};
use latitude_core::net::Flat;
use latitude_core::synth::{build, JobFile, SynthOptions};
use std::time::Instant;

fn hwm() -> String {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines().find(|l| l.starts_with("VmHWM")).map(|l| l.split_whitespace().nth(1).unwrap_or("?").to_string() + " kB").unwrap_or_default()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: synth_phases JOB [all|build|graph|predict|sweep|sweep2|tangents|multi]");
    let what = args.get(2).map(String::as_str).unwrap_or("all");
    let t = Instant::now();
    let mut g = if let Some(rounds) = path.strip_prefix("random:") {
        // The analysis bench's random message graph: 64 ranks, `rounds` rounds.
        let spec =
            latitude_core::gen::random::RandomSpec { ranks: 64, rounds: rounds.parse().expect("rounds"), seed: 2, max_calc: 20_000, ..Default::default() };
        latitude_core::gen::random::random_graph(&spec).unwrap()
    } else {
        let file = JobFile::read(path).unwrap_or_else(|e| panic!("{e}"));
        let (b, _) = build(&file, &SynthOptions { seed: 1, ..Default::default() }, &mut |_, _| {}).unwrap();
        eprintln!("build   {:>8.3} s  {} ops  peak {}", t.elapsed().as_secs_f64(), b.len(), hwm());
        if what == "build" {
            return;
        }
        let t = Instant::now();
        let g = latitude_core::synth::finish(b, path).unwrap();
        eprintln!("finish  {:>8.3} s  peak {}", t.elapsed().as_secs_f64(), hwm());
        g
    };
    eprintln!("graph  {:>8.3} s  {} edges  peak {}", t.elapsed().as_secs_f64(), g.num_edges(), hwm());
    if what == "graph" {
        return;
    }
    let pt = Point::from_ns(&[3000.0, 1500.0, 0.0, 0.018, 0.0]).unwrap();
    let t = Instant::now();
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    eprintln!("plan    {:>8.3} s  {} slots  peak {}", t.elapsed().as_secs_f64(), plan.nslots(), hwm());
    let t = Instant::now();
    let pr = predict(&g, &plan, &Flat, &pt).unwrap();
    eprintln!("predict {:>8.3} s  T = {} ns  λ_L = {}  peak {}", t.elapsed().as_secs_f64(), pr.runtime_ns(), pr.right[p::L], hwm());
    if what == "predict" {
        return;
    }
    if what == "tangents" {
        let t = Instant::now();
        let opts = parametric::SweepOptions { method: parametric::SweepMethod::Tangents, ..Default::default() };
        let sw = parametric::sweep(&g, &plan, &Flat, &pt, p::L, 0, 100_000 * 1_000_000_000, opts).unwrap();
        eprintln!("tangents {:>8.3} s  {} breakpoints, {} passes", t.elapsed().as_secs_f64(), sw.breakpoints.len(), sw.passes);
        return;
    }
    if what == "sweep2" {
        let t = Instant::now();
        let sw = parametric::sweep(&g, &plan, &Flat, &pt, p::L, 0, 100_000 * 1_000_000_000, Default::default()).unwrap();
        eprintln!("sweep   {:>8.3} s  {} breakpoints, {} passes  peak {}", t.elapsed().as_secs_f64(), sw.breakpoints.len(), sw.passes, hwm());
        for b in &sw.breakpoints {
            eprint!("{:.0} ", b.at.to_f64() / 1e9);
        }
        eprintln!();
        return;
    }
    if what == "sweep" {
        let t = Instant::now();
        let (lines, widest) = latitude_core::engine::envelope::envelope(&g, &plan, &Flat, &pt, p::L, 0, 100_000 * 1_000_000_000);
        eprintln!("envelope {:>8.3} s  {} lines, widest {}  (one thread)", t.elapsed().as_secs_f64(), lines.len(), widest);
        return;
    }
    let pts: Vec<Point> = (0..8).map(|i| pt.at_ticks(p::L, (3000 + 1000 * i) * 1_000_000_000, 1)).collect();
    let repeat: usize = std::env::var("REPEAT").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    for _ in 0..repeat {
        let t = Instant::now();
        evaluate(&g, &plan, &Flat, &pts, p::L).unwrap();
        eprintln!("multi   {:>8.3} s  (one pass, 8 points)", t.elapsed().as_secs_f64());
    }
    if what == "multi" {
        return;
    }
    let t = Instant::now();
    let (_, res) = tolerance::tolerance(&g, &plan, &Flat, &pt, p::L, 3000 * 1_000_000_000, &[(101, 100), (102, 100), (105, 100)]).unwrap();
    eprintln!("tol     {:>8.3} s  evaluations {:?}", t.elapsed().as_secs_f64(), res.iter().map(|r| r.evaluations).collect::<Vec<_>>());
    let t = Instant::now();
    let sw = parametric::sweep(&g, &plan, &Flat, &pt, p::L, 0, 100_000 * 1_000_000_000, Default::default()).unwrap();
    eprintln!(
        "sweep   {:>8.3} s  {} breakpoints, {} evaluations, {} passes  peak {}",
        t.elapsed().as_secs_f64(),
        sw.breakpoints.len(),
        sw.evaluations,
        sw.passes,
        hwm()
    );
}
