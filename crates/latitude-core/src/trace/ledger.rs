//! Request bookkeeping of one rank's extended trace: every `#@ done/start/free/cancel` index
//! must name a request that exists at that point.
//!
//! Our traces name a request by the 0-based index of the call record that created it, so a
//! call line duplicated or deleted by hand (or by a broken copy) shifts every later index:
//! a `#@ done 41` then names a barrier, the completion call itself, or a request completed
//! before. Such a trace would convert into a graph with different dependencies, changing T
//! without a word; the ledger refuses it at the extension line, naming the file and line.
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
        assert!(l.apply("done", &[4], 5).unwrap_err().contains("call 4 created no request"));
        assert!(l.apply("done", &[7], 5).unwrap_err().contains("not before this call"));
        assert_eq!(l.unfinished(), Some((1, 10)));
        l.apply("done", &[3], 5).unwrap();
        assert!(l.apply("done", &[3], 6).unwrap_err().contains("already completed"));
        assert_eq!(l.unfinished(), None);
        let init = Call::SendInit { mode: crate::trace::SendMode::Standard, p: P2p::default(), req: 0 };
        l.record(8, 20, &init, "MPI_Send_init");
        for _ in 0..3 {
            l.apply("start", &[8], 9).unwrap();
            l.apply("done", &[8], 10).unwrap();
        }
        assert!(l.apply("start", &[3], 11).is_err());
        l.apply("free", &[8], 12).unwrap();
        assert!(l.apply("start", &[8], 13).unwrap_err().contains("already completed or freed"));
    }
}
