//! Synthetic workloads: a job file (StressBench / SST Ember style, see `job.rs` and
//! docs/workloads.md) becomes an execution graph of any size, with no trace.
//!
//! Each job runs its motif chain `[ITERATIONS]` times on its own ranks (one communicator
//! per job; jobs run side by side on disjoint ranks). Motifs emit MPI-call-shaped ops per
//! rank straight into a [`GraphBuilder`] (no text), with the structure the trace converter
//! gives a traced run (`emit.rs`; the builder is filled on a second thread, `sink.rs`), and
//! collectives come from the shared collective library.
//! `apps/motifs` executes the same job file for real; a scheduled trace of it has the same
//! messages, rank by rank, as the generated graph.

pub mod budget;
pub mod dist;
pub mod emit;
pub mod grid;
pub mod job;
pub mod motif;
pub mod patterns;
mod sink;
pub mod value;

pub use job::{Job, JobFile};
pub use motif::{Motif, MotifSpec};

use crate::collectives::{Algorithm, Prog, Selection};
use crate::error::{Error, Result};
use crate::graph::{ExecGraph, GraphBuilder};
use emit::Emitter;
use patterns::JobCtx;

/// How a job file becomes a graph.
#[derive(Clone, Debug, Default)]
pub struct SynthOptions {
    /// Seed of the compute motifs' distributions.
    pub seed: u64,
    /// Algorithms of collective motifs without `alg=` (`--coll`).
    pub coll: Selection,
    /// Refuse a graph estimated above this many ops (None: what the machine's available
    /// memory holds; see `budget.rs`).
    pub max_ops: Option<u64>,
}

/// What one motif line did over the whole run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MotifStats {
    pub line: u64,
    pub name: &'static str,
    /// Repeats executed (occurrences × iterations).
    pub calls: u64,
    /// Collectives: the algorithm's label (`none`: not modelled).
    pub alg: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobStats {
    pub name: String,
    pub ranks: u32,
    pub iterations: u64,
    pub motifs: Vec<MotifStats>,
}

pub struct Generated {
    pub graph: ExecGraph,
    pub jobs: Vec<JobStats>,
}

/// Generate the graph of a parsed job file.
pub fn generate(file: &JobFile, opts: &SynthOptions) -> Result<Generated> {
    let (b, jobs) = build(file, opts, &mut |_, _| {})?;
    Ok(Generated { graph: finish(b, &file.path)?, jobs })
}

/// Finish a builder from [`build`]: its ops come in an order the engine can use as is
/// (`emit.rs`), which `finish_in_order` verifies and keeps.
pub fn finish(b: GraphBuilder, path: &str) -> Result<ExecGraph> {
    b.finish_in_order().map_err(|e| Error { location: path.to_string(), message: format!("generated graph: {}", e.message) })
}

/// Emit every job into a builder (not finished); `progress(done, total)` counts chain
/// iterations over all jobs.
pub fn build(file: &JobFile, opts: &SynthOptions, progress: &mut dyn FnMut(u64, u64)) -> Result<(GraphBuilder, Vec<JobStats>)> {
    let estimate = budget::check(file, opts)?;
    // The estimate bounds halo and sweep from above and the rest exactly; a graph growing
    // past it is stopped rather than left to fill memory.
    let hard_cap = estimate.saturating_add(estimate / 4).saturating_add(1 << 20);
    let mut em = Emitter::new(file.world);
    let total: u64 = file.jobs.iter().map(|j| j.iterations).sum();
    let mut done = 0u64;
    let mut stats = Vec::with_capacity(file.jobs.len());
    for (ji, job) in file.jobs.iter().enumerate() {
        let mut ctx = JobCtx { em: &mut em, ranks: &job.ranks, index: ji as u32, coll_seq: 0, prog: Prog::new() };
        let mut js = JobStats {
            name: job.name.clone(),
            ranks: job.ranks.len() as u32,
            iterations: job.iterations,
            motifs: job.motifs.iter().map(|m| MotifStats { line: m.line, name: m.name, calls: 0, alg: None }).collect(),
        };
        for it in 0..job.iterations {
            for (mi, m) in job.motifs.iter().enumerate() {
                if (it + 1) % m.every != 0 {
                    continue;
                }
                let alg = run_motif(&mut ctx, m, mi as u32, it, opts).map_err(|e| Error::at(&file.path, m.line, e))?;
                if ctx.em.emitted() as u128 > hard_cap {
                    return Err(Error::at(&file.path, m.line, format!("internal: the graph grew past its estimate of {estimate} operations")));
                }
                let s = &mut js.motifs[mi];
                s.calls += m.iterations;
                if let Some(a) = alg {
                    s.alg.get_or_insert_with(|| a.label());
                }
            }
            done += 1;
            if done.is_multiple_of(64) {
                progress(done, total);
            }
        }
        stats.push(js);
    }
    progress(done, total);
    let b = em.finish().map_err(|e| Error::in_file(&file.path, e))?;
    Ok((b, stats))
}

/// All repeats of one motif occurrence (chain iteration `it`) on every rank of the job.
fn run_motif(ctx: &mut JobCtx, m: &MotifSpec, mi: u32, it: u64, opts: &SynthOptions) -> std::result::Result<Option<Algorithm>, String> {
    let n = ctx.ranks.len() as u32;
    let mut alg = None;
    for rep in 0..m.iterations {
        let call = it * m.iterations + rep;
        match &m.motif {
            Motif::Compute(c) => ctx.compute(c, opts.seed, mi, call),
            Motif::PingPong { bytes } => {
                ctx.pre_compute(m.compute, n - n % 2);
                ctx.pingpong(*bytes)?;
            }
            Motif::Halo(h) => {
                ctx.pre_compute(m.compute, h.dims.iter().product());
                ctx.halo(h)?;
            }
            Motif::Sweep(s) => ctx.sweep(s, m.compute)?,
            Motif::Incast { bytes, root } => {
                ctx.pre_compute(m.compute, n);
                ctx.incast(*bytes, *root)?;
            }
            Motif::Coll(c) => {
                ctx.pre_compute(m.compute, n);
                alg = Some(ctx.collective(c, &opts.coll)?);
            }
        }
    }
    Ok(alg)
}
