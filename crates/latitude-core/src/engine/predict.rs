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
//!
//! The pass runs in i64 times and u32 slopes, checking every addition, and again in i128
//! and u64 only if something did not fit (`width.rs`): the same results, half the bytes.

use super::path::{backtrack, summarize, PathSummary, Step};
use super::plan::Plan;
use super::walk::{walk, Domain, NO_TERM};
use super::width::{Narrow, Scaled, Wide, Width};
use crate::error::{Error, Result};
use crate::graph::{ExecGraph, NONE};
use crate::model::{Affine, Lin, Model, Point, MAXP};
use crate::net::Routes;

/// A time with the largest slopes of the paths attaining it (per parameter, and in the count
/// of message-latency terms), and whether some of those paths have other slopes (then the
/// smallest ones differ and need the second pass).
#[derive(Clone, Copy, Debug)]
struct Tv<const K: usize, W: Width> {
    t: W::T,
    lat: W::S,
    hi: [W::S; K],
    mixed: bool,
}

impl<const K: usize, W: Width> Tv<K, W> {
    fn zero() -> Tv<K, W> {
        Tv { t: Default::default(), lat: Default::default(), hi: [Default::default(); K], mixed: false }
    }
}

/// The pass computing T, the right derivatives and the critical path.
struct Full<const K: usize, W: Width> {
    pt: Scaled<W::T>,
    best: Option<Tv<K, W>>,
    best_v: u32,
    over: bool,
}

impl<const K: usize, W: Width> Domain for Full<K, W> {
    type Val = Tv<K, W>;
    fn zero(&mut self) -> Tv<K, W> {
        Tv::zero()
    }
    #[inline(always)]
    fn add(&mut self, x: &Tv<K, W>, a: &Lin) -> Tv<K, W> {
        let mut r = *x;
        self.add_to(&mut r, a);
        r
    }
    #[inline(always)]
    fn add_to(&mut self, r: &mut Tv<K, W>, a: &Lin) {
        W::add(&mut r.t, &mut r.hi, &mut r.lat, a, &self.pt, &mut self.over);
    }
    #[inline(always)]
    fn max(&mut self, c: &[Tv<K, W>]) -> (Tv<K, W>, usize) {
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
    fn end(&mut self, v: u32, e: &Tv<K, W>) {
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
    /// A narrow pass that overflowed stops at the next collection (its results are void).
    fn collect(&mut self, _live: &mut [[Tv<K, W>; 2]]) -> bool {
        !self.over
    }
}

/// Combine two values of equal time: the largest slopes, and whether the paths differ.
#[inline]
fn tie<const K: usize, W: Width>(b: &mut Tv<K, W>, x: &Tv<K, W>) {
    b.mixed |= x.mixed || x.lat != b.lat || x.hi != b.hi;
    b.lat = b.lat.max(x.lat);
    for k in 0..K {
        b.hi[k] = b.hi[k].max(x.hi[k]);
    }
}

/// The second pass, run only when paths of different slopes tie somewhere on the way to T:
/// the smallest slopes (left derivatives). Same times as the first pass.
struct Left<const K: usize, W: Width> {
    pt: Scaled<W::T>,
    best: Option<Lo<K, W>>,
    over: bool,
}

#[derive(Clone, Copy, Debug)]
struct Lo<const K: usize, W: Width> {
    t: W::T,
    lat: W::S,
    lo: [W::S; K],
}

impl<const K: usize, W: Width> Lo<K, W> {
    fn tie(&mut self, x: &Lo<K, W>) {
        self.lat = self.lat.min(x.lat);
        for k in 0..K {
            self.lo[k] = self.lo[k].min(x.lo[k]);
        }
    }
}

impl<const K: usize, W: Width> Domain for Left<K, W> {
    type Val = Lo<K, W>;
    fn zero(&mut self) -> Lo<K, W> {
        Lo { t: Default::default(), lat: Default::default(), lo: [Default::default(); K] }
    }
    #[inline]
    fn add(&mut self, x: &Lo<K, W>, a: &Lin) -> Lo<K, W> {
        let mut r = *x;
        self.add_to(&mut r, a);
        r
    }
    #[inline]
    fn add_to(&mut self, r: &mut Lo<K, W>, a: &Lin) {
        W::add(&mut r.t, &mut r.lo, &mut r.lat, a, &self.pt, &mut self.over);
    }
    #[inline]
    fn max(&mut self, c: &[Lo<K, W>]) -> (Lo<K, W>, usize) {
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
    fn end(&mut self, _v: u32, e: &Lo<K, W>) {
        match &mut self.best {
            None => self.best = Some(*e),
            Some(b) if e.t > b.t => *b = *e,
            Some(b) if e.t == b.t => b.tie(e),
            _ => {}
        }
    }
    fn collect(&mut self, _live: &mut [[Lo<K, W>; 2]]) -> bool {
        !self.over
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

/// The narrow pass first; the wide one if the point or a time or slope does not fit.
fn run<const K: usize, R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, pt: &Point) -> Result<Prediction> {
    if let Some(p) = run_in::<K, Narrow, R>(g, plan, net, pt) {
        return Ok(p);
    }
    Ok(run_in::<K, Wide, R>(g, plan, net, pt).expect("the wide pass cannot overflow after Plan::check"))
}

/// One prediction in width `W`; None if it overflowed.
fn run_in<const K: usize, W: Width, R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, pt: &Point) -> Option<Prediction> {
    let scaled = W::point(pt)?;
    let mut dom = Full::<K, W> { pt: scaled, best: None, best_v: NONE, over: false };
    let mut rec = vec![NO_TERM; g.len()];
    walk(g, plan, net, &mut dom, Some(&mut rec));
    if dom.over {
        return None;
    }
    let best = dom.best.unwrap_or(Tv::zero());
    let path = if g.is_empty() { Vec::new() } else { backtrack(g, plan, &rec, dom.best_v) };
    // Left derivatives: the right ones unless paths of other slopes tie on the way to T.
    let (left, lat_left) = if best.mixed {
        let mut lo = Left::<K, W> { pt: scaled, best: None, over: false };
        walk(g, plan, net, &mut lo, None);
        if lo.over {
            return None;
        }
        let b = lo.best.expect("the first pass found an end");
        (b.lo, b.lat)
    } else {
        (best.hi, best.lat)
    };
    let wide = |s: &[W::S]| s[..pt.n.min(K)].iter().map(|&x| W::slope(x)).collect::<Vec<u64>>();
    Some(Prediction {
        point: *pt,
        t: W::time(best.t, &scaled),
        right: wide(&best.hi),
        left: wide(&left),
        lat_right: W::slope(best.lat),
        lat_left: W::slope(lat_left),
        path,
        last: dom.best_v,
        model: plan.model,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::random::{random_graph, RandomSpec};
    use crate::gen::Rng;
    use crate::graph::{GraphBuilder, Op};
    use crate::model::Protocol;
    use crate::net::Flat;

    fn same(a: &Prediction, b: &Prediction, what: &str) {
        assert_eq!((a.t, &a.right, &a.left, a.lat_right, a.lat_left, a.last), (b.t, &b.right, &b.left, b.lat_right, b.lat_left, b.last), "{what}");
        let steps = |p: &Prediction| p.path.iter().map(|s| (s.vertex, s.kind, s.cost)).collect::<Vec<_>>();
        assert_eq!(steps(a), steps(b), "{what}: critical path");
    }

    /// The narrow pass gives the wide pass's results bit for bit, ties and left derivatives
    /// included (calcs of 0 or 10 ns and small parameters make paths of different slopes tie).
    #[test]
    fn narrow_pass_equals_wide_pass() {
        let mut rng = Rng::new(21);
        let mut mixed = 0;
        for seed in 0..150 {
            let spec = RandomSpec {
                ranks: 2 + rng.below(5) as u32,
                rounds: 1 + rng.below(8) as u32,
                seed,
                max_calc: [0, 10, 5000][rng.below(3) as usize],
                ..Default::default()
            };
            let g0 = random_graph(&spec).unwrap();
            for protocol in [Protocol::Handshake, Protocol::LogGopSim] {
                let model =
                    Model { protocol, eager_limit: [0, 1024, u64::MAX][rng.below(3) as usize], nic_serialization: rng.below(2) == 1, ..Model::default() };
                let mut g = g0.clone();
                let plan = Plan::prepare(&mut g, model).unwrap();
                let vals = [rng.below(30) as f64, rng.below(5) as f64, rng.below(3) as f64, [0.0, 1.0, 0.018][rng.below(3) as usize], 0.0];
                let pt = Point::from_ns(&vals).unwrap();
                let narrow = run_in::<5, Narrow, Flat>(&g, &plan, &Flat, &pt).expect("small values fit the narrow pass");
                let wide = run_in::<5, Wide, Flat>(&g, &plan, &Flat, &pt).unwrap();
                same(&narrow, &wide, &format!("seed {seed}, {model:?}, {vals:?}"));
                mixed += (narrow.left != narrow.right) as usize;
            }
        }
        assert!(mixed > 0, "no case had different left and right derivatives");
    }

    /// A runtime past i64 units overflows the narrow pass (here: 10⁻⁹ ns parameters make the
    /// unit one tick, and the runtime is 10 s); the prediction is then the wide pass's, exact.
    #[test]
    fn a_time_past_i64_falls_back_to_the_wide_pass() {
        let mut b = GraphBuilder::new(2);
        let c = b.add(0, Op::calc(6_000_000_000)).unwrap();
        let s = b.add(0, Op::send(8, 1, 0)).unwrap();
        let r = b.add(1, Op::recv(8, 0, 0)).unwrap();
        let d = b.add(1, Op::calc(4_000_000_000)).unwrap();
        b.requires(s, c).unwrap();
        b.requires(d, r).unwrap();
        let mut g = b.finish().unwrap();
        let plan = Plan::prepare(&mut g, Model::default()).unwrap();
        let pt = Point::from_ns(&[3000.0, 1500.0, 0.0, 6.000000001, 0.0]).unwrap();
        assert!(run_in::<5, Narrow, Flat>(&g, &plan, &Flat, &pt).is_none());
        let p = predict(&g, &plan, &Flat, &pt).unwrap();
        let expect = (10_000_000_000i128 + 3000 + 2 * 1500 + 7 * 6) * crate::model::TICKS_PER_NS + 7;
        assert_eq!((p.t, p.right[0], p.right[3]), (expect, 1, 7));
        same(&p, &run_in::<5, Wide, Flat>(&g, &plan, &Flat, &pt).unwrap(), "fallback");
    }
}
