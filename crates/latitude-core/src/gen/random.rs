//! Random MPI-like programs: rounds of computation and communication per rank, built the
//! way Schedgen builds graphs from traces (blocking ops chained with `requires`,
//! nonblocking ops overlapped with `irequires` and joined by a zero-length wait), so that
//! property tests exercise every rule of the model on realistic structure.

use super::Rng;
use crate::error::Result;
use crate::graph::{ExecGraph, GraphBuilder, Op};

#[derive(Clone, Debug)]
pub struct RandomSpec {
    pub ranks: u32,
    pub rounds: u32,
    pub seed: u64,
    /// Calc durations are uniform in 0..=max_calc ns.
    pub max_calc: u64,
    /// Message sizes are drawn from this list (bytes).
    pub sizes: Vec<u64>,
    /// Probability that a round uses Isend/Irecv + wait instead of blocking pairs.
    pub p_nonblocking: f64,
    /// Probability per rank and round of a message to a random partner.
    pub p_message: f64,
    /// Extra `requires` edges back to earlier rounds (multi-predecessor vertices).
    pub p_extra_edge: f64,
    /// Allow blocking exchanges that rely on eager buffering (both sides send first):
    /// the graph is then valid for eager messages only.
    pub unsafe_exchanges: bool,
    /// Probability that a computation also copies bytes (a size from `sizes`), as a
    /// collective's own-block copy does; 0 draws nothing, so older graphs stay the same.
    pub p_copy: f64,
    /// Probability that a computation is marked as the end of a collective call (what the
    /// call cost K prices); 0 draws nothing, so older graphs stay the same.
    pub p_call: f64,
}

impl Default for RandomSpec {
    fn default() -> Self {
        RandomSpec {
            ranks: 4,
            rounds: 6,
            seed: 1,
            max_calc: 5_000,
            sizes: vec![0, 1, 8, 64, 1024, 4096, 65536, 1 << 20],
            p_nonblocking: 0.5,
            p_message: 0.7,
            p_extra_edge: 0.2,
            unsafe_exchanges: false,
            p_copy: 0.0,
            p_call: 0.0,
        }
    }
}

struct Gen<'a> {
    b: GraphBuilder,
    rng: Rng,
    spec: &'a RandomSpec,
    last: Vec<u32>,
    history: Vec<Vec<u32>>,
}

pub fn random_graph(spec: &RandomSpec) -> Result<ExecGraph> {
    let p = spec.ranks.max(1);
    let mut g = Gen { b: GraphBuilder::new(p), rng: Rng::new(spec.seed), spec, last: Vec::new(), history: vec![Vec::new(); p as usize] };
    for r in 0..p {
        let c = g.calc(r);
        g.last.push(c);
    }
    for round in 0..spec.rounds {
        let pairs = g.pairs(round);
        if g.rng.chance(spec.p_nonblocking) {
            g.nonblocking_round(&pairs);
        } else {
            g.blocking_round(&pairs);
        }
        for r in 0..p {
            let c = g.calc(r);
            g.after(r, c);
        }
    }
    g.b.finish()
}

impl Gen<'_> {
    fn ranks(&self) -> u32 {
        self.spec.ranks.max(1)
    }
    fn ok<T>(r: std::result::Result<T, String>) -> T {
        r.expect("generator produces valid ops")
    }
    fn calc(&mut self, r: u32) -> u32 {
        let ns = self.rng.below(self.spec.max_calc + 1);
        let copy = if self.spec.p_copy > 0.0 && self.rng.chance(self.spec.p_copy) { self.size() } else { 0 };
        let v = Self::ok(self.b.add(r, Op { copy, ..Op::calc(ns) }));
        if self.spec.p_call > 0.0 && self.rng.chance(self.spec.p_call) {
            self.b.mark_collective(v, "barrier", "random", self.ranks(), 0, v as u64);
        }
        v
    }
    fn size(&mut self) -> u64 {
        let s = &self.spec.sizes;
        if s.is_empty() {
            8
        } else {
            s[self.rng.below(s.len() as u64) as usize]
        }
    }
    /// Make `v` the new tail of rank r (requires the old tail, maybe an older op too).
    fn after(&mut self, r: u32, v: u32) {
        let ri = r as usize;
        Self::ok(self.b.requires(v, self.last[ri]));
        if !self.history[ri].is_empty() && self.rng.chance(self.spec.p_extra_edge) {
            let k = self.rng.below(self.history[ri].len() as u64) as usize;
            let old = self.history[ri][k];
            Self::ok(self.b.requires(v, old));
        }
        self.history[ri].push(self.last[ri]);
        self.last[ri] = v;
    }
    /// Messages of one round: (src, dst, tag, bytes).
    fn pairs(&mut self, round: u32) -> Vec<(u32, u32, u32, u64)> {
        let p = self.ranks();
        let mut out = Vec::new();
        if p < 2 {
            return out;
        }
        for a in 0..p {
            if self.rng.chance(self.spec.p_message) {
                let mut b = self.rng.below(p as u64 - 1) as u32;
                if b >= a {
                    b += 1;
                }
                let s = self.size();
                out.push((a, b, round % 3, s));
            }
        }
        out
    }
    fn nonblocking_round(&mut self, msgs: &[(u32, u32, u32, u64)]) {
        let p = self.ranks();
        let mut ops: Vec<Vec<u32>> = vec![Vec::new(); p as usize];
        for &(a, b, tag, s) in msgs {
            let rv = Self::ok(self.b.add(b, Op::recv(s, a, tag)));
            let sv = Self::ok(self.b.add(a, Op::send(s, b, tag)));
            ops[b as usize].push(rv);
            ops[a as usize].push(sv);
        }
        for r in 0..p {
            let ri = r as usize;
            if ops[ri].is_empty() {
                continue;
            }
            let wait = if self.rng.chance(0.5) { self.overlapped(r, &ops[ri]) } else { self.chained(r, &ops[ri]) };
            self.history[ri].push(self.last[ri]);
            self.last[ri] = wait;
        }
    }
    /// All ops issued after the rank's tail, one computation overlapping them, a wait.
    fn overlapped(&mut self, r: u32, ops: &[u32]) -> u32 {
        let ri = r as usize;
        let overlap = self.calc(r);
        let wait = Self::ok(self.b.add(r, Op::calc(0)));
        for &o in ops {
            Self::ok(self.b.requires(o, self.last[ri]));
            Self::ok(self.b.irequires(overlap, o));
            Self::ok(self.b.requires(wait, o));
        }
        Self::ok(self.b.requires(wait, overlap));
        wait
    }

    /// Schedgen's shape: each op requires the computation before it, which `irequires` the
    /// previous op (computation resumes once the op is issued); a wait joins them all.
    fn chained(&mut self, r: u32, ops: &[u32]) -> u32 {
        let ri = r as usize;
        let mut before = self.last[ri];
        let wait = Self::ok(self.b.add(r, Op::calc(0)));
        for (i, &o) in ops.iter().enumerate() {
            let gap = self.calc(r);
            if i == 0 {
                Self::ok(self.b.requires(gap, before));
            } else {
                Self::ok(self.b.irequires(gap, before));
            }
            Self::ok(self.b.requires(o, gap));
            Self::ok(self.b.requires(wait, o));
            before = o;
        }
        let tail = self.calc(r);
        Self::ok(self.b.irequires(tail, before));
        Self::ok(self.b.requires(wait, tail));
        wait
    }

    fn blocking_round(&mut self, msgs: &[(u32, u32, u32, u64)]) {
        // Each rank takes part in at most one blocking message per round, in an order
        // that cannot deadlock (sender first on the lower rank of an exchange).
        let p = self.ranks() as usize;
        let mut busy = vec![false; p];
        for &(a, b, tag, s) in msgs {
            let (ai, bi) = (a as usize, b as usize);
            if busy[ai] || busy[bi] {
                continue;
            }
            busy[ai] = true;
            busy[bi] = true;
            let exchange = self.rng.chance(0.5);
            let sa = Self::ok(self.b.add(a, Op::send(s, b, tag)));
            self.after(a, sa);
            if !exchange {
                let rb = Self::ok(self.b.add(b, Op::recv(s, a, tag)));
                self.after(b, rb);
                continue;
            }
            let s2 = self.size();
            let b_sends_first = self.spec.unsafe_exchanges && self.rng.chance(0.5);
            if b_sends_first {
                let sb = Self::ok(self.b.add(b, Op::send(s2, a, tag)));
                self.after(b, sb);
                let rb = Self::ok(self.b.add(b, Op::recv(s, a, tag)));
                self.after(b, rb);
            } else {
                let rb = Self::ok(self.b.add(b, Op::recv(s, a, tag)));
                self.after(b, rb);
                let sb = Self::ok(self.b.add(b, Op::send(s2, a, tag)));
                self.after(b, sb);
            }
            let ra = Self::ok(self.b.add(a, Op::recv(s2, b, tag)));
            self.after(a, ra);
        }
    }
}
