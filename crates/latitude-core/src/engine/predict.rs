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

use super::plan::Plan;
use super::walk::{walk, Domain, NO_TERM, VIA_PARTNER};
use crate::graph::{Dep, ExecGraph, Kind, NONE};
use crate::model::{cost, p, Affine, Point, Protocol, NPARAM};

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
        r.t += a.eval(&self.pt);
        for k in 0..NPARAM {
            r.hi[k] += a.a[k];
            r.lo[k] += a.a[k];
        }
        r
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

/// What a step of the critical path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    Calc,
    SendOverhead,
    RecvOverhead,
    /// Eager (or LogGOPSim-rendezvous) message: sender's o, L and bandwidth.
    Message,
    /// Rendezvous request-to-send: sender's o and L.
    Rts,
    /// Handshake after the match: read request, data and (for the sender) FIN.
    HandshakeRecv,
    HandshakeSend,
    /// NIC busy with the previous send (g + bytes·G).
    NicGap,
}

#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// The op the cost belongs to (for message steps: the send).
    pub vertex: u32,
    pub kind: StepKind,
    pub cost: Affine,
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
    /// Messages whose network time is on the critical path.
    pub fn path_messages(&self, g: &ExecGraph) -> u64 {
        let mut sends: Vec<u32> = self
            .path
            .iter()
            .filter(|s| s.cost.a[p::L] > 0)
            .map(|s| if g.kind(s.vertex) == Kind::Recv { g.partner(s.vertex) } else { s.vertex })
            .collect();
        sends.sort_unstable();
        sends.dedup();
        sends.len() as u64
    }
}

/// T, derivatives and the critical path at `pt`.
pub fn predict(g: &ExecGraph, plan: &Plan, pt: &Point) -> Prediction {
    let mut dom = Full { pt: *pt, best: None, best_v: NONE };
    let mut rec = vec![NO_TERM; g.len()];
    walk(g, plan, &mut dom, Some(&mut rec));
    let best = dom.best.unwrap_or(Tv { t: 0, hi: [0; NPARAM], lo: [0; NPARAM] });
    let path = if g.is_empty() { Vec::new() } else { backtrack(g, plan, &rec, dom.best_v) };
    Prediction { point: *pt, t: best.t, right: best.hi, left: best.lo, path, last: dom.best_v }
}

/// Follow the winner records back from E(last) to a start at time 0.
fn backtrack(g: &ExecGraph, plan: &Plan, rec: &[u32], last: u32) -> Vec<Step> {
    let model = &plan.model;
    let mut steps = Vec::new();
    let mut push = |vertex: u32, kind: StepKind, cost: Affine| steps.push(Step { vertex, kind, cost });
    let (mut v, mut at_end) = (last as usize, true);
    loop {
        let r = rec[v];
        if at_end {
            let via = r & VIA_PARTNER != 0;
            let u = g.partner[v] as usize; // partner (if any)
            match g.kind[v] {
                Kind::Calc => push(v as u32, StepKind::Calc, Affine::constant(g.val[v])),
                Kind::Send if model.is_eager(g.val[v]) => push(v as u32, StepKind::SendOverhead, cost::send_overhead(g.val[v])),
                Kind::Send => {
                    let size = g.val[v];
                    if model.protocol == Protocol::Handshake {
                        push(v as u32, StepKind::HandshakeSend, cost::handshake_send(size));
                    }
                    if via {
                        v = u; // h (or the match) came from the receiver's post
                        at_end = false;
                        continue;
                    }
                    push(v as u32, StepKind::Rts, cost::rts());
                }
                Kind::Recv => {
                    let size = g.val[u];
                    match (model.is_eager(size), model.protocol) {
                        (true, _) => push(v as u32, StepKind::RecvOverhead, cost::recv_overhead(size)),
                        (false, Protocol::Handshake) => push(v as u32, StepKind::HandshakeRecv, cost::handshake_recv(size)),
                        (false, Protocol::LogGopSim) => push(v as u32, StepKind::RecvOverhead, cost::loggopsim_recv()),
                    }
                    if via {
                        let handshake = !model.is_eager(size) && model.protocol == Protocol::Handshake;
                        if handshake {
                            push(u as u32, StepKind::Rts, cost::rts());
                        } else {
                            push(u as u32, StepKind::Message, cost::arrival(size));
                        }
                        v = u;
                        at_end = false;
                        continue;
                    }
                }
            }
            at_end = false;
            continue;
        }
        let w = r & !VIA_PARTNER;
        if w == NO_TERM {
            break;
        }
        let preds = g.preds_raw(v as u32);
        if (w as usize) < preds.len() {
            let (p, dep) = g.preds(v as u32).nth(w as usize).unwrap();
            v = p as usize;
            at_end = dep == Dep::Requires;
        } else {
            let prev = plan.gap_prev(v) as usize;
            push(prev as u32, StepKind::NicGap, cost::nic_gap(g.val[prev]));
            v = prev;
        }
    }
    steps.reverse();
    steps
}
