//! The critical path: backtracking the winner records of a pass, and its breakdown.
//!
//! Each step carries its exact abstract cost (`L` and `G` standing for its message's pair
//! latency and gap); on the machine (`Step::concrete`) the steps' costs sum to T. A
//! breakdown attributes overhead (o, O) to the rank whose op pays it, network time (the
//! pair's latency and gap) to the rank that waits for the message, NIC gaps (g) to the
//! sending rank, calc to its rank.

use super::plan::Plan;
use super::walk::{route_of, NO_TERM, VIA_PARTNER};
use crate::graph::{Dep, ExecGraph, Kind};
use crate::model::{cost, p, Affine, Lin, Model, Point, Protocol};
use crate::net::{Route, Routes};

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
    /// The call cost K of a calc that ends a collective call (model.rs): its abstract cost
    /// counts the K in o's column (`cost::call`), which only `concrete` prices by K.
    Call,
}

#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// The op the cost belongs to (for message steps: the send).
    pub vertex: u32,
    pub kind: StepKind,
    pub cost: Affine,
}

/// Time of the critical path per rank and per kind, in ns at a point.
#[derive(Clone, Debug, Default)]
pub struct PathSummary {
    pub calc_ns: f64,
    pub latency_ns: f64,
    pub bandwidth_ns: f64,
    pub overhead_ns: f64,
    pub gap_ns: f64,
    pub messages: u64,
    pub steps: usize,
    /// Per rank: calc, overhead, network (latency + bandwidth), gap time, messages received.
    pub rank_calc_ns: Vec<f64>,
    pub rank_overhead_ns: Vec<f64>,
    pub rank_network_ns: Vec<f64>,
    pub rank_gap_ns: Vec<f64>,
    pub rank_messages: Vec<u64>,
}

impl Step {
    /// The send whose message the step's latency and gap terms belong to (None for steps
    /// without them).
    pub fn send(&self, g: &ExecGraph) -> Option<u32> {
        if self.cost.a[p::L] == 0 && self.cost.a[p::G_BYTE] == 0 {
            return None;
        }
        Some(if g.kind(self.vertex) == Kind::Recv { g.partner(self.vertex) } else { self.vertex })
    }

    /// The step's route on the machine (flat for steps without network terms).
    pub fn route<R: Routes>(&self, g: &ExecGraph, net: &R, model: &Model) -> Route {
        match self.send(g) {
            Some(u) => route_of(g, net, model, u as usize),
            // Overhead steps: the message's protocol class still adds its o_c.
            None if model.classes.is_some() && g.kind(self.vertex) != Kind::Calc => {
                let u = if g.kind(self.vertex) == Kind::Recv { g.partner(self.vertex) } else { self.vertex };
                Route::flat().with_class(model, g.val[u as usize])
            }
            None => Route::flat(),
        }
    }

    /// The step's concrete cost on the machine. A calc's only parameter term is its copy,
    /// priced by the model's copy parameter (C, else O).
    pub fn concrete<R: Routes>(&self, g: &ExecGraph, net: &R, model: &Model) -> Lin {
        if self.kind == StepKind::Calc {
            let mut l = Lin::constant(self.cost.c);
            l.push(model.copy_param() as u16, self.cost.a[p::O_BYTE]);
            return l;
        }
        if self.kind == StepKind::Call {
            let mut l = Lin::ZERO;
            l.push(model.call.expect("a call step needs K"), self.cost.a[p::O_MSG]);
            return l;
        }
        self.route(g, net, model).expand(&self.cost)
    }

    /// What one term of the step's o column costs at `pt`, in ns: a call step's is K, every
    /// other step's o plus its route's class overhead.
    fn per_o_ns(&self, pt: &Point, model: &Model, route: &Route) -> f64 {
        match (self.kind, model.call) {
            (StepKind::Call, Some(k)) => pt.to_ns(pt.theta[k as usize]),
            _ => pt.to_ns(pt.theta[p::O_MSG] + route.ovh_at(pt)),
        }
    }

    /// What one byte of the step's O column costs at `pt`, in ns: a calc's copy is priced
    /// by the model's copy parameter, every other step's bytes by O.
    fn per_byte_ns(&self, pt: &Point, model: &Model) -> f64 {
        let k = if self.kind == StepKind::Calc { model.copy_param() } else { p::O_BYTE };
        pt.to_ns(pt.theta[k])
    }

    /// Rank that pays the step's overhead and rank whose time the network part delays.
    pub fn ranks(&self, g: &ExecGraph) -> (u32, u32) {
        let own = g.rank(self.vertex);
        match self.kind {
            StepKind::Message | StepKind::Rts => (own, g.rank(g.partner(self.vertex))),
            _ => (own, own),
        }
    }
}

pub fn summarize<R: Routes>(g: &ExecGraph, steps: &[Step], pt: &Point, net: &R, model: &Model) -> PathSummary {
    let n = g.num_ranks() as usize;
    let mut s = PathSummary {
        rank_calc_ns: vec![0.0; n],
        rank_overhead_ns: vec![0.0; n],
        rank_network_ns: vec![0.0; n],
        rank_gap_ns: vec![0.0; n],
        rank_messages: vec![0; n],
        steps: steps.len(),
        ..Default::default()
    };
    let th = pt.ns();
    let mut pairs: Vec<(u32, u32)> = Vec::new(); // (send, receiving rank) with L on the path
    for st in steps {
        let (own, waits) = st.ranks(g);
        let a = &st.cost.a;
        let calc = st.cost.c as f64;
        let route = st.route(g, net, model);
        let lat = a[p::L] as f64 * pt.to_ns(route.lat.at(pt));
        let bw = a[p::G_BYTE] as f64 * pt.to_ns(route.gap.at(pt));
        let ovh = a[p::O_MSG] as f64 * st.per_o_ns(pt, model, &route) + a[p::O_BYTE] as f64 * st.per_byte_ns(pt, model);
        let gap = a[p::G_MSG] as f64 * th[p::G_MSG];
        s.calc_ns += calc;
        s.latency_ns += lat;
        s.bandwidth_ns += bw;
        s.overhead_ns += ovh;
        s.gap_ns += gap;
        s.rank_calc_ns[own as usize] += calc;
        s.rank_overhead_ns[own as usize] += ovh;
        s.rank_network_ns[waits as usize] += lat + bw;
        s.rank_gap_ns[own as usize] += gap;
        if a[p::L] > 0 {
            let send = if g.kind(st.vertex) == Kind::Recv { g.partner(st.vertex) } else { st.vertex };
            let to = g.rank(g.partner(send));
            pairs.push((send, to));
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    s.messages = pairs.len() as u64;
    for (_, to) in pairs {
        s.rank_messages[to as usize] += 1;
    }
    s
}

/// Follow the winner records back from E(last) to a start at time 0.
pub(crate) fn backtrack(g: &ExecGraph, plan: &Plan, rec: &[u32], last: u32) -> Vec<Step> {
    let model = &plan.model;
    let ends = &plan.call_ends;
    let mut steps = Vec::new();
    let mut push = |vertex: u32, kind: StepKind, cost: Affine| steps.push(Step { vertex, kind, cost });
    let (mut v, mut at_end) = (last as usize, true);
    loop {
        let r = rec[v];
        if at_end {
            let via = r & VIA_PARTNER != 0;
            let u = g.partner[v] as usize; // partner (if any)
            match g.kind[v] {
                Kind::Calc => {
                    // backwards: the call cost K ends the calc
                    if ends.has(v as u32) {
                        push(v as u32, StepKind::Call, cost::call());
                    }
                    push(v as u32, StepKind::Calc, Affine::constant(g.val[v]).plus(&cost::copy(g.copy(v as u32))));
                }
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
