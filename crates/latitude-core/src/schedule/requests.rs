//! Outstanding requests of one rank: what a Wait/Test joins.
//!
//! Keys: in our traces a request is named by the index of the call record that created it
//! (`#@ done 12` completes the request of record 12); in plain liballprof traces by the
//! address of the application's `MPI_Request` variable, and the elements of a request array
//! are `array + i·stride` with stride = sizeof(MPI_Request): 8 for Open MPI, 4 for MPICH.
//! With `--request-size auto` the stride is chosen at the first multi-request call where the
//! two strides find different numbers of outstanding requests.

use rustc_hash::FxHashMap as FxMap;

/// A persistent request: what each `MPI_Start` issues.
#[derive(Clone, Copy, Debug)]
pub struct Persistent {
    pub send: bool,
    /// World rank of the peer (`graph::ANY` for a wildcard source).
    pub peer: u32,
    /// GOAL tag (`graph::ANY` for ANY_TAG).
    pub tag: u32,
    pub bytes: u64,
    /// Communicator id (to resolve a wildcard tag at completion).
    pub comm: u32,
    /// MPI_PROC_NULL peer: starts issue nothing.
    pub null: bool,
    /// The op of the current activation.
    pub active: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stride {
    Auto,
    Fixed(u32),
}

pub struct Requests {
    /// key → op (or collective completion node) to join.
    active: FxMap<u64, u32>,
    persistent: FxMap<u64, Persistent>,
    /// Wildcard receives awaiting their `#@ status` (key → (op, communicator id)).
    wild: FxMap<u64, (u32, u32)>,
    /// Requests MPI_Cancel was called on whose outcome is not known yet.
    cancels: FxMap<u64, ()>,
    stride: Stride,
    /// Stride in use until auto-detection decides (8).
    current: u32,
}

impl Requests {
    pub fn new(stride: Stride) -> Requests {
        let current = match stride {
            Stride::Fixed(s) => s,
            Stride::Auto => 8,
        };
        Requests { active: FxMap::default(), persistent: FxMap::default(), wild: FxMap::default(), cancels: FxMap::default(), stride, current }
    }

    /// The stride used (Some once fixed or detected).
    pub fn stride(&self) -> Option<u32> {
        match self.stride {
            Stride::Fixed(s) => Some(s),
            Stride::Auto => None,
        }
    }

    pub fn add(&mut self, key: u64, op: u32) {
        self.active.insert(key, op);
    }

    pub fn add_wild(&mut self, key: u64, op: u32, comm: u32) {
        self.wild.insert(key, (op, comm));
    }

    pub fn take_wild(&mut self, key: u64) -> Option<(u32, u32)> {
        self.wild.remove(&key)
    }

    pub fn add_persistent(&mut self, key: u64, p: Persistent) {
        self.persistent.insert(key, p);
    }

    pub fn persistent(&mut self, key: u64) -> Option<&mut Persistent> {
        self.persistent.get_mut(&key)
    }

    /// Forget a request (MPI_Request_free): it completes on its own, nothing joins it.
    pub fn free(&mut self, key: u64) {
        self.active.remove(&key);
        self.persistent.remove(&key);
        self.wild.remove(&key);
        self.cancels.remove(&key);
    }

    /// MPI_Cancel was called on the request: its completion (or its freeing) tells.
    pub fn mark_cancel(&mut self, key: u64) {
        self.cancels.insert(key, ());
    }

    /// Was MPI_Cancel called on the request since it was last issued (and forget it)?
    pub fn take_cancel(&mut self, key: u64) -> bool {
        self.cancels.remove(&key).is_some()
    }

    /// The op of an outstanding request, leaving it outstanding.
    pub fn peek(&self, key: u64) -> Option<u32> {
        self.active.get(&key).copied().or_else(|| self.persistent.get(&key).and_then(|p| p.active))
    }

    /// An outstanding request (`starting`: a persistent one that can be started).
    fn known(&self, key: u64, starting: bool) -> bool {
        if starting {
            return self.persistent.contains_key(&key);
        }
        self.active.contains_key(&key) || self.persistent.get(&key).is_some_and(|p| p.active.is_some())
    }

    /// Complete the request `key`: its op, if it is outstanding.
    pub fn complete(&mut self, key: u64) -> Option<u32> {
        if let Some(op) = self.active.remove(&key) {
            return Some(op);
        }
        self.persistent.get_mut(&key).and_then(|p| p.active.take())
    }

    /// Keys of the `count` elements of a request array at `base` (plain traces), choosing
    /// the stride on first use under `Auto` (`starting`: the array of an MPI_Startall).
    pub fn array_keys(&mut self, base: u64, count: u64, starting: bool, out: &mut Vec<u64>) {
        out.clear();
        if self.stride == Stride::Auto && count > 1 {
            let hits = |s: u64| (0..count).filter(|&i| self.known(base.wrapping_add(i * s), starting)).count();
            let (h8, h4) = (hits(8), hits(4));
            if h8 != h4 {
                self.current = if h8 > h4 { 8 } else { 4 };
                self.stride = Stride::Fixed(self.current);
            }
        }
        let s = self.current as u64;
        out.extend((0..count).map(|i| base.wrapping_add(i * s)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stride_is_detected_from_outstanding_requests() {
        let mut r = Requests::new(Stride::Auto);
        for i in 0..3 {
            r.add(1000 + 4 * i, i as u32);
        }
        let mut keys = Vec::new();
        r.array_keys(1000, 3, false, &mut keys);
        assert_eq!(keys, vec![1000, 1004, 1008]);
        assert_eq!(r.stride(), Some(4));
        let got: Vec<_> = keys.iter().filter_map(|&k| r.complete(k)).collect();
        assert_eq!(got, vec![0, 1, 2]);
        assert_eq!(r.complete(1000), None);
    }
}
