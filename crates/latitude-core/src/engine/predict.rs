//! Prediction at one parameter point: T(θ), the critical path and its breakdown, and the
//! right and left partial derivatives of T for every named parameter — in one pass.
//!
//! T(θ) = max over paths of affine functions, so ∂T/∂θ_k from the right is the largest
//! coefficient a_k among the paths attaining T, and from the left the smallest. The pass
//! carries, for each start and end time, the exact time and these two extremes; on a tie
//! the maxima and minima combine (a lexicographic max-plus). Arithmetic is exact (`Point`),
//! so ties are real ties and the derivatives are exact integers (λ_L: number of latency
//! terms on the critical path; λ_G: bytes minus one per message; λ_o: overheads; λ of a
//! link class: how many links of that class the critical path's messages cross).
//!
//! The derivative vectors are as wide as the machine has parameters, rounded up to one of
//! a few widths (a const generic, so the common flat machine carries five). The pass carries
//! only the largest slopes and a flag saying whether paths of other slopes tied on the way;
//! the smallest (left derivatives) need a second pass only when that flag reaches T (a tie
//! between paths of different slopes: at a breakpoint), which halves what the common pass
//! copies around. Alongside the slopes each value carries its count of message-latency
//! terms (whatever parameters a pair's latency is made of): at a tie the critical path
//! follows the candidate with the larger count, then the lower index. That path's messages
//! per pair of ranks are the pairwise sensitivities (`pairs.rs`).

use super::path::{backtrack, summarize, PathSummary, Step};
use super::plan::Plan;
use super::walk::{walk, Domain, NO_TERM};
use crate::error::{Error, Result};
use crate::graph::{ExecGraph, NONE};
use crate::model::{Affine, Lin, Model, Point, MAXP};
use crate::net::Routes;

/// A time with the largest slopes of the paths attaining it (per parameter, and in the count
/// of message-latency terms), and whether some of those paths have other slopes (then the
/// smallest ones differ and need the second pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tv<const K: usize> {
    pub t: i128,
    pub lat: u64,
    pub mixed: bool,
    pub hi: [u64; K],
}

impl<const K: usize> Tv<K> {
    const ZERO: Tv<K> = Tv { t: 0, lat: 0, mixed: false, hi: [0; K] };
}

/// The pass computing T, the right derivatives and the critical path.
struct Full<const K: usize> {
    pt: Point,
    scale: i128,
    best: Option<Tv<K>>,
    best_v: u32,
}

impl<const K: usize> Domain for Full<K> {
    type Val = Tv<K>;
    fn zero(&mut self) -> Tv<K> {
        Tv::ZERO
    }
    #[inline(always)]
    fn add(&mut self, x: &Tv<K>, a: &Lin) -> Tv<K> {
        let mut r = *x;
        self.add_to(&mut r, a);
        r
    }
    #[inline(always)]
    fn add_to(&mut self, r: &mut Tv<K>, a: &Lin) {
        add_cost(&mut r.t, &mut r.hi, &mut r.lat, a, &self.pt, self.scale);
    }
    #[inline(always)]
    fn max(&mut self, c: &[Tv<K>]) -> (Tv<K>, usize) {
        let mut best = c[0];
        let mut win = 0;
        for (i, x) in c.iter().enumerate().skip(1) {
            if x.t > best.t {
                best = *x;
                win = i;
            } else if x.t == best.t {
                tie(&mut best, x);
                if x.lat > c[win].lat {
                    win = i;
                }
            }
        }
        (best, win)
    }
    fn end(&mut self, v: u32, e: &Tv<K>) {
        match &mut self.best {
            None => {
                self.best = Some(*e);
                self.best_v = v;
            }
            Some(b) => {
                if e.t > b.t || (e.t == b.t && e.lat > b.lat) {
                    self.best_v = v;
                }
                if e.t > b.t {
                    *b = *e;
                } else if e.t == b.t {
                    tie(b, e);
                }
            }
        }
    }
}

/// One affine cost added to a time, its slopes (the largest in the first pass, the smallest
/// in the second: adding is the same for both) and its count of message-latency terms.
#[inline(always)]
fn add_cost<const K: usize>(t: &mut i128, slopes: &mut [u64; K], lat: &mut u64, a: &Lin, pt: &Point, scale: i128) {
    *t += a.c * scale;
    for i in 0..a.n as usize {
        let (k, ak) = (a.k[i] as usize, a.a[i]);
        *t += ak as i128 * pt.theta[k];
        slopes[k] += ak;
    }
    *lat += a.lat;
}

/// Combine two values of equal time: the largest slopes, and whether the paths differ.
#[inline]
fn tie<const K: usize>(b: &mut Tv<K>, x: &Tv<K>) {
    b.mixed |= x.mixed || x.lat != b.lat || x.hi != b.hi;
    b.lat = b.lat.max(x.lat);
    for k in 0..K {
        b.hi[k] = b.hi[k].max(x.hi[k]);
    }
}

/// The second pass, run only when paths of different slopes tie somewhere on the way to T:
/// the smallest slopes (left derivatives). Same times as the first pass.
struct Left<const K: usize> {
    pt: Point,
    scale: i128,
    best: Option<Lo<K>>,
}

#[derive(Clone, Copy, Debug)]
struct Lo<const K: usize> {
    t: i128,
    lat: u64,
    lo: [u64; K],
}

impl<const K: usize> Lo<K> {
    fn tie(&mut self, x: &Lo<K>) {
        self.lat = self.lat.min(x.lat);
        for k in 0..K {
            self.lo[k] = self.lo[k].min(x.lo[k]);
        }
    }
}

impl<const K: usize> Domain for Left<K> {
    type Val = Lo<K>;
    fn zero(&mut self) -> Lo<K> {
        Lo { t: 0, lat: 0, lo: [0; K] }
    }
    #[inline]
    fn add(&mut self, x: &Lo<K>, a: &Lin) -> Lo<K> {
        let mut r = *x;
        self.add_to(&mut r, a);
        r
    }
    #[inline]
    fn add_to(&mut self, r: &mut Lo<K>, a: &Lin) {
        add_cost(&mut r.t, &mut r.lo, &mut r.lat, a, &self.pt, self.scale);
    }
    #[inline]
    fn max(&mut self, c: &[Lo<K>]) -> (Lo<K>, usize) {
        let mut best = c[0];
        for x in &c[1..] {
            if x.t > best.t {
                best = *x;
            } else if x.t == best.t {
                best.tie(x);
            }
        }
        (best, 0)
    }
    fn end(&mut self, _v: u32, e: &Lo<K>) {
        match &mut self.best {
            None => self.best = Some(*e),
            Some(b) if e.t > b.t => *b = *e,
            Some(b) if e.t == b.t => b.tie(e),
            _ => {}
        }
    }
}

/// The result of one prediction.
#[derive(Clone, Debug)]
pub struct Prediction {
    pub point: Point,
    /// Runtime in units of 1/point.unit ns.
    pub t: i128,
    /// Right and left derivatives of T per named parameter (length `point.n`).
    pub right: Vec<u64>,
    pub left: Vec<u64>,
    /// Right and left derivatives in a latency added to every message (the count of
    /// message-latency terms; equals λ_L on a flat machine).
    pub lat_right: u64,
    pub lat_left: u64,
    /// Critical path, first step first; its costs sum to T.
    pub path: Vec<Step>,
    /// Vertex whose end is T.
    pub last: u32,
    /// The model the prediction is for (its protocol classes price the path's steps).
    pub model: Model,
}

impl Prediction {
    pub fn runtime_ns(&self) -> f64 {
        self.point.to_ns(self.t)
    }
    /// Sum of the path's abstract costs (c in ns; `L` counts latency terms, `G` bytes).
    pub fn path_total(&self) -> Affine {
        self.path.iter().fold(Affine::ZERO, |acc, s| acc.plus(&s.cost))
    }
    /// Sum of the path's concrete costs on the machine (dense over the named parameters).
    pub fn path_total_on<R: Routes>(&self, g: &ExecGraph, net: &R) -> (i128, Vec<u64>) {
        let mut c = 0i128;
        let mut a = vec![0u64; self.point.n];
        for s in &self.path {
            let lin = s.concrete(g, net, &self.model);
            c += lin.c;
            for (k, x) in lin.terms() {
                a[k] += x;
            }
        }
        (c, a)
    }
    /// Breakdown of the critical path at this point.
    pub fn summary<R: Routes>(&self, g: &ExecGraph, net: &R) -> PathSummary {
        summarize(g, &self.path, &self.point, net, &self.model)
    }
}

/// T, derivatives and the critical path at `pt`.
pub fn predict<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, pt: &Point) -> Result<Prediction> {
    plan.check(pt, net)?;
    match pt.n {
        0..=5 => run::<5, R>(g, plan, net, pt),
        6..=8 => run::<8, R>(g, plan, net, pt),
        9..=12 => run::<12, R>(g, plan, net, pt),
        13..=16 => run::<16, R>(g, plan, net, pt),
        17..=MAXP => run::<MAXP, R>(g, plan, net, pt),
        n => Err(Error::new(format!("{n} named parameters; at most {MAXP} are supported"))),
    }
}

fn run<const K: usize, R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, pt: &Point) -> Result<Prediction> {
    let mut dom = Full::<K> { pt: *pt, scale: pt.scale(), best: None, best_v: NONE };
    let mut rec = vec![NO_TERM; g.len()];
    walk(g, plan, net, &mut dom, Some(&mut rec));
    let best = dom.best.unwrap_or(Tv::ZERO);
    let path = if g.is_empty() { Vec::new() } else { backtrack(g, plan, &rec, dom.best_v) };
    // Left derivatives: the right ones unless paths of other slopes tie on the way to T.
    let (left, lat_left) = if best.mixed {
        let mut lo = Left::<K> { pt: *pt, scale: pt.scale(), best: None };
        walk(g, plan, net, &mut lo, None);
        let b = lo.best.expect("the first pass found an end");
        (b.lo, b.lat)
    } else {
        (best.hi, best.lat)
    };
    Ok(Prediction {
        point: *pt,
        t: best.t,
        right: best.hi[..pt.n.min(K)].to_vec(),
        left: left[..pt.n.min(K)].to_vec(),
        lat_right: best.lat,
        lat_left,
        path,
        last: dom.best_v,
        model: plan.model,
    })
}
