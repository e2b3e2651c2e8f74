//! One rank's conversion state: Schedgen's "LocOp" (computation inference, docs/reference/schedgen.md §2) and
//! the dispatch of call records.
//!
//! The rank keeps the end time of the last handled call (`start`), the ops the next
//! computation must depend on (`prev`) and the ops that must depend on it (`next`). Handling
//! a call with start ts and end te emits the call's ops, then `calc round((ts − start) ×
//! timemult)` with the pending edges, and sets start = te: every gap between handled calls
//! becomes a calc (zero-length ones included), time inside handled calls is re-created by
//! the model, and the time of local or unmodelled calls stays in the next computation.
//! Polls that complete nothing (MPI_Test* without a completion, MPI_Iprobe, folded `#@ polls`
//! records) are MPI time when the rank was waiting: their time inside the calls (`busy` for a
//! folded record) is taken out of the computation they fall in, since the model re-creates the
//! waiting they did. The polls of a work loop (a folded record with the application's own work
//! between its polls) stay computation (Rank::polled), and the completion that ends a work
//! loop's polling moves half a poll interval of the computation before it to after it
//! (polls.rs).

use super::comms::{Comm, Handles, Unusable};
use super::polls::{is_work_loop, PollRun};
use super::requests::{Requests, Stride};
use super::{MpiFlavor, Shared};
use crate::error::{Error, Result};
use crate::graph::{Dep, Op};
use crate::trace::{Call, Header, Record, Time};
use rustc_hash::FxHashMap as FxMap;

/// MPI constants of the traced library.
#[derive(Clone, Copy, Debug)]
pub struct Consts {
    pub any_source: i64,
    pub any_tag: i64,
    pub proc_null: i64,
}

impl Consts {
    pub const OPEN_MPI: Consts = Consts { any_source: -1, any_tag: -1, proc_null: -2 };
    pub const MPICH: Consts = Consts { any_source: -2, any_tag: -1, proc_null: -1 };
}

/// A point-to-point peer after mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    Rank(u32),
    Any,
    Null,
}

pub struct RankState<'s, 'o> {
    pub(super) sh: &'s mut Shared<'o>,
    pub(super) rank: u32,
    pub(super) path: &'s str,
    /// Our trace format (`#@` lines): requests named by call index, statuses, comm lines.
    pub(super) extended: bool,
    pub(super) consts: Consts,
    flavor_known: bool,
    pub(super) handles: Handles,
    pub(super) reqs: Requests,
    pub(super) coll_seq: FxMap<u32, u32>,
    start: Option<Time>,
    /// Time inside polls since the last handled call (ns): not computation.
    pub(super) polled: i128,
    /// The polls since the last handled call.
    run: PollRun,
    /// Computation moved past the completion that ended a work loop's polling (ns): the next
    /// computation's.
    carry: i128,
    pub(super) prev: Vec<(u32, Dep)>,
    pub(super) next: Vec<(u32, Dep)>,
    finalized: bool,
    pub(super) keys: Vec<u64>,
    pub(super) ops: Vec<u32>,
}

impl<'s, 'o> RankState<'s, 'o> {
    pub fn new(sh: &'s mut Shared<'o>, rank: u32, path: &'s str, header: &Header) -> Result<RankState<'s, 'o>> {
        let extended = header.latitude.is_some();
        let (consts, flavor_known) = match (header.any_source, sh.opts.mpi) {
            (Some(a), _) => (Consts { any_source: a, any_tag: header.any_tag.unwrap_or(-1), proc_null: header.proc_null.unwrap_or(-2) }, true),
            (None, MpiFlavor::Mpich) => (Consts::MPICH, true),
            (None, MpiFlavor::OpenMpi) => (Consts::OPEN_MPI, true),
            (None, MpiFlavor::Auto) => (Consts::OPEN_MPI, false),
        };
        let stride = match (header.request_size, sh.opts.request_size) {
            (_, Some(s)) => Stride::Fixed(s),
            (Some(s), None) => Stride::Fixed(s),
            (None, None) => Stride::Auto,
        };
        let mut st = RankState {
            sh,
            rank,
            path,
            extended,
            consts,
            flavor_known,
            handles: Handles::default(),
            reqs: Requests::new(stride),
            coll_seq: FxMap::default(),
            start: None,
            polled: 0,
            run: PollRun::default(),
            carry: 0,
            prev: Vec::new(),
            next: Vec::new(),
            finalized: false,
            keys: Vec::new(),
            ops: Vec::new(),
        };
        for def in &header.comms {
            let c = st.sh.reg.register(def, st.sh.world).map_err(|m| Error::in_file(path, m))?;
            st.handles.define(def.handle, c, rank, &st.sh.reg);
        }
        Ok(st)
    }

    pub(super) fn err(&self, line: u64, msg: impl Into<String>) -> Error {
        Error::at(self.path, line, msg)
    }

    /// Builder results carry a bare message; give them this record's location.
    pub(super) fn at<T>(&self, line: u64, r: std::result::Result<T, String>) -> Result<T> {
        r.map_err(|m| self.err(line, m))
    }

    pub(super) fn add(&mut self, line: u64, op: Op) -> Result<u32> {
        let r = self.sh.b.add_at(self.rank, op, u32::try_from(line).unwrap_or(u32::MAX));
        self.at(line, r)
    }

    pub(super) fn dep(&mut self, line: u64, a: u32, b: u32, d: Dep) -> Result<()> {
        let r = self.sh.b.dep(a, b, d);
        self.at(line, r)
    }

    /// Duration of a record in ns (0 if unknown).
    pub(super) fn duration(&self, rec: &Record) -> i128 {
        match (rec.start, rec.end) {
            (Some(a), Some(b)) => Time::scaled(b.0 - a.0, self.sh.opts.timemult).max(0),
            _ => 0,
        }
    }

    /// Schedgen's NextOp: the computation since the last handled call, wired to the pending
    /// ops; the handled call ends at `rec.end`.
    pub(super) fn gap(&mut self, rec: &Record) -> Result<u32> {
        let (Some(start), Some(ts)) = (self.start, rec.start) else {
            return Err(self.err(rec.line, "internal: computation before MPI_Init"));
        };
        let mut ns = Time::scaled(ts.0 - start.0, self.sh.opts.timemult);
        if ns < 0 {
            self.sh.stats.negative_gaps += 1;
            ns = 0;
        }
        ns = (ns - std::mem::take(&mut self.polled)).max(0) + std::mem::take(&mut self.carry);
        if let Some(h) = std::mem::take(&mut self.run).shift(rec, self.sh.opts.timemult) {
            let h = h.min(ns);
            (ns, self.carry) = (ns - h, h);
            self.sh.stats.poll_shifts += 1;
            self.sh.stats.poll_shift_ns += h as u64;
        }
        let c = self.add(rec.line, Op::calc(ns as u64))?;
        let (mut next, mut prev) = (std::mem::take(&mut self.next), std::mem::take(&mut self.prev));
        for &(x, d) in &next {
            self.dep(rec.line, x, c, d)?;
        }
        for &(y, d) in &prev {
            self.dep(rec.line, c, y, d)?;
        }
        next.clear();
        prev.clear();
        (self.next, self.prev) = (next, prev);
        self.start = rec.end.or(rec.start);
        Ok(c)
    }

    /// After a call that issued nonblocking operations and emitted its computation: with
    /// `issue_time`, the next computation starts at the call's start, so the time inside the
    /// call (the library's own work, which no cost rule puts on the rank's time line) stays
    /// computation. A cold call after a long computation takes 1-4 µs (cache misses on the
    /// library's state) against the ~0.1 µs of a warm loop.
    pub(super) fn issued(&mut self, rec: &Record) {
        if !self.sh.opts.issue_time || rec.start.is_none() {
            return;
        }
        self.sh.stats.issue_calls += 1;
        self.sh.stats.issue_ns += self.duration(rec) as u64;
        self.start = rec.start;
    }

    /// A poll that completed nothing. Its time inside the calls (`busy` for a folded record)
    /// is MPI time, taken out of the computation it falls in, when the rank was only waiting:
    /// polls back to back, less than a tenth of the record's span outside the calls. A folded
    /// record with more of the application's own work between its polls is a work loop that
    /// tests once per iteration (HPCC's RandomAccess: ~1,700 polls with an update generated
    /// between each two): it makes its polls whatever the network does, so their time stays
    /// computation, as the work between them does. Every poll joins the rank's poll run, which
    /// the completion that ends it may shift (polls.rs).
    pub(super) fn polled(&mut self, rec: &Record) {
        let span = self.duration(rec);
        let (n, ns) = match rec.ext.polls {
            // `busy` is the tracer's estimate from a sample of the polls (one in 16 timed), so
            // a timed poll that was preempted inflates it, up to several times the record's
            // span: the polls cannot have taken longer than the record.
            Some(p) => (p.n, Time::scaled(p.busy.0, self.sh.opts.timemult).clamp(0, span)),
            None => (1, span),
        };
        self.sh.stats.polls += n;
        self.sh.stats.poll_records += 1;
        self.run.add(rec, n, ns);
        if is_work_loop(span, ns) {
            self.sh.stats.poll_work_ns += ns as u64;
            return;
        }
        self.polled += ns;
        self.sh.stats.poll_ns += ns as u64;
    }

    /// A call Latitude does not model: its time stays computation; reported once per name.
    pub(super) fn unmodelled(&mut self, rec: &Record, reason: &str) {
        let d = self.duration(rec);
        let e = self.sh.stats.unmodelled.entry(rec.name().to_string()).or_default();
        e.calls += 1;
        e.time_ns += d.max(0) as u64;
        if e.reason.is_empty() {
            e.reason = reason.to_string();
        }
    }

    /// Plain traces: guess Open MPI vs MPICH constants from the first communicator handle
    /// (MPICH's MPI_COMM_WORLD is 0x44000000, 91 in Fortran).
    fn learn_flavor(&mut self, handle: u64) {
        if self.flavor_known {
            return;
        }
        self.flavor_known = true;
        if handle == 0x4400_0000 || handle == 91 {
            self.consts = Consts::MPICH;
            self.sh.stats.mpi = "MPICH".into();
        } else {
            self.sh.stats.mpi = "Open MPI".into();
        }
    }

    /// The communicator of a call, or why it cannot be used.
    pub(super) fn comm(&mut self, rec: &Record, c: &crate::trace::CommArg) -> Result<std::result::Result<(Comm, u32), Unusable>> {
        self.learn_flavor(c.handle);
        let r = self.handles.resolve(&self.sh.reg, c, self.rank, self.sh.world);
        match self.at(rec.line, r)? {
            Ok(res) => {
                if let Some(n) = res.note {
                    self.sh.stats.note_once(n);
                }
                Ok(Ok((res.comm, res.me)))
            }
            Err(u) => Ok(Err(u)),
        }
    }

    pub(super) fn unusable(&mut self, rec: &Record, why: Unusable) {
        let reason = match why {
            Unusable::NoMembers => "on a sub-communicator whose members a plain liballprof trace does not record (trace with `latitude trace`)",
            Unusable::OutsideWorld => "on a communicator with processes outside MPI_COMM_WORLD",
        };
        self.unmodelled(rec, reason);
    }

    /// Map a peer rank of `comm` to a world rank.
    pub(super) fn peer(&self, rec: &Record, comm: &Comm, peer: i64) -> Result<Peer> {
        if peer == self.consts.proc_null {
            return Ok(Peer::Null);
        }
        if peer == self.consts.any_source {
            return Ok(Peer::Any);
        }
        let group = self.sh.reg.peers(*comm);
        match usize::try_from(peer).ok().and_then(|p| group.get(p)) {
            Some(&w) => Ok(Peer::Rank(w)),
            None => Err(self.err(rec.line, format!("{}: peer rank {peer} outside its communicator of {} ranks", rec.name(), group.len()))),
        }
    }

    /// Handle one call record.
    pub fn handle(&mut self, rec: &Record) -> Result<()> {
        if self.finalized {
            return Err(self.err(rec.line, format!("{} after MPI_Finalize", rec.name())));
        }
        if self.start.is_none() && !matches!(rec.call, Call::Init) {
            return Err(self.err(rec.line, format!("expected MPI_Init or MPI_Init_thread as the first call, got {}", rec.name())));
        }
        self.sh.stats.events += 1;
        match rec.call {
            Call::Init => {
                if self.start.is_some() {
                    return Err(self.err(rec.line, "a second MPI_Init"));
                }
                self.start = rec.end;
                if self.start.is_none() {
                    return Err(self.err(rec.line, "MPI_Init without an end time"));
                }
            }
            Call::Finalize => {
                self.gap(rec)?;
                self.finalized = true;
            }
            Call::Send { p, .. } => self.send(rec, &p)?,
            Call::Recv { p } => self.recv(rec, &p)?,
            Call::Isend { p, req, .. } => self.isend(rec, &p, req)?,
            Call::Irecv { p, req } => self.irecv(rec, &p, req)?,
            Call::SendInit { p, req, .. } => self.init_persistent(rec, &p, req, true)?,
            Call::RecvInit { p, req } => self.init_persistent(rec, &p, req, false)?,
            Call::Start { req } => self.start_persistent(rec, 1, req, false)?,
            Call::Startall { count, reqs } => self.start_persistent(rec, count, reqs, true)?,
            Call::RequestFree { req } => self.free(rec, req)?,
            Call::Cancel { req } => self.cancel(rec, req)?,
            Call::Complete { what, count, reqs } => self.complete(rec, what, count, reqs)?,
            Call::Probe { comm, .. } => self.probe(rec, &comm)?,
            Call::Sendrecv { send, recv } => self.sendrecv(rec, &send, &recv)?,
            Call::Coll(c) => self.collective(rec, &c)?,
            Call::CommCreate => self.unmodelled(rec, "communicator creation: its internal communication is not modelled"),
            Call::Local => {}
            Call::Poll => self.polled(rec),
            Call::NotModelled => self.unmodelled(rec, "not modelled"),
            Call::Io => self.unmodelled(rec, "MPI-IO: file access time, kept as computation (collective I/O synchronization is not modelled)"),
            Call::Unknown => self.unmodelled(rec, "unknown call"),
        }
        for def in &rec.ext.comms {
            let c = self.sh.reg.register(def, self.sh.world).map_err(|m| self.err(rec.line, m))?;
            self.handles.define(def.handle, c, self.rank, &self.sh.reg);
        }
        Ok(())
    }

    /// End of the rank's file.
    pub fn finish(self, header: &Header) -> Result<()> {
        if !self.finalized {
            let why = header.end.as_deref().map(|e| format!(" ('#@ end {e}')")).unwrap_or_default();
            self.sh.stats.notes.push(format!("rank {}: the trace ends without MPI_Finalize{why}; the rank's last computation is lost", self.rank));
        }
        if let (Some((n, line)), Some("finalize")) = (header.unfinished_requests, header.end.as_deref()) {
            self.sh.stats.notes.push(format!(
                "{}:{line}: rank {}: {n} request(s) were never completed nor freed before MPI_Finalize (the first created here); their operations stay in the graph",
                self.path, self.rank
            ));
        }
        if let Some(s) = self.reqs.stride() {
            self.sh.stats.request_size.get_or_insert(s);
        }
        Ok(())
    }
}
