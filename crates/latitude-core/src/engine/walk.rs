//! The one forward pass over an execution graph, generic over what a "time" is.
//!
//! Every consumer of the cost model — the numeric engine (one or many parameter points,
//! with derivatives), the LP builder (expressions and constraints) — walks the graph with
//! this function and supplies a [`Domain`]: how to add an affine cost to a value and how to
//! take a max. The rules of `model.rs` are applied here and nowhere else, which is what
//! makes engine T = LP objective hold by construction.

use super::plan::Plan;
use crate::graph::{ExecGraph, Kind, IREQ, NONE};
use crate::model::{cost, Affine, Protocol};

/// What a pass computes with. `max` gets ≥ 1 candidates and returns the max and the index
/// of the candidate that determines it (the critical predecessor).
pub trait Domain {
    type Val: Copy;
    fn zero(&mut self) -> Self::Val;
    fn add(&mut self, x: &Self::Val, a: &Affine) -> Self::Val;
    fn max(&mut self, cands: &[Self::Val]) -> (Self::Val, usize);
    /// E(v) is final (called once per vertex).
    fn end(&mut self, v: u32, e: &Self::Val);
    /// The next `max` computes quantity `q` of op `v` (the LP names its variables by it).
    fn note(&mut self, _v: u32, _q: Quantity) {}
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

const S: usize = 0;
const E: usize = 1;

/// Run one pass. If `record` is given (length = vertices) it receives the winner records.
pub fn walk<D: Domain>(g: &ExecGraph, plan: &Plan, dom: &mut D, mut record: Option<&mut [u32]>) {
    let zero = dom.zero();
    let mut store: Vec<[D::Val; 2]> = vec![[zero, zero]; plan.nslots.max(1)];
    let mut cands: Vec<D::Val> = Vec::with_capacity(16);
    let model = &plan.model;
    let slot = &plan.slot;
    for v in 0..g.len() {
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
                cands.push(dom.add(&prev, &cost::nic_gap(g.val[gp as usize])));
            }
            dom.note(v as u32, Quantity::Start);
            let (s, w) = dom.max(&cands);
            (s, w as u32)
        };
        let sv = slot[v] as usize;
        store[sv][S] = s;
        // E(v) by kind and protocol.
        let e = match g.kind[v] {
            Kind::Calc => dom.add(&s, &Affine::constant(g.val[v])),
            Kind::Send => {
                let size = g.val[v];
                if model.is_eager(size) {
                    dom.add(&s, &cost::send_overhead(size))
                } else {
                    s // placeholder: the pair is finished at the recv (stored next)
                }
            }
            Kind::Recv => {
                let u = g.partner[v] as usize;
                let su = slot[u] as usize;
                let s_u = store[su][S];
                let size = g.val[u];
                if model.is_eager(size) {
                    let arrival = dom.add(&s_u, &cost::arrival(size));
                    dom.note(v as u32, Quantity::End);
                    let (m, w) = dom.max(&[s, arrival]);
                    if w == 1 {
                        win |= VIA_PARTNER;
                    }
                    dom.add(&m, &cost::recv_overhead(size))
                } else {
                    let (e_v, e_u, v_via, u_via) = rendezvous(dom, model.protocol, v as u32, s, s_u, size);
                    store[su][E] = e_u;
                    dom.end(u as u32, &e_u);
                    if let Some(rec) = record.as_deref_mut() {
                        if u_via {
                            rec[u] |= VIA_PARTNER;
                        }
                    }
                    if v_via {
                        win |= VIA_PARTNER;
                    }
                    e_v
                }
            }
        };
        store[sv][E] = e;
        if let Some(rec) = record.as_deref_mut() {
            rec[v] = win;
        }
        let finished_later = g.kind[v] == Kind::Send && !model.is_eager(g.val[v]);
        if !finished_later {
            dom.end(v as u32, &e);
        }
    }
}

/// Ends of a rendezvous pair: (E(recv), E(send), recv came via send side, send came via
/// recv side).
fn rendezvous<D: Domain>(dom: &mut D, protocol: Protocol, v: u32, s_v: D::Val, s_u: D::Val, size: u64) -> (D::Val, D::Val, bool, bool) {
    let rts = dom.add(&s_u, &cost::rts());
    match protocol {
        Protocol::Handshake => {
            // h = max(S(u) + o + L, S(v)); index 0 = sender side, 1 = receiver side.
            dom.note(v, Quantity::Match);
            let (h, w) = dom.max(&[rts, s_v]);
            let e_v = dom.add(&h, &cost::handshake_recv(size));
            let e_u = dom.add(&h, &cost::handshake_send(size));
            (e_v, e_u, w == 0, w == 1)
        }
        Protocol::LogGopSim => {
            let arrival = dom.add(&s_u, &cost::arrival(size));
            dom.note(v, Quantity::End);
            let (m, wv) = dom.max(&[s_v, arrival]);
            let e_v = dom.add(&m, &cost::loggopsim_recv());
            dom.note(v - 1, Quantity::End); // the send, stored just before its recv
            let (e_u, wu) = dom.max(&[rts, s_v]);
            (e_v, e_u, wv == 1, wu == 1)
        }
    }
}
