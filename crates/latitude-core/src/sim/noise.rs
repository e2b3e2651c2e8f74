//! Noise and variability (Salimi Beni et al.; LogGOPSim's `--noise-trace`).
//!
//! * **Jitter** perturbs a base duration with a seeded distribution: `Gaussian` adds
//!   N(0, σ²) (σ absolute, or relative to the base), `LogNormal` multiplies by
//!   exp(σZ − σ²/2) (mean-preserving, always ≥ 0), `Uniform` adds U(lo, hi). Results are
//!   clamped at 0. It applies to every calc (`calc:`) or to every network traversal of a
//!   message (`latency:`: the L of an eager message, or each of the four L of a handshake).
//! * **OS noise** steals CPU time. A source is a periodic detour (`os:period=P,duration=D`,
//!   per-rank random phase unless synchronized) or a noise trace (LogGOPSim format:
//!   `<start>\t<duration>` in ns per line, `#` comments), replayed periodically from a
//!   per-rank random phase (one common phase when co-scheduled). A CPU phase [t, t+len)
//!   is extended by LogGOPSim's amount: the remainder of the noise event active at t plus
//!   the full duration of every event starting in (t, t+len).
//! * **Collective delays** (`coll:SAMPLES`) lengthen the join that ends a rank's part of a
//!   collective call (graph/colls.rs) by a delay drawn from a measured table of that
//!   collective's configuration (latitude/coll_noise.py makes the tables: measured time minus
//!   the model's own noiseless time, at least 0). One draw per call, keyed by the call's
//!   instance, so every member of the call is delayed by the same amount, as a measured call
//!   ends when its slowest rank does.
//!
//! Every draw is a pure function of (seed, sample, op, purpose) — a counter-based
//! generator (SplitMix64 finalizer), not a stream — so a run is deterministic for a seed,
//! independent of event order and thread count, and two configurations compared under the
//! same seed see the same noise realisation (common random numbers).

use std::fs::File;
use std::io::{BufRead, BufReader};

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};

/// A jitter distribution (values in ns).
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Gaussian { sigma: f64, relative: bool },
    LogNormal { sigma: f64 },
    Uniform { lo: f64, hi: f64 },
}

/// A source of OS noise.
#[derive(Clone, Debug, PartialEq)]
pub enum OsNoise {
    Periodic {
        period_ns: f64,
        duration_ns: f64,
        synchronized: bool,
    },
    /// Events (start, duration) in ns, sorted by start.
    Trace {
        events: Vec<(u64, u64)>,
        cosched: bool,
    },
}

/// Delays (ns) to draw from for the calls of one collective configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct CollDelays {
    /// Collective name (`collectives::CollKind::name`), communicator size, message bytes:
    /// the calls marked with these (graph/colls.rs) draw from `delays_ns`.
    pub coll: String,
    pub procs: u32,
    pub bytes: u64,
    pub delays_ns: Vec<f64>,
}

/// All noise of a simulation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NoiseSpec {
    pub calc: Option<Dist>,
    pub latency: Option<Dist>,
    pub os: Vec<OsNoise>,
    pub coll: Vec<CollDelays>,
}

/// Per collective join (program index): its delay table and its call's instance key.
pub type CollAt = FxHashMap<u32, (u32, u64)>;

impl NoiseSpec {
    pub fn is_active(&self) -> bool {
        self.calc.is_some() || self.latency.is_some() || !self.os.is_empty() || !self.coll.is_empty()
    }

    /// Check the values; the error names the offending spec.
    pub fn validate(&self) -> Result<()> {
        for (name, d) in [("calc", &self.calc), ("latency", &self.latency)] {
            let Some(d) = d else { continue };
            let bad = match *d {
                Dist::Gaussian { sigma, .. } | Dist::LogNormal { sigma } => !(sigma.is_finite() && sigma >= 0.0),
                Dist::Uniform { lo, hi } => !(lo.is_finite() && hi.is_finite() && lo >= 0.0 && lo <= hi),
            };
            if bad {
                return Err(Error::in_file("--noise", format!("{name} jitter {d:?}: expected finite σ ≥ 0, or 0 ≤ lo ≤ hi")));
            }
        }
        for t in &self.coll {
            if t.delays_ns.is_empty() || !t.delays_ns.iter().all(|d| d.is_finite() && *d >= 0.0) {
                return Err(Error::in_file(
                    "--noise",
                    format!("coll delays of {} on {} ranks, {} B: expected one or more finite delays ≥ 0", t.coll, t.procs, t.bytes),
                ));
            }
        }
        for os in &self.os {
            match os {
                OsNoise::Periodic { period_ns, duration_ns, .. } => {
                    if !(period_ns.is_finite() && *period_ns >= 1.0 && duration_ns.is_finite() && *duration_ns >= 0.0 && duration_ns < period_ns) {
                        return Err(Error::in_file(
                            "--noise",
                            format!("os noise: expected period ≥ 1 ns and 0 ≤ duration < period, got period {period_ns} ns, duration {duration_ns} ns"),
                        ));
                    }
                }
                OsNoise::Trace { events, .. } => {
                    if events.is_empty() {
                        return Err(Error::in_file("--noise", "noise trace has no events"));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Read a LogGOPSim noise trace: `<start>\t<duration>` (ns, decimals rounded) per line.
pub fn read_trace(path: &str) -> Result<Vec<(u64, u64)>> {
    let f = File::open(path).map_err(|e| Error::io(path, &e))?;
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (i, line) in BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, &e))?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let at = |m: String| Error::at(path, i as u64 + 1, m);
        let mut it = text.split_whitespace();
        let mut num = |what: &str| -> Result<u64> {
            let tok = it.next().ok_or_else(|| at(format!("expected '<start> <duration>' in ns, missing the {what}")))?;
            let v: f64 = tok.parse().map_err(|_| at(format!("expected the {what} in ns (a number), found '{tok}'")))?;
            if !(0.0..9.2e18).contains(&v) {
                return Err(at(format!("the {what} must be a non-negative time in ns, found '{tok}'")));
            }
            Ok(v.round() as u64)
        };
        let (start, dur) = (num("start")?, num("duration")?);
        if let Some(extra) = it.next() {
            return Err(at(format!("unexpected '{extra}' after '<start> <duration>'")));
        }
        if out.last().is_some_and(|&(s, _)| start < s) {
            return Err(at(format!("noise events must be sorted by start time ({start} ns comes after {} ns)", out.last().unwrap().0)));
        }
        out.push((start, dur));
    }
    if out.is_empty() {
        return Err(Error::in_file(path, "no noise events (expected lines '<start>\\t<duration>' in ns)"));
    }
    Ok(out)
}

// ---- counter-based random numbers ----

#[inline]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of Monte Carlo sample `k` of a run seeded with `seed`.
pub fn sample_seed(seed: u64, k: u64) -> u64 {
    mix(seed ^ mix(k.wrapping_add(0x5851_F42D_4C95_7F2D)))
}

#[inline]
fn hash(seed: u64, a: u64, b: u64) -> u64 {
    mix(seed ^ mix(a ^ mix(b)))
}

/// Uniform in (0, 1) (never 0, so logarithms are finite).
#[inline]
fn unit(h: u64) -> f64 {
    ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

#[inline]
fn normal(seed: u64, a: u64, b: u64) -> f64 {
    let u1 = unit(hash(seed, a, b.wrapping_mul(2)));
    let u2 = unit(hash(seed, a, b.wrapping_mul(2) + 1));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

const P_CALC: u64 = 1;
const P_LAT: u64 = 2 << 8;
const P_PHASE: u64 = 3 << 8;
const P_COLL: u64 = 4 << 8;

impl Dist {
    /// Perturbed value of `base` ns for draw (a, b).
    #[inline]
    fn apply(&self, base: f64, seed: u64, a: u64, b: u64) -> f64 {
        let v = match *self {
            Dist::Gaussian { sigma, relative } => base + normal(seed, a, b) * if relative { sigma * base } else { sigma },
            Dist::LogNormal { sigma } => base * (sigma * normal(seed, a, b) - 0.5 * sigma * sigma).exp(),
            Dist::Uniform { lo, hi } => base + lo + (hi - lo) * unit(hash(seed, a, b)),
        };
        v.max(0.0)
    }
}

/// OS noise converted to simulation units.
#[derive(Clone, Debug)]
enum Os {
    Periodic { period: u64, duration: u64, synchronized: bool },
    Trace { starts: Vec<u64>, durs: Vec<u64>, prefix: Vec<u64>, span: u64, cosched: bool },
}

/// A noise spec in simulation units (built once per run configuration).
#[derive(Clone, Debug)]
pub struct NoisePlan {
    calc: Option<Dist>,
    latency: Option<Dist>,
    os: Vec<Os>,
    /// Collective joins and their delay tables (units, ascending).
    coll_at: CollAt,
    coll: Vec<Vec<u64>>,
    /// Simulation units per ns.
    upn: u64,
}

fn units(ns: f64, upn: u64) -> u64 {
    (ns * upn as f64).round().min(4.0e18) as u64
}

impl NoisePlan {
    /// The plan of `spec` in units of 1/`upn` ns; `coll_at` places its collective delay
    /// tables on the graph ([`coll_joins`]).
    pub fn new(spec: &NoiseSpec, upn: u64, coll_at: &CollAt) -> NoisePlan {
        let os = spec
            .os
            .iter()
            .map(|s| match s {
                OsNoise::Periodic { period_ns, duration_ns, synchronized } => {
                    Os::Periodic { period: units(*period_ns, upn).max(1), duration: units(*duration_ns, upn), synchronized: *synchronized }
                }
                OsNoise::Trace { events, cosched } => {
                    let starts: Vec<u64> = events.iter().map(|e| e.0.saturating_mul(upn)).collect();
                    let durs: Vec<u64> = events.iter().map(|e| e.1.saturating_mul(upn)).collect();
                    let mut prefix = vec![0u64; durs.len() + 1];
                    for i in 0..durs.len() {
                        prefix[i + 1] = prefix[i].saturating_add(durs[i]);
                    }
                    let span = (starts[starts.len() - 1] + durs[durs.len() - 1]).max(1);
                    Os::Trace { starts, durs, prefix, span, cosched: *cosched }
                }
            })
            .collect();
        let coll = spec
            .coll
            .iter()
            .map(|t| {
                let mut d: Vec<u64> = t.delays_ns.iter().map(|&ns| units(ns, upn)).collect();
                d.sort_unstable();
                d
            })
            .collect();
        NoisePlan { calc: spec.calc.clone(), latency: spec.latency.clone(), os, coll_at: coll_at.clone(), coll, upn }
    }

    pub fn is_active(&self) -> bool {
        self.calc.is_some() || self.latency.is_some() || !self.os.is_empty() || !self.coll_at.is_empty()
    }
}

/// One realisation of a noise plan: the plan, a sample seed and per-rank phases.
pub struct Noise<'a> {
    plan: &'a NoisePlan,
    seed: u64,
    /// Per OS source, per rank: phase in units.
    phases: Vec<Vec<u64>>,
}

impl<'a> Noise<'a> {
    pub fn new(plan: &'a NoisePlan, seed: u64, ranks: u32) -> Noise<'a> {
        let phases = plan
            .os
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let (len, common) = match s {
                    Os::Periodic { period, synchronized, .. } => (*period, *synchronized),
                    Os::Trace { span, cosched, .. } => (*span, *cosched),
                };
                let draw = |r: u64| ((unit(hash(seed, P_PHASE + k as u64, r)) * len as f64) as u64).min(len - 1);
                if common && !matches!(s, Os::Periodic { .. }) {
                    vec![draw(u64::MAX); ranks as usize]
                } else if common {
                    vec![0; ranks as usize]
                } else {
                    (0..ranks as u64).map(draw).collect()
                }
            })
            .collect();
        Noise { plan, seed, phases }
    }

    pub fn is_active(&self) -> bool {
        self.plan.is_active()
    }

    /// Duration of calc `v` (program index) of `ns` nanoseconds, in units.
    #[inline]
    pub fn calc(&self, v: u32, ns: u64) -> u64 {
        match &self.plan.calc {
            None => ns.saturating_mul(self.plan.upn),
            Some(d) => units(d.apply(ns as f64, self.seed, v as u64, P_CALC), self.plan.upn),
        }
    }

    /// Delay added to op `i` (program index): a draw from its table when it ends a rank's
    /// part of a collective call with measured delays, else 0.
    #[inline]
    pub fn coll(&self, i: u32) -> u64 {
        if self.plan.coll_at.is_empty() {
            return 0;
        }
        match self.plan.coll_at.get(&i) {
            None => 0,
            Some(&(t, instance)) => {
                let table = &self.plan.coll[t as usize];
                let k = (unit(hash(self.seed, P_COLL, instance)) * table.len() as f64) as usize;
                table[k.min(table.len() - 1)]
            }
        }
    }

    /// Latency of network traversal `hop` of the message sent by `v` (program index).
    #[inline]
    pub fn latency(&self, v: u32, hop: u64, l: u64) -> u64 {
        match &self.plan.latency {
            None => l,
            Some(d) => {
                let ns = d.apply(l as f64 / self.plan.upn as f64, self.seed, v as u64, P_LAT + hop);
                units(ns, self.plan.upn)
            }
        }
    }

    /// OS noise stealing CPU time from a phase [t, t+len) on `rank`, in units.
    #[inline]
    pub fn os(&self, rank: u32, t: u64, len: u64) -> u64 {
        if self.plan.os.is_empty() {
            return 0;
        }
        self.os_sum(rank, t, len)
    }

    fn os_sum(&self, rank: u32, t: u64, len: u64) -> u64 {
        let mut total = 0u64;
        for (k, s) in self.plan.os.iter().enumerate() {
            let phase = self.phases[k][rank as usize];
            total = total.saturating_add(match s {
                Os::Periodic { period, duration, .. } => periodic(*period, *duration, phase, t, len),
                Os::Trace { starts, durs, prefix, span, .. } => trace(starts, durs, prefix, *span, (t % span + phase) % span, len),
            });
        }
        total
    }
}

/// Where the delay tables of `spec` apply: every marked collective join (graph/colls.rs)
/// whose (collective, ranks, bytes) has a table, by program index (`index`: vertex →
/// program index). Joins without a table get no delay.
pub(crate) fn coll_joins(g: &crate::graph::ExecGraph, index: &[u32], spec: &NoiseSpec) -> CollAt {
    let mut out = CollAt::default();
    if spec.coll.is_empty() {
        return out;
    }
    let calls = g.colls();
    for m in &calls.marks {
        let coll = &calls.kinds[m.kind as usize].0;
        if let Some(t) = spec.coll.iter().position(|t| &t.coll == coll && t.procs == m.procs && t.bytes == m.bytes) {
            out.insert(index[m.vertex as usize], (t as u32, m.instance));
        }
    }
    out
}

/// Noise events at phase + kP (all integers k), each `d` long.
fn periodic(p: u64, d: u64, phase: u64, t: u64, len: u64) -> u64 {
    let x = (t % p + p - phase) % p; // time since the last event start
    let active = d.saturating_sub(x);
    let starts = if len + x >= 1 { (len + x - 1) / p } else { 0 };
    active + starts * d
}

/// Trace events repeated with period `span`; x = position in the trace.
fn trace(starts: &[u64], durs: &[u64], prefix: &[u64], span: u64, x: u64, len: u64) -> u64 {
    // The event active at x: the last one starting at or before x.
    let i = starts.partition_point(|&s| s <= x);
    let active = if i > 0 { (starts[i - 1] + durs[i - 1]).saturating_sub(x) } else { 0 };
    if len == 0 {
        return active;
    }
    // Durations of events starting in [0, y) of the periodic extension.
    let total = prefix[prefix.len() - 1];
    let upto = |y: u64| (y / span).saturating_mul(total) + prefix[starts.partition_point(|&s| s < y % span)];
    active + upto(x + len) - upto(x + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periodic_noise_counts_active_remainder_and_new_starts() {
        // events at 100 + 1000k, 50 long
        assert_eq!(periodic(1000, 50, 100, 0, 10), 0);
        assert_eq!(periodic(1000, 50, 100, 120, 10), 30); // inside the event at 100
        assert_eq!(periodic(1000, 50, 100, 50, 100), 50); // event at 100 starts inside
        assert_eq!(periodic(1000, 50, 100, 100, 1), 50); // starts exactly at t: active
        assert_eq!(periodic(1000, 50, 100, 0, 2101), 150); // starts 100, 1100, 2100
        assert_eq!(periodic(1000, 50, 100, 0, 2100), 100); // 2100 is not inside [0, 2100)
    }

    #[test]
    fn trace_noise_wraps_around() {
        let starts = [10, 40];
        let durs = [5, 20];
        let prefix = [0, 5, 25];
        let span = 60;
        assert_eq!(trace(&starts, &durs, &prefix, span, 0, 5), 0);
        assert_eq!(trace(&starts, &durs, &prefix, span, 12, 1), 3);
        assert_eq!(trace(&starts, &durs, &prefix, span, 0, 11), 5);
        assert_eq!(trace(&starts, &durs, &prefix, span, 50, 30), 10 + 5); // 50..60 active, then 70=10 starts
        assert_eq!(trace(&starts, &durs, &prefix, span, 0, 130), 25 + 25); // starts 10, 40, 70, 100
    }

    #[test]
    fn draws_are_deterministic_and_distributed() {
        let plan = NoisePlan::new(&NoiseSpec { calc: Some(Dist::Gaussian { sigma: 0.1, relative: true }), ..Default::default() }, 1, &CollAt::default());
        let a = Noise::new(&plan, 42, 4);
        let b = Noise::new(&plan, 42, 4);
        let xs: Vec<u64> = (0..20000).map(|v| a.calc(v, 1000)).collect();
        assert!(xs.iter().zip(0..).all(|(&x, v)| x == b.calc(v, 1000)));
        let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
        let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!((mean - 1000.0).abs() < 3.0, "mean {mean}");
        assert!((var.sqrt() - 100.0).abs() < 3.0, "std {}", var.sqrt());
        let c = Noise::new(&plan, 43, 4);
        assert!((0..100).any(|v| c.calc(v, 1000) != a.calc(v, 1000)));
    }

    #[test]
    fn lognormal_is_mean_preserving() {
        let plan = NoisePlan::new(&NoiseSpec { calc: Some(Dist::LogNormal { sigma: 0.5 }), ..Default::default() }, 1000, &CollAt::default());
        let n = Noise::new(&plan, 7, 1);
        let mean = (0..40000).map(|v| n.calc(v, 1000) as f64).sum::<f64>() / 40000.0;
        assert!((mean - 1_000_000.0).abs() < 10_000.0, "mean {mean}");
    }
}
