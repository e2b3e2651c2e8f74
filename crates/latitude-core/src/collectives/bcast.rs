//! Broadcast algorithms. Ranks are taken relative to the root: v = (r − root) mod p.
//!
//! * binomial (MPICH): v receives from v − lowbit(v), then sends to v + 2^k for
//!   2^k = lowbit(v)/2 … 1 (the root: the largest power of two < p down to 1), one blocking
//!   send after the other. p − 1 messages, depth ⌈log₂ p⌉.
//! * binary: heap-ordered binary tree on v (children 2v+1, 2v+2). Depth ⌊log₂ p⌋.
//! * linear: the root sends to every rank at once (nonblocking sends). Depth 1.
//! * chain: a pipeline v = 0 → 1 → … → p−1 in segments of `segment` bytes; a rank forwards a
//!   segment as soon as it has it. (p − 1)·⌈n/segment⌉ messages, p − 1 latencies deep.
//! * scatter_allgather (van de Geijn, MPICH's long-message bcast): binomial scatter of
//!   ⌈n/p⌉-byte chunks (empty transfers skipped, as MPICH does), then a ring allgather of
//!   the chunks. Depth ⌈log₂ p⌉ + p − 1.

use super::prog::{add_mod, lowbit, Frontier, Prog};
use super::RankCall;

/// Comm rank of relative rank v.
fn real(v: u32, c: &RankCall) -> u32 {
    add_mod(v, c.root, c.size)
}

fn relative(c: &RankCall) -> u32 {
    super::prog::sub_mod(c.me, c.root, c.size)
}

/// Smallest power of two ≥ p, halved: the root's first child distance.
fn top_mask(p: u32) -> u32 {
    if p <= 1 {
        0
    } else {
        1 << (31 - (p - 1).leading_zeros())
    }
}

pub fn binomial(g: &mut Prog, c: &RankCall) {
    let (p, n) = (c.size, c.bytes);
    let v = relative(c);
    let mut f = Frontier::EMPTY;
    let mut mask = if v == 0 { top_mask(p) } else { lowbit(v) >> 1 };
    if v != 0 {
        f = Frontier::one(g.recv(real(v - lowbit(v), c), n, &[]));
    }
    while mask > 0 {
        if v + mask < p {
            f = Frontier::one(g.send(real(v + mask, c), n, f.ids()));
        }
        mask >>= 1;
    }
}

pub fn binary(g: &mut Prog, c: &RankCall) {
    let (p, n) = (c.size as u64, c.bytes);
    let v = relative(c) as u64;
    let mut f = Frontier::EMPTY;
    if v > 0 {
        f = Frontier::one(g.recv(real(((v - 1) / 2) as u32, c), n, &[]));
    }
    for child in [2 * v + 1, 2 * v + 2] {
        if child < p {
            f = Frontier::one(g.send(real(child as u32, c), n, f.ids()));
        }
    }
}

pub fn linear(g: &mut Prog, c: &RankCall) {
    let v = relative(c);
    if v == 0 {
        for w in 1..c.size {
            g.send(real(w, c), c.bytes, &[]);
        }
    } else {
        g.recv(c.root, c.bytes, &[]);
    }
}

/// Sizes of the pipeline segments of an n-byte message (one empty segment for n = 0).
pub(super) fn segments(n: u64, segment: u64) -> impl Iterator<Item = u64> {
    let k = if n == 0 { 1 } else { n.div_ceil(segment) };
    (0..k).map(move |i| (n - (i * segment).min(n)).min(segment))
}

pub fn chain(g: &mut Prog, c: &RankCall, segment: u64) {
    let p = c.size;
    let v = relative(c);
    let (mut last_r, mut last_s) = (None, None);
    for size in segments(c.bytes, segment) {
        let r = (v > 0).then(|| g.recv(real(v - 1, c), size, last_r.as_slice()));
        if v + 1 < p {
            let deps: Vec<u32> = r.iter().chain(last_s.iter()).copied().collect();
            last_s = Some(g.send(real(v + 1, c), size, &deps));
        }
        if r.is_some() {
            last_r = r;
        }
    }
}

/// Bytes of the chunks [lo, hi) of an n-byte vector cut into `chunk`-byte pieces.
fn chunk_bytes(n: u64, chunk: u64, lo: u64, hi: u64) -> u64 {
    (hi.saturating_mul(chunk)).min(n).saturating_sub(lo.saturating_mul(chunk).min(n))
}

pub fn scatter_allgather(g: &mut Prog, c: &RankCall) {
    let (p, n) = (c.size, c.bytes);
    let v = relative(c);
    let chunk = n.div_ceil(p as u64).max(1);
    // Binomial scatter: v's subtree is [v, v + min(lowbit(v), p − v)).
    let sub = |w: u32| if w == 0 { p } else { lowbit(w).min(p - w) };
    let mut f = Frontier::EMPTY;
    let mut mask = if v == 0 { top_mask(p) } else { lowbit(v) >> 1 };
    if v != 0 {
        let bytes = chunk_bytes(n, chunk, v as u64, (v + sub(v)) as u64);
        if bytes > 0 {
            f = Frontier::one(g.recv(real(v - lowbit(v), c), bytes, &[]));
        }
    }
    while mask > 0 {
        let w = v + mask;
        if w < p {
            let bytes = chunk_bytes(n, chunk, w as u64, (w + sub(w)) as u64);
            if bytes > 0 {
                f = Frontier::one(g.send(real(w, c), bytes, f.ids()));
            }
        }
        mask >>= 1;
    }
    // Ring allgather of the chunks: step i sends chunk v − i + 1, receives chunk v − i.
    let size = |j: u32| chunk_bytes(n, chunk, j as u64, j as u64 + 1);
    for i in 1..p {
        let send_chunk = super::prog::sub_mod(v, i - 1, p);
        let recv_chunk = super::prog::sub_mod(v, i, p);
        f = g.sendrecv(f.ids(), real(add_mod(v, 1, p), c), size(send_chunk), real(super::prog::sub_mod(v, 1, p), c), size(recv_chunk));
    }
}
