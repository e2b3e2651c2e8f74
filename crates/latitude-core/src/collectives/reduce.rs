//! Reduce algorithms (no reduction cost is modelled). Ranks relative to the root:
//! v = (r − root) mod p.
//!
//! * binomial (MPICH): for 2^k = 1, 2, …: if bit k of v is set, send the partial result to
//!   v − 2^k and stop; else receive from v + 2^k (if it exists), one receive after the
//!   other. p − 1 messages, depth ⌈log₂ p⌉.
//! * binary: heap-ordered binary tree; a rank sends to (v−1)/2 after both children. Depth
//!   ⌊log₂ p⌋.
//! * linear: everybody sends to the root. Depth 1.
//! * chain: pipeline p−1 → … → 1 → 0 in segments, a rank forwards segment k once it has
//!   received it (and sent segment k−1). p − 1 latencies deep.
//! * rabenseifner (MPICH's long-message reduce): reduce-scatter by recursive halving among
//!   p' = 2^⌊log₂ p⌋ ranks (the odd ones of the first 2(p − p') hand their vector to the
//!   even neighbour first), then a binomial gather of the pieces to the root.
//!   Depth 2·log₂ p' (+1 if p is not a power of two).

use super::halving::{Group, Halving};
use super::prog::{add_mod, sub_mod, Prog};
use super::RankCall;

fn real(v: u32, c: &RankCall) -> u32 {
    add_mod(v, c.root, c.size)
}

pub fn binomial(g: &mut Prog, c: &RankCall) {
    let (p, n) = (c.size, c.bytes);
    let v = sub_mod(c.me, c.root, p);
    let mut recvs: Vec<u32> = Vec::new();
    let mut mask = 1u32;
    while mask < p {
        if v & mask != 0 {
            g.send(real(v - mask, c), n, &recvs);
            return;
        }
        if v + mask < p {
            let after: Vec<u32> = recvs.last().copied().into_iter().collect();
            recvs.push(g.recv(real(v + mask, c), n, &after));
        }
        mask = mask.saturating_mul(2);
    }
}

pub fn binary(g: &mut Prog, c: &RankCall) {
    let (p, n) = (c.size as u64, c.bytes);
    let v = sub_mod(c.me, c.root, c.size) as u64;
    let recvs: Vec<u32> = [2 * v + 1, 2 * v + 2].iter().filter(|&&ch| ch < p).map(|&ch| g.recv(real(ch as u32, c), n, &[])).collect();
    if v > 0 {
        g.send(real(((v - 1) / 2) as u32, c), n, &recvs);
    }
}

pub fn linear(g: &mut Prog, c: &RankCall) {
    let v = sub_mod(c.me, c.root, c.size);
    if v == 0 {
        for w in 1..c.size {
            g.recv(real(w, c), c.bytes, &[]);
        }
    } else {
        g.send(c.root, c.bytes, &[]);
    }
}

pub fn chain(g: &mut Prog, c: &RankCall, segment: u64) {
    let p = c.size;
    let v = sub_mod(c.me, c.root, p);
    let (mut last_r, mut last_s): (Option<u32>, Option<u32>) = (None, None);
    for size in super::bcast::segments(c.bytes, segment) {
        let r = (v + 1 < p).then(|| g.recv(real(v + 1, c), size, last_r.as_slice()));
        if v > 0 {
            let deps: Vec<u32> = r.iter().chain(last_s.iter()).copied().collect();
            last_s = Some(g.send(real(v - 1, c), size, &deps));
        }
        if r.is_some() {
            last_r = r;
        }
    }
}

pub fn rabenseifner(g: &mut Prog, c: &RankCall) {
    let p = c.size;
    let v = sub_mod(c.me, c.root, p);
    // Odd-to-even fold keeps relative rank 0 (the root) in the power-of-two group.
    let grp = Group::new(p, false);
    let n = c.bytes;
    let f = match grp.fold_in(g, v, n, |w| real(w, c)) {
        Some(f) => f,
        None => return,
    };
    let h = Halving::uniform(n, grp.pof2);
    let x = grp.newrank(v);
    let (f, lo, hi) = h.reduce_scatter(g, f, x, &grp.masks_up(), |q| real(grp.real(q), c));
    h.gather_to_zero(g, f, x, &grp.masks_down(), (lo, hi), |q| real(grp.real(q), c));
}
