//! Alltoall(v) algorithms. `RankCall::block(j)` is what this rank sends to j,
//! `recv_block(j)` what it receives from j (equal for alltoall).
//!
//! * pairwise (MPICH long-message): p − 1 `MPIC_Sendrecv` steps, partner r XOR i when p is
//!   a power of two, else send to r + i and receive from r − i. Depth p − 1.
//! * linear (MPICH medium-message "scattered", Open MPI basic, Schedgen): all receives and
//!   sends posted at once, peers r ± i in order i = 1 … p − 1. Depth 1.
//! * bruck (MPICH short-message, equal blocks only): ⌈log₂ p⌉ steps; in step k a rank sends
//!   the blocks whose index has bit k set to r + 2^k and receives as many from r − 2^k.

use super::prog::{add_mod, sub_mod, Frontier, Prog};
use super::RankCall;

pub fn pairwise(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    let pof2 = p.is_power_of_two();
    let mut f = Frontier::EMPTY;
    for i in 1..p {
        let (to, from) = if pof2 { (r ^ i, r ^ i) } else { (add_mod(r, i, p), sub_mod(r, i, p)) };
        f = g.sendrecv(f.ids(), to, c.block(to), from, c.recv_block(from));
    }
}

pub fn linear(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    for i in 1..p {
        let (to, from) = (add_mod(r, i, p), sub_mod(r, i, p));
        g.send(to, c.block(to), &[]);
        g.recv(from, c.recv_block(from), &[]);
    }
}

/// Number of j in [0, p) with bit d (a power of two) set.
fn with_bit(p: u32, d: u32) -> u64 {
    let (p, d) = (p as u64, d as u64);
    (p / (2 * d)) * d + (p % (2 * d)).saturating_sub(d)
}

pub fn bruck(g: &mut Prog, c: &RankCall) {
    let (p, r) = (c.size, c.me);
    let mut f = Frontier::EMPTY;
    let mut d = 1u32;
    while d < p {
        let bytes = c.bytes * with_bit(p, d);
        f = g.sendrecv(f.ids(), add_mod(r, d, p), bytes, sub_mod(r, d, p), bytes);
        d = d.saturating_mul(2);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn with_bit_counts() {
        for p in 1..70u32 {
            for k in 0..7 {
                let d = 1 << k;
                assert_eq!(super::with_bit(p, d), (0..p).filter(|j| j & d != 0).count() as u64);
            }
        }
    }
}
