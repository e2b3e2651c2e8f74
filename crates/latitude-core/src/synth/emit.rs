//! Per-rank emission with the structure `latitude schedule` gives a traced run (Schedgen's
//! LocOp, docs/schedule.md), so a generated graph and the scheduled trace of `apps/motifs`
//! running the same job have the same ops and edges:
//!
//! * every MPI call is preceded by one calc: the computation since the previous call (the
//!   compute motifs' time accumulates into it, zero-length calcs included);
//! * blocking send/recv: the op requires that calc; the next calc requires the op;
//! * Isend/Irecv: the op requires that calc; the next calc requires the same calc (the
//!   computation continues once the op is issued);
//! * Waitall: a zero-length calc requiring every completed op, chained like a blocking op;
//! * collective: the algorithm's start ops require the calc, a zero-length `collop`
//!   requires its end ops, the next calc requires `collop`; each `collop` is marked as its
//!   rank's end of the call (graph/colls.rs), so the call cost K prices it as in a trace;
//! * the end of the program: a final calc (`MPI_Finalize`).
//!
//! Each rank's ops are numbered in program order with the calc before its call (the trace
//! converter numbers a call's ops before that calc; the edges are the same).
//!
//! Order: ops are staged per *instance* — one repeat of a motif on all its ranks, whose
//! messages all pair inside it — then appended to the builder in an order that is already
//! valid for the engine (graph/order.rs `AnyProtocol`): each rank's ops in program order, an
//! op only after the partners of the message ops it requires. Instance by instance, with
//! ranks woken as soon as what they wait for is emitted, the order follows the program in
//! time with a small live frontier; `GraphBuilder::finish_in_order` then verifies it and
//! keeps it (no global ordering or renumbering of 10⁸ vertices).

use super::sink::{CallInfo, Instance, Sink};
use crate::collectives::{POp, Prog};
use crate::graph::{Dep, GraphBuilder, Kind, Op, IREQ, NONE};

type R<T> = Result<T, String>;

/// One rank's state between calls.
#[derive(Clone, Debug, Default)]
struct Lane {
    /// Computation since the last call (ns).
    pending: u64,
    /// Ops the next calc requires.
    prev: Vec<u32>,
    /// The rank has emitted anything (it gets a final calc).
    active: bool,
    /// Staged ops of the current instance, in program order.
    staged: Vec<u32>,
}

pub struct Emitter {
    sink: Sink,
    lanes: Vec<Lane>,
    /// The instance being staged; ids handed out are `st.base + index`.
    st: Instance,
    x: Scratch,
}

/// Buffers reused by every collective and flush (fresh ones would cost page faults).
#[derive(Default)]
struct Scratch {
    start: Vec<u32>,
    end: Vec<u32>,
    /// A collective program's dependencies grouped by dependent (CSR).
    dep_off: Vec<u32>,
    deps: Vec<u32>,
    streams: crate::graph::matching::Streams,
    emitted: Vec<bool>,
    head: Vec<u32>,
    waiting_on: Vec<u32>,
    next_waiter: Vec<u32>,
    wake: Vec<u32>,
}

impl Emitter {
    pub fn new(world: u32) -> Emitter {
        let sink = Sink::spawn(GraphBuilder::new(world));
        Emitter { sink, lanes: vec![Lane::default(); world as usize], st: Instance::new(0), x: Scratch::default() }
    }

    /// Ops emitted so far (staged included).
    pub fn emitted(&self) -> u64 {
        self.st.base as u64 + self.st.kind.len() as u64
    }

    /// Stage an op of `rank` after `deps`; returns its (provisional) id.
    fn stage(&mut self, rank: u32, op: Op, deps: &[u32]) -> u32 {
        let st = &mut self.st;
        let i = st.kind.len() as u32;
        st.kind.push(op.kind);
        st.rank.push(rank);
        st.val.push(op.val);
        st.peer.push(op.peer);
        st.tag.push(op.tag);
        st.deps.extend_from_slice(deps);
        st.dep_off.push(st.deps.len() as u32);
        let lane = &mut self.lanes[rank as usize];
        if lane.staged.is_empty() {
            st.touched.push(rank);
        }
        lane.staged.push(i);
        lane.active = true;
        st.base + i
    }

    /// Computation on `rank` (merges with the next call's preceding calc).
    pub fn compute(&mut self, rank: u32, ns: u64) {
        let lane = &mut self.lanes[rank as usize];
        lane.pending = lane.pending.saturating_add(ns);
        lane.active = true;
    }

    /// The calc before a call: the pending computation, after the previous call.
    fn gap(&mut self, rank: u32) -> u32 {
        let lane = &mut self.lanes[rank as usize];
        let ns = std::mem::take(&mut lane.pending);
        let prev = std::mem::take(&mut lane.prev);
        let c = self.stage(rank, Op::calc(ns), &prev);
        self.lanes[rank as usize].prev = prev; // keep the allocation
        c
    }

    fn set_prev(&mut self, rank: u32, v: u32) {
        let lane = &mut self.lanes[rank as usize];
        lane.prev.clear();
        lane.prev.push(v);
    }

    /// Blocking MPI_Send / MPI_Recv.
    pub fn blocking(&mut self, rank: u32, op: Op) {
        let c = self.gap(rank);
        let v = self.stage(rank, op, &[c]);
        self.set_prev(rank, v);
    }

    /// MPI_Isend / MPI_Irecv; returns the op for a later [`Emitter::waitall`].
    pub fn nonblocking(&mut self, rank: u32, op: Op) -> u32 {
        let c = self.gap(rank);
        let v = self.stage(rank, op, &[c]);
        self.set_prev(rank, c);
        v
    }

    /// MPI_Waitall on `ops` (nothing if empty: the call's time stays computation).
    pub fn waitall(&mut self, rank: u32, ops: &[u32]) {
        if ops.is_empty() {
            return;
        }
        let c = self.gap(rank);
        let mut deps = ops.to_vec();
        deps.push(c);
        let w = self.stage(rank, Op::calc(0), &deps);
        self.set_prev(rank, w);
    }

    /// A blocking collective: `prog` is comm rank `me`'s part, `members` the world ranks of
    /// the communicator, `tag` the instance's tag (the mapping of `collectives::place`).
    pub fn collective(&mut self, prog: &Prog, members: &[u32], me: u32, tag: u32) {
        let rank = members[me as usize];
        let c = self.gap(rank);
        let first = self.st.base + self.st.kind.len() as u32;
        let mut x = std::mem::take(&mut self.x);
        prog.boundary(&mut x.start, &mut x.end);
        // Dependencies by dependent: program deps, and the start ops' calc.
        let n = prog.ops.len();
        x.dep_off.clear();
        x.dep_off.resize(n + 2, 0);
        for &(a, _, _) in &prog.deps {
            x.dep_off[a as usize + 2] += 1;
        }
        for &s in &x.start {
            x.dep_off[s as usize + 2] += 1;
        }
        for i in 2..n + 2 {
            x.dep_off[i] += x.dep_off[i - 1];
        }
        x.deps.clear();
        x.deps.resize(prog.deps.len() + x.start.len(), 0);
        for &(a, p, d) in &prog.deps {
            let slot = &mut x.dep_off[a as usize + 1];
            x.deps[*slot as usize] = (first + p) | if d == Dep::Irequires { IREQ } else { 0 };
            *slot += 1;
        }
        for &s in &x.start {
            let slot = &mut x.dep_off[s as usize + 1];
            x.deps[*slot as usize] = c;
            *slot += 1;
        }
        for (i, op) in prog.ops.iter().enumerate() {
            let op = match *op {
                POp::Send { peer, bytes } => Op::send(bytes, members[peer as usize], tag),
                POp::Recv { peer, bytes } => Op::recv(bytes, members[peer as usize], tag),
                POp::Calc { ns } => Op::calc(ns),
                POp::Copy { bytes } => Op::copy(bytes),
            };
            self.stage(rank, op, &x.deps[x.dep_off[i] as usize..x.dep_off[i + 1] as usize]);
        }
        x.deps.clear();
        x.deps.extend(x.end.iter().map(|&e| first + e));
        if x.start.is_empty() {
            x.deps.push(c); // no messages on this rank: keep the chain
        }
        let collop = self.stage(rank, Op::calc(0), &x.deps);
        self.st.joins.push(collop - self.st.base);
        self.set_prev(rank, collop);
        self.x = x;
    }

    /// The call the staged collective instance makes (its members' joins are marked with it).
    pub(crate) fn call(&mut self, call: CallInfo) {
        self.st.call = Some(call);
    }

    /// Append the staged instance to the builder (see the module comment).
    pub fn flush(&mut self) -> R<()> {
        let n = self.st.kind.len();
        if n == 0 {
            return Ok(());
        }
        let mut x = std::mem::take(&mut self.x);
        let res = self.flush_with(&mut x);
        self.x = x;
        res
    }

    /// Order the instance, give its ops their final ids, point the ranks' next calcs at
    /// them, and hand it to the sink.
    fn flush_with(&mut self, x: &mut Scratch) -> R<()> {
        self.instance_order(x)?;
        let st = &mut self.st;
        std::mem::swap(&mut st.partner, &mut x.streams.partner);
        st.id.clear();
        st.id.resize(st.len(), NONE);
        for (k, &i) in st.order.iter().enumerate() {
            st.id[i as usize] = st.base + k as u32;
        }
        for &r in &st.touched {
            let lane = &mut self.lanes[r as usize];
            lane.staged.clear();
            for p in lane.prev.iter_mut() {
                *p = st.map(*p);
            }
        }
        let next = st.base.checked_add(st.len() as u32).ok_or("more than 2^32 operations")?;
        let st = std::mem::take(&mut self.st); // a placeholder that allocates nothing
        self.st = self.sink.send(st, next)?;
        Ok(())
    }

    /// Staged indices in emission order (into `st.order`): ranks in first-use order, each
    /// emitting its ops in program order while every message op they require has its
    /// partner emitted; a rank that must wait is woken when that partner is emitted. If some
    /// rank cannot finish (not expected from the motifs), the staged order is used and
    /// `finish_in_order` falls back to ordering the whole graph.
    fn instance_order(&mut self, x: &mut Scratch) -> R<()> {
        let st = &mut self.st;
        let n = st.kind.len();
        let m = crate::graph::matching::Messages { kind: &st.kind, rank: &st.rank, peer: &st.peer, tag: &st.tag, val: &st.val };
        x.streams.run(&m).map_err(|(_, msg)| format!("generated instance: {msg}"))?;
        let partner = &x.streams.partner;
        let ranks = st.touched.len();
        let (emitted, head, waiting_on, next_waiter, wake) = (&mut x.emitted, &mut x.head, &mut x.waiting_on, &mut x.next_waiter, &mut x.wake);
        let order = &mut st.order;
        emitted.clear();
        emitted.resize(n, false);
        head.clear();
        head.resize(ranks, 0);
        // Ranks waiting for an op to be emitted: first waiter per op, then a chain by slot.
        waiting_on.clear();
        waiting_on.resize(n, NONE);
        next_waiter.clear();
        next_waiter.resize(ranks, NONE);
        order.clear();
        let blocker = |i: usize, emitted: &[bool]| -> Option<usize> {
            st.deps[st.dep_off[i] as usize..st.dep_off[i + 1] as usize].iter().find_map(|&d| {
                let v = d & !IREQ;
                if v < st.base {
                    return None;
                }
                let v = (v - st.base) as usize;
                if !emitted[v] {
                    return Some(v); // a later op of the same rank: FIFO cannot proceed
                }
                if d & IREQ != 0 {
                    return None;
                }
                let q = partner[v];
                (st.kind[v] != Kind::Calc && q != NONE && !emitted[q as usize]).then_some(q as usize)
            })
        };
        for slot in 0..ranks {
            wake.push(slot as u32);
            while let Some(s) = wake.pop() {
                let s = s as usize;
                let ops = &self.lanes[st.touched[s] as usize].staged;
                while (head[s] as usize) < ops.len() {
                    let i = ops[head[s] as usize] as usize;
                    if let Some(q) = blocker(i, emitted) {
                        next_waiter[s] = waiting_on[q];
                        waiting_on[q] = s as u32;
                        break;
                    }
                    emitted[i] = true;
                    order.push(i as u32);
                    head[s] += 1;
                    let mut w = std::mem::replace(&mut waiting_on[i], NONE);
                    while w != NONE {
                        wake.push(w);
                        w = std::mem::replace(&mut next_waiter[w as usize], NONE);
                    }
                }
            }
        }
        if order.len() < n {
            order.clear();
            order.extend(0..n as u32);
        }
        Ok(())
    }

    /// End of the program on every rank that did anything: the final calc.
    pub fn finish(mut self) -> R<GraphBuilder> {
        self.flush()?;
        for r in 0..self.lanes.len() as u32 {
            if self.lanes[r as usize].active {
                self.gap(r);
            }
        }
        self.flush()?;
        self.sink.finish()
    }
}
