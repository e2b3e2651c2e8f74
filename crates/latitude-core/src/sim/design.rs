//! The default simulator: DESIGN §4 as a discrete-event simulation, plus the resource
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
//! independent of the stored vertex order. A phase requested at the current instant is
//! served immediately instead of through the queue.

use rustc_hash::FxHashMap;

use super::matching::{Found, Matcher, Side};
use super::noise::Noise;
use super::queue::{Event, EventQueue};
use super::record::{Cause, Obs, SliceKind};
use super::{stall_error, Outcome, SimGraph, Theta};
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
    pub model: Model,
    pub cpu_serialization: bool,
    pub noise: &'a Noise<'a>,
}

/// Per-run state, reused across runs (Monte Carlo samples) to avoid allocation.
#[derive(Default)]
pub(crate) struct State {
    q: EventQueue,
    pending: Vec<u32>,
    ready: Vec<u64>,
    /// recv -> matched send
    matched: Vec<u32>,
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
        let (g, sg) = (ctx.g, ctx.sg);
        let p = g.num_ranks() as usize;
        self.q.clear();
        self.pending.clear();
        self.pending.extend_from_slice(&sg.npred);
        self.ready.clear();
        self.ready.resize(g.len(), 0);
        self.matched.clear();
        self.matched.resize(g.len(), NONE);
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
    st: &'s mut State,
    obs: &'o mut O,
    now: u64,
    /// Latest end so far and its cause (recording: where the critical path ends).
    last: (u64, Cause),
}

/// Run one simulation.
pub(crate) fn run<O: Obs>(ctx: &Ctx, st: &mut State, obs: &mut O) -> Result<Outcome> {
    st.reset(ctx);
    let mut sim = Sim { c: ctx, st, obs, now: 0, last: (0, Cause::NONE) };
    for &v in &ctx.sg.roots {
        sim.push(READY, v, 0);
    }
    while let Some(e) = sim.st.q.pop() {
        sim.st.events += 1;
        sim.now = e.time;
        match e.kind {
            READY => sim.ready(e.v),
            ARRIVE => sim.arrive(e.v),
            _ => sim.recv_cpu(e.v),
        }
    }
    if O::ON {
        sim.obs.set_last(sim.last.1);
    }
    let st = sim.st;
    if st.done < ctx.g.len() {
        return Err(stall_error(ctx.g, &st.m, &|v| st.pending[v as usize] == 0));
    }
    Ok(Outcome { rank_end: st.rank_end.clone(), events: st.events, mismatches: st.mismatches, unfinished: 0 })
}

impl<O: Obs> Sim<'_, '_, '_, O> {
    #[inline]
    fn push(&mut self, kind: u8, v: u32, t: u64) {
        let g = self.c.g;
        let class = kind as u64; // ARRIVE < READY < RECV_CPU
        let tie = (class << 62) | ((g.rank(v) as u64) << 32) | g.local(v) as u64;
        self.st.q.push(Event { time: t, tie, v, kind });
    }

    /// Dependents of v released at t (its start or its end).
    #[inline]
    fn release(&mut self, v: u32, t: u64, at_start: bool) {
        let sg = self.c.sg;
        let list = if at_start { sg.on_start(v) } else { sg.on_end(v) };
        for &w in list {
            let wi = w as usize;
            if t > self.st.ready[wi] {
                self.st.ready[wi] = t;
                if O::ON {
                    self.obs.ready_cause(w, v, at_start);
                }
            }
            self.st.pending[wi] -= 1;
            if self.st.pending[wi] == 0 {
                let r = self.st.ready[wi];
                self.push(READY, w, r);
            }
        }
    }

    fn started(&mut self, v: u32, t: u64) {
        if O::ON {
            self.obs.started(v, t);
        }
        self.release(v, t, true);
    }

    fn ended(&mut self, v: u32, t: u64, cause: Cause) {
        let r = self.c.g.rank(v) as usize;
        self.st.rank_end[r] = self.st.rank_end[r].max(t);
        self.st.done += 1;
        if O::ON {
            self.obs.ended(v, t, cause);
            if t > self.last.0 || self.last.1 == Cause::NONE {
                self.last = (t, cause);
            }
        }
        self.release(v, t, false);
    }

    /// A CPU phase of `len` units for op v requested at t: (start, end, slice).
    fn phase(&mut self, v: u32, kind: SliceKind, t: u64, cause: Cause, len: u64) -> (u64, u64, u32) {
        let g = self.c.g;
        let (rank, cpu) = (g.rank(v), g.cpu(v));
        let rc = rank as usize * self.c.sg.ncpu + cpu as usize;
        let (t0, cause0) = if self.c.cpu_serialization && self.st.cpu_free[rc] > t {
            (self.st.cpu_free[rc], self.obs.cpu_cause(rc))
        } else {
            (t, cause)
        };
        let noise = self.c.noise.os(rank, t0, len);
        let t1 = t0.saturating_add(len).saturating_add(noise);
        if self.c.cpu_serialization {
            self.st.cpu_free[rc] = t1;
        }
        let slice = self.obs.slice(v, kind, rank, cpu, t0, t1, cause0);
        if O::ON {
            self.obs.set_cpu(rc, Cause::slice(slice));
        }
        (t0, t1, slice)
    }

    fn ready(&mut self, v: u32) {
        match self.c.g.kind(v) {
            Kind::Calc => {
                let len = self.c.noise.calc(v, self.c.g.val(v));
                let (t0, t1, slice) = self.phase(v, SliceKind::Calc, self.now, Cause::ready(v), len);
                self.started(v, t0);
                self.ended(v, t1, Cause::slice(slice));
            }
            Kind::Send => self.send(v),
            Kind::Recv => {
                let (g, now) = (self.c.g, self.now);
                self.started(v, now);
                let (rank, src, tag) = (g.rank(v), g.peer(v), g.tag(v));
                match self.st.m.take(rank, Side::Unexpected, src, tag) {
                    Some(msg) => self.matched(msg.id, v, now, msg.t, msg.t2),
                    None => self.st.m.put(rank, Side::Posted, src, tag, Found { id: v, t: now, t2: 0 }),
                }
            }
        }
    }

    fn send(&mut self, u: u32) {
        let (c, g) = (self.c, self.c.g);
        let th = &c.th;
        let size = g.val(u);
        let eager = c.model.is_eager(size);
        let (mut t, mut cause) = (self.now, Cause::ready(u));
        let rn = g.rank(u) as usize * c.sg.nnic + g.nic(u) as usize;
        if c.model.nic_serialization && self.st.nic_free[rn] > t {
            t = self.st.nic_free[rn];
            cause = self.obs.nic_cause(rn);
        }
        let len = if eager { th.o.saturating_add(b(size).saturating_mul(th.ob)) } else { th.o };
        let (t0, t1, slice) = self.phase(u, SliceKind::Send, t, cause, len);
        if c.model.nic_serialization {
            self.st.nic_free[rn] = t0.saturating_add(th.g).saturating_add(b(size).saturating_mul(th.gb));
            if O::ON {
                self.obs.set_nic(rn, Cause::gap(slice));
            }
        }
        // The header leaves once o (and any noise) is spent; O is charged after it.
        let depart = if eager { t1 - b(size).saturating_mul(th.ob).min(t1 - t0) } else { t1 };
        let mut hdr = depart.saturating_add(c.noise.latency(u, 0, th.l));
        if c.noise.is_active() {
            let ch = ((g.rank(u) as u64) << 32) | g.peer(u) as u64;
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
        let (g, now) = (self.c.g, self.now);
        let (dst, src, tag) = (g.peer(u), g.rank(u), g.tag(u));
        let size = g.val(u);
        let a = now.saturating_add(b(size).saturating_mul(self.c.th.gb));
        match self.st.m.take(dst, Side::Posted, src, tag) {
            Some(recv) => self.matched(u, recv.id, recv.t, now, a),
            None => self.st.m.put(dst, Side::Unexpected, src, tag, Found { id: u, t: now, t2: a }),
        }
    }

    /// Send u matched with recv v (posted at r, header at hdr, data at a) at `now`.
    fn matched(&mut self, u: u32, v: u32, r: u64, hdr: u64, a: u64) {
        let (c, now) = (self.c, self.now);
        self.st.matched[v as usize] = u;
        if c.sg.static_matching && c.g.partner(u) != v {
            self.st.mismatches += 1;
        }
        // Who determined the match: the message (ties) or the post.
        let by_msg = hdr >= r;
        let size = c.g.val(u);
        if c.model.is_eager(size) || c.model.protocol == Protocol::LogGopSim {
            if !c.model.is_eager(size) {
                let cause = if by_msg { Cause::msg(u) } else { Cause::ready(v) };
                self.ended(u, now, cause);
            }
            if a > now {
                self.push(RECV_CPU, v, a);
            } else {
                self.recv_cpu(v);
            }
        } else {
            // handshake: read request, data back, then the receive overhead.
            let cause = if by_msg { Cause::msg(u) } else { Cause::ready(v) };
            let (_, t1, _) = self.phase(v, SliceKind::ReadRequest, now, cause, c.th.o);
            let th = &c.th;
            let data = t1
                .saturating_add(c.noise.latency(u, 1, th.l))
                .saturating_add(c.noise.latency(u, 2, th.l))
                .saturating_add(b(size).saturating_mul(th.gb));
            self.push(RECV_CPU, v, data);
        }
    }

    /// The receive's final CPU phase, requested now.
    fn recv_cpu(&mut self, v: u32) {
        let c = self.c;
        let u = self.st.matched[v as usize];
        let size = c.g.val(u);
        let eager = c.model.is_eager(size);
        let handshake = !eager && c.model.protocol == Protocol::Handshake;
        let len = if eager { c.th.o.saturating_add(b(size).saturating_mul(c.th.ob)) } else { c.th.o };
        let cause = if handshake {
            Cause::data(v)
        } else if self.now > self.st_post_time(v) {
            Cause::msg(u)
        } else {
            Cause::ready(v)
        };
        let (_, t1, slice) = self.phase(v, SliceKind::Recv, self.now, cause, len);
        if O::ON {
            self.obs.flow(u, slice);
        }
        self.ended(v, t1, Cause::slice(slice));
        if handshake {
            let fin = t1.saturating_add(c.noise.latency(u, 3, c.th.l));
            self.ended(u, fin, Cause::fin(v));
        }
    }

    /// Post time of recv v (its ready time).
    fn st_post_time(&self, v: u32) -> u64 {
        self.st.ready[v as usize]
    }
}
