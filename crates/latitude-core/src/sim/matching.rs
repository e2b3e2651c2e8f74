//! MPI message matching: per rank a posted-receive queue (RQ) and an unexpected-message
//! queue (UQ), both FIFO, searched for the *first* entry (in queue order) that matches.
//!
//! A receive pattern (src, tag) matches a message (x, t) iff (src = x or either is ANY) and
//! (tag = t or either is ANY) — LogGOPSim's rule (docs/reference/loggopsim.md §3); sizes are not
//! compared. A message's source is always concrete; its tag may be ANY (GOAL allows
//! `tag -1` on a send).
//!
//! LogGOPSim scans linked lists, which is quadratic when many receives are outstanding
//! (an all-to-all posts P of them). Here every entry sits in its rank's FIFO order list
//! (doubly linked). A short queue (the common case: a few outstanding receives) is simply
//! scanned. Once a queue grows past `INDEX_AT` entries it is *indexed*: every entry without
//! a wildcard is also put in a bucket list keyed by (rank, side, src, tag), and a search
//! without wildcards on either side takes the head of one bucket; the index is dropped when
//! the queue empties. Scan and index give the same answer, the first match in FIFO order:
//! every earlier entry of the matched entry's bucket has the same (src, tag), so it would
//! have matched first — the match is always its bucket's head. Entries live in a slab with
//! a free list: no allocation per message in steady state.

use rustc_hash::FxHashMap;

use crate::graph::ANY;

const NIL: u32 = u32::MAX;
/// Queues longer than this get a (src, tag) index.
const INDEX_AT: u32 = 12;

/// Which queue: posted receives or unexpected messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Posted = 0,
    Unexpected = 1,
}

/// What a queue entry carries back to the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The queued vertex (a recv in RQ, a send in UQ).
    pub id: u32,
    /// Model-defined times (e.g. post time, header and data arrival).
    pub t: u64,
    pub t2: u64,
}

#[derive(Clone, Copy)]
struct Entry {
    id: u32,
    src: u32,
    tag: u32,
    next_bucket: u32,
    prev: u32,
    next: u32,
    t: u64,
    t2: u64,
}

#[derive(Default)]
pub(crate) struct Matcher {
    slab: Vec<Entry>,
    free: Vec<u32>,
    buckets: FxHashMap<u128, (u32, u32)>,
    /// Order lists per (rank, side): (head, tail).
    order: Vec<(u32, u32)>,
    /// Number of entries with a wildcard per (rank, side).
    wild: Vec<u32>,
    /// Length of each queue, and whether it is indexed by buckets.
    len: Vec<u32>,
    indexed: Vec<bool>,
}

#[inline]
fn key(rank: u32, side: Side, src: u32, tag: u32) -> u128 {
    ((rank as u128) << 65) | ((side as u128) << 64) | ((src as u128) << 32) | tag as u128
}

#[inline]
fn matches(e_src: u32, e_tag: u32, src: u32, tag: u32) -> bool {
    (e_src == src || e_src == ANY || src == ANY) && (e_tag == tag || e_tag == ANY || tag == ANY)
}

impl Matcher {
    /// Empty queues for `ranks` ranks (keeps allocations of a previous run).
    pub fn reset(&mut self, ranks: usize) {
        self.slab.clear();
        self.free.clear();
        self.buckets.clear();
        self.order.clear();
        self.order.resize(2 * ranks, (NIL, NIL));
        self.wild.clear();
        self.wild.resize(2 * ranks, 0);
        self.len.clear();
        self.len.resize(2 * ranks, 0);
        self.indexed.clear();
        self.indexed.resize(2 * ranks, false);
    }

    /// Remove and return the first entry of `side` on `rank` matching (src, tag).
    #[inline]
    pub fn take(&mut self, rank: u32, side: Side, src: u32, tag: u32) -> Option<Found> {
        let q = 2 * rank as usize + side as usize;
        let i = if self.indexed[q] && src != ANY && tag != ANY && self.wild[q] == 0 {
            self.buckets.get(&key(rank, side, src, tag))?.0
        } else {
            self.scan(q, src, tag)?
        };
        Some(self.remove(rank, side, i))
    }

    /// Append an entry to `side` on `rank`.
    #[inline]
    pub fn put(&mut self, rank: u32, side: Side, src: u32, tag: u32, found: Found) {
        let q = 2 * rank as usize + side as usize;
        let e = Entry { id: found.id, src, tag, next_bucket: NIL, prev: self.order[q].1, next: NIL, t: found.t, t2: found.t2 };
        let i = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = e;
                i
            }
            None => {
                self.slab.push(e);
                (self.slab.len() - 1) as u32
            }
        };
        let (head, tail) = self.order[q];
        if tail == NIL {
            debug_assert_eq!(head, NIL);
            self.order[q] = (i, i);
        } else {
            self.slab[tail as usize].next = i;
            self.order[q].1 = i;
        }
        if src == ANY || tag == ANY {
            self.wild[q] += 1;
        } else if self.indexed[q] {
            self.bucket_append(rank, side, i);
        }
        self.len[q] += 1;
        if self.len[q] > INDEX_AT && !self.indexed[q] {
            self.build_index(rank, side);
        }
    }

    fn bucket_append(&mut self, rank: u32, side: Side, i: u32) {
        let e = &mut self.slab[i as usize];
        e.next_bucket = NIL;
        let b = self.buckets.entry(key(rank, side, e.src, e.tag)).or_insert((NIL, NIL));
        if b.1 == NIL {
            *b = (i, i);
        } else {
            let last = b.1;
            b.1 = i;
            self.slab[last as usize].next_bucket = i;
        }
    }

    /// Put every entry of a queue without a wildcard into its bucket, in queue order.
    fn build_index(&mut self, rank: u32, side: Side) {
        let q = 2 * rank as usize + side as usize;
        self.indexed[q] = true;
        let mut i = self.order[q].0;
        while i != NIL {
            let e = self.slab[i as usize];
            if e.src != ANY && e.tag != ANY {
                self.bucket_append(rank, side, i);
            }
            i = e.next;
        }
    }

    fn scan(&self, q: usize, src: u32, tag: u32) -> Option<u32> {
        let mut i = self.order[q].0;
        while i != NIL {
            let e = &self.slab[i as usize];
            if matches(e.src, e.tag, src, tag) {
                return Some(i);
            }
            i = e.next;
        }
        None
    }

    fn remove(&mut self, rank: u32, side: Side, i: u32) -> Found {
        let q = 2 * rank as usize + side as usize;
        let e = self.slab[i as usize];
        if e.prev == NIL {
            self.order[q].0 = e.next;
        } else {
            self.slab[e.prev as usize].next = e.next;
        }
        if e.next == NIL {
            self.order[q].1 = e.prev;
        } else {
            self.slab[e.next as usize].prev = e.prev;
        }
        self.len[q] -= 1;
        if e.src == ANY || e.tag == ANY {
            self.wild[q] -= 1;
        } else if self.indexed[q] {
            let k = key(rank, side, e.src, e.tag);
            let b = self.buckets.get_mut(&k).expect("a bucketed entry has its bucket");
            debug_assert_eq!(b.0, i, "the first match is its bucket's head");
            if e.next_bucket == NIL {
                self.buckets.remove(&k);
            } else {
                b.0 = e.next_bucket;
            }
        }
        if self.len[q] == 0 {
            self.indexed[q] = false; // every bucket of the queue is gone with its entries
        }
        self.free.push(i);
        Found { id: e.id, t: e.t, t2: e.t2 }
    }

    /// Entries left on `side` of `rank`, in queue order (for stall reports).
    pub fn leftovers(&self, rank: u32, side: Side) -> Vec<Found> {
        let mut out = Vec::new();
        let mut i = self.order[2 * rank as usize + side as usize].0;
        while i != NIL {
            let e = &self.slab[i as usize];
            out.push(Found { id: e.id, t: e.t, t2: e.t2 });
            i = e.next;
        }
        out
    }

    /// Whether every queue is empty.
    pub fn is_empty(&self) -> bool {
        self.order.iter().all(|&(h, _)| h == NIL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Rng;

    /// LogGOPSim's list matching, as the reference.
    #[derive(Default)]
    struct Naive {
        q: Vec<Vec<(u32, u32, u32)>>, // per (rank, side): (src, tag, id)
    }

    impl Naive {
        fn take(&mut self, rank: u32, side: Side, src: u32, tag: u32) -> Option<u32> {
            let q = &mut self.q[2 * rank as usize + side as usize];
            let pos = q.iter().position(|&(s, t, _)| matches(s, t, src, tag))?;
            Some(q.remove(pos).2)
        }
        fn put(&mut self, rank: u32, side: Side, src: u32, tag: u32, id: u32) {
            self.q[2 * rank as usize + side as usize].push((src, tag, id));
        }
    }

    #[test]
    fn same_matches_as_linear_lists_with_wildcards() {
        for seed in 0..40 {
            let mut rng = Rng::new(seed);
            let ranks = 3;
            let mut m = Matcher::default();
            m.reset(ranks);
            let mut n = Naive { q: vec![Vec::new(); 2 * ranks] };
            let p_wild = [0.0, 0.1, 0.5][(seed % 3) as usize];
            let pick = |rng: &mut Rng, k: u64| if rng.chance(p_wild) { ANY } else { rng.below(k) as u32 };
            for id in 0..3000u32 {
                let rank = rng.below(ranks as u64) as u32;
                let side = if rng.chance(0.5) { Side::Posted } else { Side::Unexpected };
                let (src, tag) = (pick(&mut rng, 3), pick(&mut rng, 3));
                if rng.chance(0.5) {
                    let a = m.take(rank, side, src, tag).map(|f| f.id);
                    let b = n.take(rank, side, src, tag);
                    assert_eq!(a, b, "seed {seed} step {id}");
                } else {
                    m.put(rank, side, src, tag, Found { id, t: id as u64, t2: 0 });
                    n.put(rank, side, src, tag, id);
                }
            }
            for r in 0..ranks as u32 {
                for side in [Side::Posted, Side::Unexpected] {
                    let left: Vec<u32> = m.leftovers(r, side).iter().map(|f| f.id).collect();
                    let want: Vec<u32> = n.q[2 * r as usize + side as usize].iter().map(|x| x.2).collect();
                    assert_eq!(left, want);
                }
            }
        }
    }

    /// Queues that grow past the index threshold and shrink again give the same matches.
    #[test]
    fn indexed_and_scanned_queues_agree() {
        for seed in 0..10 {
            let mut rng = Rng::new(100 + seed);
            let mut m = Matcher::default();
            m.reset(1);
            let mut n = Naive { q: vec![Vec::new(); 2] };
            let mut id = 0;
            for phase in 0..40 {
                // alternate growth (mostly puts) and drain (mostly takes)
                let p_put = if phase % 2 == 0 { 0.9 } else { 0.1 };
                for _ in 0..60 {
                    let (src, tag) = (rng.below(4) as u32, rng.below(3) as u32);
                    let (src, tag) = if rng.chance(0.05) { (ANY, tag) } else { (src, tag) };
                    if rng.chance(p_put) {
                        m.put(0, Side::Unexpected, src, tag, Found { id, t: 0, t2: 0 });
                        n.put(0, Side::Unexpected, src, tag, id);
                        id += 1;
                    } else {
                        assert_eq!(m.take(0, Side::Unexpected, src, tag).map(|f| f.id), n.take(0, Side::Unexpected, src, tag));
                    }
                }
            }
            assert!(id > 1000);
        }
    }

    #[test]
    fn fifo_per_source_and_tag() {
        let mut m = Matcher::default();
        m.reset(2);
        for id in 0..5 {
            m.put(1, Side::Unexpected, 0, 7, Found { id, t: 10 * id as u64, t2: 0 });
        }
        m.put(1, Side::Unexpected, 0, 8, Found { id: 99, t: 0, t2: 0 });
        assert_eq!(m.take(1, Side::Unexpected, 0, 8).unwrap().id, 99);
        assert_eq!(m.take(1, Side::Unexpected, ANY, 7).unwrap().id, 0);
        assert_eq!(m.take(1, Side::Unexpected, 0, 7).unwrap().id, 1);
        assert_eq!(m.take(1, Side::Unexpected, 0, ANY).unwrap().t, 20);
        assert!(m.take(1, Side::Posted, 0, 7).is_none());
        assert!(!m.is_empty());
    }
}
