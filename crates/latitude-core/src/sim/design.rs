//! The default simulator: the cost rules of docs/model.md as a discrete-event simulation, plus the resource
//! contention the max-plus engine cannot express.
//!
//! An op becomes *ready* when its dependencies are met (requires: end, irequires: start);
//! dependencies carry time exactly as in the engine. Costs (θ in simulation units,
//! b(s) = max(s − 1, 0), s = the send's size):
//!
//! ```text
//! calc c:         CPU phase c                                   E = end of phase
//! send (start B): CPU phase o + b(s)·O (eager) / o (rendezvous); B = phase start
//!                 header leaves after o, arrives hdr = B + o + L (per (src, dst) FIFO)
//!                 eager data complete at a = hdr + b(s)·G;      eager E = end of phase
//! recv (post R):  matched dynamically at m = max(hdr, R) (first match in FIFO order)
//!   eager:        CPU phase o + b(s)·O from max(R, a)           E(v) = end of phase
//!   loggopsim:    CPU phase o from max(R, a);                   E(u) = m
//!   handshake:    read-request CPU phase o from m, then data after 2L + b(s)·G,
//!                 CPU phase o;                                  E(v) = its end, E(u) = E(v) + L
//! ```
//! Without contention this is exactly the engine (h = m, E(v) = h + 2o + 2L + b(s)·G, …).
//! Contention (what the engine does not model):
//! * CPU serialization (default on): each (rank, cpu) runs one phase at a time; a phase
//!   requested at t starts at max(t, CPU free), requests served in event order. Overlapping
//!   nonblocking ops therefore queue for the CPU (the engine lets them overlap).
//! * NIC serialization (with g > 0 or `nic_serialization`): a send starts no earlier than
//!   S(previous send on the NIC) + g + b(s)·G, in *start* order (the engine: trace order).
//! * OS noise extends CPU phases; latency jitter perturbs each L (see `noise.rs`).
//!
//! Events: READY (start an op), ARRIVE (a header reaches its receiver), RECV_CPU (a
//! receive's final phase requests the CPU). Ties are broken by (class, rank, local index):
//! arrivals first, then ready ops in program order, then receive phases — deterministic and
//! independent of the stored vertex order. A receive phase requested at the current
//! instant is served immediately instead of through the queue. Ops are addressed by their
//! program index (see `prep.rs`); the observer sees graph vertex ids.

use rustc_hash::FxHashMap;

use super::matching::{Found, Matcher, Side};
use super::noise::Noise;
use super::queue::{EventQueue, Key};
use super::record::{Cause, Obs, Slice, SliceKind};
use super::{stall_error, Outcome, PairCosts, SimGraph, Theta};
use crate::error::Result;
use crate::graph::{ExecGraph, Kind, NONE};
use crate::model::{b, Model, Protocol};

const ARRIVE: u8 = 0;
const READY: u8 = 1;
const RECV_CPU: u8 = 2;

pub(crate) struct Ctx<'a> {
    pub g: &'a ExecGraph,
    pub sg: &'a SimGraph,
    pub th: Theta,
    /// Latency and gap per pair of ranks (θ's L and G on a flat machine).
    pub pairs: &'a PairCosts,
    pub model: Model,
    pub cpu_serialization: bool,
    pub noise: &'a Noise<'a>,
}

impl Ctx<'_> {
    /// A message's latency, gap per byte and per-message overhead: the pair's L and G and
    /// θ's o, plus its protocol class's l_c and o_c (model.rs, `Classes`).
    #[inline]
    fn msg(&self, src: u32, dst: u32, size: u64) -> (u64, u64, u64) {
        let (lat, gap) = self.pairs.get(&self.th, src, dst);
        match self.model.class_of(size) {
            None => (lat, gap, self.th.o),
            Some(i) => (lat.saturating_add(self.th.cl[i]), gap, self.th.o.saturating_add(self.th.co[i])),
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Node {
    /// Max over satisfied dependencies of their start/end (the ready time once pending = 0).
    ready: u64,
    /// Dependencies not yet satisfied.
    pending: u32,
    /// For a recv: the matched send.
    matched: u32,
}

/// Per-run state, reused across runs (Monte Carlo samples) to avoid allocation.
#[derive(Default)]
pub(crate) struct State {
    q: EventQueue<Key>,
    /// Per op (program index), together so that releasing a dependent touches one line.
    node: Vec<Node>,
    cpu_free: Vec<u64>,
    nic_free: Vec<u64>,
    rank_end: Vec<u64>,
    m: Matcher,
    /// Last header time per (src, dst) channel, kept only with noise (MPI non-overtaking).
    channel: FxHashMap<u64, u64>,
    done: usize,
    events: u64,
    mismatches: u64,
}

impl State {
    fn reset(&mut self, ctx: &Ctx) {
        let sg = ctx.sg;
        let p = ctx.g.num_ranks() as usize;
        self.q.clear();
        self.node.clear();
        self.node.extend(sg.npred.iter().map(|&pending| Node { ready: 0, pending, matched: NONE }));
        self.cpu_free.clear();
        self.cpu_free.resize(p * sg.ncpu, 0);
        self.nic_free.clear();
        self.nic_free.resize(p * sg.nnic, 0);
        self.rank_end.clear();
        self.rank_end.resize(p, 0);
        self.m.reset(p);
        self.channel.clear();
        self.done = 0;
        self.events = 0;
        self.mismatches = 0;
    }
}

struct Sim<'c, 's, 'o, O: Obs> {
    c: &'c Ctx<'c>,
    sg: &'c SimGraph,
    st: &'s mut State,
    obs: &'o mut O,
    now: u64,
    /// Latest end so far and its cause (recording: where the critical path ends).
    last: (u64, Cause),
}

/// Run one simulation.
pub(crate) fn run<O: Obs>(ctx: &Ctx, st: &mut State, obs: &mut O) -> Result<Outcome> {
    st.reset(ctx);
    let mut sim = Sim { c: ctx, sg: ctx.sg, st, obs, now: 0, last: (0, Cause::NONE) };
    for &i in &ctx.sg.roots {
        sim.push(READY, i, 0);
    }
    while let Some(e) = sim.st.q.take() {
        sim.st.events += 1;
        sim.now = e.time();
        let (kind, i) = ((e.tie() >> 62) as u8, e.tie() as u32);
        match kind {
            READY => sim.ready(i),
            ARRIVE => sim.arrive(i),
            _ => sim.recv_cpu(i),
        }
    }
    if O::ON {
        sim.obs.set_last(sim.last.1);
    }
    let (st, sg) = (sim.st, ctx.sg);
    if st.done < ctx.g.len() {
        let ran = |v: u32| st.node[sg.index[v as usize] as usize].pending == 0;
        return Err(stall_error(ctx.g, sg, &st.m, &ran));
    }
    Ok(Outcome { rank_end: st.rank_end.clone(), events: st.events, mismatches: st.mismatches, unfinished: 0 })
}

impl<O: Obs> Sim<'_, '_, '_, O> {
    #[inline]
    fn push(&mut self, kind: u8, i: u32, t: u64) {
        // ARRIVE < READY < RECV_CPU, then program order; the key encodes the whole event
        self.st.q.push(Key::new(t, ((kind as u64) << 62) | i as u64));
    }

    /// Graph vertex id of op i (for the observer).
    #[inline]
    fn vx(&self, i: u32) -> u32 {
        self.sg.vertex(i)
    }

    /// Dependents of i released at t (its start or its end).
    #[inline]
    fn release(&mut self, i: u32, t: u64, at_start: bool) {
        let sg = self.sg;
        let list = if at_start { sg.on_start(i) } else { sg.on_end(i) };
        for &w in list {
            let node = &mut self.st.node[w as usize];
            let raised = t > node.ready;
            node.ready = node.ready.max(t);
            node.pending -= 1;
            let (ready, free) = (node.ready, node.pending == 0);
            if O::ON && raised {
                self.obs.ready_cause(sg.vertex(w), sg.vertex(i), at_start);
            }
            if free {
                self.push(READY, w, ready);
            }
        }
    }

    fn started(&mut self, i: u32, t: u64) {
        if O::ON {
            self.obs.started(self.vx(i), t);
        }
        self.release(i, t, true);
    }

    fn ended(&mut self, i: u32, t: u64, cause: Cause) {
        let r = self.sg.op(i).rank as usize;
        self.st.rank_end[r] = self.st.rank_end[r].max(t);
        self.st.done += 1;
        if O::ON {
            self.obs.ended(self.vx(i), t, cause);
            if t > self.last.0 || self.last.1 == Cause::NONE {
                self.last = (t, cause);
            }
        }
        self.release(i, t, false);
    }

    /// A CPU phase of `len` units for op i requested at t: (start, end, slice).
    fn phase(&mut self, i: u32, kind: SliceKind, t: u64, cause: Cause, len: u64) -> (u64, u64, u32) {
        let op = *self.sg.op(i);
        let rc = op.rank as usize * self.sg.ncpu + self.sg.cpu(i);
        let (t0, cause0) = if self.c.cpu_serialization && self.st.cpu_free[rc] > t { (self.st.cpu_free[rc], self.obs.cpu_cause(rc)) } else { (t, cause) };
        let noise = self.c.noise.os(op.rank, t0, len);
        let t1 = t0.saturating_add(len).saturating_add(noise);
        if self.c.cpu_serialization {
            self.st.cpu_free[rc] = t1;
        }
        let mut slice = 0;
        if O::ON {
            slice = self.obs.slice(Slice { v: self.vx(i), kind, rank: op.rank, cpu: self.sg.cpu_index(i), t0, t1, cause: cause0 });
            self.obs.set_cpu(rc, Cause::slice(slice));
        }
        (t0, t1, slice)
    }

    fn ready(&mut self, i: u32) {
        let op = *self.sg.op(i);
        match op.kind {
            Kind::Calc => {
                // a collective's join: the rest of its measured time, if drawn (noise.rs)
                // plus a collective's local copy, b(s)·C on the CPU (C: the copy parameter, else O; model.rs)
                let copy = b(self.sg.copy(i)).saturating_mul(self.c.th.cp);
                // and a collective call's end, K more when the model has it
                let call = if self.sg.call_end(i) { self.c.th.k } else { 0 };
                let len = self.c.noise.calc(i, op.val).saturating_add(self.c.noise.coll(i)).saturating_add(copy).saturating_add(call);
                let cause = if O::ON { Cause::ready(self.vx(i)) } else { Cause::NONE };
                let (t0, t1, slice) = self.phase(i, SliceKind::Calc, self.now, cause, len);
                self.started(i, t0);
                self.ended(i, t1, Cause::slice(slice));
            }
            Kind::Send => self.send(i),
            Kind::Recv => {
                let now = self.now;
                self.started(i, now);
                match self.st.m.take(op.rank, Side::Unexpected, op.peer, op.tag) {
                    Some(msg) => self.matched(msg.id, i, now, msg.t, msg.t2),
                    None => self.st.m.put(op.rank, Side::Posted, op.peer, op.tag, Found { id: i, t: now, t2: 0 }),
                }
            }
        }
    }

    fn send(&mut self, u: u32) {
        let (c, op) = (self.c, *self.sg.op(u));
        let th = &c.th;
        let (lat, gap, o) = c.msg(op.rank, op.peer, op.val);
        let eager = c.model.is_eager(op.val);
        let (mut t, mut cause) = (self.now, if O::ON { Cause::ready(self.vx(u)) } else { Cause::NONE });
        let rn = op.rank as usize * self.sg.nnic + self.sg.nic(u);
        if c.model.nic_serialization && self.st.nic_free[rn] > t {
            t = self.st.nic_free[rn];
            cause = self.obs.nic_cause(rn);
        }
        let per_byte = b(op.val).saturating_mul(th.ob);
        let len = if eager { o.saturating_add(per_byte) } else { o };
        let (t0, t1, slice) = self.phase(u, SliceKind::Send, t, cause, len);
        if c.model.nic_serialization {
            self.st.nic_free[rn] = t0.saturating_add(th.g).saturating_add(b(op.val).saturating_mul(gap));
            if O::ON {
                self.obs.set_nic(rn, Cause::gap(slice));
            }
        }
        // The header leaves once o (and any noise) is spent; O is charged after it.
        let depart = if eager { t1 - per_byte.min(t1 - t0) } else { t1 };
        let mut hdr = depart.saturating_add(c.noise.latency(u, 0, lat));
        if c.noise.is_active() {
            let ch = ((op.rank as u64) << 32) | op.peer as u64;
            let last = self.st.channel.entry(ch).or_insert(0);
            hdr = hdr.max(*last);
            *last = hdr;
        }
        self.started(u, t0);
        if eager {
            self.ended(u, t1, Cause::slice(slice));
        }
        self.push(ARRIVE, u, hdr);
    }

    fn arrive(&mut self, u: u32) {
        let (op, now) = (*self.sg.op(u), self.now);
        let (_, gap) = self.c.pairs.get(&self.c.th, op.rank, op.peer);
        let a = now.saturating_add(b(op.val).saturating_mul(gap));
        match self.st.m.take(op.peer, Side::Posted, op.rank, op.tag) {
            Some(recv) => self.matched(u, recv.id, recv.t, now, a),
            None => self.st.m.put(op.peer, Side::Unexpected, op.rank, op.tag, Found { id: u, t: now, t2: a }),
        }
    }

    /// Send u matched with recv v (posted at r, header at hdr, data at a) at `now`.
    fn matched(&mut self, u: u32, v: u32, r: u64, hdr: u64, a: u64) {
        let (c, now) = (self.c, self.now);
        self.st.node[v as usize].matched = u;
        if !self.sg.partner.is_empty() && self.sg.partner[u as usize] != v {
            self.st.mismatches += 1;
        }
        // Who determined the match: the message (on ties) or the post.
        let cause = match (O::ON, hdr >= r) {
            (false, _) => Cause::NONE,
            (true, true) => Cause::msg(self.vx(u)),
            (true, false) => Cause::ready(self.vx(v)),
        };
        let size = self.sg.op(u).val;
        if c.model.is_eager(size) || c.model.protocol == Protocol::LogGopSim {
            if !c.model.is_eager(size) {
                self.ended(u, now, cause);
            }
            if a > now {
                self.push(RECV_CPU, v, a);
            } else {
                self.recv_cpu(v);
            }
        } else {
            // handshake: read request, data back, then the receive overhead.
            let op = *self.sg.op(u);
            let (lat, gap, o) = c.msg(op.rank, op.peer, size);
            let (_, t1, _) = self.phase(v, SliceKind::ReadRequest, now, cause, o);
            let data = t1.saturating_add(c.noise.latency(u, 1, lat)).saturating_add(c.noise.latency(u, 2, lat)).saturating_add(b(size).saturating_mul(gap));
            self.push(RECV_CPU, v, data);
        }
    }

    /// The receive's final CPU phase, requested now.
    fn recv_cpu(&mut self, v: u32) {
        let c = self.c;
        let u = self.st.node[v as usize].matched;
        let size = self.sg.op(u).val;
        let eager = c.model.is_eager(size);
        let handshake = !eager && c.model.protocol == Protocol::Handshake;
        let op = *self.sg.op(u);
        let (lat, _, o) = c.msg(op.rank, op.peer, size);
        let len = if eager { o.saturating_add(b(size).saturating_mul(c.th.ob)) } else { o };
        let cause = match (O::ON, handshake, self.now > self.st.node[v as usize].ready) {
            (false, _, _) => Cause::NONE,
            (true, true, _) => Cause::data(self.vx(v)),
            (true, false, true) => Cause::msg(self.vx(u)),
            (true, false, false) => Cause::ready(self.vx(v)),
        };
        let (_, t1, slice) = self.phase(v, SliceKind::Recv, self.now, cause, len);
        if O::ON {
            self.obs.flow(self.vx(u), slice);
        }
        self.ended(v, t1, Cause::slice(slice));
        if handshake {
            let fin = t1.saturating_add(c.noise.latency(u, 3, lat));
            let cause = if O::ON { Cause::fin(self.vx(v)) } else { Cause::NONE };
            self.ended(u, fin, cause);
        }
    }
}
