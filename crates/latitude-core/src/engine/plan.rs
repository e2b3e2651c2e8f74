//! An evaluation plan: the graph checked against a model (matched messages, an order in
//! which every rendezvous send's end is computed before it is required, NIC chains in
//! order) plus a compact value store layout.
//!
//! A forward pass only needs a vertex's S and E until its last reader, so each vertex gets
//! a *slot* that is recycled after that reader: passes touch a store of `nslots` entries
//! (the live frontier, typically a few per rank) instead of one per vertex, which keeps
//! multi-point passes cache-resident on graphs of 10⁸ vertices.

use crate::error::{Error, Result};
use crate::graph::{order, slots, Arr, CallEnds, ExecGraph, Kind, OrderKind, IREQ, NONE};
use crate::model::{p, Model, Point, NPARAM};
use crate::net::Routes;

pub struct Plan {
    pub model: Model,
    pub(crate) slot: Arr<u32>,
    pub(crate) nslots: usize,
    /// Previous send of the same rank and NIC in trace order (NIC serialization), or NONE.
    pub(crate) gap_prev: Vec<u32>,
    /// Ops whose end no `requires` edge consumes (bit per vertex): T is the max of their
    /// ends, since every other op's end is dominated by its successor's start.
    sink: Vec<u64>,
    /// Upper bounds of any path's total calc time (ns) and parameter coefficients, so that
    /// exact evaluations can be refused before their integers could overflow.
    calc_total: f64,
    coeff_total: [f64; NPARAM],
    /// Bytes of every calc's copy (priced by the model's copy parameter).
    copy_total: f64,
    /// Collective calls' ends (each priced K when the model has it).
    calls_total: f64,
    /// The calcs that pay the call cost K: the ends of the collective calls when the model
    /// has K, else none (built once here, read by every pass).
    pub(crate) call_ends: CallEnds,
}

impl Plan {
    /// Check `g` against `model`; re-order `g` if the model's rendezvous pairs need it.
    pub fn prepare(g: &mut ExecGraph, model: Model) -> Result<Plan> {
        check_matched(g)?;
        if !rendezvous_ordered(g, &model) {
            let eager_limit = model.eager_limit;
            let sizes = g.val.clone();
            let kinds = g.kind.clone();
            order::reorder_rendezvous(g, &|u| kinds[u] == Kind::Send && sizes[u] > eager_limit).map_err(|cycle| rendezvous_deadlock(g, &cycle, &model))?;
        }
        Plan::build(g, model)
    }

    /// Plan for a graph already in a suitable order (errors otherwise).
    pub fn new(g: &ExecGraph, model: Model) -> Result<Plan> {
        check_matched(g)?;
        if !rendezvous_ordered(g, &model) {
            return Err(Error::new("graph order does not suit the rendezvous protocol; use Plan::prepare"));
        }
        Plan::build(g, model)
    }

    /// The plan of a graph whose order has been checked. The slot assignment is one
    /// sequential scan (or a read: an .lgraph stores the slots of its order without NIC
    /// chains); the cost bounds and the sinks are independent of it and run beside it on a
    /// second thread (large graphs: together ~40 % of the plan's instructions).
    fn build(g: &ExecGraph, model: Model) -> Result<Plan> {
        let gap_prev = if model.nic_serialization { nic_chains(g)? } else { Vec::new() };
        let slots = || match &g.slots {
            Some((slot, nslots)) if gap_prev.is_empty() => (slot.clone(), *nslots),
            _ => {
                let (slot, nslots) = slots::assign(g, &gap_prev);
                (slot.into(), nslots)
            }
        };
        let par = g.len() > 1 << 16;
        let ((slot, nslots), sink, (calc_total, coeff_total, copy_total)) = if g.slots.is_some() && gap_prev.is_empty() {
            // Stored slots are a read: the sinks take its thread.
            let (((slot, nslots), sink), bounds) = crate::parallel::join(par, || (slots(), sinks(g)), || cost_bounds(g));
            ((slot, nslots), sink, bounds)
        } else {
            let (slots, (bounds, sink)) = crate::parallel::join(par, slots, || (cost_bounds(g), sinks(g)));
            (slots, sink, bounds)
        };
        let calls_total = g.colls.marks.len() as f64;
        let call_ends = if model.call.is_some() { g.colls.ends(g.len()) } else { CallEnds::NONE };
        Ok(Plan { model, slot, nslots, gap_prev, sink, calc_total, coeff_total, copy_total, calls_total, call_ends })
    }

    /// No `requires` edge consumes v's end.
    #[inline]
    pub fn is_sink(&self, v: usize) -> bool {
        self.sink[v >> 6] & (1 << (v & 63)) != 0
    }

    /// Refuse a point whose exact times could exceed i128 (far beyond realistic inputs:
    /// hours of runtime at 10⁻⁹ ns resolution and rational scales up to ~10¹³ fit).
    /// The latency and gap terms are bounded by the network's largest route at `pt`.
    pub fn check<R: Routes>(&self, pt: &Point, net: &R) -> Result<()> {
        let (lat, gap) = net.max_route(pt);
        // A protocol class adds its o_c to every o and its l_c to every latency.
        let (co, cl) = self.model.classes.map_or((0.0, 0.0), |c| {
            let most = |ks: [u16; 3]| ks.iter().map(|&k| pt.theta[k as usize] as f64).fold(0.0, f64::max);
            (most(c.o), most(c.l))
        });
        let mut m = self.calc_total * pt.unit as f64 + self.copy_total * pt.theta[self.model.copy_param()] as f64;
        if let Some(k) = self.model.call {
            m += self.calls_total * pt.theta[k as usize] as f64;
        }
        for k in 0..NPARAM {
            let v = match k {
                p::L => lat + cl,
                p::G_BYTE => gap,
                p::O_MSG => pt.theta[k] as f64 + co,
                _ => (pt.theta[k] as f64).abs(),
            };
            m += self.coeff_total[k] * v;
        }
        if m.is_finite() && m < 1e37 {
            Ok(())
        } else {
            Err(Error::new("parameter values too large for exact arithmetic (runtime beyond 10^37 time units); use smaller ranges"))
        }
    }

    pub fn nslots(&self) -> usize {
        self.nslots
    }

    pub(crate) fn gap_prev(&self, v: usize) -> u32 {
        self.gap_prev.get(v).copied().unwrap_or(NONE)
    }
}

fn sinks(g: &ExecGraph) -> Vec<u64> {
    let mut bits = vec![u64::MAX; g.len().div_ceil(64)];
    for &p in &g.pred {
        if p & IREQ == 0 {
            bits[p as usize >> 6] &= !(1 << (p & 63));
        }
    }
    bits
}

/// Crude upper bounds of the costs on any path: all calcs and their copies' bytes, and per
/// message op at most four latencies, four overheads, one NIC gap and twice its bytes.
fn cost_bounds(g: &ExecGraph) -> (f64, [f64; NPARAM], f64) {
    let (mut calc, mut copy) = (0.0, 0.0);
    let mut a = [0.0; NPARAM];
    for v in 0..g.len() {
        if g.kind[v] == Kind::Calc {
            calc += g.val[v] as f64;
            copy += g.copy(v as u32) as f64;
        } else {
            let bytes = g.val[v] as f64;
            a[p::L] += 4.0;
            a[p::O_MSG] += 4.0;
            a[p::G_MSG] += 1.0;
            a[p::G_BYTE] += 2.0 * bytes;
            a[p::O_BYTE] += 2.0 * bytes;
        }
    }
    (calc, a, copy)
}

fn check_matched(g: &ExecGraph) -> Result<()> {
    if g.wildcards > 0 {
        return Err(match &g.source {
            Some(s) => Error::in_file(
                &s.path,
                format!(
                    "{} receives use ANY_SOURCE/ANY_TAG (-1): the engine and the LP need matched messages; `latitude simulate` matches them dynamically",
                    g.wildcards
                ),
            ),
            None => Error::new(format!("{} receives use ANY_SOURCE/ANY_TAG; the engine needs matched messages", g.wildcards)),
        });
    }
    Ok(())
}

/// Every op that `requires` a recv or a rendezvous send comes after its partner (the pair's
/// ends are computed at whichever of the two comes second; see graph/order.rs). An order
/// valid for every protocol (the builder and the .lgraph reader have checked it) needs no
/// scan.
fn rendezvous_ordered(g: &ExecGraph, model: &Model) -> bool {
    g.order_kind() == OrderKind::AnyProtocol
        || (0..g.len()).all(|v| {
            g.preds_raw(v as u32).iter().all(|&p| {
                let p = p as usize;
                p & IREQ as usize != 0 || !end_needs_partner(g, model, p) || (g.partner[p] as usize) < v
            })
        })
}

/// E(v) depends on the partner's start: v is a recv, or a rendezvous send.
pub(crate) fn end_needs_partner(g: &ExecGraph, model: &Model, v: usize) -> bool {
    g.partner[v] != NONE
        && match g.kind[v] {
            Kind::Recv => true,
            Kind::Send => !model.is_eager(g.val[v]),
            Kind::Calc => false,
        }
}

fn rendezvous_deadlock(g: &ExecGraph, cycle: &[u32], model: &Model) -> Error {
    let names: Vec<String> = cycle.iter().take(8).map(|&v| g.describe(v)).collect();
    let msg = format!(
        "deadlock under the rendezvous protocol (messages over {} bytes wait for their receiver): {}{}",
        model.eager_limit,
        names.join(" -> "),
        if cycle.len() > 8 { " -> ..." } else { "" }
    );
    match &g.source {
        Some(s) => Error::at(&s.path, s.line[cycle[0] as usize] as u64, msg),
        None => Error::new(msg),
    }
}

/// Previous send on the same (rank, NIC) in trace order; the trace order must agree with
/// the stored order (it does for traces and generated graphs).
fn nic_chains(g: &ExecGraph) -> Result<Vec<u32>> {
    let (off, ids) = g.by_rank();
    let mut prev = vec![NONE; g.len()];
    for r in 0..g.num_ranks as usize {
        let mut last: Vec<u32> = Vec::new(); // per NIC
        for &v in &ids[off[r]..off[r + 1]] {
            if g.kind[v as usize] != Kind::Send {
                continue;
            }
            let nic = g.nic(v) as usize;
            if last.len() <= nic {
                last.resize(nic + 1, NONE);
            }
            let p = last[nic];
            if p != NONE && p > v {
                return Err(Error::new(format!(
                    "NIC serialization needs each rank's sends in trace order, but {} can start before {}",
                    g.describe(v),
                    g.describe(p)
                )));
            }
            prev[v as usize] = p;
            last[nic] = v;
        }
    }
    Ok(prev)
}
