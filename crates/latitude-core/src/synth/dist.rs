//! Seeded compute durations. Each draw comes from its own stream, keyed by (seed, job index,
//! motif index, job rank, call index), so a duration does not depend on generation order and
//! `apps/motifs` (which implements the same functions in C) spins for the same times:
//!
//! ```text
//! h = seed; for x in [job, motif, rank, call]: h = SplitMix64(h ^ x).next()
//! u1, u2 = the first two uniforms in [0, 1) of SplitMix64(h)
//! gaussian  time + sd·√(−2 ln(1 − u1))·cos(2π u2)        (Box–Muller; below 0 → 0)
//! uniform   time − spread + 2·spread·u1
//! lognormal exp(μ + σ·z), μ = ln(time) − σ²/2, z as for gaussian (mean = time)
//! ```
//! The call index counts repeats over the whole chain (chain iteration × iterations +
//! repeat); with `vary=rank` it is always 0 (one draw per rank: a fixed load imbalance).

use super::motif::{Compute, Dist, Vary};
use crate::gen::Rng;

/// Key of one draw.
#[derive(Clone, Copy, Debug)]
pub struct DrawKey {
    pub seed: u64,
    pub job: u64,
    pub motif: u64,
    pub rank: u64,
    pub call: u64,
}

fn stream(k: &DrawKey, c: &Compute) -> Rng {
    let call = if c.vary == Vary::Rank { 0 } else { k.call };
    let mut h = k.seed;
    for x in [k.job, k.motif, k.rank, call] {
        h = Rng::new(h ^ x).next_u64();
    }
    Rng::new(h)
}

/// One compute duration (ns).
pub fn draw(c: &Compute, k: &DrawKey) -> u64 {
    if c.dist == Dist::Const {
        return c.time;
    }
    let mut rng = stream(k, c);
    let u1 = rng.unit();
    let u2 = rng.unit();
    let t = c.time as f64;
    let z = || (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    let x = match c.dist {
        Dist::Const => t,
        Dist::Gaussian { sd } => t + sd as f64 * z(),
        Dist::Uniform { spread } => t - spread as f64 + 2.0 * spread as f64 * u1,
        Dist::Lognormal { sigma } => (t.ln() - sigma * sigma / 2.0 + sigma * z()).exp(),
    };
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        x.round().min(u64::MAX as f64 / 2.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(dist: Dist, vary: Vary, n: u64) -> Vec<f64> {
        let c = Compute { time: 10_000, dist, vary };
        (0..n).map(|i| draw(&c, &DrawKey { seed: 7, job: 0, motif: 1, rank: i % 13, call: i / 13 }) as f64).collect()
    }

    fn mean_sd(x: &[f64]) -> (f64, f64) {
        let m = x.iter().sum::<f64>() / x.len() as f64;
        let v = x.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / x.len() as f64;
        (m, v.sqrt())
    }

    #[test]
    fn moments_match_the_parameters() {
        let (m, s) = mean_sd(&sample(Dist::Gaussian { sd: 1000 }, Vary::Call, 20000));
        assert!((m - 10_000.0).abs() < 40.0 && (s - 1000.0).abs() < 40.0, "{m} {s}");
        let u = sample(Dist::Uniform { spread: 2000 }, Vary::Call, 20000);
        let (m, s) = mean_sd(&u);
        assert!((m - 10_000.0).abs() < 40.0 && (s - 2000.0 / 3f64.sqrt()).abs() < 40.0, "{m} {s}");
        assert!(u.iter().all(|&x| (8000.0..=12000.0).contains(&x)));
        let (m, _) = mean_sd(&sample(Dist::Lognormal { sigma: 0.5 }, Vary::Call, 40000));
        assert!((m - 10_000.0).abs() < 100.0, "{m}");
    }

    #[test]
    fn per_rank_draws_repeat_and_seeds_differ() {
        let c = Compute { time: 10_000, dist: Dist::Gaussian { sd: 1000 }, vary: Vary::Rank };
        let k = |seed, call| DrawKey { seed, job: 0, motif: 0, rank: 3, call };
        assert_eq!(draw(&c, &k(1, 0)), draw(&c, &k(1, 5)));
        assert_ne!(draw(&c, &k(1, 0)), draw(&c, &k(2, 0)));
        let c = Compute { vary: Vary::Call, ..c };
        assert_ne!(draw(&c, &k(1, 0)), draw(&c, &k(1, 5)));
    }
}
