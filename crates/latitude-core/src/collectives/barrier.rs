//! Barrier algorithms (also the dissemination allreduce, which is the same exchange pattern
//! carrying the whole vector every round).
//!
//! * dissemination (MPICH): round k, rank r sends to r + 2^k and receives from r − 2^k;
//!   ⌈log₂ p⌉ rounds, p·⌈log₂ p⌉ messages, ⌈log₂ p⌉ on every path.
//! * recursive doubling: the ranks ≥ p' (p' = largest power of two ≤ p) first notify
//!   r − p', the p' others exchange with r XOR 2^k, then release the extras;
//!   p'·log₂ p' + 2(p − p') messages, depth log₂ p' (+2 if p is not a power of two).
//! * linear: everybody signals rank 0, which answers everybody once all have arrived;
//!   2(p − 1) messages, depth 2.

use super::prog::{add_mod, pof2_floor, sub_mod, Frontier, Prog};
use super::RankCall;

pub fn dissemination(g: &mut Prog, c: &RankCall, bytes: u64) {
    let (p, r) = (c.size, c.me);
    let mut f = Frontier::EMPTY;
    let mut d = 1u32;
    while d < p {
        f = g.sendrecv(f.ids(), add_mod(r, d, p), bytes, sub_mod(r, d, p), bytes);
        d = d.saturating_mul(2);
    }
}

pub fn recdoub(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    if r >= pof2 {
        let s = g.send(r - pof2, 0, &[]);
        g.recv(r - pof2, 0, &[s]);
        return;
    }
    let mut f = Frontier::EMPTY;
    if r < rem {
        f = Frontier::one(g.recv(r + pof2, 0, &[]));
    }
    let mut mask = 1u32;
    while mask < pof2 {
        let q = r ^ mask;
        f = g.sendrecv(f.ids(), q, 0, q, 0);
        mask <<= 1;
    }
    if r < rem {
        g.send(r + pof2, 0, f.ids());
    }
}

pub fn linear(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    if r != 0 {
        g.send(0, 0, &[]);
        g.recv(0, 0, &[]);
        return;
    }
    let recvs: Vec<u32> = (1..p).map(|i| g.recv(i, 0, &[])).collect();
    let all = g.calc(0, &recvs);
    for i in 1..p {
        g.send(i, 0, &[all]);
    }
}
