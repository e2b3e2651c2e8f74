//! Prediction at one parameter point: T(θ), the critical path and its breakdown, and the
//! right and left partial derivatives of T for every parameter — in one pass.
//!
//! T(θ) = max over paths of affine functions, so ∂T/∂θ_k from the right is the largest
//! coefficient a_k among the paths attaining T, and from the left the smallest. The pass
//! carries, for each start and end time, the exact time and these two extremes; on a tie
//! the maxima and minima combine (a lexicographic max-plus). Arithmetic is exact (`Point`),
//! so ties are real ties and the derivatives are exact integers (λ_L: number of latency
//! terms on the critical path; λ_G: bytes minus one per message; λ_o: overheads).
//! The critical path follows, at every max, the candidate with the larger right slope in L.

use super::path::{backtrack, summarize, PathSummary, Step};
use super::plan::Plan;
use super::walk::{walk, Domain, NO_TERM};
use crate::error::Result;
use crate::graph::{ExecGraph, NONE};
use crate::model::{p, Affine, Point, NPARAM};

/// A time with the extreme slopes of the paths attaining it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tv {
    pub t: i128,
    pub hi: [u64; NPARAM],
    pub lo: [u64; NPARAM],
}

struct Full {
    pt: Point,
    best: Option<Tv>,
    best_v: u32,
}

impl Domain for Full {
    type Val = Tv;
    fn zero(&mut self) -> Tv {
        Tv { t: 0, hi: [0; NPARAM], lo: [0; NPARAM] }
    }
    #[inline]
    fn add(&mut self, x: &Tv, a: &Affine) -> Tv {
        let mut r = *x;
        self.add_to(&mut r, a);
        r
    }
    #[inline]
    fn add_to(&mut self, r: &mut Tv, a: &Affine) {
        r.t += a.eval(&self.pt);
        for k in 0..NPARAM {
            r.hi[k] += a.a[k];
            r.lo[k] += a.a[k];
        }
    }
    #[inline]
    fn max(&mut self, c: &[Tv]) -> (Tv, usize) {
        let mut best = c[0];
        let mut win = 0;
        for (i, x) in c.iter().enumerate().skip(1) {
            if x.t > best.t {
                best = *x;
                win = i;
            } else if x.t == best.t {
                if x.hi[p::L] > best.hi[p::L] {
                    win = i;
                }
                for k in 0..NPARAM {
                    best.hi[k] = best.hi[k].max(x.hi[k]);
                    best.lo[k] = best.lo[k].min(x.lo[k]);
                }
            }
        }
        (best, win)
    }
    fn end(&mut self, v: u32, e: &Tv) {
        match &mut self.best {
            None => {
                self.best = Some(*e);
                self.best_v = v;
            }
            Some(b) => {
                if e.t > b.t || (e.t == b.t && e.hi[p::L] > b.hi[p::L]) {
                    self.best_v = v;
                }
                if e.t > b.t {
                    *b = *e;
                } else if e.t == b.t {
                    for k in 0..NPARAM {
                        b.hi[k] = b.hi[k].max(e.hi[k]);
                        b.lo[k] = b.lo[k].min(e.lo[k]);
                    }
                }
            }
        }
    }
}

/// The result of one prediction.
#[derive(Clone, Debug)]
pub struct Prediction {
    pub point: Point,
    /// Runtime in units of 1/point.unit ns.
    pub t: i128,
    /// Right and left derivatives of T per parameter.
    pub right: [u64; NPARAM],
    pub left: [u64; NPARAM],
    /// Critical path, first step first; its costs sum to T.
    pub path: Vec<Step>,
    /// Vertex whose end is T.
    pub last: u32,
}

impl Prediction {
    pub fn runtime_ns(&self) -> f64 {
        self.point.to_ns(self.t)
    }
    /// Sum of the path's costs (c in ns, coefficients per parameter).
    pub fn path_total(&self) -> Affine {
        self.path.iter().fold(Affine::ZERO, |acc, s| acc.plus(&s.cost))
    }
    /// Breakdown of the critical path at this point.
    pub fn summary(&self, g: &ExecGraph) -> PathSummary {
        summarize(g, &self.path, &self.point)
    }
}

/// T, derivatives and the critical path at `pt`.
pub fn predict(g: &ExecGraph, plan: &Plan, pt: &Point) -> Result<Prediction> {
    plan.check(pt)?;
    let mut dom = Full { pt: *pt, best: None, best_v: NONE };
    let mut rec = vec![NO_TERM; g.len()];
    walk(g, plan, &mut dom, Some(&mut rec));
    let best = dom.best.unwrap_or(Tv { t: 0, hi: [0; NPARAM], lo: [0; NPARAM] });
    let path = if g.is_empty() { Vec::new() } else { backtrack(g, plan, &rec, dom.best_v) };
    Ok(Prediction { point: *pt, t: best.t, right: best.hi, left: best.lo, path, last: dom.best_v })
}
