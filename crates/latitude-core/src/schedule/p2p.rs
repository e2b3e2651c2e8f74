//! Point-to-point calls and request completion (docs/reference/schedgen.md §3, with Latitude's additions).
//!
//! * blocking send/recv (all send modes): the op; the next computation `requires` it.
//! * Isend/Irecv: the op; the next computation may start once the op has started (Schedgen's
//!   `irequires`, written as the equivalent `requires` of the op's own predecessor, see
//!   `chain`); the request remembers the op.
//! * Wait/Waitall/Waitany/Waitsome and *successful* Test/Testall/Testany/Testsome: a
//!   zero-length calc that `requires` every op the call completed; the next computation
//!   requires it. In our traces `#@ done` names exactly the completed requests; plain traces
//!   only let Wait/Waitall be resolved (request variable addresses).
//! * Send_init/Recv_init remember the operation; Start/Startall issue it like Isend/Irecv.
//! * Sendrecv(_replace): a send and a receive, both required by the next computation.
//! * ANY_SOURCE / ANY_TAG: resolved from `#@ status` (blocking: on the call; nonblocking: at
//!   completion, naming the creating call).
//! * Probe: its waiting time is dropped (the following receive waits for the message).
//! * MPI_PROC_NULL peers issue nothing.
//! * MPI_Cancel: the request's op is removed (turned into a zero-length computation, its
//!   dependencies kept) when its completion carries `#@ cancelled` — the cancellation
//!   succeeded; when it is freed without being seen completing, or in a plain trace (which
//!   cannot say), it is assumed cancelled. A failed cancellation leaves the request as it was.
//! * Test/Wait calls that complete nothing: their time is MPI time (see `rank.rs`).

use super::comms::Comm;
use super::rank::{Peer, RankState};
use super::requests::Persistent;
use super::WildRecv;
use crate::error::Result;
use crate::graph::{Dep, Op, ANY};
use crate::trace::{Completion, P2p, Record};

impl RankState<'_, '_> {
    /// The resolved communicator, or None after reporting the call as not modelled.
    fn p2p_comm(&mut self, rec: &Record, p: &P2p) -> Result<Option<Comm>> {
        if !self.sh.opts.p2p {
            self.unmodelled(rec, "point-to-point calls dropped (--no-p2p)");
            return Ok(None);
        }
        match self.comm(rec, &p.comm)? {
            Ok((c, _)) => Ok(Some(c)),
            Err(why) => {
                self.unusable(rec, why);
                Ok(None)
            }
        }
    }

    fn tag(&mut self, rec: &Record, comm: &Comm, tag: i64, recv: bool) -> Result<u32> {
        if recv && tag == self.consts.any_tag {
            return Ok(ANY);
        }
        if tag < 0 {
            return Err(self.err(rec.line, format!("{}: negative tag {tag}", rec.name())));
        }
        let r = self.sh.tags.p2p(comm.id, tag);
        self.at(rec.line, r)
    }

    /// Add a send op (None for MPI_PROC_NULL).
    fn send_op(&mut self, rec: &Record, comm: &Comm, p: &P2p) -> Result<Option<u32>> {
        let dst = match self.peer(rec, comm, p.peer)? {
            Peer::Null => return Ok(None),
            Peer::Any => return Err(self.err(rec.line, format!("{}: send to MPI_ANY_SOURCE", rec.name()))),
            Peer::Rank(d) => d,
        };
        let tag = self.tag(rec, comm, p.tag, false)?;
        let op = self.add(rec.line, Op::send(p.bytes, dst, tag))?;
        self.sh.check.send(self.rank, dst, tag, rec.line);
        Ok(Some(op))
    }

    /// Add a receive op; `status` resolves wildcards when known. Returns the op and whether
    /// it is still a wildcard.
    fn recv_op(&mut self, rec: &Record, comm: &Comm, p: &P2p, status: Option<(i64, i64)>) -> Result<Option<(u32, bool)>> {
        let mut src = match self.peer(rec, comm, p.peer)? {
            Peer::Null => return Ok(None),
            Peer::Any => ANY,
            Peer::Rank(s) => s,
        };
        let mut tag = self.tag(rec, comm, p.tag, true)?;
        if let Some((s, t)) = status {
            if src == ANY {
                src = self.status_source(rec, s)?;
            }
            if tag == ANY {
                tag = self.tag(rec, comm, t, false)?;
            }
        }
        let op = self.add(rec.line, Op::recv(p.bytes, src, tag))?;
        let wild = src == ANY || tag == ANY;
        if wild {
            self.wild_posted(rec, op);
        } else {
            self.sh.check.recv(src, self.rank, tag, rec.line);
        }
        Ok(Some((op, wild)))
    }

    /// A receive from ANY_SOURCE/ANY_TAG awaits its `#@ status` (remembered for the note if it
    /// never comes).
    fn wild_posted(&mut self, rec: &Record, op: u32) {
        self.sh.stats.unresolved_wildcards += 1;
        let w = WildRecv { rank: self.rank, line: rec.line, name: rec.name().to_string(), freed: false, plain: !self.extended };
        self.sh.wild.insert(op, w);
    }

    /// `#@ status src=` is a world rank.
    fn status_source(&self, rec: &Record, s: i64) -> Result<u32> {
        u32::try_from(s).ok().filter(|&w| w < self.sh.world).ok_or_else(|| self.err(rec.line, format!("'#@ status': source {s} is not a world rank")))
    }

    /// The `#@ status` line of a blocking call (no `call=`).
    fn blocking_status(rec: &Record) -> Option<(i64, i64)> {
        rec.ext.statuses.iter().find(|s| s.call.is_none()).map(|s| (s.src, s.tag))
    }

    /// The key naming a request: the creating record's index in our traces, else the
    /// address of the request variable.
    fn req_key(&self, rec: &Record, addr: u64) -> u64 {
        if self.extended {
            rec.index
        } else {
            addr
        }
    }

    /// After emitting a call's ops: wire them into the computation chain. The ops require
    /// the computation before the call; the next computation requires them (blocking) or
    /// may start as soon as they have started (nonblocking). Schedgen writes the latter as
    /// `next irequires op`; the ops' only predecessor is that computation c, so we write the
    /// identical `next requires c`: a start-to-start edge onto a receive would tie the
    /// receive's vertex to its remote send and make ring exchanges (Irecv; Isend; Wait on
    /// every rank) look cyclic to a vertex-ordered engine.
    fn chain(&mut self, rec: &Record, ops: &[u32], after: Dep) -> Result<()> {
        if ops.is_empty() {
            return Ok(()); // nothing issued: the call's time stays computation
        }
        self.next.extend(ops.iter().map(|&o| (o, Dep::Requires)));
        let c = self.gap(rec)?;
        match after {
            Dep::Requires => self.prev.extend(ops.iter().map(|&o| (o, Dep::Requires))),
            Dep::Irequires => {
                self.prev.push((c, Dep::Requires));
                self.issued(rec);
            }
        }
        Ok(())
    }

    pub(super) fn send(&mut self, rec: &Record, p: &P2p) -> Result<()> {
        let Some(comm) = self.p2p_comm(rec, p)? else { return Ok(()) };
        let op = self.send_op(rec, &comm, p)?;
        self.chain(rec, op.as_slice(), Dep::Requires)
    }

    pub(super) fn recv(&mut self, rec: &Record, p: &P2p) -> Result<()> {
        let Some(comm) = self.p2p_comm(rec, p)? else { return Ok(()) };
        let op = self.recv_op(rec, &comm, p, Self::blocking_status(rec))?;
        self.chain(rec, op.map(|(o, _)| o).as_slice(), Dep::Requires)
    }

    pub(super) fn isend(&mut self, rec: &Record, p: &P2p, req: u64) -> Result<()> {
        let Some(comm) = self.p2p_comm(rec, p)? else { return Ok(()) };
        let Some(op) = self.send_op(rec, &comm, p)? else { return Ok(()) };
        let key = self.req_key(rec, req);
        self.reqs.add(key, op);
        self.chain(rec, &[op], Dep::Irequires)
    }

    pub(super) fn irecv(&mut self, rec: &Record, p: &P2p, req: u64) -> Result<()> {
        let Some(comm) = self.p2p_comm(rec, p)? else { return Ok(()) };
        let Some((op, wild)) = self.recv_op(rec, &comm, p, None)? else { return Ok(()) };
        let key = self.req_key(rec, req);
        self.reqs.add(key, op);
        if wild && self.extended {
            self.reqs.add_wild(key, op, comm.id);
        }
        self.chain(rec, &[op], Dep::Irequires)
    }

    pub(super) fn sendrecv(&mut self, rec: &Record, send: &P2p, recv: &P2p) -> Result<()> {
        let Some(comm) = self.p2p_comm(rec, send)? else { return Ok(()) };
        let mut ops = Vec::with_capacity(2);
        ops.extend(self.send_op(rec, &comm, send)?);
        ops.extend(self.recv_op(rec, &comm, recv, Self::blocking_status(rec))?.map(|(o, _)| o));
        self.chain(rec, &ops, Dep::Requires)
    }

    pub(super) fn probe(&mut self, rec: &Record, comm: &crate::trace::CommArg) -> Result<()> {
        if let Err(why) = self.comm(rec, comm)? {
            self.unusable(rec, why);
            return Ok(());
        }
        // The probe's wait is re-created by the receive that follows; drop its time.
        let c = self.gap(rec)?;
        self.prev.push((c, Dep::Requires));
        Ok(())
    }

    pub(super) fn init_persistent(&mut self, rec: &Record, p: &P2p, req: u64, send: bool) -> Result<()> {
        let Some(comm) = self.p2p_comm(rec, p)? else { return Ok(()) };
        let key = self.req_key(rec, req);
        let peer = self.peer(rec, &comm, p.peer)?;
        if send && peer == Peer::Any {
            return Err(self.err(rec.line, format!("{}: send to MPI_ANY_SOURCE", rec.name())));
        }
        let tag = self.tag(rec, &comm, p.tag, !send)?;
        let (peer, null) = match peer {
            Peer::Rank(r) => (r, false),
            Peer::Any => (ANY, false),
            Peer::Null => (0, true),
        };
        self.reqs.add_persistent(key, Persistent { send, peer, tag, bytes: p.bytes, comm: comm.id, null, active: None });
        Ok(())
    }

    /// MPI_Start / MPI_Startall: issue the remembered operations like Isend/Irecv.
    pub(super) fn start_persistent(&mut self, rec: &Record, count: u64, addr: u64, all: bool) -> Result<()> {
        let mut keys = std::mem::take(&mut self.keys);
        match &rec.ext.start {
            Some(ids) if self.extended => keys.clone_from(ids),
            _ if all => self.reqs.array_keys(addr, count, true, &mut keys),
            _ => {
                keys.clear();
                keys.push(addr);
            }
        }
        let mut ops = std::mem::take(&mut self.ops);
        ops.clear();
        for &k in &keys {
            let Some(p) = self.reqs.persistent(k).copied() else { continue };
            if p.null {
                continue;
            }
            let op = if p.send {
                self.sh.check.send(self.rank, p.peer, p.tag, rec.line);
                self.add(rec.line, Op::send(p.bytes, p.peer, p.tag))?
            } else {
                let op = self.add(rec.line, Op::recv(p.bytes, p.peer, p.tag))?;
                if p.peer == ANY || p.tag == ANY {
                    self.wild_posted(rec, op);
                } else {
                    self.sh.check.recv(p.peer, self.rank, p.tag, rec.line);
                }
                op
            };
            if let Some(slot) = self.reqs.persistent(k) {
                slot.active = Some(op);
            }
            if !p.send && (p.peer == ANY || p.tag == ANY) && self.extended {
                self.reqs.add_wild(k, op, p.comm);
            }
            ops.push(op);
        }
        let r = self.chain(rec, &ops, Dep::Irequires);
        self.keys = keys;
        self.ops = ops;
        r
    }

    pub(super) fn free(&mut self, rec: &Record, req: u64) -> Result<()> {
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        match &rec.ext.free {
            Some(ids) if self.extended => keys.extend(ids),
            _ => keys.push(req),
        }
        for &k in &keys {
            // Cancelled, then freed before anyone saw it complete: the trace cannot say
            // whether the cancellation succeeded. Assume it did (a receive nobody matches
            // is why one cancels).
            if self.reqs.take_cancel(k) {
                if let Some(op) = self.reqs.peek(k) {
                    self.cancel_op(rec, k, op, true)?;
                }
            }
            if let Some(op) = self.reqs.peek(k) {
                if let Some(w) = self.sh.wild.get_mut(&op) {
                    w.freed = true;
                }
            }
            self.reqs.free(k);
        }
        self.keys = keys;
        Ok(())
    }

    /// MPI_Cancel: whether it succeeded shows at the request's completion (`#@ cancelled`);
    /// a plain trace never says, so there the request is assumed cancelled now.
    pub(super) fn cancel(&mut self, rec: &Record, req: u64) -> Result<()> {
        match &rec.ext.cancel {
            Some(ids) if self.extended => {
                for &k in ids {
                    self.reqs.mark_cancel(k);
                }
            }
            _ => {
                if let Some(op) = self.reqs.peek(req) {
                    self.cancel_op(rec, req, op, true)?;
                }
            }
        }
        Ok(())
    }

    /// Remove a cancelled request's op from the graph (it becomes a zero-length computation
    /// that still joins wherever the request is completed) and from the match check.
    fn cancel_op(&mut self, rec: &Record, key: u64, op: u32, assumed: bool) -> Result<()> {
        let r = self.sh.b.cancel(op);
        let was = self.at(rec.line, r)?;
        self.reqs.take_wild(key);
        let counted = match was.kind {
            crate::graph::Kind::Send => {
                self.sh.check.retract(self.rank, was.peer, was.tag, true);
                true
            }
            crate::graph::Kind::Recv if self.sh.wild.remove(&op).is_some() => {
                self.sh.stats.unresolved_wildcards = self.sh.stats.unresolved_wildcards.saturating_sub(1);
                true
            }
            crate::graph::Kind::Recv => {
                self.sh.check.retract(was.peer, self.rank, was.tag, false);
                true
            }
            crate::graph::Kind::Calc => false, // a collective's request: nothing to take back
        };
        match (counted, assumed, was.kind) {
            (false, _, _) => {}
            (true, true, _) => self.sh.stats.assumed_cancelled += 1,
            (true, false, crate::graph::Kind::Send) => self.sh.stats.cancelled_sends += 1,
            (true, false, _) => self.sh.stats.cancelled_recvs += 1,
        }
        Ok(())
    }

    /// Wait/Test families.
    pub(super) fn complete(&mut self, rec: &Record, what: Completion, count: u64, addr: u64) -> Result<()> {
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        if self.extended && rec.ext.done.is_some() {
            keys.extend(rec.ext.done.iter().flatten());
        } else {
            match what {
                Completion::Wait => keys.push(addr),
                Completion::Waitall => self.reqs.array_keys(addr, count, false, &mut keys),
                _ => {
                    let why = "a plain liballprof trace does not say which requests it completed (trace with `latitude trace`)";
                    self.sh.stats.note_once(format!("{}: {why}; its time stays computation", rec.name()));
                }
            }
        }
        // Wildcard receives completed here: their actual source and tag.
        for s in &rec.ext.statuses {
            let Some(call) = s.call else { continue };
            if let Some((op, comm)) = self.reqs.take_wild(call) {
                self.resolve_wild(rec, op, comm, s.src, s.tag)?;
            }
        }
        // Requests whose cancellation succeeded; the others' cancellations failed.
        for &k in &rec.ext.cancelled {
            if let Some(op) = self.reqs.peek(k) {
                self.cancel_op(rec, k, op, false)?;
            }
        }
        let mut ops = std::mem::take(&mut self.ops);
        ops.clear();
        for &k in &keys {
            self.reqs.take_cancel(k);
            ops.extend(self.reqs.complete(k));
        }
        if ops.is_empty() && what.is_test() || rec.ext.polls.is_some() {
            self.polled(rec); // a poll that completed nothing: MPI time
        }
        let r = self.join(rec, &ops);
        self.keys = keys;
        self.ops = ops;
        r
    }

    fn resolve_wild(&mut self, rec: &Record, op: u32, comm: u32, src: i64, tag: i64) -> Result<()> {
        let src = self.status_source(rec, src)?;
        if tag < 0 {
            return Err(self.err(rec.line, format!("'#@ status': negative tag {tag}")));
        }
        let t = self.sh.tags.p2p(comm, tag);
        let t = self.at(rec.line, t)?;
        let r = self.sh.b.resolve_recv(op, src, t);
        self.at(rec.line, r)?;
        self.sh.wild.remove(&op);
        self.sh.stats.unresolved_wildcards = self.sh.stats.unresolved_wildcards.saturating_sub(1);
        self.sh.check.recv(src, self.rank, t, rec.line);
        Ok(())
    }

    /// A zero-length calc joining `ops`; the next computation requires it.
    pub(super) fn join(&mut self, rec: &Record, ops: &[u32]) -> Result<()> {
        if ops.is_empty() {
            return Ok(()); // nothing completed here: the call's time stays computation
        }
        let w = self.add(rec.line, Op::calc(0))?;
        for &o in ops {
            self.dep(rec.line, w, o, Dep::Requires)?;
        }
        self.chain(rec, &[w], Dep::Requires)
    }
}
