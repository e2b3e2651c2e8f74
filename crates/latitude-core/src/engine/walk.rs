//! The one forward pass over an execution graph, generic over what a "time" is.
//!
//! Every consumer of the cost model — the numeric engine (one or many parameter points,
//! with derivatives), the LP builder (expressions and constraints) — walks the graph with
//! this function and supplies a [`Domain`]: how to add an affine cost to a value and how to
//! take a max. The rules of `model.rs` are applied here and nowhere else, which is what
//! makes engine T = LP objective hold by construction. A message's abstract cost (its `L`
//! and `G` meaning "this pair's latency and gap") becomes concrete through the route the
//! [`Routes`] give for its pair of ranks, looked up once per message.

use super::plan::Plan;
use crate::graph::{ExecGraph, Kind, IREQ, NONE};
use crate::model::{cost, Lin, Model, Protocol};
use crate::net::{Route, Routes};

/// What a pass computes with. `max` gets ≥ 1 candidates and returns the max and the index
/// of the candidate that determines it (the critical predecessor).
pub trait Domain {
    type Val: Copy;
    fn zero(&mut self) -> Self::Val;
    fn add(&mut self, x: &Self::Val, a: &Lin) -> Self::Val;
    /// In-place `add` (domains with large values override it to avoid a copy).
    #[inline]
    fn add_to(&mut self, x: &mut Self::Val, a: &Lin) {
        *x = self.add(x, a);
    }
    fn max(&mut self, cands: &[Self::Val]) -> (Self::Val, usize);
    /// E(v) is final and no `requires` edge consumes it (T is the max of these ends).
    fn end(&mut self, v: u32, e: &Self::Val);
    /// The next `max` computes quantity `q` of op `v` (the LP names its variables by it).
    fn note(&mut self, _v: u32, _q: Quantity) {}
    /// S(v) (`Quantity::Start`) or E(v) (`Quantity::End`) is final (the decomposition keeps
    /// every vertex's times; other domains ignore it and the call compiles away).
    #[inline(always)]
    fn fixed(&mut self, _v: u32, _q: Quantity, _x: &Self::Val) {}
    /// Called every `COLLECT_EVERY` vertices with the live values (domains that allocate
    /// compact here; nothing else holds a value between vertices). Returning false ends
    /// the pass there (a domain that only samples a prefix of the graph).
    fn collect(&mut self, _live: &mut [[Self::Val; 2]]) -> bool {
        true
    }
}

/// Which time a max computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Quantity {
    /// S(v), when all its dependencies are satisfied.
    Start = 0,
    /// E(v).
    End = 1,
    /// h: rendezvous match time of the pair whose recv is v.
    Match = 2,
    /// T, the runtime.
    Runtime = 3,
}

/// Winner record per vertex (for critical-path backtracking): low 31 bits = index of the
/// winning S-term (predecessor index, or `npreds` for the NIC-chain term, `NO_TERM` if S = 0);
/// bit 31 = E came through the message partner.
pub const NO_TERM: u32 = 0x7FFF_FFFF;
pub const VIA_PARTNER: u32 = 1 << 31;

/// Vertices between two `Domain::collect` calls.
pub const COLLECT_EVERY: usize = 4096;

const S: usize = 0;
const E: usize = 1;

/// The route of send `u`'s message, with its protocol class's terms under `model`.
#[inline]
pub(crate) fn route_of<R: Routes>(g: &ExecGraph, net: &R, model: &Model, u: usize) -> Route {
    let r = net.route(g.rank[u], g.peer[u]);
    if model.classes.is_some() {
        r.with_class(model, g.val[u])
    } else {
        r
    }
}

/// Run one pass. If `record` is given (length = vertices) it receives the winner records.
pub fn walk<D: Domain, R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, dom: &mut D, mut record: Option<&mut [u32]>) {
    let zero = dom.zero();
    let mut store: Vec<[D::Val; 2]> = vec![[zero, zero]; plan.nslots.max(1)];
    let mut cands: Vec<D::Val> = Vec::with_capacity(16);
    let model = &plan.model;
    let ends = &plan.call_ends;
    let slot = &plan.slot;
    for v in 0..g.len() {
        if v % COLLECT_EVERY == 0 && !dom.collect(&mut store) {
            return;
        }
        // S(v): max over local predecessors (and the NIC chain).
        let preds = g.preds_raw(v as u32);
        let gp = plan.gap_prev(v);
        let read = |p: u32| {
            let which = if p & IREQ == 0 { E } else { S };
            store[slot[(p & !IREQ) as usize] as usize][which]
        };
        let (s, mut win) = if gp == NONE && preds.len() <= 1 {
            // The common case needs no max (and no copy into `cands`).
            match preds.first() {
                None => (zero, NO_TERM),
                Some(&p) => (read(p), 0),
            }
        } else {
            cands.clear();
            cands.extend(preds.iter().map(|&p| read(p)));
            if gp != NONE {
                let prev = store[slot[gp as usize] as usize][S];
                let gp = gp as usize;
                cands.push(dom.add(&prev, &route_of(g, net, model, gp).expand(&cost::nic_gap(g.val[gp]))));
            }
            dom.note(v as u32, Quantity::Start);
            let (s, w) = dom.max(&cands);
            (s, w as u32)
        };
        let sv = slot[v] as usize;
        store[sv][S] = s;
        dom.fixed(v as u32, Quantity::Start, &s);
        // E(v). A calc or an eager send ends on its own; a matched pair's other ends are
        // computed at whichever of its two ops comes second (graph/order.rs).
        let kind = g.kind[v];
        if kind == Kind::Calc {
            // The most common op: its end in place, no pair to finish.
            store[sv][E] = s;
            dom.add_to(&mut store[sv][E], &model.calc_cost(g.val[v], g.copy(v as u32), ends.has(v as u32)));
            dom.fixed(v as u32, Quantity::End, &store[sv][E]);
            if let Some(rec) = record.as_deref_mut() {
                rec[v] = win;
            }
            if plan.is_sink(v) {
                let e = store[sv][E];
                dom.end(v as u32, &e);
            }
            continue;
        }
        let own = match kind {
            Kind::Calc => unreachable!(),
            Kind::Send if model.is_eager(g.val[v]) => {
                let own = cost::send_overhead(g.val[v]);
                Some(dom.add(&s, &if model.classes.is_some() { route_of(g, net, model, v).expand(&own) } else { Route::local(&own) }))
            }
            _ => None,
        };
        let q = g.partner[v];
        let second = kind != Kind::Calc && (q as usize) < v;
        let e = if second {
            let q = q as usize;
            let s_q = store[slot[q] as usize][S];
            let (u, r, s_u, s_r) = if kind == Kind::Send { (v, q, s, s_q) } else { (q, v, s_q, s) };
            let route = route_of(g, net, model, u);
            let ends = finish_pair(dom, model.protocol, model.is_eager(g.val[u]), (u as u32, r as u32), s_u, s_r, g.val[u], &route);
            let (mine, mine_via, theirs) = if kind == Kind::Recv {
                (ends.recv, ends.recv_via, ends.send)
            } else {
                let own_end = ends.send.map_or((own.unwrap_or(s), false), |x| x);
                (own_end.0, own_end.1, Some((ends.recv, ends.recv_via)))
            };
            if let Some((e_q, via)) = theirs {
                store[slot[q] as usize][E] = e_q;
                dom.fixed(q as u32, Quantity::End, &e_q);
                if plan.is_sink(q) {
                    dom.end(q as u32, &e_q);
                }
                if via {
                    if let Some(rec) = record.as_deref_mut() {
                        rec[q] |= VIA_PARTNER;
                    }
                }
            }
            if mine_via {
                win |= VIA_PARTNER;
            }
            mine
        } else {
            own.unwrap_or(s) // first of its pair: the end is written when the partner comes
        };
        store[sv][E] = e;
        if second || own.is_some() {
            dom.fixed(v as u32, Quantity::End, &e);
        }
        if let Some(rec) = record.as_deref_mut() {
            rec[v] = win;
        }
        if (second || own.is_some()) && plan.is_sink(v) {
            dom.end(v as u32, &e);
        }
    }
}

/// Ends computed when a pair's second op is reached: the recv's end (and whether it came
/// through the message) and, for rendezvous, the send's end (an eager send ends on its own).
struct PairEnds<V> {
    recv: V,
    recv_via: bool,
    send: Option<(V, bool)>,
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn finish_pair<D: Domain>(
    dom: &mut D,
    protocol: Protocol,
    eager: bool,
    (u, r): (u32, u32),
    s_u: D::Val,
    s_r: D::Val,
    size: u64,
    route: &Route,
) -> PairEnds<D::Val> {
    if eager {
        let arrival = dom.add(&s_u, &route.expand(&cost::arrival(size)));
        dom.note(r, Quantity::End);
        let (m, w) = dom.max(&[s_r, arrival]);
        return PairEnds { recv: dom.add(&m, &route.expand(&cost::recv_overhead(size))), recv_via: w == 1, send: None };
    }
    let (e_r, e_u, r_via, u_via) = rendezvous(dom, protocol, (u, r), s_r, s_u, size, route);
    PairEnds { recv: e_r, recv_via: r_via, send: Some((e_u, u_via)) }
}

/// Ends of a rendezvous pair: (E(recv), E(send), recv came via send side, send came via
/// recv side).
fn rendezvous<D: Domain>(
    dom: &mut D,
    protocol: Protocol,
    (u, v): (u32, u32),
    s_v: D::Val,
    s_u: D::Val,
    size: u64,
    route: &Route,
) -> (D::Val, D::Val, bool, bool) {
    let rts = dom.add(&s_u, &route.expand(&cost::rts()));
    match protocol {
        Protocol::Handshake => {
            // h = max(S(u) + o + L, S(v)); index 0 = sender side, 1 = receiver side.
            dom.note(v, Quantity::Match);
            let (h, w) = dom.max(&[rts, s_v]);
            let e_v = dom.add(&h, &route.expand(&cost::handshake_recv(size)));
            let e_u = dom.add(&h, &route.expand(&cost::handshake_send(size)));
            (e_v, e_u, w == 0, w == 1)
        }
        Protocol::LogGopSim => {
            let arrival = dom.add(&s_u, &route.expand(&cost::arrival(size)));
            dom.note(v, Quantity::End);
            let (m, wv) = dom.max(&[s_v, arrival]);
            let e_v = dom.add(&m, &route.expand(&cost::loggopsim_recv()));
            dom.note(u, Quantity::End);
            let (e_u, wu) = dom.max(&[rts, s_v]);
            (e_v, e_u, wv == 1, wu == 1)
        }
    }
}
