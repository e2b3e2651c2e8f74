//! LogGOPSim-compatible simulation (`--loggopsim-compat`): LogGOPSim v1's update rules
//! (docs/reference/loggopsim.md) reproduced bit for bit, quirks included.
//!
//! Integer ns, `u64` wrapping arithmetic. State per rank: `nexto[cpu]`, `nextgs[nic]`,
//! `nextgr[nic]`; queues RQ/UQ; one event queue ordered by (time, ts) where `ts` is the
//! sequence number of an event's *first* insertion (re-insertions keep it, a new MSG event
//! gets a new one), as LogGOPSim's STRICT_ORDER.
//!
//! * Start: roots of rank 0, 1, … in order, each rank's sorted SEND < RECV < CALC (then by
//!   node offset), at time 0.
//! * After each event, nodes that became executable (all `requires` done, `irequires`
//!   started) are inserted per rank ascending, SEND < RECV < CALC then offset, at the time
//!   their own resources are free: CALC/RECV `nexto[cpu]`, SEND `max(nexto, nextgs)` — so
//!   dependencies carry no time across CPUs (quirk 2).
//! * CALC s at t: if `nexto ≤ t`: `nexto = t + s + noise`, started and done now; else
//!   re-insert at `nexto`.
//! * SEND at t: if `max(nexto, nextgs) ≤ t`: started; `nexto = t + o + (s−1)·O + noise`,
//!   `nextgs = t + g + (s−1)·G`; MSG at `t + o + L`; eager (s ≤ S): done now. Else re-insert.
//! * MSG at the receiver at t, with the **send's** cpu/nic indices (quirk 4): if
//!   `max(nexto, nextgr) ≤ t`: `nexto = t + o + noise + max((s−1)·O, (s−1)·G)` (G charged on
//!   the receiver's CPU, quirk 1), `nextgr = t + g + (s−1)·G`, whether or not a receive is
//!   posted; first match in RQ: rendezvous (message size > S) → the send is done and the
//!   sender's `nexto`/`nextgs` are raised to t; the recv is done. No match → UQ. Else
//!   re-insert at `max(nexto, nextgr, t)`.
//! * RECV at t: started; first match in UQ: if the **receive's** size > S the send is done
//!   and the sender's `nexto`/`nextgs` *at the receive's cpu/nic indices* are raised to t;
//!   the recv is done (no o: it was paid at arrival). No match → RQ.
//! * (s−1) wraps for s = 0 (quirk 3): (2⁶⁴−1)·X = −X mod 2⁶⁴.
//! * Rendezvous has no handshake (quirk 5): the payload leaves at issue.
//! * A rank's end time is the max over its CPUs of `nexto`. Like LogGOPSim, a run whose
//!   queues are empty reports its times even if some operations never ran (a rendezvous
//!   message received by a receive declared eager is never completed); their number is
//!   returned. Non-empty queues at the end are an error (LogGOPSim prints no times).
//! * Deviation: when a receive declared larger than S matches an *eager* message in the
//!   UQ, LogGOPSim marks the (already done) send done a second time, decrementing its
//!   dependents' counters twice; here a send completes once (the sender's clocks are still
//!   raised).

use super::matching::{Found, Matcher, Side};
use super::noise::Noise;
use super::queue::{Event, EventQueue};
use super::record::{Cause, Obs, Slice, SliceKind};
use super::{stall_error, Outcome, SimGraph, Theta};
use crate::error::Result;
use crate::graph::{ExecGraph, Kind};

const OP: u8 = 0;
const MSG: u8 = 1;

pub(crate) struct Ctx<'a> {
    pub g: &'a ExecGraph,
    pub sg: &'a SimGraph,
    /// In ns.
    pub th: Theta,
    pub eager_limit: u64,
    pub noise: &'a Noise<'a>,
}

/// Per-run state (program indices), reused across runs.
#[derive(Default)]
pub(crate) struct State {
    q: EventQueue,
    pending: Vec<u32>,
    nexto: Vec<u64>,
    nextgs: Vec<u64>,
    nextgr: Vec<u64>,
    m: Matcher,
    ts: u64,
    newly: Vec<u32>,
    /// Ops marked done (a send completes once, see the module comment).
    is_done: Vec<bool>,
    done: usize,
    events: u64,
    /// Cause of each pending event's time (recording only): OP events by op, MSG by send.
    op_cause: Vec<Cause>,
    msg_cause: Vec<Cause>,
}

/// LogGOPSim's type order for newly executable nodes.
fn type_rank(k: Kind) -> u8 {
    match k {
        Kind::Send => 0,
        Kind::Recv => 1,
        Kind::Calc => 2,
    }
}

#[inline]
fn times(s: u64, x: u64) -> u64 {
    s.wrapping_sub(1).wrapping_mul(x)
}

struct Sim<'c, 's, 'o, O: Obs> {
    c: &'c Ctx<'c>,
    sg: &'c SimGraph,
    st: &'s mut State,
    obs: &'o mut O,
}

pub(crate) fn run<O: Obs>(ctx: &Ctx, st: &mut State, obs: &mut O) -> Result<Outcome> {
    let (g, sg) = (ctx.g, ctx.sg);
    let (p, n) = (g.num_ranks() as usize, g.len());
    st.q.clear();
    st.pending.clear();
    st.pending.extend_from_slice(&sg.npred);
    for v in [&mut st.nexto, &mut st.nextgs, &mut st.nextgr] {
        v.clear();
    }
    st.nexto.resize(p * sg.ncpu, 0);
    st.nextgs.resize(p * sg.nnic, 0);
    st.nextgr.resize(p * sg.nnic, 0);
    st.m.reset(p);
    (st.ts, st.done, st.events) = (0, 0, 0);
    st.newly.clear();
    st.is_done.clear();
    st.is_done.resize(n, false);
    if O::ON {
        st.op_cause = vec![Cause::NONE; n];
        st.msg_cause = vec![Cause::NONE; n];
    }
    let mut sim = Sim { c: ctx, sg, st, obs };
    let mut roots = sg.roots.clone();
    roots.sort_by_key(|&i| (sg.op(i).rank, type_rank(sg.op(i).kind), i));
    for i in roots {
        sim.push_new(OP, i, 0);
    }
    while let Some(e) = sim.st.q.take() {
        sim.st.events += 1;
        match (e.kind, sg.op(e.v).kind) {
            (MSG, _) => sim.msg(e),
            (_, Kind::Calc) => sim.calc(e),
            (_, Kind::Send) => sim.send(e),
            (_, Kind::Recv) => sim.recv(e),
        }
        sim.flush();
    }
    let st = sim.st;
    if !st.m.is_empty() {
        let ran = |v: u32| st.pending[sg.index[v as usize] as usize] == 0;
        return Err(stall_error(g, sg, &st.m, &ran));
    }
    let rank_end: Vec<u64> = (0..p).map(|r| *st.nexto[r * sg.ncpu..(r + 1) * sg.ncpu].iter().max().unwrap()).collect();
    if O::ON {
        let r = (0..p).max_by_key(|&r| (rank_end[r], std::cmp::Reverse(r))).unwrap_or(0);
        let c = (0..sg.ncpu).max_by_key(|&c| (st.nexto[r * sg.ncpu + c], std::cmp::Reverse(c))).unwrap_or(0);
        sim.obs.set_last(sim.obs.cpu_cause(r * sg.ncpu + c));
    }
    Ok(Outcome { rank_end, events: st.events, mismatches: 0, unfinished: (n - st.done) as u64 })
}

impl<O: Obs> Sim<'_, '_, '_, O> {
    fn push_new(&mut self, kind: u8, i: u32, t: u64) {
        let tie = self.st.ts;
        self.st.ts += 1;
        self.st.q.push(Event { time: t, tie, v: i, kind });
    }

    /// Re-insert an event at t keeping its sequence number.
    fn reinsert(&mut self, e: Event, t: u64, cause: Cause) {
        if O::ON {
            let slot = if e.kind == MSG { &mut self.st.msg_cause } else { &mut self.st.op_cause };
            slot[e.v as usize] = cause;
        }
        self.st.q.push(Event { time: t, ..e });
    }

    #[inline]
    fn vx(&self, i: u32) -> u32 {
        self.sg.vertex(i)
    }
    fn rc(&self, rank: u32, cpu: usize) -> usize {
        rank as usize * self.sg.ncpu + cpu
    }
    fn rn(&self, rank: u32, nic: usize) -> usize {
        rank as usize * self.sg.nnic + nic
    }

    fn mark(&mut self, i: u32, done: bool) {
        let sg = self.sg;
        if done {
            if self.st.is_done[i as usize] {
                return;
            }
            self.st.is_done[i as usize] = true;
            self.st.done += 1;
        }
        let list = if done { sg.on_end(i) } else { sg.on_start(i) };
        for &w in list {
            self.st.pending[w as usize] -= 1;
            if self.st.pending[w as usize] == 0 {
                self.st.newly.push(w);
            }
        }
    }

    /// Insert the nodes that became executable during the last event: ranks ascending,
    /// SEND < RECV < CALC, then node offset (program index order within a rank).
    fn flush(&mut self) {
        if self.st.newly.is_empty() {
            return;
        }
        let sg = self.sg;
        let mut newly = std::mem::take(&mut self.st.newly);
        newly.sort_unstable_by_key(|&i| (sg.op(i).rank, type_rank(sg.op(i).kind), i));
        for &i in &newly {
            let op = sg.op(i);
            let rc = self.rc(op.rank, sg.cpu(i));
            let (mut t, mut cause) = (self.st.nexto[rc], self.obs.cpu_cause(rc));
            if op.kind == Kind::Send {
                let rn = self.rn(op.rank, sg.nic(i));
                if self.st.nextgs[rn] > t {
                    (t, cause) = (self.st.nextgs[rn], self.obs.nic_cause(rn));
                }
            }
            if O::ON {
                self.st.op_cause[i as usize] = cause;
            }
            self.push_new(OP, i, t);
        }
        newly.clear();
        self.st.newly = newly;
    }

    fn calc(&mut self, e: Event) {
        let (i, t) = (e.v, e.time);
        let op = *self.sg.op(i);
        let rc = self.rc(op.rank, self.sg.cpu(i));
        if self.st.nexto[rc] > t {
            let (nt, cause) = (self.st.nexto[rc], self.obs.cpu_cause(rc));
            return self.reinsert(e, nt, cause);
        }
        // a collective's local copy occupies the CPU like a calc of b(s)·C (C, else O)
        let copy = crate::model::b(self.sg.copy(i)).saturating_mul(self.c.th.cp);
        let call = if self.sg.call_end(i) { self.c.th.k } else { 0 }; // a call's K (model.rs)
        let s = self.c.noise.calc(i, op.val).saturating_add(self.c.noise.coll(i)).saturating_add(copy).saturating_add(call);
        let noise = self.c.noise.os(op.rank, t, s);
        let end = t.wrapping_add(s).wrapping_add(noise);
        self.st.nexto[rc] = end;
        if O::ON {
            let v = self.vx(i);
            let k = self.obs.slice(Slice {
                v,
                kind: SliceKind::Calc,
                rank: op.rank,
                cpu: self.sg.cpu_index(i),
                t0: t,
                t1: end,
                cause: self.st.op_cause[i as usize],
            });
            self.obs.set_cpu(rc, Cause::slice(k));
            self.obs.started(v, t);
            self.obs.ended(v, end, Cause::slice(k));
        }
        self.mark(i, false);
        self.mark(i, true);
    }

    fn send(&mut self, e: Event) {
        let (th, t, u) = (&self.c.th, e.time, e.v);
        let op = *self.sg.op(u);
        let (rc, rn) = (self.rc(op.rank, self.sg.cpu(u)), self.rn(op.rank, self.sg.nic(u)));
        if self.st.nexto[rc].max(self.st.nextgs[rn]) > t {
            let (nt, cause) = if self.st.nexto[rc] >= self.st.nextgs[rn] {
                (self.st.nexto[rc], self.obs.cpu_cause(rc))
            } else {
                (self.st.nextgs[rn], self.obs.nic_cause(rn))
            };
            return self.reinsert(e, nt, cause);
        }
        self.mark(u, false);
        let noise = self.c.noise.os(op.rank, t, th.o);
        let end = t.wrapping_add(th.o).wrapping_add(times(op.val, th.ob)).wrapping_add(noise);
        self.st.nexto[rc] = end;
        self.st.nextgs[rn] = t.wrapping_add(th.g).wrapping_add(times(op.val, th.gb));
        let l = self.c.noise.latency(u, 0, th.l);
        self.push_new(MSG, u, t.wrapping_add(th.o).wrapping_add(l));
        let eager = op.val <= self.c.eager_limit;
        if O::ON {
            let v = self.vx(u);
            let k = self.obs.slice(Slice {
                v,
                kind: SliceKind::Send,
                rank: op.rank,
                cpu: self.sg.cpu_index(u),
                t0: t,
                t1: end,
                cause: self.st.op_cause[u as usize],
            });
            self.obs.set_cpu(rc, Cause::slice(k));
            self.obs.set_nic(rn, Cause::gap(k));
            self.obs.started(v, t);
            self.st.msg_cause[u as usize] = Cause::msg(v);
            if eager {
                self.obs.ended(v, end, Cause::slice(k));
            }
        }
        if eager {
            self.mark(u, true);
        }
    }

    /// A rendezvous send u completes at t (the match); its rank's clocks at the given
    /// cpu/nic indices are raised to t.
    fn rendezvous_done(&mut self, u: u32, cpu: usize, nic: usize, t: u64, cause: Cause) {
        let x = self.sg.op(u).rank;
        let (rc, rn) = (self.rc(x, cpu), self.rn(x, nic));
        self.mark(u, true);
        if self.st.nexto[rc] < t {
            self.st.nexto[rc] = t;
            self.obs.set_cpu(rc, cause);
        }
        if self.st.nextgs[rn] < t {
            self.st.nextgs[rn] = t;
            self.obs.set_nic(rn, cause);
        }
        if O::ON {
            self.obs.ended(self.vx(u), t, cause);
        }
    }

    fn recv(&mut self, e: Event) {
        let (i, t) = (e.v, e.time);
        let op = *self.sg.op(i);
        self.mark(i, false);
        if O::ON {
            self.obs.started(self.vx(i), t);
        }
        match self.st.m.take(op.rank, Side::Unexpected, op.peer, op.tag) {
            Some(msg) => {
                let cause = if O::ON { self.st.op_cause[i as usize] } else { Cause::NONE };
                if op.val > self.c.eager_limit {
                    // quirk: the receive's cpu/nic indices are used on the sender
                    self.rendezvous_done(msg.id, self.sg.cpu(i), self.sg.nic(i), t, cause);
                }
                self.mark(i, true);
                if O::ON {
                    self.obs.ended(self.vx(i), t, cause);
                }
            }
            None => self.st.m.put(op.rank, Side::Posted, op.peer, op.tag, Found { id: i, t, t2: 0 }),
        }
    }

    fn msg(&mut self, e: Event) {
        let (th, t, u) = (&self.c.th, e.time, e.v);
        let op = *self.sg.op(u);
        let h = op.peer; // the receiver; the send's cpu/nic indices are used there
        let (rc, rn) = (self.rc(h, self.sg.cpu(u)), self.rn(h, self.sg.nic(u)));
        if self.st.nexto[rc].max(self.st.nextgr[rn]) > t {
            let (nt, cause) = if self.st.nexto[rc] >= self.st.nextgr[rn] {
                (self.st.nexto[rc], self.obs.cpu_cause(rc))
            } else {
                (self.st.nextgr[rn], self.obs.nicr_cause(rn))
            };
            return self.reinsert(e, nt.max(t), cause);
        }
        let noise = self.c.noise.os(h, t, th.o);
        let per_byte = times(op.val, th.ob).max(times(op.val, th.gb));
        let end = t.wrapping_add(th.o).wrapping_add(noise).wrapping_add(per_byte);
        self.st.nexto[rc] = end;
        self.st.nextgr[rn] = t.wrapping_add(th.g).wrapping_add(times(op.val, th.gb));
        let mut cause = Cause::NONE;
        if O::ON {
            let k = self.obs.slice(Slice {
                v: self.vx(u),
                kind: SliceKind::Recv,
                rank: h,
                cpu: self.sg.cpu_index(u),
                t0: t,
                t1: end,
                cause: self.st.msg_cause[u as usize],
            });
            self.obs.set_cpu(rc, Cause::slice(k));
            self.obs.set_nicr(rn, Cause::gap(k));
            self.obs.flow(self.vx(u), k);
            cause = Cause::start(k);
        }
        match self.st.m.take(h, Side::Posted, op.rank, op.tag) {
            Some(recv) => {
                if op.val > self.c.eager_limit {
                    self.rendezvous_done(u, self.sg.cpu(u), self.sg.nic(u), t, cause);
                }
                self.mark(recv.id, true);
                if O::ON {
                    self.obs.ended(self.vx(recv.id), t, cause);
                }
            }
            None => self.st.m.put(h, Side::Unexpected, op.rank, op.tag, Found { id: u, t, t2: 0 }),
        }
    }
}
