//! Gather(v) and scatter(v). Ranks relative to the root: v = (r − root) mod p.
//!
//! * linear: the root receives from (sends to) every rank at once; the v-variants are only
//!   linear, because off the root a rank knows nothing but its own count (MPICH and Open MPI
//!   do the same). Depth 1.
//! * binomial (MPICH): gather — v collects the blocks of its subtree
//!   [v, v + min(lowbit(v), p − v)) from its children v + 2^k (one receive after the other)
//!   and sends them to v − lowbit(v); scatter is the mirror image. p − 1 messages, depth
//!   ⌈log₂ p⌉, b·Σ_{v≥1} min(lowbit(v), p − v) bytes.

use super::prog::{add_mod, lowbit, sub_mod, Frontier, Prog};
use super::RankCall;

fn real(v: u32, c: &RankCall) -> u32 {
    add_mod(v, c.root, c.size)
}

/// Blocks in v's subtree.
fn subtree(v: u32, p: u32) -> u64 {
    (if v == 0 { p } else { lowbit(v).min(p - v) }) as u64
}

pub fn gather_linear(g: &mut Prog, c: &RankCall) {
    if c.me != c.root {
        g.send(c.root, c.bytes, &[]);
        return;
    }
    for w in 1..c.size {
        let i = real(w, c);
        g.recv(i, c.block(i), &[]);
    }
}

pub fn scatter_linear(g: &mut Prog, c: &RankCall) {
    if c.me != c.root {
        g.recv(c.root, c.bytes, &[]);
        return;
    }
    for w in 1..c.size {
        let i = real(w, c);
        g.send(i, c.block(i), &[]);
    }
}

pub fn gather_binomial(g: &mut Prog, c: &RankCall) {
    let (p, b) = (c.size, c.bytes);
    let v = sub_mod(c.me, c.root, p);
    let mut f = Frontier::EMPTY;
    let mut mask = 1u32;
    while mask < p {
        if v & mask != 0 {
            g.send(real(v - mask, c), b * subtree(v, p), f.ids());
            return;
        }
        if v + mask < p {
            f = Frontier::one(g.recv(real(v + mask, c), b * subtree(v + mask, p), f.ids()));
        }
        mask = mask.saturating_mul(2);
    }
}

pub fn scatter_binomial(g: &mut Prog, c: &RankCall) {
    let (p, b) = (c.size, c.bytes);
    let v = sub_mod(c.me, c.root, p);
    let mut f = Frontier::EMPTY;
    let mut mask = if v == 0 {
        if p <= 1 {
            0
        } else {
            1 << (31 - (p - 1).leading_zeros())
        }
    } else {
        f = Frontier::one(g.recv(real(v - lowbit(v), c), b * subtree(v, p), &[]));
        lowbit(v) >> 1
    };
    while mask > 0 {
        if v + mask < p {
            f = Frontier::one(g.send(real(v + mask, c), b * subtree(v + mask, p), f.ids()));
        }
        mask >>= 1;
    }
}
