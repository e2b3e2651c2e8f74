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

struct Multi<'a> {
    pts: &'a [Point],
    k: usize,
    best: [Option<Tk>; K],
}

impl Domain for Multi<'_> {
    type Val = [Tk; K];
    fn zero(&mut self) -> [Tk; K] {
        [Tk { t: 0, hi: 0, lo: 0 }; K]
    }
    #[inline]
    fn add(&mut self, x: &[Tk; K], a: &Affine) -> [Tk; K] {
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
    fn max(&mut self, c: &[[Tk; K]]) -> ([Tk; K], usize) {
        let mut best = c[0];
        for x in &c[1..] {
            for i in 0..self.pts.len() {
                merge(&mut best[i], &x[i]);
            }
        }
        (best, 0)
    }
    fn end(&mut self, _v: u32, e: &[Tk; K]) {
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

/// T and the one-sided slopes in parameter `k` at every point: chunks of up to K points,
/// one pass each, spread over the available cores (graphs are read-only and shared).
pub fn evaluate(g: &ExecGraph, plan: &Plan, points: &[Point], k: usize) -> Result<Vec<Eval>> {
    for pt in points {
        plan.check(pt)?;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(points.len()).max(1);
    // Enough chunks to keep every core busy, none larger than K.
    let size = points.len().div_ceil(threads).min(K).max(1);
    let chunks: Vec<&[Point]> = points.chunks(size).collect();
    let pass = |chunk: &[Point]| -> Vec<Eval> {
        let mut dom = Multi { pts: chunk, k, best: [None; K] };
        walk(g, plan, &mut dom, None);
        chunk
            .iter()
            .enumerate()
            .map(|(i, pt)| {
                let b = dom.best[i].unwrap_or(Tk { t: 0, hi: 0, lo: 0 });
                Eval { t: b.t, unit: pt.unit, right: b.hi, left: b.lo }
            })
            .collect()
    };
    if threads == 1 || chunks.len() == 1 || g.len() < 50_000 {
        return Ok(chunks.into_iter().flat_map(pass).collect());
    }
    let results: Vec<Vec<Vec<Eval>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let mine: Vec<&[Point]> = chunks.iter().skip(t).step_by(threads).copied().collect();
                let pass = &pass;
                s.spawn(move || mine.into_iter().map(pass).collect::<Vec<_>>())
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("evaluation thread panicked")).collect()
    });
    // Reassemble in point order: chunk c was handled by thread c % threads.
    let mut per_thread: Vec<std::vec::IntoIter<Vec<Eval>>> = results.into_iter().map(|r| r.into_iter()).collect();
    let mut out = Vec::with_capacity(points.len());
    for c in 0..chunks.len() {
        out.extend(per_thread[c % threads].next().expect("every chunk evaluated"));
    }
    Ok(out)
}
