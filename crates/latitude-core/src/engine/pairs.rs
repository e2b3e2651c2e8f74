//! Pairwise sensitivities (the paper's App. I, eq. 7): λ_L^{ij} = ∂T/∂L_ij and
//! λ_G^{ij} = ∂T/∂G_ij, where L_ij and G_ij are the end-to-end latency and per-byte gap of
//! the pair of ranks {i, j} (symmetric, whatever parameters make them up on the machine).
//!
//! They are read off the critical path of one prediction: λ_L^{ij} is the number of
//! latency terms its messages between i and j pay (1 per eager message, 3 for a handshake
//! rendezvous on the sender's path, …) and λ_G^{ij} their bytes on the path (b(s) per
//! message, and per NIC gap). Where T is differentiable in every L_ij and G_ij these are the
//! partial derivatives, and they equal the reduced costs of the pairwise LP's columns. At a
//! tie between critical paths with different pair compositions T has no gradient; the
//! values are then those of the path the prediction follows (at every tie, the candidate
//! with more latency terms, then the lower index: `predict.rs`), a subgradient. Either way
//! they sum to the path's latency-term count, and weighted by each pair's route they give
//! the path's coefficient of every link class: Σ_ij λ_L^{ij}·n_c(i, j) = λ_c.
//!
//! Only pairs on the path appear (sparse: a 10⁴-rank run never needs a P² matrix).

use super::path::Step;
use crate::graph::ExecGraph;
use crate::model::p;

/// Sensitivities of one pair of ranks a ≤ b.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairSens {
    pub a: u32,
    pub b: u32,
    /// Latency terms of the pair on the critical path (∂T/∂L_ab).
    pub lat: u64,
    /// Bytes of the pair on the critical path (∂T/∂G_ab).
    pub bytes: u64,
    /// Path steps that carry the pair's network terms.
    pub steps: u64,
}

/// The pairs on the critical path `path`, sorted by (a, b).
pub fn pair_sensitivities(g: &ExecGraph, path: &[Step]) -> Vec<PairSens> {
    let mut out: Vec<PairSens> = path
        .iter()
        .filter_map(|s| {
            let u = s.send(g)?;
            let (i, j) = (g.rank(u), g.peer(u));
            Some(PairSens { a: i.min(j), b: i.max(j), lat: s.cost.a[p::L], bytes: s.cost.a[p::G_BYTE], steps: 1 })
        })
        .collect();
    out.sort_unstable_by_key(|x| (x.a, x.b));
    out.dedup_by(|x, acc| {
        if (x.a, x.b) != (acc.a, acc.b) {
            return false;
        }
        acc.lat += x.lat;
        acc.bytes += x.bytes;
        acc.steps += x.steps;
        true
    });
    out
}
