//! Recording a simulation: CPU phases ("slices"), per-op start/end times, messages, and for
//! every recorded time the *cause* that determined it — which lets the critical path be
//! recovered by walking causes back from the last finishing time.
//!
//! A cause is one of: the end of a slice (the CPU was busy, or the op's own phase ended),
//! the ready time of an op (its last dependency), the arrival of a message (the sender's
//! phase plus network time), handshake data after a read request, a FIN after a receive
//! ended, a NIC gap after a send started, or the start of a slice (LogGOPSim's rendezvous
//! bump). The simulators report through [`Obs`]; the no-op observer compiles away, so an
//! unrecorded run pays nothing.

use crate::graph::{ExecGraph, Kind, NONE};

/// What a CPU slice is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SliceKind {
    Calc = 0,
    /// Sender overhead (o + bytes·O).
    Send = 1,
    /// Receiver overhead when the data is there.
    Recv = 2,
    /// Handshake rendezvous: the receiver's read request (o).
    ReadRequest = 3,
}

pub const SLICE_NAMES: [&str; 4] = ["calc", "send", "recv", "read request"];

/// Why a time is what it is (packed: kind in the top bits, payload below).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cause(u64);

impl Cause {
    pub const NONE: Cause = Cause(0);
    const SHIFT: u32 = 60;
    fn make(kind: u64, x: u32) -> Cause {
        Cause((kind << Self::SHIFT) | x as u64)
    }
    /// End of slice i.
    pub fn slice(i: u32) -> Cause {
        Self::make(1, i)
    }
    /// Ready time of op v (its last dependency).
    pub fn ready(v: u32) -> Cause {
        Self::make(2, v)
    }
    /// Arrival of the message sent by op u.
    pub fn msg(u: u32) -> Cause {
        Self::make(3, u)
    }
    /// Handshake data arriving after recv v's read request.
    pub fn data(v: u32) -> Cause {
        Self::make(4, v)
    }
    /// FIN after recv v ended.
    pub fn fin(v: u32) -> Cause {
        Self::make(5, v)
    }
    /// NIC gap after the start of slice i.
    pub fn gap(i: u32) -> Cause {
        Self::make(6, i)
    }
    /// Start of slice i.
    pub fn start(i: u32) -> Cause {
        Self::make(7, i)
    }
    fn kind(self) -> u64 {
        self.0 >> Self::SHIFT
    }
    fn x(self) -> u32 {
        self.0 as u32
    }
}

/// The simulators' reporting interface. Resource indices are `rank·count + index`.
pub(crate) trait Obs {
    const ON: bool;
    /// A CPU phase; returns its index.
    fn slice(&mut self, _s: Slice) -> u32 {
        0
    }
    fn ready_cause(&mut self, _w: u32, _by: u32, _start_dep: bool) {}
    fn started(&mut self, _v: u32, _t: u64) {}
    fn ended(&mut self, _v: u32, _t: u64, _cause: Cause) {}
    /// The message of send op u was processed in slice `dst`.
    fn flow(&mut self, _u: u32, _dst: u32) {}
    fn cpu_cause(&self, _rc: usize) -> Cause {
        Cause::NONE
    }
    fn set_cpu(&mut self, _rc: usize, _c: Cause) {}
    fn nic_cause(&self, _rn: usize) -> Cause {
        Cause::NONE
    }
    fn set_nic(&mut self, _rn: usize, _c: Cause) {}
    fn nicr_cause(&self, _rn: usize) -> Cause {
        Cause::NONE
    }
    fn set_nicr(&mut self, _rn: usize, _c: Cause) {}
    /// Where the critical path ends (the cause of the last finishing time).
    fn set_last(&mut self, _c: Cause) {}
}

pub(crate) struct NoObs;
impl Obs for NoObs {
    const ON: bool = false;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    pub v: u32,
    pub kind: SliceKind,
    pub rank: u32,
    pub cpu: u16,
    pub t0: u64,
    pub t1: u64,
    pub cause: Cause,
}

/// Everything recorded about one run (times in simulation units).
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub slices: Vec<Slice>,
    /// Per op: start and end (`u64::MAX` if it never ran).
    pub start: Vec<u64>,
    pub end: Vec<u64>,
    /// Messages: (send op, slice where it left, slice where it was processed).
    pub flows: Vec<(u32, u32, u32)>,
    pub(crate) end_cause: Vec<Cause>,
    pub(crate) ready_by: Vec<u32>,
    pub(crate) first_slice: Vec<u32>,
    pub(crate) rr_slice: Vec<u32>,
    pub(crate) cause_cpu: Vec<Cause>,
    pub(crate) cause_nic: Vec<Cause>,
    pub(crate) cause_nicr: Vec<Cause>,
    /// Where the critical path starts (set by the simulator at the end).
    pub(crate) last: Cause,
}

const START_DEP: u32 = 1 << 31;

impl Record {
    pub(crate) fn new(n: usize, cpus: usize, nics: usize) -> Record {
        Record {
            start: vec![u64::MAX; n],
            end: vec![u64::MAX; n],
            end_cause: vec![Cause::NONE; n],
            ready_by: vec![NONE; n],
            first_slice: vec![NONE; n],
            rr_slice: vec![NONE; n],
            cause_cpu: vec![Cause::NONE; cpus],
            cause_nic: vec![Cause::NONE; nics],
            cause_nicr: vec![Cause::NONE; nics],
            ..Default::default()
        }
    }
}

impl Obs for Record {
    const ON: bool = true;
    fn slice(&mut self, s: Slice) -> u32 {
        let i = self.slices.len() as u32;
        self.slices.push(s);
        if s.kind == SliceKind::ReadRequest {
            self.rr_slice[s.v as usize] = i;
        } else if self.first_slice[s.v as usize] == NONE {
            self.first_slice[s.v as usize] = i;
        }
        i
    }
    fn ready_cause(&mut self, w: u32, by: u32, start_dep: bool) {
        self.ready_by[w as usize] = by | if start_dep { START_DEP } else { 0 };
    }
    fn started(&mut self, v: u32, t: u64) {
        self.start[v as usize] = t;
    }
    fn ended(&mut self, v: u32, t: u64, cause: Cause) {
        self.end[v as usize] = t;
        self.end_cause[v as usize] = cause;
    }
    fn flow(&mut self, u: u32, dst: u32) {
        self.flows.push((u, self.first_slice[u as usize], dst));
    }
    fn cpu_cause(&self, rc: usize) -> Cause {
        self.cause_cpu[rc]
    }
    fn set_cpu(&mut self, rc: usize, c: Cause) {
        self.cause_cpu[rc] = c;
    }
    fn nic_cause(&self, rn: usize) -> Cause {
        self.cause_nic[rn]
    }
    fn set_nic(&mut self, rn: usize, c: Cause) {
        self.cause_nic[rn] = c;
    }
    fn nicr_cause(&self, rn: usize) -> Cause {
        self.cause_nicr[rn]
    }
    fn set_nicr(&mut self, rn: usize, c: Cause) {
        self.cause_nicr[rn] = c;
    }
    fn set_last(&mut self, c: Cause) {
        self.last = c;
    }
}

/// The critical path: slices whose duration lies on it and messages travelled along it.
#[derive(Clone, Debug, Default)]
pub struct CriticalPath {
    pub slices: Vec<u32>,
    /// Send ops whose message lies on the path.
    pub messages: Vec<u32>,
}

impl Record {
    /// Walk causes back from the last finishing time.
    pub fn critical_path(&self, g: &ExecGraph) -> CriticalPath {
        let mut out = CriticalPath::default();
        let mut c = self.last;
        // Causes point to strictly earlier records or earlier times; the cap only guards
        // against a malformed record.
        let mut budget = 4 * (self.slices.len() + self.start.len()) + 16;
        while c != Cause::NONE && budget > 0 {
            budget -= 1;
            let x = c.x();
            c = match c.kind() {
                1 => {
                    out.slices.push(x);
                    self.slices[x as usize].cause
                }
                2 => self.ready_cause_of(g, x),
                3 => {
                    out.messages.push(x);
                    let s = self.first_slice[x as usize];
                    if s == NONE {
                        Cause::NONE
                    } else {
                        out.slices.push(s);
                        self.slices[s as usize].cause
                    }
                }
                4 => {
                    let s = self.rr_slice[x as usize];
                    if s == NONE {
                        Cause::NONE
                    } else {
                        out.slices.push(s);
                        self.slices[s as usize].cause
                    }
                }
                5 => self.end_cause[x as usize],
                6 | 7 => self.slices[x as usize].cause,
                _ => Cause::NONE,
            };
        }
        out.slices.reverse();
        out.messages.reverse();
        out
    }

    /// Cause of op v's ready time: its last dependency's start or end.
    fn ready_cause_of(&self, g: &ExecGraph, v: u32) -> Cause {
        let by = self.ready_by[v as usize];
        if by == NONE {
            return Cause::NONE;
        }
        let p = by & !START_DEP;
        if by & START_DEP == 0 {
            return self.end_cause[p as usize];
        }
        // Start of p: a recv starts when ready; calc and send with their first slice.
        match (g.kind(p), self.first_slice[p as usize]) {
            (Kind::Recv, _) | (_, NONE) => Cause::ready(p),
            (_, s) => self.slices[s as usize].cause,
        }
    }

    /// Lane per slice so that slices sharing a (rank, cpu, lane) never overlap: lane 0 holds
    /// everything when the CPU serializes; overlapping phases get further lanes.
    pub fn lanes(&self) -> Vec<u16> {
        let mut idx: Vec<u32> = (0..self.slices.len() as u32).collect();
        idx.sort_unstable_by_key(|&i| {
            let s = &self.slices[i as usize];
            (s.rank, s.cpu, s.t0, i)
        });
        let mut lane = vec![0u16; self.slices.len()];
        let mut ends: Vec<u64> = Vec::new(); // end time per lane for the current CPU
        let mut cur = (u32::MAX, 0u16);
        for &i in &idx {
            let s = &self.slices[i as usize];
            if (s.rank, s.cpu) != cur {
                cur = (s.rank, s.cpu);
                ends.clear();
            }
            let t1 = s.t1.max(s.t0);
            let free = ends.iter().position(|&e| e <= s.t0);
            let k = match free {
                Some(k) => k,
                None => {
                    ends.push(0);
                    ends.len() - 1
                }
            };
            ends[k] = t1;
            lane[i as usize] = k.min(u16::MAX as usize) as u16;
        }
        lane
    }

    /// Time an op spent waiting: a recv from its post to its processing, a rendezvous send
    /// from its overhead to its completion. Returns (op, from, to) with from < to.
    pub fn waits(&self, g: &ExecGraph) -> Vec<(u32, u64, u64)> {
        let mut out = Vec::new();
        for v in 0..self.start.len() as u32 {
            let (s, e) = (self.start[v as usize], self.end[v as usize]);
            if s == u64::MAX || e == u64::MAX {
                continue;
            }
            let from = match g.kind(v) {
                Kind::Calc => continue,
                Kind::Recv => s,
                Kind::Send => match self.first_slice[v as usize] {
                    NONE => s,
                    i => self.slices[i as usize].t1,
                },
            };
            let to = match g.kind(v) {
                // a recv waits until its final processing starts (or it is done, LogGOPSim)
                Kind::Recv => self.recv_processing_start(v).unwrap_or(e).min(e),
                _ => e,
            };
            if to > from {
                out.push((v, from, to));
            }
        }
        out
    }

    fn recv_processing_start(&self, v: u32) -> Option<u64> {
        let rr = self.rr_slice[v as usize];
        if rr != NONE {
            return Some(self.slices[rr as usize].t0);
        }
        match self.first_slice[v as usize] {
            NONE => None,
            i => Some(self.slices[i as usize].t0),
        }
    }
}
