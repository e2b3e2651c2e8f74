//! Where each rank's time goes (docs/analysis.md "Decomposition"): computation, network
//! (latency and bandwidth terms), MPI software stack (o, O and the protocol's set-up
//! overheads) and synchronization (waiting for the partner), at one parameter point.
//!
//! One forward pass keeps every op's exact S(v) and E(v) and the winner of each start.
//! Each message op's interval [S(v), E(v)] is cut into ordered segments by the cost rules
//! (model.rs), with L and G the message's route latency and gap, o and O the overheads:
//!
//! ```text
//! eager send:         stack o + b·O
//! eager recv:         the wait w = max(0, a − S(v)) for a = S(u) + o + L + b·G: its last
//!                     part is the message's flight (the sender's o: stack, b·G: bandwidth,
//!                     L: latency, as much of each as w covers, latency last), the rest
//!                     sync = max(0, S(u) − S(v)); then stack o + b·O
//! handshake send:     sync max(0, S(v) − S(u)), what is left of the RTS (o, L) until the
//!                     match h, then stack 2o, latency 3L, bandwidth b·G
//! handshake recv:     the wait h − S(v): sync max(0, S(u) − S(v)), then the RTS's tail;
//!                     stack o, latency 2L, bandwidth b·G, stack o
//! loggopsim send:     as the handshake send until the match E(u)
//! loggopsim recv:     as eager recv, then stack o
//! NIC gap:            bandwidth g + b·G (the NIC still busy with the previous send)
//! calc copying s:     compute c, then stack b(s)·C (a collective's local copy, C the
//!                     model's copy parameter or O without one: MPI time,
//!                     so it is cut like a message op, not part of the computations' union)
//! call's end:         compute c, then stack K (the calc that ends a rank's part of a
//!                     collective call, when the model has the call cost K; cut the same way)
//! ```
//!
//! The sync pieces are the SST-macro MPI-time study's eqs. 1–2 (the receiver waits for the
//! sender's start, the rendezvous sender for the receive's post); clipping a gap at the
//! computation before a deferred Wait (below) gives its eqs. 3–4.
//!
//! ```text
//! ```
//!
//! A rank's time [0, T_r] (T_r its last end) is the union of its computations plus gaps.
//! Each gap is walked back from its right end along the winners of the pass (a `requires`
//! predecessor's interval, an `irequires` predecessor's start, a NIC gap), clipping at the
//! gap's left end, so the segments of a gap sum to its length exactly and a rank's
//! components sum to T_r (and to T on the rank that finishes last). A message op issued
//! before a computation and waited for after it (a nonblocking receive) contributes only
//! the part of its interval after that computation: the time the rank is blocked.

use super::plan::Plan;
use super::walk::{route_of, walk, Domain, Quantity, NO_TERM, VIA_PARTNER};
use crate::error::Result;
use crate::graph::{Dep, ExecGraph, Kind, NONE};
use crate::model::{b, p, Lin, Point, Protocol};
use crate::net::Routes;

/// What a segment of time is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Part {
    Compute = 0,
    Latency = 1,
    Bandwidth = 2,
    Stack = 3,
    Sync = 4,
}

pub const PARTS: usize = 5;
pub const PART_NAMES: [&str; PARTS] = ["compute", "latency", "bandwidth", "stack", "sync"];

/// The decomposition at one point. Times in ns.
#[derive(Clone, Debug, Default)]
pub struct Decomposition {
    /// T, the runtime.
    pub t_ns: f64,
    /// Per rank: its last end T_r and its time per part (sums to T_r).
    pub rank_end_ns: Vec<f64>,
    pub rank_parts_ns: Vec<[f64; PARTS]>,
    /// MPI segments: the op whose cost it is, the computation ending the gap it lies in
    /// (NONE: after the rank's last computation), the computation starting it (NONE: the
    /// rank's start), its part and its length.
    pub seg_vertex: Vec<u32>,
    pub seg_from: Vec<u32>,
    pub seg_until: Vec<u32>,
    pub seg_part: Vec<u8>,
    pub seg_ns: Vec<f64>,
    /// Exact check: every rank's parts summed in the point's units minus T_r (all zero).
    pub residual: i128,
}

/// Keeps every vertex's exact times.
struct Times {
    s: Vec<i128>,
    e: Vec<i128>,
    scale: i128,
    pt: Point,
}

impl Domain for Times {
    type Val = i128;
    fn zero(&mut self) -> i128 {
        0
    }
    #[inline]
    fn add(&mut self, x: &i128, a: &Lin) -> i128 {
        let mut t = x + a.c * self.scale;
        for (k, c) in a.terms() {
            t += c as i128 * self.pt.theta[k];
        }
        t
    }
    fn max(&mut self, c: &[i128]) -> (i128, usize) {
        let mut best = 0;
        for i in 1..c.len() {
            if c[i] > c[best] {
                best = i;
            }
        }
        (c[best], best)
    }
    fn end(&mut self, _v: u32, _e: &i128) {}
    #[inline(always)]
    fn fixed(&mut self, v: u32, q: Quantity, x: &i128) {
        match q {
            Quantity::Start => self.s[v as usize] = *x,
            _ => self.e[v as usize] = *x,
        }
    }
}

/// Decompose every rank's time at `pt`.
pub fn decompose<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, pt: &Point) -> Result<Decomposition> {
    plan.check(pt, net)?;
    let n = g.len();
    let mut dom = Times { s: vec![0; n], e: vec![0; n], scale: pt.scale(), pt: *pt };
    let mut rec = vec![NO_TERM; n];
    walk(g, plan, net, &mut dom, Some(&mut rec));
    let cx = Ctx { g, plan, net, pt, s: &dom.s, e: &dom.e, rec: &rec };
    let mut out = Decomposition::default();
    let (off, ids) = g.by_rank();
    let mut t = 0i128;
    for r in 0..g.num_ranks() as usize {
        let (end, parts) = cx.rank(&ids[off[r]..off[r + 1]], &mut out);
        out.residual += parts.iter().sum::<i128>() - end;
        t = t.max(end);
        out.rank_end_ns.push(pt.to_ns(end));
        out.rank_parts_ns.push(parts.map(|x| pt.to_ns(x)));
    }
    out.t_ns = pt.to_ns(t);
    Ok(out)
}

struct Ctx<'a, R> {
    g: &'a ExecGraph,
    plan: &'a Plan,
    net: &'a R,
    pt: &'a Point,
    s: &'a [i128],
    e: &'a [i128],
    rec: &'a [u32],
}

/// The ordered pieces of one op's interval (at most 7: no allocation per op).
#[derive(Clone, Copy)]
struct Segs {
    n: usize,
    v: [(Part, i128); 8],
}

impl Segs {
    fn new() -> Segs {
        Segs { n: 0, v: [(Part::Compute, 0); 8] }
    }
    fn of(pieces: &[(Part, i128)]) -> Segs {
        let mut s = Segs::new();
        s.extend(pieces);
        s
    }
    fn push(&mut self, x: (Part, i128)) {
        if x.1 != 0 {
            self.v[self.n] = x;
            self.n += 1;
        }
    }
    fn extend(&mut self, xs: &[(Part, i128)]) {
        for &x in xs {
            self.push(x);
        }
    }
    fn as_slice(&self) -> &[(Part, i128)] {
        &self.v[..self.n]
    }
}

impl<R: Routes> Ctx<'_, R> {
    /// One rank: its end and its parts; its MPI segments appended to `out`.
    fn rank(&self, ops: &[u32], out: &mut Decomposition) -> (i128, [i128; PARTS]) {
        let mut parts = [0i128; PARTS];
        let Some(&last) = ops.iter().max_by_key(|&&v| (self.e[v as usize], std::cmp::Reverse(v))) else {
            return (0, parts);
        };
        let end = self.e[last as usize];
        // A calc that copies (a collective's own block) or pays a call's K is MPI time: its
        // copy and K are stack, so it lies in a gap like a message op rather than in the
        // computations' union.
        let mut calcs: Vec<u32> = ops.iter().copied().filter(|&v| self.g.kind(v) == Kind::Calc && !self.is_mpi_calc(v)).collect();
        calcs.sort_by_key(|&v| (self.s[v as usize], self.e[v as usize]));
        // Gaps between the union of the computations, each walked back from its right end.
        let (mut covered, mut from) = (0i128, NONE);
        for &c in &calcs {
            let (a, z) = (self.s[c as usize], self.e[c as usize]);
            if a > covered {
                self.gap(covered, (c, false), from, c, &mut parts, out);
            }
            if z > covered {
                parts[Part::Compute as usize] += z - a.max(covered);
                covered = z;
                from = c;
            }
        }
        if end > covered {
            self.gap(covered, (last, true), from, NONE, &mut parts, out);
        }
        (end, parts)
    }

    /// The gap (lo, time of `at`]: `at` = (vertex, its end?) is where it ends.
    fn gap(&self, lo: i128, at: (u32, bool), from: u32, until: u32, parts: &mut [i128; PARTS], out: &mut Decomposition) {
        let (mut v, mut at_end) = (at.0 as usize, at.1);
        let mut push = |owner: usize, segs: &[(Part, i128)], hi: i128| {
            // Segments fill [hi − Σ, hi] in order; keep what lies above lo.
            let mut t = hi;
            for &(part, d) in segs.iter().rev() {
                let keep = d.min(t - lo).max(0);
                t -= d;
                if keep > 0 {
                    parts[part as usize] += keep;
                    out.seg_vertex.push(owner as u32);
                    out.seg_from.push(from);
                    out.seg_until.push(until);
                    out.seg_part.push(part as u8);
                    out.seg_ns.push(self.pt.to_ns(keep));
                }
            }
        };
        loop {
            if at_end {
                if self.e[v] <= lo {
                    return;
                }
                // A computation inside a gap has no length (the gaps lie outside their
                // union): pass through it.
                if self.g.kind[v] != Kind::Calc || self.is_mpi_calc(v as u32) {
                    push(v, self.segments(v).as_slice(), self.e[v]);
                }
                at_end = false;
                continue;
            }
            if self.s[v] <= lo {
                return;
            }
            let w = self.rec[v] & !VIA_PARTNER;
            if w == NO_TERM {
                return;
            }
            let preds = self.g.preds_raw(v as u32);
            if (w as usize) < preds.len() {
                let (q, dep) = self.g.preds(v as u32).nth(w as usize).unwrap();
                v = q as usize;
                at_end = dep == Dep::Requires;
            } else {
                let prev = self.plan.gap_prev(v) as usize;
                push(prev, &[(Part::Bandwidth, self.s[v] - self.s[prev])], self.s[v]);
                v = prev;
            }
        }
    }

    /// A calc that copies or pays K: MPI time, cut like a message op.
    fn is_mpi_calc(&self, v: u32) -> bool {
        self.g.copy(v) != 0 || self.plan.call_ends.has(v)
    }

    /// The ordered segments of message op v's interval (module comment).
    fn segments(&self, v: usize) -> Segs {
        let g = self.g;
        if g.kind[v] == Kind::Calc {
            // A copying calc: its own computation, then the copy b(s)·C (C the model's copy
            // parameter, else O: stack, like O); a call's end then pays K (stack).
            let model = &self.plan.model;
            let mut stack = b(g.copy(v as u32)) as i128 * self.pt.theta[model.copy_param()];
            if let (true, Some(k)) = (self.plan.call_ends.has(v as u32), model.call) {
                stack += self.pt.theta[k as usize];
            }
            return Segs::of(&[(Part::Compute, g.val[v] as i128 * self.pt.unit), (Part::Stack, stack)]);
        }
        let q = g.partner[v] as usize;
        let (u, r) = if g.kind[v] == Kind::Send { (v, q) } else { (q, v) };
        let size = g.val[u];
        let th = &self.pt.theta;
        let route = route_of(g, self.net, &self.plan.model, u);
        let lat = route.lat.at(self.pt);
        let bg = b(size) as i128 * route.gap.at(self.pt);
        let o = th[p::O_MSG] + route.ovh_at(self.pt);
        let ob = o + b(size) as i128 * th[p::O_BYTE];
        let (su, sr) = (self.s[u], self.s[r]);
        let model = &self.plan.model;
        let eager = model.is_eager(size);
        // The sender's o and the message's flight, as the receiver waits for them.
        let flight = [(Part::Stack, o), (Part::Bandwidth, bg), (Part::Latency, lat)];
        let rts = [(Part::Stack, o), (Part::Latency, lat)];
        let segs = match (g.kind[v], eager, model.protocol) {
            (Kind::Send, true, _) => Segs::of(&[(Part::Stack, ob)]),
            (Kind::Recv, true, _) | (Kind::Recv, false, Protocol::LogGopSim) => {
                let mut s = wait_for(su + o + lat + bg - sr, su - sr, &flight);
                s.push((Part::Stack, if eager { ob } else { o }));
                s
            }
            (Kind::Send, false, Protocol::LogGopSim) => wait_for(self.e[u] - su, sr - su, &rts),
            (Kind::Send, false, Protocol::Handshake) => {
                let h = (su + o + lat).max(sr);
                let mut s = wait_for(h - su, sr - su, &rts);
                s.extend(&[(Part::Stack, 2 * o), (Part::Latency, 3 * lat), (Part::Bandwidth, bg)]);
                s
            }
            (Kind::Recv, false, Protocol::Handshake) => {
                let mut s = wait_for(su + o + lat - sr, su - sr, &rts);
                s.extend(&[(Part::Stack, o), (Part::Latency, 2 * lat), (Part::Bandwidth, bg), (Part::Stack, o)]);
                s
            }
            (Kind::Calc, ..) => unreachable!("calcs return above"),
        };
        debug_assert_eq!(segs.as_slice().iter().map(|x| x.1).sum::<i128>(), self.e[v] - self.s[v], "segments of {}", g.describe(v as u32));
        segs
    }
}

/// A wait of `pre` for the partner: sync for as long as the partner came `late` (the
/// SST-macro study's eqs. 1–2), then what is left of the partner's pieces `tail` (in time
/// order; the last ones are what the wait ends with).
fn wait_for(pre: i128, late: i128, tail: &[(Part, i128)]) -> Segs {
    let pre = pre.max(0);
    let sync = late.clamp(0, pre);
    let mut left = pre - sync;
    // The tail's pieces from the last back, as far as the wait reaches.
    let mut back = [(Part::Compute, 0i128); 4];
    for (slot, &(part, d)) in back.iter_mut().zip(tail.iter().rev()) {
        let take = d.min(left);
        left -= take;
        *slot = (part, take);
    }
    let mut segs = Segs::of(&[(Part::Sync, sync)]);
    for &x in back[..tail.len()].iter().rev() {
        segs.push(x);
    }
    segs
}
