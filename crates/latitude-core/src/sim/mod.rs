//! The LogGOPS discrete-event simulator: per-rank CPUs and NICs, dynamic message matching
//! (ANY_SOURCE/ANY_TAG, posted and unexpected queues), eager and rendezvous protocols,
//! noise, Monte Carlo sampling and recorded timelines.
//!
//! Two semantics:
//! * [`Semantics::Design`] (default): the cost rules of docs/model.md exactly (`design.rs`), so that with one
//!   operation at a time per rank and g = 0 the simulated runtime equals the engine's T,
//!   plus CPU serialization of overlapping operations and NIC serialization in start order.
//! * [`Semantics::LogGopSim`]: LogGOPSim v1's rules and quirks bit for bit (`compat.rs`).
//!
//! Time is an integer number of *units*: 1 ns, 1 ps, 1 fs or 1 tick (10⁻⁹ ns, the engine's
//! resolution). The default simulator uses the coarsest unit in which every parameter is
//! exact (calc durations are whole ns), so its times are exact and equal the engine's, with
//! the most range (2⁶² units: 146 years in ns, 51 days in ps, 77 min in fs, 4.6 s in ticks);
//! a run that would exceed 2⁶² units is redone in the next coarser unit, rounding the
//! parameters (reported by `exact`). The LogGOPSim semantics uses integer ns like LogGOPSim
//! and requires integer parameters.

pub mod noise;
pub mod record;

mod compat;
mod design;
mod matching;
mod prep;
mod queue;

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::graph::{ExecGraph, Kind};
use crate::model::{p, Model, Point, CALL_NAME, COPY_NAME, NPARAM, TICKS_PER_NS};
use crate::net::Routes;
use rayon::prelude::*;

use noise::coll_joins;
pub use noise::{read_trace, sample_seed, CollAt, CollDelays, Dist, NoisePlan, NoiseSpec, OsNoise};
pub use prep::{SimGraph, MAX_SIM_RANKS};
pub use record::{CriticalPath, Record, Slice, SliceKind, SLICE_NAMES};

use matching::{Matcher, Side};
use noise::Noise;
use record::NoObs;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantics {
    /// The cost rules of docs/model.md with CPU/NIC contention.
    Design,
    /// LogGOPSim v1, quirks included.
    LogGopSim,
}

/// How to simulate (parameter values come separately as a [`Point`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    pub semantics: Semantics,
    /// Protocol, eager limit S, NIC serialization (Design; LogGOPSim always serializes).
    pub model: Model,
    /// Design: each (rank, cpu) runs one CPU phase at a time. Off = the engine's max-plus
    /// model, where a rank's operations may overlap freely.
    pub cpu_serialization: bool,
    /// Keep slices, per-op times and causes (timelines, critical path).
    pub record: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { semantics: Semantics::Design, model: Model::default(), cpu_serialization: true, record: false }
    }
}

/// Parameters in simulation units (G and O per byte).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Theta {
    pub l: u64,
    pub o: u64,
    pub g: u64,
    pub gb: u64,
    pub ob: u64,
    /// Per-byte cost of a local copy: C when the model has it, else O.
    pub cp: u64,
    /// Protocol classes' o_c and l_c (small, medium, large; zero without classes).
    pub co: [u64; 3],
    pub cl: [u64; 3],
    /// The call cost K of a collective call's end (zero without K).
    pub k: u64,
}

/// Latency and gap of every pair of ranks that exchanges messages, when the machine is not
/// flat (the route's values at the point, in simulation units); a flat machine uses θ's.
#[derive(Clone, Debug, Default)]
pub(crate) struct PairCosts {
    /// (src << 32 | dst) → (latency, gap per byte)
    map: FxHashMap<u64, (u64, u64)>,
}

impl PairCosts {
    /// Latency and gap of a message from `src` to `dst`.
    #[inline]
    pub fn get(&self, th: &Theta, src: u32, dst: u32) -> (u64, u64) {
        if self.map.is_empty() {
            return (th.l, th.gb);
        }
        self.map.get(&(((src as u64) << 32) | dst as u64)).copied().unwrap_or((th.l, th.gb))
    }
}

/// The routes' exact values (ticks) for the pairs that send, None on a flat machine.
fn pair_ticks(g: &ExecGraph, net: &dyn Routes, pt: &Point) -> Option<FxHashMap<u64, (i128, i128)>> {
    if net.is_flat() {
        return None;
    }
    let mut out = FxHashMap::default();
    for v in 0..g.len() as u32 {
        if g.kind(v) == Kind::Send {
            let key = ((g.rank(v) as u64) << 32) | g.peer(v) as u64;
            out.entry(key).or_insert_with(|| {
                let r = net.route(g.rank(v), g.peer(v));
                (r.lat.at(pt) * TICKS_PER_NS / pt.unit, r.gap.at(pt) * TICKS_PER_NS / pt.unit)
            });
        }
    }
    Some(out)
}

/// Pair values in units of `unit_ticks` ticks (rounded) and whether that was exact.
fn pairs_in(ticks: &Option<FxHashMap<u64, (i128, i128)>>, unit_ticks: u64) -> (PairCosts, bool) {
    let Some(ticks) = ticks else { return (PairCosts::default(), true) };
    let mut exact = true;
    let mut conv = |x: i128| {
        let u = unit_ticks as i128;
        exact &= x % u == 0;
        ((x + u / 2) / u).clamp(0, u64::MAX as i128) as u64
    };
    let map = ticks.iter().map(|(&k, &(l, g))| (k, (conv(l), conv(g)))).collect();
    (PairCosts { map }, exact)
}

/// What a simulator returns.
pub(crate) struct Outcome {
    pub rank_end: Vec<u64>,
    pub events: u64,
    pub mismatches: u64,
    /// Ops that never completed (LogGOPSim semantics only; see `compat.rs`).
    pub unfinished: u64,
}

/// The result of one simulation.
#[derive(Clone, Debug)]
pub struct SimResult {
    /// Per-rank end time in units of `unit_ticks` ticks (10⁻⁹ ns).
    pub rank_end: Vec<u64>,
    pub unit_ticks: u64,
    /// Whether every parameter was represented exactly in that unit.
    pub exact: bool,
    /// Events processed (heap pops, re-insertions included).
    pub events: u64,
    /// Messages matched to another receive than the static (trace-order) matching.
    pub static_mismatches: u64,
    /// Operations that never completed (LogGOPSim semantics; always 0 otherwise).
    pub unfinished: u64,
    pub record: Option<Record>,
}

impl SimResult {
    pub fn runtime(&self) -> u64 {
        self.rank_end.iter().copied().max().unwrap_or(0)
    }
    pub fn to_ns(&self, t: u64) -> f64 {
        crate::model::ratio_f64(t as i128 * self.unit_ticks as i128, TICKS_PER_NS)
    }
    pub fn runtime_ns(&self) -> f64 {
        self.to_ns(self.runtime())
    }
    pub fn rank_end_ns(&self) -> Vec<f64> {
        self.rank_end.iter().map(|&t| self.to_ns(t)).collect()
    }
}

/// Simulation units in ticks (10⁻⁹ ns): tick, fs, ps, ns.
const UNITS: [u64; 4] = [1, 1_000, 1_000_000, 1_000_000_000];
const NS: usize = 3;
/// A run whose runtime reaches this many units is redone in a coarser unit.
const LIMIT: u64 = 1 << 62;
const FLAGS: [&str; NPARAM] = ["-L", "-o", "-g", "-G", "-O"];

/// θ in units of `unit_ticks` ticks (rounded), and whether that was exact.
fn theta_in(pt: &Point, unit_ticks: u64, model: &Model) -> (Theta, bool) {
    let mut exact = true;
    let mut conv = |theta: i128| {
        // θ_k = theta/unit ns = theta·10⁹/unit ticks
        let num = theta * TICKS_PER_NS;
        let den = pt.unit * unit_ticks as i128;
        exact &= num % den == 0;
        ((num + den / 2) / den).clamp(0, u64::MAX as i128) as u64
    };
    let v: Vec<u64> = pt.theta[..NPARAM].iter().map(|&t| conv(t)).collect();
    let (mut co, mut cl) = ([0u64; 3], [0u64; 3]);
    if let Some(c) = model.classes {
        for i in 0..3 {
            co[i] = conv(pt.theta[c.o[i] as usize]);
            cl[i] = conv(pt.theta[c.l[i] as usize]);
        }
    }
    let cp = conv(pt.theta[model.copy_param()]);
    let k = model.call.map_or(0, |k| conv(pt.theta[k as usize]));
    (Theta { l: v[p::L], o: v[p::O_MSG], g: v[p::G_MSG], gb: v[p::G_BYTE], ob: v[p::O_BYTE], cp, co, cl, k }, exact)
}

/// LogGOPSim takes `int` parameters in ns and a 32-bit S.
fn compat_theta(pt: &Point, model: &Model) -> Result<Theta> {
    if model.classes.is_some() {
        return Err(Error::in_file("--loggopsim-compat", "LogGOPSim has one eager/rendezvous protocol; it cannot simulate protocol size classes"));
    }
    let (th, _) = theta_in(pt, UNITS[NS], model);
    let vals = pt.ns();
    // the globals, and C and K when the model has them (a copy and a call's K are calcs)
    let named = (0..NPARAM)
        .map(|k| (k, FLAGS[k], p::NAMES[k]))
        .chain(model.copy.map(|k| (k as usize, "-C", COPY_NAME)))
        .chain(model.call.map(|k| (k as usize, "-K", CALL_NAME)));
    for (k, flag, name) in named {
        let integral = pt.theta[k] % pt.unit == 0;
        if !integral || vals[k] > i32::MAX as f64 {
            return Err(Error::in_file(
                flag,
                format!("--loggopsim-compat needs integer ns below 2^31 (LogGOPSim's parameters are C ints), got {name} = {} ns", vals[k]),
            ));
        }
    }
    if model.eager_limit > u32::MAX as u64 {
        return Err(Error::in_file("-S", "--loggopsim-compat: LogGOPSim's S is a 32-bit integer (at most 4294967295 bytes)"));
    }
    Ok(th)
}

/// Runs simulations of one configuration; keeps state between runs (samples).
pub struct Runner<'a> {
    g: &'a ExecGraph,
    sg: &'a SimGraph,
    pt: Point,
    /// Exact pair latencies and gaps (ticks) on a non-flat machine, and in the current unit.
    pair_ticks: Option<FxHashMap<u64, (i128, i128)>>,
    pairs: (usize, PairCosts, bool),
    opts: SimOptions,
    noise: &'a NoiseSpec,
    /// The collective joins that draw a delay (noise.rs, `coll_joins`).
    coll_at: CollAt,
    unit: usize,
    plan: Option<(usize, NoisePlan)>,
    design: design::State,
    compat: compat::State,
}

impl<'a> Runner<'a> {
    pub fn new(g: &'a ExecGraph, sg: &'a SimGraph, net: &dyn Routes, pt: &Point, opts: &SimOptions, noise: &'a NoiseSpec) -> Result<Runner<'a>> {
        sg.check(g)?;
        noise.validate()?;
        let pair_ticks = pair_ticks(g, net, pt);
        let unit = if opts.semantics == Semantics::LogGopSim {
            if pair_ticks.is_some() {
                return Err(Error::in_file(
                    "--loggopsim-compat",
                    "LogGOPSim has one L and one G for every pair of ranks; it cannot simulate a machine with a topology, intra-node parameters or matrices",
                ));
            }
            compat_theta(pt, &opts.model)?;
            NS
        } else {
            // the coarsest unit in which every parameter (and every pair's cost) is exact
            (0..=NS).rev().find(|&u| theta_in(pt, UNITS[u], &opts.model).1 && pairs_in(&pair_ticks, UNITS[u]).1).unwrap_or(0)
        };
        let (costs, exact) = pairs_in(&pair_ticks, UNITS[unit]);
        let pairs = (unit, costs, exact);
        let coll_at = coll_joins(g, &sg.index, noise);
        Ok(Runner { g, sg, pt: *pt, pair_ticks, pairs, opts: *opts, noise, coll_at, unit, plan: None, design: Default::default(), compat: Default::default() })
    }

    /// One simulation with noise drawn from `seed` (a sample seed, see [`sample_seed`]).
    pub fn run(&mut self, seed: u64) -> Result<SimResult> {
        loop {
            let unit_ticks = UNITS[self.unit];
            let (th, mut exact) = match self.opts.semantics {
                Semantics::LogGopSim => (compat_theta(&self.pt, &self.opts.model)?, true),
                Semantics::Design => theta_in(&self.pt, unit_ticks, &self.opts.model),
            };
            if self.pairs.0 != self.unit {
                let (costs, ok) = pairs_in(&self.pair_ticks, unit_ticks);
                self.pairs = (self.unit, costs, ok);
            }
            exact &= self.pairs.2;
            let out = self.run_in(th, seed)?;
            let (outcome, record) = out;
            let runtime = outcome.rank_end.iter().copied().max().unwrap_or(0);
            let coarser = self.unit < NS;
            if self.opts.semantics == Semantics::Design && runtime >= LIMIT {
                if !coarser {
                    return Err(Error::new("simulated time exceeds 2^62 ns; the graph's durations are out of range"));
                }
                self.unit += 1;
                continue;
            }
            return Ok(SimResult {
                rank_end: outcome.rank_end,
                unit_ticks,
                exact,
                events: outcome.events,
                static_mismatches: outcome.mismatches,
                unfinished: outcome.unfinished,
                record,
            });
        }
    }

    fn run_in(&mut self, th: Theta, seed: u64) -> Result<(Outcome, Option<Record>)> {
        let upn = UNITS[NS] / UNITS[self.unit];
        if self.plan.as_ref().map(|p| p.0) != Some(self.unit) {
            self.plan = Some((self.unit, NoisePlan::new(self.noise, upn, &self.coll_at)));
        }
        let plan = &self.plan.as_ref().unwrap().1;
        let noise = Noise::new(plan, seed, self.g.num_ranks());
        let mut rec = self.opts.record.then(|| {
            let p = self.g.num_ranks() as usize;
            Record::new(self.g.len(), p * self.sg.ncpu, p * self.sg.nnic)
        });
        let outcome = match self.opts.semantics {
            Semantics::Design => {
                let ctx = design::Ctx {
                    g: self.g,
                    sg: self.sg,
                    th,
                    pairs: &self.pairs.1,
                    model: self.opts.model,
                    cpu_serialization: self.opts.cpu_serialization,
                    noise: &noise,
                };
                match rec.as_mut() {
                    Some(r) => design::run(&ctx, &mut self.design, r),
                    None => design::run(&ctx, &mut self.design, &mut NoObs),
                }
            }
            Semantics::LogGopSim => {
                let ctx = compat::Ctx { g: self.g, sg: self.sg, th, eager_limit: self.opts.model.eager_limit, noise: &noise };
                match rec.as_mut() {
                    Some(r) => compat::run(&ctx, &mut self.compat, r),
                    None => compat::run(&ctx, &mut self.compat, &mut NoObs),
                }
            }
        }?;
        Ok((outcome, rec))
    }
}

/// One simulation of `g` at `pt`: Monte Carlo sample 0 of `seed` (noise drawn from
/// `sample_seed(seed, 0)`), so that it equals the first of [`simulate_samples`].
pub fn simulate(g: &ExecGraph, sg: &SimGraph, net: &dyn Routes, pt: &Point, opts: &SimOptions, noise: &NoiseSpec, seed: u64) -> Result<SimResult> {
    Runner::new(g, sg, net, pt, opts, noise)?.run(sample_seed(seed, 0))
}

/// One Monte Carlo sample: runtime and the rank that finished last.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub runtime_ns: f64,
    pub slowest_rank: u32,
    pub events: u64,
}

/// Samples `first..first+count` (sample k uses `sample_seed(seed, k)`) on `threads`
/// threads. The result does not depend on the thread count.
#[allow(clippy::too_many_arguments)]
pub fn simulate_samples(
    g: &ExecGraph,
    sg: &SimGraph,
    net: &dyn Routes,
    pt: &Point,
    opts: &SimOptions,
    noise: &NoiseSpec,
    seed: u64,
    first: u64,
    count: u64,
    threads: usize,
) -> Result<Vec<Sample>> {
    let opts = SimOptions { record: false, ..*opts };
    Runner::new(g, sg, net, pt, &opts, noise)?; // validate once, before spawning
    let threads = threads.clamp(1, count.max(1) as usize);
    // One runner (its state arrays) per thread, taking every threads-th sample.
    let strided = |t: usize| -> Result<Vec<(u64, Sample)>> {
        let mut runner = Runner::new(g, sg, net, pt, &opts, noise)?;
        let mut out = Vec::new();
        for k in (t as u64..count).step_by(threads) {
            let r = runner.run(sample_seed(seed, first + k))?;
            let end = r.runtime();
            let slowest = r.rank_end.iter().position(|&x| x == end).unwrap_or(0) as u32;
            out.push((k, Sample { runtime_ns: r.to_ns(end), slowest_rank: slowest, events: r.events }));
        }
        Ok(out)
    };
    let results: Vec<Result<Vec<(u64, Sample)>>> = crate::parallel::run_with(threads, || (0..threads).into_par_iter().map(strided).collect());
    let mut all = vec![Sample { runtime_ns: 0.0, slowest_rank: 0, events: 0 }; count as usize];
    for part in results {
        for (k, s) in part? {
            all[k as usize] = s;
        }
    }
    Ok(all)
}

/// Why a simulation stopped with operations left: unmatched receives, messages nobody
/// received, or a deadlock. `ran(v)` tells whether vertex v's dependencies were all met;
/// queue entries hold program indices.
pub(crate) fn stall_error(g: &ExecGraph, sg: &SimGraph, m: &Matcher, ran: &dyn Fn(u32) -> bool) -> Error {
    let p = g.num_ranks();
    let posted: Vec<u32> = (0..p).flat_map(|r| m.leftovers(r, Side::Posted)).map(|f| sg.vertex(f.id)).collect();
    let unexpected: Vec<u32> = (0..p).flat_map(|r| m.leftovers(r, Side::Unexpected)).map(|f| sg.vertex(f.id)).collect();
    let never = (0..g.len() as u32).filter(|&v| !ran(v)).count();
    let tally = format!("{} receives never matched, {} messages never received, {} operations never started", posted.len(), unexpected.len(), never);
    let peer = |x: u32| if x == crate::graph::ANY { "any".to_string() } else { x.to_string() };
    let (v, what) = if let Some(&v) = posted.first() {
        (v, format!("{} from rank {} tag {} was never matched", g.describe(v), peer(g.peer(v)), peer(g.tag(v))))
    } else if let Some(&u) = unexpected.first() {
        (u, format!("the message of {} to rank {} tag {} was never received", g.describe(u), g.peer(u), peer(g.tag(u))))
    } else {
        let v = (0..g.len() as u32).filter(|&v| !ran(v)).min_by_key(|&v| (g.rank(v), g.local(v))).unwrap_or(0);
        (v, format!("deadlock: {} never started", g.describe(v)))
    };
    let kind = if g.kind(v) == Kind::Calc { "" } else { " (the simulation stalled)" };
    Error { location: g.location(v), message: format!("{what}{kind}: {tally}") }
}
