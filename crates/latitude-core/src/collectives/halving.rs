//! Building blocks of the Rabenseifner-style algorithms (MPICH): folding a non-power-of-two
//! communicator onto p' = 2^⌊log₂ p⌋ ranks, recursive-halving reduce-scatter over p' chunks,
//! and its mirror images (recursive-doubling allgather, binomial gather to new rank 0).
//!
//! Chunks: the vector is cut into p' chunks (byte counts `cnt`); a rank holds a contiguous
//! chunk range [lo, hi). In the step with mask m a rank x and its partner x XOR m hold the
//! same range; x keeps the lower half iff bit m of x is clear and sends the other half. Any
//! order of the masks works (partners agree on every bit but m), which lets allreduce use
//! MPICH's increasing distances and reduce_scatter its decreasing ones (so that new rank x
//! ends with chunk x). The allgather/gather undo the splits in reverse mask order.

use super::prog::{Frontier, Id, Prog};

/// Fold of p ranks onto p' = 2^⌊log₂ p⌋: among the first 2·rem ranks (rem = p − p') one of
/// each pair hands its vector to the other and sits out.
pub struct Group {
    pub pof2: u32,
    pub rem: u32,
    /// MPICH allreduce: even ranks leave (send to r + 1); otherwise odd ranks leave.
    even_leaves: bool,
}

/// A rank's role after the fold.
pub enum Fold {
    /// Takes part with this frontier.
    In(Frontier),
    /// Handed its data over with this send and sits out.
    Out(Id),
}

impl Group {
    pub fn new(p: u32, even_leaves: bool) -> Group {
        let pof2 = super::prog::pof2_floor(p);
        Group { pof2, rem: p - pof2, even_leaves }
    }

    fn leaves(&self, v: u32) -> bool {
        v < 2 * self.rem && v.is_multiple_of(2) == self.even_leaves
    }

    /// New rank of v in the power-of-two group (v must not be a leaver).
    pub fn newrank(&self, v: u32) -> u32 {
        if v < 2 * self.rem {
            v / 2
        } else {
            v - self.rem
        }
    }

    /// Rank (in the caller's numbering) of new rank q.
    pub fn real(&self, q: u32) -> u32 {
        if q < self.rem {
            2 * q + u32::from(self.even_leaves)
        } else {
            q + self.rem
        }
    }

    /// The partner of v in the fold (v < 2·rem).
    fn partner(&self, v: u32) -> u32 {
        v ^ 1
    }

    /// First step: leavers send `bytes` to their partner; stayers with a partner receive
    /// `recv_bytes` from it. `map` turns caller ranks into comm ranks.
    pub fn fold(&self, g: &mut Prog, v: u32, bytes: u64, recv_bytes: u64, map: impl Fn(u32) -> u32) -> Fold {
        if v >= 2 * self.rem {
            return Fold::In(Frontier::EMPTY);
        }
        let q = map(self.partner(v));
        if self.leaves(v) {
            Fold::Out(g.send(q, bytes, &[]))
        } else {
            Fold::In(Frontier::one(g.recv(q, recv_bytes, &[])))
        }
    }

    /// `fold` with the same size both ways; None for a leaver (which is then done).
    pub fn fold_in(&self, g: &mut Prog, v: u32, bytes: u64, map: impl Fn(u32) -> u32) -> Option<Frontier> {
        match self.fold(g, v, bytes, bytes, map) {
            Fold::In(f) => Some(f),
            Fold::Out(_) => None,
        }
    }

    /// Last step: stayers with a partner send it `bytes` after `f`; leavers receive them
    /// after their fold send.
    pub fn unfold(&self, g: &mut Prog, v: u32, fold: &Fold, f: Frontier, bytes: u64, map: impl Fn(u32) -> u32) -> Frontier {
        if v >= 2 * self.rem {
            return f;
        }
        let q = map(self.partner(v));
        match fold {
            Fold::Out(s) => Frontier::one(g.recv(q, bytes, &[*s])),
            Fold::In(_) => Frontier::one(g.send(q, bytes, f.ids())),
        }
    }

    /// 1, 2, …, p'/2
    pub fn masks_up(&self) -> Vec<u32> {
        (0..self.pof2.trailing_zeros()).map(|k| 1 << k).collect()
    }

    /// p'/2, …, 2, 1
    pub fn masks_down(&self) -> Vec<u32> {
        let mut m = self.masks_up();
        m.reverse();
        m
    }
}

/// Chunk sizes of a vector over p' chunks, as prefix sums.
pub struct Halving {
    pre: Vec<u64>,
}

impl Halving {
    /// n bytes in k nearly equal chunks (the first n mod k one byte larger).
    pub fn uniform(n: u64, k: u32) -> Halving {
        let k64 = k as u64;
        Halving::from_counts((0..k64).map(|i| n / k64 + u64::from(i < n % k64)))
    }

    pub fn from_counts(cnt: impl Iterator<Item = u64>) -> Halving {
        let mut pre = vec![0u64];
        for c in cnt {
            pre.push(pre.last().unwrap() + c);
        }
        Halving { pre }
    }

    pub fn bytes(&self, lo: u32, hi: u32) -> u64 {
        self.pre[hi as usize] - self.pre[lo as usize]
    }

    fn chunks(&self) -> u32 {
        (self.pre.len() - 1) as u32
    }

    /// Recursive halving; returns the frontier and the chunk range x ends with.
    pub fn reduce_scatter(&self, g: &mut Prog, mut f: Frontier, x: u32, masks: &[u32], map: impl Fn(u32) -> u32) -> (Frontier, u32, u32) {
        let (mut lo, mut hi) = (0, self.chunks());
        for &m in masks {
            let q = map(x ^ m);
            let mid = lo + (hi - lo) / 2;
            let (keep, give) = if x & m == 0 { ((lo, mid), (mid, hi)) } else { ((mid, hi), (lo, mid)) };
            f = g.sendrecv(f.ids(), q, self.bytes(give.0, give.1), q, self.bytes(keep.0, keep.1));
            (lo, hi) = keep;
        }
        (f, lo, hi)
    }

    /// Range of x's partner across mask m when x holds [lo, hi).
    fn sibling(x: u32, m: u32, lo: u32, hi: u32) -> (u32, u32) {
        let len = hi - lo;
        if x & m == 0 {
            (hi, hi + len)
        } else {
            (lo - len, lo)
        }
    }

    /// Recursive-doubling allgather undoing `reduce_scatter` (masks in reverse order).
    pub fn allgather(&self, g: &mut Prog, mut f: Frontier, x: u32, masks: &[u32], range: (u32, u32), map: impl Fn(u32) -> u32) -> Frontier {
        let (mut lo, mut hi) = range;
        for &m in masks {
            let q = map(x ^ m);
            let (slo, shi) = Halving::sibling(x, m, lo, hi);
            f = g.sendrecv(f.ids(), q, self.bytes(lo, hi), q, self.bytes(slo, shi));
            (lo, hi) = (lo.min(slo), hi.max(shi));
        }
        f
    }

    /// Binomial gather of the pieces to new rank 0 (masks in reverse order): a rank with bit
    /// m set sends all it holds to x XOR m and stops; the others receive, one after the other.
    pub fn gather_to_zero(&self, g: &mut Prog, mut f: Frontier, x: u32, masks: &[u32], range: (u32, u32), map: impl Fn(u32) -> u32) -> Frontier {
        let (mut lo, mut hi) = range;
        for &m in masks {
            let q = map(x ^ m);
            if x & m != 0 {
                return Frontier::one(g.send(q, self.bytes(lo, hi), f.ids()));
            }
            let (slo, shi) = Halving::sibling(x, m, lo, hi);
            f = Frontier::one(g.recv(q, self.bytes(slo, shi), f.ids()));
            (lo, hi) = (lo.min(slo), hi.max(shi));
        }
        f
    }
}
