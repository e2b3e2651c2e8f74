//! How big a job file's graph will be, known before a single op is emitted: a job with
//! `[ITERATIONS] 1000000000` or an alltoall on 2^24 ranks must be refused in one line, not
//! abort with "memory allocation failed" after filling the machine.
//!
//! Ops per repeat of a motif on a job of n ranks, as the emitter writes them (every MPI call
//! is one calc and the call's op; `emit.rs`): pingpong 4 per paired rank; halo at most
//! 4 per neighbour direction plus a Waitall (2) per rank; sweep3d at most 8 per octant,
//! angle block and k block per rank; incast 4(n − 1) + 2; a collective 2 per rank (the calc
//! before it and its `collop`) plus 2 per message of its algorithm (closed forms in
//! `collectives::messages`); compute motifs none. A motif runs ⌊iterations / every⌋ times
//! its own `iterations` repeats; every active rank ends with one calc. Halo and sweep counts
//! are upper bounds (grid borders have fewer neighbours); the rest are exact.

use super::job::{Job, JobFile};
use super::motif::Motif;
use super::SynthOptions;
use crate::collectives::{ceil_log2, messages, own_copy, RankCall};
use crate::error::{Error, Result};
use crate::graph::MAX_VERTICES;

/// Memory per op of a generated graph while it is generated and analysed (10⁸ ops took
/// 4.5 GiB end to end, docs/workloads.md), and per rank (emitter lanes, builder counters).
pub const BYTES_PER_OP: u128 = 48;
pub const BYTES_PER_RANK: u128 = 160;

/// Ops of one job's graph (an estimate, see the module comment).
pub fn job_ops(job: &Job, opts: &SynthOptions) -> u128 {
    let n = job.ranks.len() as u128;
    let mut ops = n; // the final calc of every rank
    for m in &job.motifs {
        let per_repeat: u128 = match &m.motif {
            Motif::Compute(_) => 0,
            Motif::PingPong { .. } => 4 * (n - n % 2),
            Motif::Halo(h) => (8 * h.ndims as u128 + 2) * n,
            Motif::Sweep(s) => 64 * s.angle_blocks() as u128 * s.k_blocks() as u128 * n,
            Motif::Incast { .. } => 4 * (n - 1) + 2,
            Motif::Coll(c) => {
                let mut call = RankCall::new(c.kind, n as u32, 0, c.bytes);
                call.root = c.root;
                let alg = c.alg.unwrap_or_else(|| opts.coll.choose(&call));
                let msgs = messages(c.kind, alg, n as u32, c.bytes).unwrap_or(n * ceil_log2(n as u32) as u128);
                if alg == crate::collectives::Algorithm::None {
                    0
                } else {
                    // own-block copies: at the root, and on every other rank alike
                    let at = |me: u32| own_copy(alg, &RankCall { me, ..call }) > 0;
                    let root = call.root.min(n as u32 - 1);
                    let copies = at(root) as u128 + if n > 1 { at((root + 1) % n as u32) as u128 * (n - 1) } else { 0 };
                    2 * n + 2 * msgs + copies
                }
            }
        };
        let runs = (job.iterations / m.every) as u128 * m.iterations as u128;
        ops = ops.saturating_add(runs.saturating_mul(per_repeat));
    }
    ops
}

/// Memory the machine has available now (Linux `MemAvailable`), if known.
pub fn available_memory() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn gib(bytes: u128) -> String {
    let g = bytes as f64 / (1u64 << 30) as f64;
    if g >= 100.0 {
        format!("{g:.0} GiB")
    } else {
        format!("{g:.1} GiB")
    }
}

fn count(n: u128) -> String {
    if n < 1_000_000 {
        n.to_string()
    } else {
        format!("{:.2e}", n as f64)
    }
}

/// Refuse a job file whose graph would not fit: more ops than a graph holds, more than
/// `opts.max_ops`, or (without `max_ops`) more memory than the machine has available.
/// Returns the estimated number of ops.
pub fn check(file: &JobFile, opts: &SynthOptions) -> Result<u128> {
    let per_job: Vec<u128> = file.jobs.iter().map(|j| job_ops(j, opts)).collect();
    let ops = per_job.iter().fold(0u128, |a, &b| a.saturating_add(b));
    let biggest = per_job.iter().enumerate().max_by_key(|&(_, &o)| o).map(|(i, _)| &file.jobs[i]);
    let at = |msg: String| match biggest {
        Some(j) => Error::at(&file.path, j.line, msg),
        None => Error::in_file(&file.path, msg),
    };
    let bytes = ops.saturating_mul(BYTES_PER_OP).saturating_add(file.world as u128 * BYTES_PER_RANK);
    let about = format!("the graph would have about {} operations (~{} in memory)", count(ops), gib(bytes));
    if ops > MAX_VERTICES as u128 {
        return Err(at(format!("{about}; a graph holds at most {MAX_VERTICES} operations: fewer [ITERATIONS], ranks or repeats")));
    }
    match (opts.max_ops, available_memory()) {
        (Some(max), _) if ops > max as u128 => Err(at(format!("{about}, more than --max-ops {max}"))),
        (None, Some(avail)) if bytes > avail * 4 / 5 => Err(at(format!(
            "{about}, more than the {} this machine has available: fewer [ITERATIONS], ranks or repeats, or --max-ops {} to try anyway",
            gib(avail),
            ops
        ))),
        _ => Ok(ops),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(text: &str) -> u128 {
        let f = JobFile::parse(text, "t.job").unwrap();
        f.jobs.iter().map(|j| job_ops(j, &SynthOptions::default())).sum()
    }

    #[test]
    fn estimates_match_generated_graphs() {
        for text in [
            "[JOB] a\n[RANKS] 0-7\n[ITERATIONS] 3\n[MOTIF] pingpong bytes=8\n[MOTIF] allreduce bytes=64\n",
            "[JOB] a\n[RANKS] 0-5\n[MOTIF] alltoall bytes=1KiB iterations=2\n[MOTIF] incast bytes=8 every=1\n",
            "[JOB] a\n[RANKS] 0-15\n[ITERATIONS] 4\n[MOTIF] bcast bytes=1MiB every=2\n[MOTIF] barrier\n[MOTIF] compute time=1us\n",
        ] {
            let f = JobFile::parse(text, "t.job").unwrap();
            let g = super::super::generate(&f, &SynthOptions::default()).unwrap().graph;
            assert_eq!(ops(text), g.len() as u128, "{text}");
        }
        // Halo: an upper bound.
        let text = "[JOB] a\n[RANKS] 0-15\n[MOTIF] halo2d x=8 y=8\n";
        let g = super::super::generate(&JobFile::parse(text, "t.job").unwrap(), &SynthOptions::default()).unwrap().graph;
        assert!(ops(text) >= g.len() as u128 && ops(text) <= 2 * g.len() as u128);
    }

    #[test]
    fn enormous_jobs_are_refused_before_generating() {
        let opts = SynthOptions::default();
        let f = JobFile::parse("# x\n[JOB] big\n[RANKS] 0-3\n[ITERATIONS] 1000000000\n[MOTIF] allreduce bytes=8\n", "t.job").unwrap();
        let e = check(&f, &opts).unwrap_err().to_string();
        assert!(e.starts_with("t.job:2: the graph would have about 2.40e10 operations (~1073 GiB in memory)"), "{e}");
        assert!(e.contains("a graph holds at most 2147483647 operations"), "{e}");
        let f = JobFile::parse("[JOB] wide\n[RANKS] 0-16777215\n[MOTIF] alltoall bytes=8 alg=pairwise\n", "t.job").unwrap();
        let e = check(&f, &opts).unwrap_err().to_string();
        assert!(e.contains("about 5.63e14 operations") && e.contains("a graph holds at most"), "{e}");
        // The default algorithm for so many ranks (Bruck) needs far fewer, still ~40 GiB.
        let f = JobFile::parse("[JOB] wide\n[RANKS] 0-16777215\n[MOTIF] alltoall bytes=8\n", "t.job").unwrap();
        let capped = SynthOptions { max_ops: Some(1 << 20), ..Default::default() };
        let e = check(&f, &capped).unwrap_err().to_string();
        assert!(e.contains("about 8.72e8 operations (~41.5 GiB in memory), more than --max-ops"), "{e}");
        let f = JobFile::parse("[JOB] a\n[RANKS] 0-3\n[ITERATIONS] 1000\n[MOTIF] barrier\n", "t.job").unwrap();
        let capped = SynthOptions { max_ops: Some(100), ..Default::default() };
        assert!(check(&f, &capped).unwrap_err().to_string().contains("more than --max-ops 100"));
        assert!(check(&f, &opts).is_ok());
    }
}
