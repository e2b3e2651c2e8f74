//! Time the phases of a trace conversion (profiling aid):
//! `cargo run --release --example schedule_phases -- TRACE_DIR [read|schedule|both]`
use std::time::Instant;

use latitude_core::schedule::{schedule, ScheduleOptions};
use latitude_core::trace::{discover, RankReader};

fn main() {
    let path = std::env::args().nth(1).expect("usage: schedule_phases TRACE_DIR [read|schedule|both]");
    let mode = std::env::args().nth(2).unwrap_or_else(|| "both".into());
    let set = discover(&path).unwrap();
    if mode != "schedule" {
        let t = Instant::now();
        let mut n = 0u64;
        for f in &set.files {
            let mut r = RankReader::open(f.to_str().unwrap()).unwrap();
            while r.next_record().unwrap().is_some() {
                n += 1;
            }
        }
        let read = t.elapsed().as_secs_f64();
        println!("read only: {n} records in {read:.3} s ({:.2} M/s)", n as f64 / read / 1e6);
    }
    if mode != "read" {
        let t = Instant::now();
        let mut last = 0.0;
        let s = schedule(&set, &ScheduleOptions::default(), &mut |_, _| last = t.elapsed().as_secs_f64()).unwrap();
        let all = t.elapsed().as_secs_f64();
        println!(
            "schedule: {} events, {} vertices in {all:.3} s ({:.2} M events/s); graph matching/ordering after the last rank: {:.3} s",
            s.stats.events,
            s.graph.len(),
            s.stats.events as f64 / all / 1e6,
            all - last
        );
    }
}
