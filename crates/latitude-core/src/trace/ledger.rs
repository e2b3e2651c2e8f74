//! Request bookkeeping of one rank's extended trace: every `#@ done/start/free/cancel` index
//! must name a request that exists at that point.
//!
//! Our traces name a request by the 0-based index of the call record that created it, so a
//! call line duplicated or deleted by hand (or by a broken copy) shifts every later index:
//! a `#@ done 41` then names a barrier, the completion call itself, or a request completed
//! before. Such a trace would convert into a graph with different dependencies, changing T
//! without a word; the ledger refuses it at the extension line, naming the file and line.
//!
//! Each line must also fit the call it follows: `done` a Wait/Test call, `start` a
//! Start/Startall, `free` a Request_free, `cancel` a Cancel. A deleted Wait line otherwise
//! hands its `#@ done` to the Startall above it, and the requests complete where they start.
//!
//! Memory: one bit per call record (which records created a request) and one entry per
//! outstanding request.

use rustc_hash::FxHashMap as FxMap;

use super::calls::Call;

/// An outstanding request: the line of its creating call, persistent or not.
#[derive(Clone, Copy, Debug)]
struct Open {
    line: u64,
    persistent: bool,
}

#[derive(Default)]
pub struct Ledger {
    /// Bit i: call record i created a request.
    creators: Vec<u64>,
    open: FxMap<u64, Open>,
    /// The `#@` request key the last call record may carry (None: none).
    carries: Option<&'static str>,
}

/// The request key a call's extension lines may carry.
fn carries(name: &str) -> Option<&'static str> {
    if name.starts_with("MPI_Wait") || (name.starts_with("MPI_Test") && name != "MPI_Test_cancelled") {
        Some("done")
    } else if name == "MPI_Start" || name == "MPI_Startall" {
        Some("start")
    } else if name == "MPI_Request_free" {
        Some("free")
    } else if name == "MPI_Cancel" {
        Some("cancel")
    } else {
        None
    }
}

/// Calls that create a request in our traces (the tracer's `lt_req_new` callers, plus the
/// request-creating calls a newer tracer may name).
fn creates_request(call: &Call, name: &str) -> Option<bool> {
    match call {
        Call::Isend { .. } | Call::Irecv { .. } => Some(false),
        Call::SendInit { .. } | Call::RecvInit { .. } => Some(true),
        Call::Coll(c) if c.nonblocking => Some(false),
        _ if name == "MPI_Init" => None,
        _ if name.ends_with("_init") => Some(true), // persistent collectives (MPI 4)
        _ if name.starts_with("MPI_Comm_idup") || name.starts_with("MPI_Ineighbor_") || name == "MPI_Imrecv" || name.starts_with("MPI_File_i") => Some(false),
        _ => None,
    }
}

const HINT: &str = "requests are named by the 0-based index of the call line that created them; a call line duplicated or deleted above shifts the indices";

impl Ledger {
    /// Call record `index` (at `line`) was read.
    pub fn record(&mut self, index: u64, line: u64, call: &Call, name: &str) {
        self.carries = carries(name);
        let Some(persistent) = creates_request(call, name) else { return };
        let (w, b) = ((index / 64) as usize, index % 64);
        if self.creators.len() <= w {
            self.creators.resize(w + 1, 0);
        }
        self.creators[w] |= 1 << b;
        self.open.insert(index, Open { line, persistent });
    }

    fn created(&self, index: u64) -> bool {
        self.creators.get((index / 64) as usize).is_some_and(|w| w >> (index % 64) & 1 == 1)
    }

    /// Why `#@ key k` cannot name request `k` while call record `current` is the last read.
    fn missing(&self, key: &str, k: u64, current: u64) -> String {
        if k >= current {
            format!("'#@ {key} {k}': call {k} is not before this call (call {current}); {HINT}")
        } else if !self.created(k) {
            format!("'#@ {key} {k}': call {k} created no request; {HINT}")
        } else {
            format!("'#@ {key} {k}': request {k} was already completed or freed; {HINT}")
        }
    }

    /// Check the ids of one `#@ done/start/free/cancel` line attached to call `current`,
    /// and apply it.
    pub fn apply(&mut self, key: &str, ids: &[u64], current: u64) -> Result<(), String> {
        if self.carries != Some(key) {
            let fits = match key {
                "done" => "a Wait or Test call",
                "start" => "MPI_Start or MPI_Startall",
                "free" => "MPI_Request_free",
                _ => "MPI_Cancel",
            };
            return Err(format!("'#@ {key}' follows call {current}, which is not {fits}; a call line deleted or duplicated above moved it"));
        }
        for &k in ids {
            let Some(open) = self.open.get(&k).copied() else { return Err(self.missing(key, k, current)) };
            match key {
                "start" if !open.persistent => return Err(format!("'#@ start {k}': request {k} (line {}) is not persistent", open.line)),
                "done" if !open.persistent => {
                    self.open.remove(&k);
                }
                "free" => {
                    self.open.remove(&k);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Non-persistent requests never completed nor freed: (count, line of the first).
    pub fn unfinished(&self) -> Option<(usize, u64)> {
        let first = self.open.values().filter(|o| !o.persistent).map(|o| o.line).min()?;
        Some((self.open.values().filter(|o| !o.persistent).count(), first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::P2p;

    #[test]
    fn indices_must_name_outstanding_requests() {
        let mut l = Ledger::default();
        let isend = Call::Isend { mode: crate::trace::SendMode::Standard, p: P2p::default(), req: 0 };
        l.record(3, 10, &isend, "MPI_Isend");
        l.record(4, 11, &Call::Local, "MPI_Comm_rank");
        assert!(l.apply("done", &[3], 4).unwrap_err().contains("not a Wait or Test call"));
        l.record(5, 12, &Call::Local, "MPI_Waitall");
        assert!(l.apply("done", &[4], 5).unwrap_err().contains("call 4 created no request"));
        assert!(l.apply("done", &[7], 5).unwrap_err().contains("not before this call"));
        assert_eq!(l.unfinished(), Some((1, 10)));
        l.apply("done", &[3], 5).unwrap();
        assert!(l.apply("done", &[3], 6).unwrap_err().contains("already completed"));
        assert_eq!(l.unfinished(), None);
        let init = Call::SendInit { mode: crate::trace::SendMode::Standard, p: P2p::default(), req: 0 };
        l.record(8, 20, &init, "MPI_Send_init");
        for i in 0..3 {
            l.record(9 + 2 * i, 21, &Call::Local, "MPI_Start");
            assert!(l.apply("done", &[8], 9 + 2 * i).unwrap_err().contains("not a Wait or Test call"));
            l.apply("start", &[8], 9 + 2 * i).unwrap();
            l.record(10 + 2 * i, 22, &Call::Local, "MPI_Wait");
            l.apply("done", &[8], 10 + 2 * i).unwrap();
        }
        l.record(15, 23, &Call::Local, "MPI_Startall");
        assert!(l.apply("start", &[3], 15).is_err());
        l.record(16, 24, &Call::Local, "MPI_Request_free");
        l.apply("free", &[8], 16).unwrap();
        l.record(17, 25, &Call::Local, "MPI_Start");
        assert!(l.apply("start", &[8], 17).unwrap_err().contains("already completed or freed"));
    }
}
