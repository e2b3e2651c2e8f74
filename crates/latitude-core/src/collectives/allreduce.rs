//! Allreduce algorithms (n = vector bytes; no reduction cost is modelled).
//!
//! * recdoub (MPICH short-message): fold onto p' = 2^⌊log₂ p⌋ ranks (even ranks among the
//!   first 2(p − p') hand their vector to r + 1), exchange the whole vector with
//!   new rank XOR 2^k, send the result back to the folded ranks.
//!   p'·log₂ p' + 2(p − p') messages of n bytes, depth log₂ p' (+2 if p is not a power of 2).
//! * ring: reduce-scatter then allgather around the ring in p chunks: 2(p − 1) steps,
//!   2p(p − 1) messages, 2(p − 1)·n bytes in all, depth 2(p − 1).
//! * rabenseifner (MPICH long-message): the same fold, recursive-halving reduce-scatter
//!   (distances 1, 2, 4, …) and recursive-doubling allgather over p' chunks.
//!   Depth 2·log₂ p' (+2), 2n(p' − 1) + 2(p − p')·n bytes.
//! * reduce_bcast: binomial reduce to rank 0, then binomial bcast from it. Depth 2⌈log₂ p⌉.
//! * dissemination: see `barrier.rs` (the full vector in every round, as Schedgen does).

use super::halving::{Fold, Group, Halving};
use super::prog::{add_mod, sub_mod, Frontier, Prog};
use super::{CollKind, RankCall};

pub fn recdoub(g: &mut Prog, c: &RankCall) {
    let (p, r, n) = (c.size, c.me, c.bytes);
    let grp = Group::new(p, true);
    let fold = grp.fold(g, r, n, n, |w| w);
    let mut f = match fold {
        Fold::In(f) => f,
        Fold::Out(_) => Frontier::EMPTY,
    };
    if let Fold::In(_) = fold {
        let x = grp.newrank(r);
        for m in grp.masks_up() {
            let q = grp.real(x ^ m);
            f = g.sendrecv(f.ids(), q, n, q, n);
        }
    }
    grp.unfold(g, r, &fold, f, n, |w| w);
}

pub fn ring(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    let h = Halving::uniform(c.bytes, p);
    let chunk = |j: u32| h.bytes(j, j + 1);
    let (right, left) = (add_mod(r, 1, p), sub_mod(r, 1, p));
    let mut f = Frontier::EMPTY;
    for s in 0..p.saturating_sub(1) {
        f = g.sendrecv(f.ids(), right, chunk(sub_mod(r, s, p)), left, chunk(sub_mod(r, s + 1, p)));
    }
    for s in 0..p.saturating_sub(1) {
        f = g.sendrecv(f.ids(), right, chunk(sub_mod(add_mod(r, 1, p), s, p)), left, chunk(sub_mod(r, s, p)));
    }
}

pub fn rabenseifner(g: &mut Prog, c: &RankCall) {
    let (p, r, n) = (c.size, c.me, c.bytes);
    let grp = Group::new(p, true);
    let fold = grp.fold(g, r, n, n, |w| w);
    let mut f = Frontier::EMPTY;
    if let Fold::In(f0) = fold {
        let x = grp.newrank(r);
        let h = Halving::uniform(n, grp.pof2);
        let (f1, lo, hi) = h.reduce_scatter(g, f0, x, &grp.masks_up(), |q| grp.real(q));
        f = h.allgather(g, f1, x, &grp.masks_down(), (lo, hi), |q| grp.real(q));
    }
    grp.unfold(g, r, &fold, f, n, |w| w);
}

pub fn reduce_bcast(g: &mut Prog, c: &RankCall) {
    let red = RankCall { kind: CollKind::Reduce, root: 0, ..*c };
    super::reduce::binomial(g, &red);
    let mut b = Prog::new();
    super::bcast::binomial(&mut b, &RankCall { kind: CollKind::Bcast, ..red });
    g.then(&b);
}
