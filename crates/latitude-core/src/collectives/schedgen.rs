//! Schedgen v1's collectives, op for op (docs/reference/schedgen.md §6),
//! so that `--coll schedgen` reproduces what LogGOPSim users get.
//!
//! * dissemination (barrier: 1 byte; allreduce: the vector; allgather: one block — not
//!   doubling): for d = 1, 2, 4, … < p: send to r + d, receive from r − d; the send of a
//!   round requires only the previous round's receive. Receives wait for nothing. (As data
//!   flow this misses paths for p ≥ 6: rank r never hears from r − 5. Latitude's own
//!   `dissemination` chains whole rounds instead.)
//! * binomial bcast / reduce with Schedgen's virtual ranks (swap 0 and the root) and its
//!   round order: bcast round i: v < 2^i sends to v + 2^i, 2^i ≤ v < 2^(i+1) receives from
//!   v − 2^i, sends require the receive; reduce mirrors it, the send requiring every
//!   receive.
//! * linear alltoall is `alltoall::linear` (identical).

use super::prog::{ceil_log2, Prog};
use super::RankCall;

pub fn dissemination(g: &mut Prog, c: &RankCall, bytes: u64) {
    let (p, r) = (c.size, c.me);
    let mut prev: Option<u32> = None;
    let mut d = 1u32;
    while d < p {
        g.send(super::prog::add_mod(r, d, p), bytes, prev.as_slice());
        prev = Some(g.recv(super::prog::sub_mod(r, d, p), bytes, &[]));
        d = d.saturating_mul(2);
    }
}

/// Schedgen's vrank: swap 0 and the root (its own inverse).
fn swap(x: u32, root: u32) -> u32 {
    if x == 0 {
        root
    } else if x == root {
        0
    } else {
        x
    }
}

pub fn binomial_bcast(g: &mut Prog, c: &RankCall) {
    let (p, n) = (c.size as u64, c.bytes);
    let v = swap(c.me, c.root) as u64;
    let mut recv: Option<u32> = None;
    for i in 0..ceil_log2(c.size) {
        let d = 1u64 << i;
        if v < d && v + d < p {
            g.send(swap((v + d) as u32, c.root), n, recv.as_slice());
        }
        if d <= v && v < 2 * d {
            recv = Some(g.recv(swap((v - d) as u32, c.root), n, &[]));
        }
    }
}

pub fn binomial_reduce(g: &mut Prog, c: &RankCall) {
    let (p, n) = (c.size as u64, c.bytes);
    let v = swap(c.me, c.root) as u64;
    let mut send: Option<u32> = None;
    let mut recvs: Vec<u32> = Vec::new();
    for i in 0..ceil_log2(c.size) {
        let d = 1u64 << i;
        if v < d && v + d < p {
            recvs.push(g.recv(swap((v + d) as u32, c.root), n, &[]));
        }
        if d <= v && v < 2 * d {
            send = Some(g.send(swap((v - d) as u32, c.root), n, &[]));
        }
    }
    if let Some(s) = send {
        for &r in &recvs {
            g.requires(s, r);
        }
    }
}
