//! Per-rank emission with the structure `latitude schedule` gives a traced run (Schedgen's
//! LocOp, docs/schedule.md), so a generated graph and the scheduled trace of `apps/motifs`
//! running the same job agree op for op:
//!
//! * every MPI call is preceded by one calc: the computation since the previous call (the
//!   compute motifs' time accumulates into it, zero-length calcs included);
//! * blocking send/recv: the op requires that calc; the next calc requires the op;
//! * Isend/Irecv: the op requires that calc; the next calc requires the same calc (the
//!   computation continues once the op is issued);
//! * Waitall: a zero-length calc requiring every completed op, chained like a blocking op;
//! * collective: the algorithm's start ops require the calc, a zero-length `collop`
//!   requires its end ops, the next calc requires `collop`;
//! * the end of the program: a final calc (`MPI_Finalize`).
//!
//! Ops are added in the trace converter's order too (a call's ops, then the calc before it).

use crate::collectives::{place, Placed, Prog};
use crate::graph::{GraphBuilder, Op};

/// One rank's pending state between calls.
#[derive(Clone, Debug, Default)]
struct Lane {
    /// Computation since the last call (ns).
    pending: u64,
    /// Ops the next calc requires.
    prev: Vec<u32>,
    /// The rank has emitted anything (it gets a final calc).
    active: bool,
}

pub struct Emitter {
    pub b: GraphBuilder,
    lanes: Vec<Lane>,
    placed: Placed,
}

/// Builder results: ops built from a checked job file only fail on the vertex limit.
type R<T> = Result<T, String>;

impl Emitter {
    pub fn new(world: u32) -> Emitter {
        Emitter { b: GraphBuilder::new(world), lanes: vec![Lane::default(); world as usize], placed: Placed::default() }
    }

    /// Computation on `rank` (merges with the next call's preceding calc).
    pub fn compute(&mut self, rank: u32, ns: u64) {
        let lane = &mut self.lanes[rank as usize];
        lane.pending = lane.pending.saturating_add(ns);
        lane.active = true;
    }

    /// The calc before a call: the pending computation, after `prev`; `next` require it.
    fn gap(&mut self, rank: u32, next: &[u32]) -> R<u32> {
        let lane = &mut self.lanes[rank as usize];
        let ns = std::mem::take(&mut lane.pending);
        lane.active = true;
        let c = self.b.add(rank, Op::calc(ns))?;
        for &x in next {
            self.b.requires(x, c)?;
        }
        let lane = &mut self.lanes[rank as usize];
        for &y in &lane.prev {
            self.b.requires(c, y)?;
        }
        lane.prev.clear();
        Ok(c)
    }

    fn set_prev(&mut self, rank: u32, v: u32) {
        let lane = &mut self.lanes[rank as usize];
        lane.prev.clear();
        lane.prev.push(v);
    }

    /// Blocking MPI_Send.
    pub fn send(&mut self, rank: u32, bytes: u64, dst: u32, tag: u32) -> R<()> {
        let op = self.b.add(rank, Op::send(bytes, dst, tag))?;
        self.gap(rank, &[op])?;
        self.set_prev(rank, op);
        Ok(())
    }

    /// Blocking MPI_Recv.
    pub fn recv(&mut self, rank: u32, bytes: u64, src: u32, tag: u32) -> R<()> {
        let op = self.b.add(rank, Op::recv(bytes, src, tag))?;
        self.gap(rank, &[op])?;
        self.set_prev(rank, op);
        Ok(())
    }

    /// MPI_Isend; returns the op for a later [`Emitter::waitall`].
    pub fn isend(&mut self, rank: u32, bytes: u64, dst: u32, tag: u32) -> R<u32> {
        let op = self.b.add(rank, Op::send(bytes, dst, tag))?;
        let c = self.gap(rank, &[op])?;
        self.set_prev(rank, c);
        Ok(op)
    }

    /// MPI_Irecv.
    pub fn irecv(&mut self, rank: u32, bytes: u64, src: u32, tag: u32) -> R<u32> {
        let op = self.b.add(rank, Op::recv(bytes, src, tag))?;
        let c = self.gap(rank, &[op])?;
        self.set_prev(rank, c);
        Ok(op)
    }

    /// MPI_Waitall on `ops` (nothing if empty: the call's time stays computation).
    pub fn waitall(&mut self, rank: u32, ops: &[u32]) -> R<()> {
        if ops.is_empty() {
            return Ok(());
        }
        let w = self.b.add(rank, Op::calc(0))?;
        for &o in ops {
            self.b.requires(w, o)?;
        }
        self.gap(rank, &[w])?;
        self.set_prev(rank, w);
        Ok(())
    }

    /// A blocking collective: `prog` is rank `me`'s part (comm ranks), `members` the world
    /// ranks of the communicator, `tag` the instance's tag.
    pub fn collective(&mut self, prog: &Prog, members: &[u32], me: u32, tag: u32) -> R<()> {
        let rank = members[me as usize];
        let mut placed = std::mem::take(&mut self.placed);
        place(&mut self.b, prog, members, me, tag, &mut placed)?;
        let collop = placed.join(&mut self.b)?;
        let c = self.gap(rank, &placed.start)?;
        if placed.start.is_empty() {
            self.b.requires(collop, c)?; // no messages on this rank: keep the chain
        }
        self.set_prev(rank, collop);
        self.placed = placed;
        Ok(())
    }

    /// End of the program on every rank that did anything: the final calc.
    pub fn finish(mut self) -> R<GraphBuilder> {
        for r in 0..self.lanes.len() as u32 {
            if self.lanes[r as usize].active {
                self.gap(r, &[])?;
            }
        }
        Ok(self.b)
    }
}
