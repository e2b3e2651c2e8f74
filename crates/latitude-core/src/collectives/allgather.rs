//! Allgather(v) algorithms; block i is rank i's contribution (`RankCall::block`), so the
//! same code serves allgather (equal blocks) and allgatherv.
//!
//! * ring: p − 1 steps; in step i rank r passes block r − i + 1 to r + 1 and receives block
//!   r − i from r − 1. p(p − 1) messages, (p − 1)·Σblocks bytes, depth p − 1.
//! * recdoub: recursive doubling over p' = 2^⌊log₂ p⌋ ranks exchanging everything held
//!   (MPICH, power-of-two p). Other p: the ranks r ≥ p' first hand their block to r − p' and
//!   get the full result back at the end (Latitude's fix-up; MPICH uses a tree instead).
//!   p'·log₂ p' + 2(p − p') messages, depth log₂ p' (+2).
//! * bruck: ⌈log₂ p⌉ steps; in step k rank r sends the min(2^k, p − 2^k) blocks it holds
//!   from r on to r − 2^k and receives as many from r + 2^k. p⌈log₂ p⌉ messages, depth
//!   ⌈log₂ p⌉, equal blocks b: p(p − 1)·b bytes.

use super::prog::{add_mod, pof2_floor, sub_mod, Frontier, Prog};
use super::RankCall;

pub fn ring(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    let (right, left) = (add_mod(r, 1, p), sub_mod(r, 1, p));
    let mut f = Frontier::EMPTY;
    for i in 1..p {
        f = g.sendrecv(f.ids(), right, c.block(sub_mod(r, i - 1, p)), left, c.block(sub_mod(r, i, p)));
    }
}

/// Prefix sums of f over [0, n).
fn prefix(n: u32, f: impl Fn(u32) -> u64) -> Vec<u64> {
    let mut pre = Vec::with_capacity(n as usize + 1);
    pre.push(0);
    for i in 0..n {
        pre.push(pre[i as usize] + f(i));
    }
    pre
}

pub fn recdoub(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let total = c.total();
    if r >= pof2 {
        let s = g.send(r - pof2, c.block(r), &[]);
        g.recv(r - pof2, total, &[s]);
        return;
    }
    // What new rank y holds before the doubling: its block and its extra's.
    let held = prefix(pof2, |y| c.block(y) + if y < rem { c.block(y + pof2) } else { 0 });
    let group = |x: u32, m: u32| {
        let lo = x & !(m - 1);
        held[(lo + m) as usize] - held[lo as usize]
    };
    let mut f = Frontier::EMPTY;
    if r < rem {
        f = Frontier::one(g.recv(r + pof2, c.block(r + pof2), &[]));
    }
    let mut m = 1u32;
    while m < pof2 {
        let q = r ^ m;
        f = g.sendrecv(f.ids(), q, group(r, m), q, group(q, m));
        m <<= 1;
    }
    if r < rem {
        g.send(r + pof2, total, f.ids());
    }
}

/// Sum of blocks start, start+1, …, start+len−1 (mod p).
fn cyclic(pre: &[u64], p: u32, start: u32, len: u32) -> u64 {
    let end = start as u64 + len as u64;
    if end <= p as u64 {
        pre[end as usize] - pre[start as usize]
    } else {
        pre[p as usize] - pre[start as usize] + pre[(end - p as u64) as usize]
    }
}

pub fn bruck(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    let pre = prefix(p, |i| c.block(i));
    let mut f = Frontier::EMPTY;
    let mut d = 1u32;
    while d < p {
        let cnt = d.min(p - d);
        let from = add_mod(r, d, p);
        f = g.sendrecv(f.ids(), sub_mod(r, d, p), cyclic(&pre, p, r, cnt), from, cyclic(&pre, p, from, cnt));
        d = d.saturating_mul(2);
    }
}
