//! Scan and exscan (inclusive / exclusive prefix reductions of n-byte vectors).
//!
//! * recdoub (MPICH): for 2^k = 1, 2, …: exchange the partial result with r XOR 2^k if that
//!   rank exists. Depth ⌈log₂ p⌉.
//! * linear: a chain 0 → 1 → … → p − 1. Depth p − 1.

use super::prog::{Frontier, Prog};
use super::RankCall;

pub fn recdoub(g: &mut Prog, c: &RankCall) {
    let (p, r, n) = (c.size, c.me, c.bytes);
    let mut f = Frontier::EMPTY;
    let mut mask = 1u32;
    while mask < p {
        let q = r ^ mask;
        if q < p {
            f = g.sendrecv(f.ids(), q, n, q, n);
        }
        mask = mask.saturating_mul(2);
    }
}

pub fn linear(g: &mut Prog, c: &RankCall) {
    let (p, r, n) = (c.size, c.me, c.bytes);
    let f = if r > 0 { Frontier::one(g.recv(r - 1, n, &[])) } else { Frontier::EMPTY };
    if r + 1 < p {
        g.send(r + 1, n, f.ids());
    }
}
