//! The builder side of emission, on a second thread. The emitter stages an instance, orders
//! it and assigns its final ids (`base` + position in the order: ids are handed out
//! consecutively, so the emitter knows them without the builder); the sink appends it to
//! the [`GraphBuilder`] — ops, declared pairs, dependencies — while the emitter stages the
//! next one. At 10⁸ vertices the appends are a third of generation (mostly first-touch page
//! faults of the builder's columns), which now overlap with staging and ordering.
//! Two instance buffers circulate between the threads, so nothing is allocated afresh.

use crate::graph::{Dep, GraphBuilder, Kind, Op, IREQ, NONE};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// One instance's ops: staged by the emitter, then appended by the sink.
#[derive(Default)]
pub(crate) struct Instance {
    /// Final id of staged op 0; ids below it are ops of earlier instances.
    pub base: u32,
    pub kind: Vec<Kind>,
    pub rank: Vec<u32>,
    pub val: Vec<u64>,
    pub peer: Vec<u32>,
    pub tag: Vec<u32>,
    /// Prerequisites of op i: `deps[dep_off[i]..dep_off[i+1]]` (`IREQ` flag on irequires);
    /// staged ids (≥ base) until the sink maps them.
    pub dep_off: Vec<u32>,
    pub deps: Vec<u32>,
    /// Ranks with staged ops, in first-use order.
    pub touched: Vec<u32>,
    /// Staged indices in emission order, each op's final id and its partner (staged index).
    pub order: Vec<u32>,
    pub id: Vec<u32>,
    pub partner: Vec<u32>,
    /// A collective instance: its call, and each member's join (staged index, `collop`), to
    /// mark as the rank's end of the call (graph/colls.rs) so the call cost K applies.
    pub call: Option<CallInfo>,
    pub joins: Vec<u32>,
}

/// What the colls table records of one collective call (`GraphBuilder::mark_collective`).
pub(crate) struct CallInfo {
    pub coll: &'static str,
    pub alg: String,
    pub procs: u32,
    pub bytes: u64,
    /// Shared by every member: (communicator << 32) | call number.
    pub instance: u64,
}

impl Instance {
    pub fn new(base: u32) -> Instance {
        Instance { base, dep_off: vec![0], ..Default::default() }
    }

    pub fn len(&self) -> usize {
        self.kind.len()
    }

    /// A staged or earlier id (with its IREQ flag) as a final id.
    pub fn map(&self, d: u32) -> u32 {
        let (v, flag) = (d & !IREQ, d & IREQ);
        (if v >= self.base { self.id[(v - self.base) as usize] } else { v }) | flag
    }

    /// Empty it for reuse as the instance starting at `base` (keeps the allocations).
    pub fn reset(&mut self, base: u32) {
        for v in [&mut self.rank, &mut self.peer, &mut self.tag, &mut self.deps, &mut self.touched, &mut self.order, &mut self.id] {
            v.clear();
        }
        self.kind.clear();
        self.val.clear();
        self.dep_off.truncate(1);
        self.joins.clear();
        self.call = None;
        self.base = base;
    }

    /// Append to the builder in emission order: ops, then pairs, then dependencies (grouped
    /// by dependent in increasing id, which the builder keeps as its CSR).
    fn append(&self, b: &mut GraphBuilder) -> Result<(), String> {
        for &i in &self.order {
            let i = i as usize;
            let op = Op { kind: self.kind[i], val: self.val[i], peer: self.peer[i], tag: self.tag[i], cpu: 0, nic: 0, copy: 0 };
            let id = b.add(self.rank[i], op)?;
            debug_assert_eq!(id, self.id[i]);
        }
        for &i in &self.order {
            let (i, q) = (i as usize, self.partner[i as usize]);
            if self.kind[i] == Kind::Send && q != NONE {
                b.pair(self.id[i], self.id[q as usize]);
            }
        }
        for &i in &self.order {
            let i = i as usize;
            for &d in &self.deps[self.dep_off[i] as usize..self.dep_off[i + 1] as usize] {
                let m = self.map(d);
                let kind = if m & IREQ != 0 { Dep::Irequires } else { Dep::Requires };
                b.dep(self.id[i], m & !IREQ, kind)?;
            }
        }
        if let Some(c) = &self.call {
            for &j in &self.joins {
                b.mark_collective(self.id[j as usize], c.coll, &c.alg, c.procs, c.bytes, c.instance);
            }
        }
        Ok(())
    }
}

/// The thread that owns the builder while instances are emitted.
pub(crate) struct Sink {
    to: Option<SyncSender<Instance>>,
    back: Receiver<Instance>,
    worker: Option<JoinHandle<Result<GraphBuilder, String>>>,
}

impl Sink {
    pub fn spawn(mut b: GraphBuilder) -> Sink {
        let (to, from) = sync_channel::<Instance>(1);
        let (back_to, back) = sync_channel::<Instance>(2);
        back_to.send(Instance::new(0)).expect("fresh channel");
        let worker = std::thread::Builder::new()
            .name("latitude-sink".into())
            .spawn(move || {
                for inst in from {
                    inst.append(&mut b)?;
                    let _ = back_to.send(inst); // the emitter may be gone: nothing to return
                }
                Ok(b)
            })
            .expect("cannot start the graph builder thread");
        Sink { to: Some(to), back, worker: Some(worker) }
    }

    /// Hand `inst` over; returns an empty buffer for the next instance (reset to `base`).
    pub fn send(&mut self, inst: Instance, base: u32) -> Result<Instance, String> {
        let sent = self.to.as_ref().expect("sink open").send(inst).is_ok();
        match self.back.recv() {
            Ok(mut spare) if sent => {
                spare.reset(base);
                Ok(spare)
            }
            _ => Err(self.join().err().unwrap_or_else(|| "graph builder thread stopped".into())),
        }
    }

    /// Wait for every instance to be appended; the builder.
    pub fn finish(mut self) -> Result<GraphBuilder, String> {
        self.join()
    }

    fn join(&mut self) -> Result<GraphBuilder, String> {
        self.to = None; // ends the worker's loop
        match self.worker.take().map(|w| w.join()) {
            Some(Ok(res)) => res,
            Some(Err(_)) => Err("graph builder thread panicked".into()),
            None => Err("graph builder thread already finished".into()),
        }
    }
}
