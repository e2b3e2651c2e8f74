//! Every critical point of T in one parameter over an interval, exactly.
//!
//! By default an exact sweep is one parametric pass (`envelope`); this module's tangent
//! refinement is used with a `step` and on request, and serves as its cross-check.
//!
//! T(x) (x = L, or G, the other parameters fixed) is convex and piecewise linear: the max of
//! the lines s_p·x + c_p of all paths. Given the tangent lines at both ends of an interval
//! (the right piece at a, the left piece at b), their intersection x* either lies on T
//! (then x* is the only breakpoint in (a, b), with slopes s_a | s_b) or T(x*) is above it,
//! and the pieces at x* split the interval into two with new tangent lines. Each pass
//! reveals at least one new line, so all breakpoints take O(#pieces) evaluations; the
//! pending intervals of a round are evaluated together, up to `multi::K` per graph pass.
//! Values are rationals in ticks, comparisons are exact.
//!
//! With a `step`, intervals narrower than the step are not refined (their tangent
//! intersection is reported as one breakpoint with the combined slope change) and
//! breakpoints closer than the step are merged, like LLAMP's Algorithm 2 with a step.

use super::envelope::envelope_parallel;
use super::multi::{evaluate, Eval};
use super::plan::Plan;
use super::rational::{Line, Rat};
use crate::error::Result;
use crate::graph::ExecGraph;
use crate::model::Point;
use crate::net::Routes;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Breakpoint {
    /// Position (ticks, or ticks per byte for G).
    pub at: Rat,
    pub left: Line,
    pub right: Line,
    /// False if this breakpoint stands for several merged by `step`.
    pub exact: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub from: Rat,
    pub to: Rat,
    pub line: Line,
}

#[derive(Clone, Debug)]
pub struct Sweep {
    pub param: usize,
    pub breakpoints: Vec<Breakpoint>,
    pub pieces: Vec<Piece>,
    /// Parameter points evaluated, and graph passes used.
    pub evaluations: usize,
    pub passes: usize,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct SweepOptions {
    /// Minimum distance (ticks) between reported breakpoints; None = exact.
    pub step: Option<i128>,
    pub method: SweepMethod,
}

/// How an exact sweep finds T's pieces. Both give the same pieces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SweepMethod {
    /// One pass carrying each value's piecewise-linear function (`envelope`), one part of
    /// the interval per core; with a `step`, the tangent method (it refines less).
    #[default]
    Auto,
    /// Tangent refinement: rounds of point evaluations, up to `multi::K` per pass.
    Tangents,
}

struct Interval {
    a: Rat,
    la: Line,
    b: Rat,
    lb: Line,
}

/// Breakpoints and pieces of T in parameter `k` on [lo, hi] (ticks), other parameters at `base`.
#[allow(clippy::too_many_arguments)]
pub fn sweep<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, base: &Point, k: usize, lo: i128, hi: i128, opts: SweepOptions) -> Result<Sweep> {
    assert!(lo <= hi);
    if opts.step.is_none() && opts.method == SweepMethod::Auto && lo < hi {
        return sweep_envelope(g, plan, net, base, k, lo, hi);
    }
    let (lo, hi) = (Rat::int(lo), Rat::int(hi));
    let mut out = Sweep { param: k, breakpoints: Vec::new(), pieces: Vec::new(), evaluations: 0, passes: 0 };
    let ends = run(g, plan, net, base, k, &[lo, hi], &mut out)?;
    let (_, la) = Line::at(lo, &ends[0]);
    let (lb, _) = Line::at(hi, &ends[1]);
    let mut pending = if la.s < lb.s { vec![Interval { a: lo, la, b: hi, lb }] } else { Vec::new() };
    while !pending.is_empty() {
        let mut todo = Vec::new();
        for iv in pending.drain(..) {
            let x = iv.la.meet(&iv.lb);
            match opts.step {
                Some(step) if iv.b < iv.a.plus_int(step) => out.breakpoints.push(Breakpoint { at: x, left: iv.la, right: iv.lb, exact: false }),
                _ => todo.push((iv, x)),
            }
        }
        let xs: Vec<Rat> = todo.iter().map(|(_, x)| *x).collect();
        let evals = run(g, plan, net, base, k, &xs, &mut out)?;
        for ((iv, x), e) in todo.into_iter().zip(evals) {
            if iv.la.value(x) == Rat::new(e.t, x.den) {
                out.breakpoints.push(Breakpoint { at: x, left: iv.la, right: iv.lb, exact: true });
                continue;
            }
            let (l_minus, l_plus) = Line::at(x, &e);
            if l_minus.s != l_plus.s {
                out.breakpoints.push(Breakpoint { at: x, left: l_minus, right: l_plus, exact: true });
            }
            if iv.la.s < l_minus.s {
                pending.push(Interval { a: iv.a, la: iv.la, b: x, lb: l_minus });
            }
            if l_plus.s < iv.lb.s {
                pending.push(Interval { a: x, la: l_plus, b: iv.b, lb: iv.lb });
            }
        }
    }
    out.breakpoints.sort_by_key(|a| a.at);
    if let Some(step) = opts.step {
        out.breakpoints = merge_closer_than(&out.breakpoints, step);
    }
    out.pieces = pieces(lo, hi, la, &out.breakpoints);
    Ok(out)
}

/// The exact sweep from T's envelope (see `envelope`): one pass per part of [lo, hi].
fn sweep_envelope<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, base: &Point, k: usize, lo: i128, hi: i128) -> Result<Sweep> {
    for x in [lo, hi] {
        plan.check(&base.at_ticks(k, x, 1), net)?;
    }
    let (lines, _, parts) = envelope_parallel(g, plan, net, base, k, lo, hi);
    let breakpoints: Vec<Breakpoint> = lines.windows(2).map(|w| Breakpoint { at: w[0].meet(&w[1]), left: w[0], right: w[1], exact: true }).collect();
    let pieces = pieces(Rat::int(lo), Rat::int(hi), lines[0], &breakpoints);
    Ok(Sweep { param: k, breakpoints, pieces, evaluations: 0, passes: parts })
}

fn run<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, base: &Point, k: usize, xs: &[Rat], out: &mut Sweep) -> Result<Vec<Eval>> {
    let pts: Vec<Point> = xs.iter().map(|x| base.at_ticks(k, x.num, x.den)).collect();
    out.evaluations += pts.len();
    out.passes += pts.len().div_ceil(super::multi::K);
    evaluate(g, plan, net, &pts, k)
}

fn merge_closer_than(bps: &[Breakpoint], step: i128) -> Vec<Breakpoint> {
    let mut out: Vec<Breakpoint> = Vec::new();
    for bp in bps {
        match out.last_mut() {
            Some(last) if bp.at < last.at.plus_int(step) => {
                last.right = bp.right;
                last.exact = false;
            }
            _ => out.push(*bp),
        }
    }
    out
}

fn pieces(lo: Rat, hi: Rat, first: Line, bps: &[Breakpoint]) -> Vec<Piece> {
    let mut out = Vec::with_capacity(bps.len() + 1);
    let (mut from, mut line) = (lo, first);
    for bp in bps {
        out.push(Piece { from, to: bp.at, line });
        from = bp.at;
        line = bp.right;
    }
    out.push(Piece { from, to: hi, line });
    out
}
