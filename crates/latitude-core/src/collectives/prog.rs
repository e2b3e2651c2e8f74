//! One rank's part of a collective as a tiny program: its sends, receives and (zero-length
//! join) calcs in issue order, with `requires`/`irequires` edges between them. Peers are
//! ranks *in the communicator*; [`super::place`] maps them to world ranks and a tag.
//!
//! Algorithms only describe one rank, using nothing but that rank's own MPI arguments, so a
//! trace converter (which sees one rank at a time) and a generator (which calls every rank)
//! share the same code.

use crate::graph::Dep;

/// Index of an op inside a [`Prog`].
pub type Id = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum POp {
    Send {
        peer: u32,
        bytes: u64,
    },
    Recv {
        peer: u32,
        bytes: u64,
    },
    Calc {
        ns: u64,
    },
    /// A local copy of `bytes` on the rank's CPU (the rank's own block): a calc priced b·O.
    Copy {
        bytes: u64,
    },
}

#[derive(Clone, Debug, Default)]
pub struct Prog {
    pub ops: Vec<POp>,
    /// (dependent, prerequisite, kind)
    pub deps: Vec<(Id, Id, Dep)>,
}

impl Prog {
    pub fn new() -> Prog {
        Prog::default()
    }

    pub fn clear(&mut self) {
        self.ops.clear();
        self.deps.clear();
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    fn push(&mut self, op: POp, after: &[Id]) -> Id {
        let id = self.ops.len() as Id;
        self.ops.push(op);
        for &a in after {
            self.deps.push((id, a, Dep::Requires));
        }
        id
    }

    /// Send `bytes` to comm rank `peer` once every op in `after` has finished.
    pub fn send(&mut self, peer: u32, bytes: u64, after: &[Id]) -> Id {
        self.push(POp::Send { peer, bytes }, after)
    }

    pub fn recv(&mut self, peer: u32, bytes: u64, after: &[Id]) -> Id {
        self.push(POp::Recv { peer, bytes }, after)
    }

    pub fn calc(&mut self, ns: u64, after: &[Id]) -> Id {
        self.push(POp::Calc { ns }, after)
    }

    /// Put a local copy of `bytes` before the whole program: it becomes op 0 and every op
    /// without a predecessor now requires it (MPI libraries copy the rank's own block first).
    pub fn copy_first(&mut self, bytes: u64) {
        let mut start = Vec::new();
        self.boundary(&mut start, &mut Vec::new());
        self.ops.insert(0, POp::Copy { bytes });
        for d in self.deps.iter_mut() {
            d.0 += 1;
            d.1 += 1;
        }
        self.deps.extend(start.into_iter().map(|s| (s + 1, 0, Dep::Requires)));
    }

    pub fn requires(&mut self, a: Id, b: Id) {
        self.deps.push((a, b, Dep::Requires));
    }

    /// MPICH's `MPIC_Sendrecv`: the send and the receive run concurrently, both after
    /// `after`; the next round waits for both. Returns the new frontier.
    pub fn sendrecv(&mut self, after: &[Id], to: u32, send_bytes: u64, from: u32, recv_bytes: u64) -> Frontier {
        let s = self.send(to, send_bytes, after);
        let r = self.recv(from, recv_bytes, after);
        Frontier::two(s, r)
    }

    /// Append `other` so that it runs after this program: `other`'s start ops require this
    /// program's end ops (composition, e.g. reduce then bcast).
    pub fn then(&mut self, other: &Prog) {
        let (mut start, mut end) = (Vec::new(), Vec::new());
        self.boundary(&mut Vec::new(), &mut end);
        other.boundary(&mut start, &mut Vec::new());
        let base = self.ops.len() as Id;
        self.ops.extend_from_slice(&other.ops);
        self.deps.extend(other.deps.iter().map(|&(a, b, d)| (a + base, b + base, d)));
        for &s in &start {
            for &e in &end {
                self.deps.push((s + base, e, Dep::Requires));
            }
        }
    }

    /// The program's boundary, in issue order: `start` = ops with no predecessor inside it
    /// (they wait for whatever precedes the collective), `end` = ops no other op `requires`
    /// (the collective is complete when they are).
    pub fn boundary(&self, start: &mut Vec<Id>, end: &mut Vec<Id>) {
        start.clear();
        end.clear();
        let n = self.ops.len();
        let mut has_pred = vec![false; n];
        let mut has_req_succ = vec![false; n];
        for &(a, b, dep) in &self.deps {
            has_pred[a as usize] = true;
            if dep == Dep::Requires {
                has_req_succ[b as usize] = true;
            }
        }
        for i in 0..n {
            if !has_pred[i] {
                start.push(i as Id);
            }
            if !has_req_succ[i] {
                end.push(i as Id);
            }
        }
    }
}

/// The ops a rank's next step waits for (at most two: a send and a receive).
#[derive(Clone, Copy, Debug, Default)]
pub struct Frontier {
    ids: [Id; 2],
    n: u8,
}

impl Frontier {
    pub const EMPTY: Frontier = Frontier { ids: [0; 2], n: 0 };
    pub fn one(a: Id) -> Frontier {
        Frontier { ids: [a, 0], n: 1 }
    }
    pub fn two(a: Id, b: Id) -> Frontier {
        Frontier { ids: [a, b], n: 2 }
    }
    pub fn ids(&self) -> &[Id] {
        &self.ids[..self.n as usize]
    }
}

/// ⌈log₂ p⌉ for p ≥ 1.
pub fn ceil_log2(p: u32) -> u32 {
    if p <= 1 {
        0
    } else {
        32 - (p - 1).leading_zeros()
    }
}

/// Largest power of two ≤ p (p ≥ 1).
pub fn pof2_floor(p: u32) -> u32 {
    1 << (31 - p.leading_zeros())
}

/// Lowest set bit of v (v > 0).
pub fn lowbit(v: u32) -> u32 {
    v & v.wrapping_neg()
}

/// (r + d) mod p without overflow.
pub fn add_mod(r: u32, d: u32, p: u32) -> u32 {
    ((r as u64 + d as u64) % p as u64) as u32
}

/// (r − d) mod p for d ≤ p.
pub fn sub_mod(r: u32, d: u32, p: u32) -> u32 {
    ((r as u64 + p as u64 - (d % p) as u64) % p as u64) as u32
}
