//! Several parameter points in one pass over the graph.
//!
//! Sweeps (critical latencies, tolerances, curves) need T and the one-sided slopes in one
//! parameter at many points; the graph is the expensive thing to read, so up to `K`
//! points share each pass. Each point keeps its own exact time (and unit) and the
//! largest / smallest slope among the paths attaining it (see `predict.rs`).

use super::plan::Plan;
use super::walk::{walk, Domain};
use crate::error::Result;
use crate::graph::ExecGraph;
use crate::model::{Affine, Point};

/// Points per pass (values per slot: 2·K of 32 bytes).
pub const K: usize = 8;

/// T and one-sided slopes in one parameter at one point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eval {
    /// Runtime in units of 1/unit ns.
    pub t: i128,
    pub unit: i128,
    pub right: u64,
    pub left: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct Tk {
    t: i128,
    hi: u64,
    lo: u64,
}

/// N ≤ K points per pass: a pass carries N values per time (passes with fewer points copy
/// and compare less).
struct Multi<'a, const N: usize> {
    pts: &'a [Point],
    k: usize,
    best: [Option<Tk>; N],
}

impl<const N: usize> Domain for Multi<'_, N> {
    type Val = [Tk; N];
    fn zero(&mut self) -> [Tk; N] {
        [Tk { t: 0, hi: 0, lo: 0 }; N]
    }
    #[inline]
    fn add(&mut self, x: &[Tk; N], a: &Affine) -> [Tk; N] {
        let mut r = *x;
        let ak = a.a[self.k];
        for (i, pt) in self.pts.iter().enumerate() {
            r[i].t += a.eval(pt);
            r[i].hi += ak;
            r[i].lo += ak;
        }
        r
    }
    #[inline]
    fn max(&mut self, c: &[[Tk; N]]) -> ([Tk; N], usize) {
        let mut best = c[0];
        for x in &c[1..] {
            for i in 0..self.pts.len() {
                merge(&mut best[i], &x[i]);
            }
        }
        (best, 0)
    }
    fn end(&mut self, _v: u32, e: &[Tk; N]) {
        for i in 0..self.pts.len() {
            match &mut self.best[i] {
                None => self.best[i] = Some(e[i]),
                Some(b) => merge(b, &e[i]),
            }
        }
    }
}

#[inline]
fn merge(b: &mut Tk, x: &Tk) {
    if x.t > b.t {
        *b = *x;
    } else if x.t == b.t {
        b.hi = b.hi.max(x.hi);
        b.lo = b.lo.min(x.lo);
    }
}

/// T and the one-sided slopes in parameter `k` at every point (⌈n/K⌉ passes).
pub fn evaluate(g: &ExecGraph, plan: &Plan, points: &[Point], k: usize) -> Result<Vec<Eval>> {
    for pt in points {
        plan.check(pt)?;
    }
    let mut out = Vec::with_capacity(points.len());
    for chunk in points.chunks(K) {
        let best: Vec<Option<Tk>> = match chunk.len() {
            1 => pass::<1>(g, plan, chunk, k),
            2 => pass::<2>(g, plan, chunk, k),
            3 | 4 => pass::<4>(g, plan, chunk, k),
            _ => pass::<K>(g, plan, chunk, k),
        };
        for (b, pt) in best.into_iter().zip(chunk) {
            let b = b.unwrap_or(Tk { t: 0, hi: 0, lo: 0 });
            out.push(Eval { t: b.t, unit: pt.unit, right: b.hi, left: b.lo });
        }
    }
    Ok(out)
}

/// One pass for `pts` (at most N points).
fn pass<const N: usize>(g: &ExecGraph, plan: &Plan, pts: &[Point], k: usize) -> Vec<Option<Tk>> {
    let mut dom = Multi::<N> { pts, k, best: [None; N] };
    walk(g, plan, &mut dom, None);
    dom.best[..pts.len()].to_vec()
}
