//! T(x) on a whole interval in one pass: every value of the pass is a function of x.
//!
//! With the other parameters fixed, each S and E is convex and piecewise linear in the swept
//! parameter x: a max over paths of lines s·x + c (s = how often the path pays x). A value
//! is therefore kept as its upper envelope on [lo, hi]: the lines sorted by slope that are
//! maximal somewhere in the interval. Adding a cost shifts every line by the same (s, c),
//! which a handle records lazily. Most maxes have a candidate that is largest everywhere on
//! [lo, hi]; that is decided exactly with one comparison per line of the others (convexity,
//! see `dominates`) and the candidate's envelope is reused. Otherwise a max merges the
//! candidates' lines by slope and keeps the upper hull (monotone chain with exact i128
//! cross-multiplication), trimmed to [lo, hi]. T's envelope then holds every critical point
//! at once: one graph pass instead of one per refinement round of the tangent method in
//! `parametric`, at a cost per vertex that grows with the envelopes' sizes (bounded by the
//! pieces T has on [lo, hi]).
//!
//! Envelopes live in an arena that is compacted from the live slots every few thousand
//! vertices once it has grown, so memory stays proportional to the live frontier.

use std::cmp::Ordering;

use super::plan::Plan;
use super::rational::{cmp_frac, Line};
use super::walk::{walk, Domain, COLLECT_EVERY};
use crate::graph::ExecGraph;
use crate::model::{Lin, Point, MAXP};
use crate::net::Routes;
use rayon::prelude::*;

/// A value: the arena lines `off..off+len`, each shifted by (ds, dc).
#[derive(Clone, Copy, Debug)]
pub struct Env {
    off: u32,
    len: u32,
    ds: u64,
    dc: i128,
}

/// Compaction starts once the arena holds this many lines (32 MB) beyond twice the live set.
const GC_MIN: usize = 1 << 20;

struct Envelopes {
    k: usize,
    /// unit / 10⁹ of the base point.
    scale: i128,
    /// The base point's parameters with θ_k = 0 (x is carried by the slopes).
    theta: [i128; MAXP],
    lo: i128,
    hi: i128,
    arena: Vec<Line>,
    spare: Vec<Line>,
    next_gc: usize,
    gc_min: usize,
    compactions: usize,
    spare_hull: Vec<(Line, u32)>,
    hull: Vec<(Line, u32)>,
    result: Option<Env>,
    /// Largest envelope built (for reports and tests).
    widest: usize,
    /// Sampling run: end the pass after this many `collect` calls, keeping breakpoints.
    probe: Option<usize>,
    sample: Vec<f64>,
}

impl Envelopes {
    fn new(base: &Point, k: usize, lo: i128, hi: i128) -> Self {
        let mut theta = base.theta;
        theta[k] = 0;
        Envelopes {
            k,
            scale: base.scale(),
            theta,
            lo,
            hi,
            arena: vec![Line { s: 0, c: 0 }],
            spare: Vec::new(),
            next_gc: GC_MIN,
            gc_min: GC_MIN,
            compactions: 0,
            spare_hull: Vec::new(),
            hull: Vec::new(),
            result: None,
            widest: 1,
            probe: None,
            sample: Vec::new(),
        }
    }

    fn seg(&self, e: &Env) -> &[Line] {
        &self.arena[e.off as usize..(e.off + e.len) as usize]
    }

    fn lines<'a>(&'a self, e: &'a Env) -> impl Iterator<Item = Line> + 'a {
        self.seg(e).iter().map(move |l| shifted(*l, e))
    }

    /// The upper hull of the candidates' lines on [lo, hi] into `hull` (tagged with the
    /// candidate each line came from): the first candidate's lines (already a hull), then
    /// each further candidate merged in by slope.
    fn build_hull(&mut self, cands: &[Env]) {
        let (mut cur, mut next) = (std::mem::take(&mut self.hull), std::mem::take(&mut self.spare_hull));
        cur.clear();
        merge_hull(&mut cur, self.lines(&cands[0]).map(|l| (l, 0)), self.lines(&cands[1]).map(|l| (l, 1)));
        self.trim(&mut cur);
        for (i, e) in cands.iter().enumerate().skip(2) {
            next.clear();
            merge_hull(&mut next, cur.iter().copied(), self.lines(e).map(|l| (l, i as u32)));
            self.trim(&mut next);
            std::mem::swap(&mut cur, &mut next);
        }
        self.hull = cur;
        self.spare_hull = next;
    }

    /// A candidate ≥ all others on [lo, hi], if there is one (most maxes of a pass: 82 % on
    /// the scale bench's stencil), found without merging: it must be largest at hi and at lo,
    /// and then each other candidate is checked against it by [`Self::dominates`].
    fn dominator(&self, cands: &[Env]) -> Option<usize> {
        let at = |e: &Env, hi: bool| self.end_value(e, hi);
        let mut best = 0;
        let mut top = at(&cands[0], true)?;
        for (i, e) in cands.iter().enumerate().skip(1) {
            let v = at(e, true)?;
            if v > top {
                (best, top) = (i, v);
            }
        }
        let low = at(&cands[best], false)?;
        for (i, e) in cands.iter().enumerate() {
            if i != best && (at(e, false)? > low || !self.dominates(&cands[best], e)) {
                return None;
            }
        }
        Some(best)
    }

    /// e at lo (`hi` false) or hi: its first line is maximal at lo and its last at hi (a
    /// trimmed hull). None if it does not fit in i128.
    fn end_value(&self, e: &Env, hi: bool) -> Option<i128> {
        let seg = self.seg(e);
        let (l, x) = if hi { (seg[seg.len() - 1], self.hi) } else { (seg[0], self.lo) };
        value_at(&shifted(l, e), x)
    }

    /// a ≥ b on [lo, hi], exactly. For each line l of b, a − l is convex with its minimum on
    /// [lo, hi] where a's slope first reaches l's: at the left end of that piece of a (a
    /// breakpoint, inside (lo, hi) since a is trimmed), at lo if it is a's first piece, at hi
    /// if no piece gets there. So l ≤ a everywhere iff l ≤ a at that one point, which is the
    /// hull test of `merge_hull`. false also if a value does not fit (the caller merges).
    fn dominates(&self, a: &Env, b: &Env) -> bool {
        let sa = self.seg(a);
        let mut j = 0;
        self.seg(b).iter().all(|l| {
            let l = shifted(*l, b);
            while j < sa.len() && sa[j].s + a.ds < l.s {
                j += 1;
            }
            if j == 0 || j == sa.len() {
                let at_hi = j != 0;
                let x = if at_hi { self.hi } else { self.lo };
                return matches!((self.end_value(a, at_hi), value_at(&l, x)), (Some(u), Some(v)) if u >= v);
            }
            let (p, q) = (shifted(sa[j - 1], a), shifted(sa[j], a));
            // q's slope ≥ l's: l ≤ q at the breakpoint x = (p.c − q.c) / (q.s − p.s) iff
            // l meets q no later than x.
            (q.s == l.s && q.c >= l.c) || (q.s > l.s && frac_le(l.c - q.c, (q.s - l.s) as i128, p.c - q.c, (q.s - p.s) as i128))
        })
    }

    /// Drop lines that are maximal only left of lo or right of hi.
    fn trim(&self, hull: &mut Vec<(Line, u32)>) {
        let mut start = 0;
        while hull.len() - start >= 2 && meet_cmp(&hull[start].0, &hull[start + 1].0, self.lo) != Ordering::Greater {
            start += 1;
        }
        hull.drain(..start);
        while let [.., (a, _), (b, _)] = hull[..] {
            if meet_cmp(&a, &b, self.hi) == Ordering::Less {
                break;
            }
            hull.pop();
        }
    }

    fn compact(&mut self, live: &mut [[Env; 2]]) {
        let segs = segments(live.iter().flatten().chain(self.result.iter()));
        let mut fresh = std::mem::take(&mut self.spare);
        fresh.clear();
        fresh.push(self.arena[0]);
        let mut map: Vec<(u32, u32)> = Vec::with_capacity(segs.len());
        for (off, len) in segs {
            if off == 0 {
                map.push((0, 0));
                continue;
            }
            map.push((off, fresh.len() as u32));
            fresh.extend_from_slice(&self.arena[off as usize..(off + len) as usize]);
        }
        let remap = |e: &mut Env| e.off = map[map.binary_search_by_key(&e.off, |m| m.0).expect("live segment")].1;
        live.iter_mut().flatten().for_each(remap);
        self.result.iter_mut().for_each(remap);
        self.spare = std::mem::replace(&mut self.arena, fresh);
        self.next_gc = 2 * self.arena.len() + self.gc_min;
        self.compactions += 1;
    }
}

/// The distinct arena segments (off, len) of some values, sorted.
fn segments<'a>(envs: impl Iterator<Item = &'a Env>) -> Vec<(u32, u32)> {
    let mut segs: Vec<(u32, u32)> = envs.map(|e| (e.off, e.len)).collect();
    segs.sort_unstable();
    segs.dedup();
    segs
}

#[inline]
fn shifted(l: Line, e: &Env) -> Line {
    Line { s: l.s + e.ds, c: l.c + e.dc }
}

#[inline]
fn value_at(l: &Line, x: i128) -> Option<i128> {
    (l.s as i128).checked_mul(x)?.checked_add(l.c)
}

/// Merge two slope-ordered line sequences into their upper hull (monotone chain).
#[inline]
fn merge_hull(out: &mut Vec<(Line, u32)>, x: impl Iterator<Item = (Line, u32)>, y: impl Iterator<Item = (Line, u32)>) {
    let (mut x, mut y) = (x.peekable(), y.peekable());
    loop {
        let next = match (x.peek(), y.peek()) {
            (Some(p), Some(q)) => {
                if (p.0.s, p.0.c) <= (q.0.s, q.0.c) {
                    x.next()
                } else {
                    y.next()
                }
            }
            (Some(_), None) => x.next(),
            (None, Some(_)) => y.next(),
            (None, None) => break,
        };
        let (l, tag) = next.expect("peeked");
        if let Some(&(t, _)) = out.last() {
            if t.s == l.s {
                if t.c >= l.c {
                    continue; // same slope: the larger intercept wins
                }
                out.pop();
            }
        }
        while let [.., (l1, _), (l2, _)] = out[..] {
            // l2 is maximal nowhere (or at one point) if l meets l1 no later than l2 does.
            if frac_le(l1.c - l.c, (l.s - l1.s) as i128, l1.c - l2.c, (l2.s - l1.s) as i128) {
                out.pop();
            } else {
                break;
            }
        }
        out.push((l, tag));
    }
}

/// a/b ≤ c/d for b, d > 0, exactly (cross-multiplying when that cannot overflow).
#[inline]
fn frac_le(a: i128, b: i128, c: i128, d: i128) -> bool {
    frac_cmp(a, b, c, d) != Ordering::Greater
}

#[inline]
fn frac_cmp(a: i128, b: i128, c: i128, d: i128) -> Ordering {
    // Operands that fit in i64 multiply in one instruction; i128 × i128 is a library call.
    if let (Ok(a), Ok(b), Ok(c), Ok(d)) = (i64::try_from(a), i64::try_from(b), i64::try_from(c), i64::try_from(d)) {
        return (a as i128 * d as i128).cmp(&(c as i128 * b as i128));
    }
    match (a.checked_mul(d), c.checked_mul(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => cmp_frac(a, b, c, d),
    }
}

/// Where lines a, b (a.s < b.s) meet, compared with `at`.
#[inline]
fn meet_cmp(a: &Line, b: &Line, at: i128) -> Ordering {
    frac_cmp(a.c - b.c, (b.s - a.s) as i128, at, 1)
}

impl Domain for Envelopes {
    type Val = Env;
    fn zero(&mut self) -> Env {
        Env { off: 0, len: 1, ds: 0, dc: 0 }
    }
    #[inline]
    fn add(&mut self, x: &Env, a: &Lin) -> Env {
        let mut r = *x;
        self.add_to(&mut r, a);
        r
    }
    #[inline]
    fn add_to(&mut self, x: &mut Env, a: &Lin) {
        let mut dc = a.c * self.scale;
        for (k, ak) in a.terms() {
            dc += ak as i128 * self.theta[k];
            if k == self.k {
                x.ds += ak;
            }
        }
        x.dc += dc;
    }
    fn max(&mut self, cands: &[Env]) -> (Env, usize) {
        let first = cands[0];
        if cands.iter().all(|e| e.off == first.off && e.ds == first.ds) {
            // Shifts of the same function: the largest shift wins everywhere.
            let (i, e) = cands.iter().enumerate().max_by_key(|(_, e)| e.dc).expect("a candidate");
            return (*e, i);
        }
        if let Some(w) = self.dominator(cands) {
            return (cands[w], w);
        }
        self.build_hull(cands);
        // One candidate still equals the hull (a tie at hi hid it): no new envelope.
        let n = self.hull.len();
        let first = self.hull[0].1 as usize;
        let order = std::iter::once(first).chain((0..cands.len()).filter(|&j| j != first));
        for j in order {
            if cands[j].len as usize == n && self.lines(&cands[j]).zip(&self.hull).all(|(l, h)| l == h.0) {
                return (cands[j], j);
            }
        }
        let off = self.arena.len() as u32;
        self.arena.extend(self.hull.iter().map(|h| h.0));
        self.widest = self.widest.max(self.hull.len());
        (Env { off, len: self.hull.len() as u32, ds: 0, dc: 0 }, 0)
    }
    fn end(&mut self, _v: u32, e: &Env) {
        self.result = Some(match self.result {
            None => *e,
            Some(r) => self.max(&[r, *e]).0,
        });
    }
    fn collect(&mut self, live: &mut [[Env; 2]]) -> bool {
        if let Some(left) = self.probe.as_mut() {
            if *left == 0 {
                self.sample_breakpoints(live);
                return false;
            }
            *left -= 1;
        }
        if self.arena.len() >= self.next_gc {
            self.compact(live);
        }
        true
    }
}

impl Envelopes {
    /// Positions of the breakpoints of every live envelope (approximate; only used to cut
    /// the interval into parts of similar work).
    fn sample_breakpoints(&mut self, live: &[[Env; 2]]) {
        for (off, len) in segments(live.iter().flatten().filter(|e| e.len > 1)) {
            let lines = &self.arena[off as usize..(off + len) as usize];
            self.sample.extend(lines.windows(2).map(|w| (w[0].c - w[1].c) as f64 / (w[1].s - w[0].s) as f64));
        }
    }
}

/// The lines of T on [lo, hi] (ticks of parameter `k`, others at `base`), in slope order,
/// each maximal on a sub-interval of positive length; and the widest envelope built.
pub fn envelope<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, base: &Point, k: usize, lo: i128, hi: i128) -> (Vec<Line>, usize) {
    assert!(lo < hi);
    let mut dom = Envelopes::new(base, k, lo, hi);
    walk(g, plan, net, &mut dom, None);
    let t = dom.result.unwrap_or_else(|| dom.zero());
    (dom.lines(&t).collect(), dom.widest)
}

/// Cuts of [lo, hi] into `parts` of similar work. Work grows with the envelopes' sizes and
/// breakpoints usually crowd at one end, so equal widths can leave one core with nearly all
/// of it: a pass over the first few percent of the graph samples where the live envelopes
/// break, and the cuts are that sample's quantiles (equal widths if it saw no breakpoint).
#[allow(clippy::too_many_arguments)]
fn balanced_cuts<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, base: &Point, k: usize, lo: i128, hi: i128, parts: usize) -> Vec<i128> {
    let mut dom = Envelopes::new(base, k, lo, hi);
    dom.probe = Some((g.len() / 32 / COLLECT_EVERY).max(1));
    walk(g, plan, net, &mut dom, None);
    let mut xs = dom.sample;
    xs.retain(|x| x.is_finite());
    xs.sort_by(f64::total_cmp);
    let mut cuts = vec![lo];
    for i in 1..parts {
        let even = lo + (hi - lo) * i as i128 / parts as i128;
        let x = xs.get(xs.len() * i / parts).map_or(even, |&x| x.round() as i128);
        let prev = *cuts.last().expect("lo");
        cuts.push(x.clamp(prev + 1, hi - (parts - i) as i128));
    }
    cuts.push(hi);
    cuts
}

/// [`envelope`] with [lo, hi] cut into one part per thread (parts are independent passes);
/// the parts' lines joined. Returns (lines, widest envelope, parts).
pub fn envelope_parallel<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, base: &Point, k: usize, lo: i128, hi: i128) -> (Vec<Line>, usize, usize) {
    let threads = crate::parallel::threads();
    let parts = if g.len() < 50_000 { 1 } else { threads.min((hi - lo).clamp(1, usize::MAX as i128) as usize) };
    let cuts = if parts == 1 { vec![lo, hi] } else { balanced_cuts(g, plan, net, base, k, lo, hi, parts) };
    let results: Vec<(Vec<Line>, usize)> = if parts == 1 {
        vec![envelope(g, plan, net, base, k, lo, hi)]
    } else {
        crate::parallel::run(|| cuts.par_windows(2).map(|w| envelope(g, plan, net, base, k, w[0], w[1])).collect())
    };
    let mut lines: Vec<Line> = Vec::new();
    let mut widest = 0;
    for (part, w) in results {
        widest = widest.max(w);
        for l in part {
            if lines.last() != Some(&l) {
                lines.push(l);
            }
        }
    }
    (lines, widest, parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::random::{random_graph, RandomSpec};
    use crate::model::{p, Model, TICKS_PER_NS};

    #[test]
    fn dominance_is_decided_at_one_point_per_line() {
        let base = Point::from_ns(&[0.0, 300.0, 0.0, 0.018, 0.0]).unwrap();
        let mut dom = Envelopes::new(&base, p::L, 0, 100);
        fn env(dom: &mut Envelopes, lines: &[(u64, i128)]) -> Env {
            let off = dom.arena.len() as u32;
            dom.arena.extend(lines.iter().map(|&(s, c)| Line { s, c }));
            Env { off, len: lines.len() as u32, ds: 0, dc: 0 }
        }
        // a = max(10, x − 20, 3x − 200): breakpoints at 30 and 90.
        let a = env(&mut dom, &[(0, 10), (1, -20), (3, -200)]);
        let under = env(&mut dom, &[(0, 9), (2, -110)]); // ≤ a: touches it at x = 90 only
        let above_at_lo = env(&mut dom, &[(0, 11)]);
        let above_at_hi = env(&mut dom, &[(4, -300)]); // 100 at hi, a has 100 too: ties at hi
        let above_at_breakpoint = env(&mut dom, &[(2, -51)]); // below a at its breakpoint 30, above at 90
        let above_inside = env(&mut dom, &[(1, -19)]); // above a on (30, 90)
        assert!(dom.dominates(&a, &under));
        assert!(dom.dominates(&a, &a));
        assert!(dom.dominates(&a, &above_at_hi));
        assert!(!dom.dominates(&a, &above_at_lo));
        assert!(!dom.dominates(&a, &above_at_breakpoint));
        assert!(!dom.dominates(&a, &above_inside));
        assert!(!dom.dominates(&under, &a));
        let beyond_hi = env(&mut dom, &[(5, -400)]); // steeper than all of a: checked at hi, ties there
        assert!(dom.dominates(&a, &beyond_hi));
        let steeper = env(&mut dom, &[(5, -399)]);
        assert!(!dom.dominates(&a, &steeper));
        let shallow = env(&mut dom, &[(0, 10), (1, -21)]);
        assert!(dom.dominates(&a, &shallow));
        assert_eq!(dom.dominator(&[under, a, shallow]), Some(1));
        assert_eq!(dom.dominator(&[a, above_inside]), None);
    }

    #[test]
    fn compaction_keeps_every_live_envelope() {
        let spec = RandomSpec { ranks: 32, rounds: 300, seed: 8, max_calc: 20_000, ..Default::default() };
        let mut g = random_graph(&spec).unwrap();
        let plan = Plan::prepare(&mut g, Model::default()).unwrap();
        let base = Point::from_ns(&[0.0, 300.0, 0.0, 0.018, 0.0]).unwrap();
        let run = |gc_min: usize| {
            let mut dom = Envelopes::new(&base, p::L, 0, 30_000 * TICKS_PER_NS);
            dom.gc_min = gc_min;
            dom.next_gc = gc_min;
            walk(&g, &plan, &crate::net::Flat, &mut dom, None);
            let t = dom.result.expect("a sink");
            (dom.lines(&t).collect::<Vec<_>>(), dom.compactions)
        };
        let (lines, none) = run(GC_MIN);
        let (again, many) = run(16);
        assert!(lines.len() > 3, "{}", lines.len());
        assert_eq!(none, 0);
        assert!(many > 5, "{many}");
        assert_eq!(lines, again);
    }
}
