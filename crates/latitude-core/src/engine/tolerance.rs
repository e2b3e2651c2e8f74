//! x % tolerance: the largest parameter value x with T(x) ≤ (1 + x/100)·T(x₀), exactly.
//!
//! T is convex and non-decreasing in x. From a point above the answer, the tangent of the
//! piece to the left (slope s⁻ > 0, intercept c⁻) reaches the target τ at (τ − c⁻)/s⁻, which
//! is still ≥ the answer (T lies above its tangents) and on a new piece: Newton's method
//! from above ends, exactly, after at most one step per piece it crosses. The first upper
//! bound is the tangent at x₀ when T rises there; when T is flat at x₀, beyond
//! x_big = max(x₀, T(x₀)) + 1 tick every path has passed every other (a breakpoint between
//! paths i, j sits at (c_i − c_j)/(s_j − s_i) ≤ c_i ≤ T(x₀)), so the slope there is the
//! final one: 0 means unbounded. All tolerances of one call advance together, their
//! evaluations sharing graph passes.

use super::multi::{evaluate, Eval};
use super::plan::Plan;
use super::rational::{Line, Rat};
use crate::error::Result;
use crate::graph::ExecGraph;
use crate::model::Point;
use crate::net::Routes;

/// The largest x ≥ x₀ with T(x) ≤ target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// T(x₀) already exceeds the target.
    Exceeded,
    Max(Rat),
    Unbounded,
}

#[derive(Clone, Debug)]
pub struct ToleranceResult {
    /// Largest x (ticks), None if unbounded.
    pub max: Option<Rat>,
    pub evaluations: usize,
}

/// Tolerances for target ratios τ/T(x₀) = num/den (e.g. 101/100 for 1 %), parameter k,
/// baseline x₀ (ticks) and the other parameters at `base`. Returns T(x₀) in ticks and the results.
pub fn tolerance<R: Routes>(
    g: &ExecGraph,
    plan: &Plan,
    net: &R,
    base: &Point,
    k: usize,
    x0: i128,
    ratios: &[(i128, i128)],
) -> Result<(i128, Vec<ToleranceResult>)> {
    let e0 = evaluate(g, plan, net, &[base.at_ticks(k, x0, 1)], k)?[0];
    let t0 = e0.t; // ticks (den 1)
    let targets: Vec<Rat> = ratios.iter().map(|&(n, d)| Rat::new(t0 * n, d)).collect();
    let (bounds, evals) = max_below_from(g, plan, net, base, k, x0, e0, &targets)?;
    let res = bounds
        .into_iter()
        .zip(evals)
        .map(|(b, evaluations)| ToleranceResult { max: if let Bound::Max(x) = b { Some(x) } else { None }, evaluations })
        .collect();
    Ok((t0, res))
}

/// For each target τ (ticks): the largest x ≥ x₀ with T(x) ≤ τ, and evaluations used.
pub fn max_below<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, base: &Point, k: usize, x0: i128, targets: &[Rat]) -> Result<(Vec<Bound>, Vec<usize>)> {
    let e0 = evaluate(g, plan, net, &[base.at_ticks(k, x0, 1)], k)?[0];
    max_below_from(g, plan, net, base, k, x0, e0, targets)
}

/// [`max_below`] with T and the slopes at x₀ already evaluated (`e0`).
#[allow(clippy::too_many_arguments)]
fn max_below_from<R: Routes>(
    g: &ExecGraph,
    plan: &Plan,
    net: &R,
    base: &Point,
    k: usize,
    x0: i128,
    e0: Eval,
    targets: &[Rat],
) -> Result<(Vec<Bound>, Vec<usize>)> {
    let x0r = Rat::int(x0);
    let t0 = Rat::int(e0.t);
    let (_, right0) = Line::at(x0r, &e0);
    let mut res = vec![Bound::Exceeded; targets.len()];
    let mut evals = vec![1usize; targets.len()];
    // Current upper bound per target (None = resolved).
    let mut at: Vec<Option<Rat>> = vec![None; targets.len()];
    let x_big = Rat::int(x0.max(e0.t) + 1);
    for (i, &tau) in targets.iter().enumerate() {
        if t0 > tau {
            continue;
        }
        // The tangent at x₀ reaches τ above the answer; if T is flat at x₀, start beyond it all.
        at[i] = Some(if right0.s > 0 { solve(right0, tau) } else { x_big });
    }
    while at.iter().any(Option::is_some) {
        let idx: Vec<usize> = (0..at.len()).filter(|&i| at[i].is_some()).collect();
        let xs: Vec<Rat> = idx.iter().map(|&i| at[i].unwrap()).collect();
        let pts: Vec<Point> = xs.iter().map(|x| base.at_ticks(k, x.num, x.den)).collect();
        let out = evaluate(g, plan, net, &pts, k)?;
        for ((&i, x), e) in idx.iter().zip(xs).zip(out) {
            evals[i] += 1;
            let tau = targets[i];
            let t = Rat::new(e.t, x.den);
            let (left, right) = Line::at(x, &e);
            if t == tau {
                res[i] = Bound::Max(x);
                at[i] = None;
            } else if t < tau {
                // Only at x_big: beyond every breakpoint T follows its last line.
                res[i] = if right.s > 0 { Bound::Max(solve(right, tau)) } else { Bound::Unbounded };
                at[i] = None;
            } else {
                at[i] = Some(solve(left, tau));
            }
        }
    }
    Ok((res, evals))
}
/// x with s·x + c = τ.
fn solve(l: Line, tau: Rat) -> Rat {
    Rat::new(tau.num - l.c * tau.den, l.s as i128 * tau.den)
}
