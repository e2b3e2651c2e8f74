//! Reduce_scatter(_block); block i (`RankCall::block`) is the part rank i ends with.
//!
//! * ring: p − 1 steps; in step s rank r passes its partial sum of block r − s − 1 to r + 1
//!   and receives block r − s − 2 from r − 1, ending with block r. p(p − 1) messages,
//!   (p − 1)·n bytes, depth p − 1.
//! * rechalving (MPICH, commutative ops): fold onto p' = 2^⌊log₂ p⌋ ranks (even ranks among
//!   the first 2(p − p') send their whole vector to r + 1), recursive halving with distances
//!   p'/2, …, 1 so that new rank x ends with its own block(s), then the folded ranks get
//!   their block. Depth log₂ p' (+2).

use super::halving::{Group, Halving};
use super::prog::{add_mod, sub_mod, Frontier, Prog};
use super::RankCall;

pub fn ring(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    let (right, left) = (add_mod(r, 1, p), sub_mod(r, 1, p));
    let mut f = Frontier::EMPTY;
    for s in 0..p.saturating_sub(1) {
        f = g.sendrecv(f.ids(), right, c.block(sub_mod(r, s + 1, p)), left, c.block(sub_mod(r, s + 2, p)));
    }
}

pub fn rechalving(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    let grp = Group::new(p, true);
    let n = c.total();
    let fold = grp.fold(g, r, n, n, |w| w);
    let mut f = Frontier::EMPTY;
    if let super::halving::Fold::In(f0) = fold {
        let rem = grp.rem;
        let h = Halving::from_counts((0..grp.pof2).map(|q| if q < rem { c.block(2 * q) + c.block(2 * q + 1) } else { c.block(q + rem) }));
        let x = grp.newrank(r);
        f = h.reduce_scatter(g, f0, x, &grp.masks_down(), |q| grp.real(q)).0;
    }
    // The folded (even) rank r & !1 gets its block back from its odd partner.
    grp.unfold(g, r, &fold, f, c.block(r & !1), |w| w);
}
