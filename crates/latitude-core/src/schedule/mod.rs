//! Trace → execution graph (`latitude schedule`): what Schedgen does, with sub-communicators,
//! Waitany/Waitsome/Test*, persistent requests, Probe and wildcard receives modelled, and
//! collectives from the collective library (`collectives`).
//!
//! Ranks are converted one after the other, each file streamed once (`rank.rs`: computation
//! inference and dispatch; `p2p.rs`: point-to-point and requests; `coll.rs`: collectives);
//! the shared state is the graph builder, the communicator registry and the tag space.
//! Then the builder matches messages (after a per-stream count check that can name the trace
//! line of an unmatched call) and orders the graph.

mod check;
mod coll;
mod comms;
mod p2p;
mod pipeline;
mod polls;
mod rank;
mod requests;
mod tags;

use rustc_hash::FxHashMap as FxMap;
use std::collections::BTreeMap;

use crate::collectives::{Placed, Prog, Selection};
use crate::error::{Error, Result};
use crate::graph::{ExecGraph, GraphBuilder};
use crate::trace::{discover, TraceSet};

pub use comms::show_ranks;

/// Which MPI's constants (ANY_SOURCE, PROC_NULL) a plain trace uses. Our traces say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpiFlavor {
    /// From the communicator handles (MPICH's MPI_COMM_WORLD is 0x44000000).
    Auto,
    OpenMpi,
    Mpich,
}

#[derive(Clone, Debug)]
pub struct ScheduleOptions {
    /// Collective algorithm selection (`--coll`).
    pub coll: Selection,
    /// Trace time differences (µs) are multiplied by this (Schedgen's `--timemult`, 1000:
    /// ns).
    pub timemult: f64,
    /// sizeof(MPI_Request) for request arrays of plain traces (None: auto-detect).
    pub request_size: Option<u32>,
    pub mpi: MpiFlavor,
    /// Model point-to-point calls (Schedgen's `--traces-nop2p` turns this off).
    pub p2p: bool,
    /// Model collectives (`--traces-nocolls`).
    pub collectives: bool,
    /// Keep each vertex's trace line (its call record), e.g. to show the traced run's
    /// calls with the messages they exchanged; costs 4 bytes per vertex.
    pub lines: bool,
    /// Keep the time inside the calls that issue nonblocking operations (MPI_Isend and its
    /// modes, MPI_Irecv, MPI_Start(all), the nonblocking collectives) in the computation after
    /// them. The model puts none of a nonblocking call on its rank's time line (its ops run
    /// beside the next computation), so without this the time the library spends in the call
    /// is lost (`--issue-time dropped`, as Schedgen).
    pub issue_time: bool,
}

impl Default for ScheduleOptions {
    fn default() -> Self {
        ScheduleOptions {
            coll: Selection::default(),
            timemult: 1000.0,
            request_size: None,
            mpi: MpiFlavor::Auto,
            p2p: true,
            collectives: true,
            lines: false,
            issue_time: true,
        }
    }
}

/// A call whose communication Latitude does not model.
#[derive(Clone, Debug, Default)]
pub struct Unmodelled {
    pub calls: u64,
    /// Total time inside these calls (ns, after `timemult`): kept as computation.
    pub time_ns: u64,
    pub reason: String,
}

#[derive(Clone, Debug, Default)]
pub struct ScheduleStats {
    pub ranks: u32,
    /// Call records converted.
    pub events: u64,
    /// Bytes of trace read.
    pub trace_bytes: u64,
    pub pattern: String,
    /// Our extension lines were present.
    pub extended: bool,
    pub mpi: String,
    pub request_size: Option<u32>,
    /// "allreduce recdoub" → instances (per rank).
    pub collectives: BTreeMap<String, u64>,
    pub unmodelled: BTreeMap<String, Unmodelled>,
    pub unresolved_wildcards: u64,
    /// Requests removed from the graph because their cancellation succeeded (`#@ cancelled`).
    pub cancelled_recvs: u64,
    pub cancelled_sends: u64,
    /// Cancelled requests whose outcome the trace does not record (freed before completing,
    /// or a plain trace): assumed cancelled and removed.
    pub assumed_cancelled: u64,
    /// Polls that completed nothing (MPI_Test* and MPI_Iprobe; `#@ polls` records count as
    /// many as they fold), the records they took, and their time (ns) taken as MPI time
    /// (waiting); `poll_work_ns`: the time inside polls of work loops, kept as computation.
    pub polls: u64,
    pub poll_records: u64,
    pub poll_ns: u64,
    pub poll_work_ns: u64,
    /// Completions that ended a work loop's polling, and the computation (ns) moved from
    /// before them to after them (half a poll interval each, at most 10 µs; docs/schedule.md).
    pub poll_shifts: u64,
    pub poll_shift_ns: u64,
    /// Calls that issued nonblocking operations, and the time (ns) inside them kept as
    /// computation (`ScheduleOptions::issue_time`).
    pub issue_calls: u64,
    pub issue_ns: u64,
    pub negative_gaps: u64,
    pub notes: Vec<String>,
}

impl ScheduleStats {
    /// Add a note unless one with the same text up to the first " (" is there already.
    pub(crate) fn note_once(&mut self, note: String) {
        let key = |n: &str| n.split(" (").next().unwrap_or(n).to_string();
        let k = key(&note);
        if !self.notes.iter().any(|n| key(n) == k) {
            self.notes.push(note);
        }
    }
}

pub struct Scheduled {
    pub graph: ExecGraph,
    pub stats: ScheduleStats,
}

/// State shared by all ranks of a conversion.
pub(crate) struct Shared<'o> {
    pub b: GraphBuilder,
    pub opts: &'o ScheduleOptions,
    pub world: u32,
    pub reg: comms::Registry,
    pub tags: tags::Tags,
    pub stats: ScheduleStats,
    pub check: check::MatchCheck,
    pub prog: Prog,
    pub placed: Placed,
    pub counts: Vec<u64>,
    pub rcounts: Vec<u64>,
    /// Wildcard receives not resolved yet: op → where it was posted and what became of it.
    pub wild: FxMap<u32, WildRecv>,
}

/// A receive from MPI_ANY_SOURCE/ANY_TAG waiting for its `#@ status`.
pub(crate) struct WildRecv {
    pub rank: u32,
    pub line: u64,
    pub name: String,
    /// Freed with MPI_Request_free before it completed: its match is never observed.
    pub freed: bool,
    /// From a trace without `#@` lines (no status is ever recorded).
    pub plain: bool,
}

/// Convert the trace at `path` (a directory or the rank-0 file).
pub fn schedule_path(path: &str, opts: &ScheduleOptions, progress: &mut dyn FnMut(u64, u64)) -> Result<Scheduled> {
    let set = discover(path)?;
    schedule(&set, opts, progress)
}

/// Convert a trace set; `progress(bytes_read, total_bytes)` is called now and then.
pub fn schedule(set: &TraceSet, opts: &ScheduleOptions, progress: &mut dyn FnMut(u64, u64)) -> Result<Scheduled> {
    if !(opts.timemult.is_finite() && opts.timemult > 0.0) {
        return Err(Error::in_file("--timemult", "expected a positive number"));
    }
    let world = u32::try_from(set.files.len()).map_err(|_| Error::new("too many trace files"))?;
    let total: u64 = set.files.iter().map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)).sum();
    let mut sh = Shared {
        b: if opts.lines { GraphBuilder::new(world).with_source(&set.pattern) } else { GraphBuilder::new(world) },
        opts,
        world,
        reg: comms::Registry::new(world),
        tags: tags::Tags::default(),
        stats: ScheduleStats { ranks: world, pattern: set.pattern.clone(), ..Default::default() },
        check: check::MatchCheck::default(),
        prog: Prog::new(),
        placed: Placed::default(),
        counts: Vec::new(),
        rcounts: Vec::new(),
        wild: FxMap::default(),
    };
    // About one vertex per 32 bytes of trace (a call line and its computation): reserving
    // spares the builder's arrays their doublings (capacity never touched stays virtual).
    sh.b.reserve((total / 30).min(1 << 31) as usize);
    let paths: Vec<String> = set.files.iter().map(|f| f.display().to_string()).collect();
    std::thread::scope(|scope| -> Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel(4);
        let (back_tx, back_rx) = std::sync::mpsc::channel();
        let files = &set.files;
        scope.spawn(move || pipeline::read_all(files, tx, back_rx));
        convert(&mut sh, &rx, &back_tx, world, total, progress)
    })?;
    finish(sh, &paths)
}

/// Convert the ranks as the reader thread delivers them.
fn convert(
    sh: &mut Shared,
    rx: &std::sync::mpsc::Receiver<pipeline::Msg>,
    back: &std::sync::mpsc::Sender<Vec<crate::trace::Record>>,
    world: u32,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<()> {
    use pipeline::Msg;
    let mut done = 0u64;
    let mut last = 0u64;
    while let Ok(msg) = rx.recv() {
        let (rank, path, header) = match msg {
            Msg::Start { rank, path, header } => (rank, path, header),
            Msg::Failed(e) => return Err(e),
            _ => return Err(Error::new("internal: trace batches out of order")),
        };
        check_header(&path, &header, rank, world)?;
        sh.stats.extended |= header.latitude.is_some();
        if let (Some(m), true) = (&header.mpi, sh.stats.mpi.is_empty()) {
            sh.stats.mpi = m.clone();
        }
        let mut st = rank::RankState::new(sh, rank, &path, &header)?;
        loop {
            match rx.recv() {
                Ok(Msg::Batch { records, n, bytes }) => {
                    for rec in &records[..n] {
                        st.handle(rec)?;
                    }
                    let _ = back.send(records);
                    if bytes - last > 32 << 20 {
                        last = bytes;
                        progress(done + bytes, total);
                    }
                }
                Ok(Msg::End { header, truncated, bytes }) => {
                    st.finish(&header)?;
                    if truncated {
                        sh.stats
                            .notes
                            .push(format!("{path}: the file ends in zero bytes (the rank was killed while tracing); its records up to there are used"));
                    }
                    done += bytes;
                    last = 0;
                    sh.stats.trace_bytes += bytes;
                    progress(done, total);
                    break;
                }
                Ok(Msg::Failed(e)) => return Err(e),
                Ok(Msg::Start { .. }) | Err(_) => return Err(Error::new("internal: the trace reader stopped early")),
            }
        }
    }
    Ok(())
}

/// Header sanity: our traces say which rank of how many they are.
fn check_header(path: &str, h: &crate::trace::Header, r: u32, world: u32) -> Result<()> {
    if let Some(size) = h.world_size {
        if size != world {
            let what = if size > world { format!("the ranks {}..{} are missing", world, size - 1) } else { format!("only {size} belong to it") };
            return Err(Error::in_file(path, format!("the trace says the world has {size} ranks but {world} files were found ({what})")));
        }
    }
    if let Some(rank) = h.world_rank {
        if rank != r {
            return Err(Error::in_file(path, format!("this is rank {rank}'s trace (header), but its name makes it rank {r}")));
        }
    }
    Ok(())
}

fn finish(sh: Shared, paths: &[String]) -> Result<Scheduled> {
    let Shared { b, check, tags, reg, mut stats, wild, .. } = sh;
    let name = |c: u32| reg.name(c);
    let describe = |t: u32| tags.describe(t, &name);
    if stats.unresolved_wildcards == 0 {
        if let Some(u) = check.first_unbalanced(&describe) {
            let path = paths.get(u.rank as usize).map(String::as_str).unwrap_or("");
            return Err(Error::at(path, u.line, u.message));
        }
    } else {
        stats.notes.push(unresolved_note(&wild, paths));
    }
    request_notes(&mut stats);
    if stats.negative_gaps > 0 {
        stats.notes.push(format!("{} negative time gaps between calls (timestamps going back) became 0-length computations", stats.negative_gaps));
    }
    let graph = b.finish().map_err(|e| decorate(e, &describe))?;
    Ok(Scheduled { graph, stats })
}

/// Which wildcard receives stay unresolved and why, naming the first few `file:line`.
fn unresolved_note(wild: &FxMap<u32, WildRecv>, paths: &[String]) -> String {
    let mut left: Vec<&WildRecv> = wild.values().collect();
    left.sort_by_key(|w| (w.rank, w.line));
    let mut groups: Vec<(&str, Vec<&WildRecv>)> = Vec::new();
    for w in left {
        let why = if w.plain {
            "a plain liballprof trace does not record the source a wildcard receive matched (trace with `latitude trace`, which writes it)"
        } else if w.freed {
            "freed with MPI_Request_free before it completed, so its match is never observed"
        } else {
            "never completed before the trace ends"
        };
        match groups.iter_mut().find(|(r, _)| *r == why) {
            Some((_, v)) => v.push(w),
            None => groups.push((why, vec![w])),
        }
    }
    let n: usize = groups.iter().map(|(_, v)| v.len()).sum();
    let parts: Vec<String> = groups
        .iter()
        .map(|(why, v)| {
            let at: Vec<String> =
                v.iter().take(4).map(|w| format!("{}:{} ({})", paths.get(w.rank as usize).map(String::as_str).unwrap_or("?"), w.line, w.name)).collect();
            let more = if v.len() > 4 { format!(" and {} more", v.len() - 4) } else { String::new() };
            format!("{} {}{more}: {why}", at.join(", "), if v.len() == 1 { "is" } else { "are" })
        })
        .collect();
    format!(
        "{n} receive{} from MPI_ANY_SOURCE/ANY_TAG could not be resolved; {}; the graph is written with -1 sources (predict and lp need matched messages, simulate matches them as it runs)",
        if n == 1 { "" } else { "s" },
        parts.join("; ")
    )
}

/// What happened to cancelled requests and polls, for the schedule's notes.
fn request_notes(stats: &mut ScheduleStats) {
    let cancelled = stats.cancelled_recvs + stats.cancelled_sends;
    if cancelled > 0 {
        stats.notes.push(format!(
            "{cancelled} cancelled request{} ({} receive{}, {} send{}) removed from the graph: their completion says the cancellation succeeded",
            if cancelled == 1 { "" } else { "s" },
            stats.cancelled_recvs,
            if stats.cancelled_recvs == 1 { "" } else { "s" },
            stats.cancelled_sends,
            if stats.cancelled_sends == 1 { "" } else { "s" }
        ));
    }
    if stats.assumed_cancelled > 0 {
        stats.notes.push(format!(
            "{} request{} cancelled with MPI_Cancel and never seen completing (freed, or a plain trace that does not record the outcome): assumed cancelled and removed from the graph",
            stats.assumed_cancelled,
            if stats.assumed_cancelled == 1 { "" } else { "s" }
        ));
    }
    if stats.polls > 0 {
        stats.notes.push(format!(
            "{} polls completed nothing (MPI_Test*/MPI_Iprobe, {} records): {:.3} ms of them waiting are MPI time (the model re-creates the wait), not computation; {:.3} ms inside polls of work loops (the application's work between the polls) stay computation",
            stats.polls,
            stats.poll_records,
            stats.poll_ns as f64 / 1e6,
            stats.poll_work_ns as f64 / 1e6
        ));
    }
    if stats.poll_shifts > 0 {
        stats.notes.push(format!(
            "{} completions ended a work loop's polling: {:.3} ms of computation (half a poll interval each, at most 10 µs) moved from before them to after them, where the loop's next poll would have seen a later message",
            stats.poll_shifts,
            stats.poll_shift_ns as f64 / 1e6
        ));
    }
}

/// Builder errors mention raw GOAL tags; say what they stand for.
fn decorate(mut e: Error, describe: &dyn Fn(u32) -> String) -> Error {
    if let Some(i) = e.message.find(" tag ") {
        let digits: String = e.message[i + 5..].chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(t) = digits.parse::<u32>() {
            e.message.push_str(&format!(" [tag {t}: {}]", describe(t)));
        }
    }
    e
}
