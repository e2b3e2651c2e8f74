//! The event queue: a min-heap of compact events ordered by (time, tie).
//!
//! `tie` makes the order total and deterministic: the LogGOPSim-compatible model stores the
//! insertion sequence number there (FIFO among equal times, as LogGOPSim's `ts`), the default
//! model a key derived from the operation (see `design.rs`). A 4-ary heap keeps the tree
//! shallow (fewer cache misses than a binary heap); entries are 24 bytes and the storage is
//! reused across runs, so the hot loop never allocates.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub time: u64,
    pub tie: u64,
    /// Vertex the event is about.
    pub v: u32,
    /// Event kind (meaning defined by the model).
    pub kind: u8,
}

impl Event {
    #[inline]
    fn before(&self, o: &Event) -> bool {
        (self.time, self.tie) < (o.time, o.tie)
    }
}

#[derive(Default)]
pub(crate) struct EventQueue {
    heap: Vec<Event>,
}

const ARITY: usize = 4;

impl EventQueue {
    pub fn clear(&mut self) {
        self.heap.clear();
    }

    #[inline]
    pub fn push(&mut self, e: Event) {
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !e.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = self.heap[0];
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            for c in first + 1..end {
                if self.heap[c].before(&self.heap[best]) {
                    best = c;
                }
            }
            if !self.heap[best].before(&last) {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Rng;

    #[test]
    fn pops_in_time_then_tie_order() {
        let mut q = EventQueue::default();
        let mut rng = Rng::new(5);
        let mut all = Vec::new();
        for i in 0..2000u32 {
            let e = Event { time: rng.below(50), tie: rng.below(1 << 40) * 4096 + i as u64, v: i, kind: 0 };
            all.push(e);
            q.push(e);
            if i % 3 == 0 {
                // interleave pops with pushes
                let got = q.pop().unwrap();
                let pos = all.iter().position(|x| *x == got).unwrap();
                let min = all.iter().min_by_key(|x| (x.time, x.tie)).unwrap();
                assert_eq!(got, *min);
                all.swap_remove(pos);
            }
        }
        all.sort_by_key(|x| (x.time, x.tie));
        for want in all {
            assert_eq!(q.pop(), Some(want));
        }
        assert_eq!(q.pop(), None);
    }
}
