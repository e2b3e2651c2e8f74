//! How many messages an algorithm sends in one collective on `p` ranks, in closed form, so a
//! job's graph size can be known before it is generated (`synth::budget`).
//! `tests/collectives.rs` checks every form against the emitted programs for p = 2..64.

use super::{ceil_log2, pof2_floor, Algorithm, CollKind};

use Algorithm as A;
use CollKind as K;

/// Messages of `kind` with `alg` on `p` ranks moving `bytes` (the call's byte count, as
/// `RankCall::bytes`); None for a pair without a closed form (v-collectives).
pub fn messages(kind: CollKind, alg: Algorithm, p: u32, bytes: u64) -> Option<u128> {
    if p < 2 || alg == A::None {
        return Some(0);
    }
    let lg = ceil_log2(p) as u128;
    let q = pof2_floor(p) as u128;
    let lq = q.trailing_zeros() as u128;
    let p = p as u128;
    let rem = p - q;
    let nseg = |seg: u64| if bytes == 0 { 1 } else { bytes.div_ceil(seg) as u128 };
    Some(match (kind, alg) {
        (K::Barrier | K::Allreduce | K::Allgather, A::Dissemination | A::Schedgen) => p * lg,
        (K::Barrier | K::Allreduce | K::Allgather, A::RecDoub) => q * lq + 2 * rem,
        (K::Barrier, A::Linear) => 2 * (p - 1),
        (K::Bcast | K::Reduce, A::Binomial | A::Binary | A::Linear | A::Schedgen) => p - 1,
        (K::Bcast | K::Reduce, A::Chain { segment }) => (p - 1) * nseg(segment),
        (K::Bcast, A::ScatterAllgather) => p - 1 + p * (p - 1),
        (K::Reduce, A::Rabenseifner) => rem + q * lq + q - 1,
        (K::Allreduce, A::Ring) => 2 * p * (p - 1),
        (K::Allreduce, A::Rabenseifner) => 2 * rem + 2 * q * lq,
        (K::Allreduce, A::ReduceBcast) => 2 * (p - 1),
        (K::Allgather | K::Alltoall | K::ReduceScatter, A::Ring | A::Pairwise | A::Linear | A::Schedgen) => p * (p - 1),
        (K::Allgather | K::Alltoall, A::Bruck) => p * lg,
        (K::Gather | K::Scatter, A::Linear | A::Binomial) => p - 1,
        (K::ReduceScatter, A::RecHalving) => 2 * rem + q * lq,
        (K::Scan | K::Exscan, A::RecDoub) => (0..lg as u32).map(|k| (0..p).filter(|r| (r ^ (1 << k)) < p).count() as u128).sum(),
        (K::Scan | K::Exscan, A::Linear) => p - 1,
        _ => return None,
    })
}
