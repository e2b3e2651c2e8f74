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
use crate::model::{Lin, Point, MAXP};
use crate::net::Routes;
use rayon::prelude::*;

/// Most points per pass (values per slot: 2·K of 32 bytes).
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

const TK0: Tk = Tk { t: 0, hi: 0, lo: 0 };

/// N points per pass (N ≤ K); values are sized to N so a pass never copies unused points.
struct Multi<const N: usize> {
    /// Per point: unit / 10⁹ (what a constant in ticks is multiplied by).
    scales: [i128; N],
    thetas: [[i128; MAXP]; N],
    k: usize,
    best: [Option<Tk>; N],
}

impl<const N: usize> Multi<N> {
    fn new(pts: &[Point], k: usize) -> Self {
        let mut scales = [0; N];
        let mut thetas = [[0; MAXP]; N];
        for (i, pt) in pts.iter().enumerate() {
            scales[i] = pt.scale();
            thetas[i] = pt.theta;
        }
        Multi { scales, thetas, k, best: [None; N] }
    }
}

impl<const N: usize> Domain for Multi<N> {
    type Val = [Tk; N];
    fn zero(&mut self) -> [Tk; N] {
        [TK0; N]
    }
    #[inline(always)]
    fn add(&mut self, x: &[Tk; N], a: &Lin) -> [Tk; N] {
        let mut r = *x;
        self.add_to(&mut r, a);
        r
    }
    #[inline(always)]
    fn add_to(&mut self, r: &mut [Tk; N], a: &Lin) {
        let ak = a.coeff(self.k);
        let c = a.c;
        let m = a.n as usize;
        for i in 0..N {
            let mut t = c * self.scales[i];
            for j in 0..m {
                t += a.a[j] as i128 * self.thetas[i][a.k[j] as usize];
            }
            r[i].t += t;
            r[i].hi += ak;
            r[i].lo += ak;
        }
    }
    #[inline(always)]
    fn max(&mut self, c: &[[Tk; N]]) -> ([Tk; N], usize) {
        let mut best = c[0];
        for x in &c[1..] {
            for i in 0..N {
                merge(&mut best[i], &x[i]);
            }
        }
        (best, 0)
    }
    fn end(&mut self, _v: u32, e: &[Tk; N]) {
        for i in 0..N {
            match &mut self.best[i] {
                None => self.best[i] = Some(e[i]),
                Some(b) => merge(b, &e[i]),
            }
        }
    }
}

/// One pass over the graph for up to K points.
fn pass<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, pts: &[Point], k: usize) -> Vec<Eval> {
    fn run<const N: usize, R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, pts: &[Point], k: usize) -> Vec<Option<Tk>> {
        let mut dom = Multi::<N>::new(pts, k);
        walk(g, plan, net, &mut dom, None);
        dom.best[..pts.len()].to_vec()
    }
    let best = match pts.len() {
        1 => run::<1, R>(g, plan, net, pts, k),
        2 => run::<2, R>(g, plan, net, pts, k),
        3 | 4 => run::<4, R>(g, plan, net, pts, k),
        _ => run::<K, R>(g, plan, net, pts, k),
    };
    pts.iter()
        .zip(best)
        .map(|(pt, b)| {
            let b = b.unwrap_or(TK0);
            Eval { t: b.t, unit: pt.unit, right: b.hi, left: b.lo }
        })
        .collect()
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

/// T and the one-sided slopes in parameter `k` at every point: chunks of up to K points,
/// one pass each, spread over the available cores (graphs are read-only and shared).
pub fn evaluate<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, points: &[Point], k: usize) -> Result<Vec<Eval>> {
    for pt in points {
        plan.check(pt, net)?;
    }
    let threads = crate::parallel::threads().clamp(1, points.len().max(1));
    // Enough chunks to keep every thread busy, none larger than K.
    let size = points.len().div_ceil(threads).clamp(1, K);
    let pass = |chunk: &[Point]| -> Vec<Eval> { pass(g, plan, net, chunk, k) };
    if threads == 1 || points.len() <= size || g.len() < 50_000 {
        return Ok(points.chunks(size).flat_map(pass).collect());
    }
    let per_chunk: Vec<Vec<Eval>> = crate::parallel::run(|| points.par_chunks(size).map(pass).collect());
    Ok(per_chunk.into_iter().flatten().collect())
}
