//! The stored order of graphs listed rank by rank (as GOAL files are): when each rank's
//! source order admits one, the order merges the ranks in source order (graph/order.rs,
//! `merge_ranks`) and is the same graph a general ordering builds, valid for every eager
//! limit.

use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::graph::{Dep, ExecGraph, Kind, Op, OrderKind, NONE};
use latitude_core::GraphBuilder;

/// `g` added rank by rank, each rank's ops in the order `g` stores them (so every
/// prerequisite comes earlier in its rank's source order).
fn rank_by_rank(g: &ExecGraph) -> GraphBuilder {
    let mut b = GraphBuilder::new(g.num_ranks());
    let mut id = vec![0u32; g.len()];
    let (off, ids) = g.by_rank();
    let mut stored = ids.clone();
    for r in 0..g.num_ranks() as usize {
        stored[off[r]..off[r + 1]].sort_unstable();
        for &v in &stored[off[r]..off[r + 1]] {
            let op = match g.kind(v) {
                Kind::Calc => Op { copy: g.copy(v), ..Op::calc(g.val(v)) },
                Kind::Send => Op::send(g.val(v), g.peer(v), g.tag(v)),
                Kind::Recv => Op::recv(g.val(v), g.peer(v), g.tag(v)),
            };
            id[v as usize] = b.add(r as u32, op).unwrap();
        }
    }
    for v in 0..g.len() as u32 {
        for (p, dep) in g.preds(v) {
            b.dep(id[v as usize], id[p as usize], dep).unwrap();
        }
    }
    b
}

/// Each rank's ops appear in source order.
fn in_source_order(g: &ExecGraph) -> bool {
    let mut next = vec![0u32; g.num_ranks() as usize];
    (0..g.len() as u32).all(|v| {
        let r = g.rank(v) as usize;
        next[r] += 1;
        g.local(v) == next[r] - 1
    })
}

/// Every op after its prerequisites, and after the partner of every message op it
/// `requires` (an `AnyProtocol` order).
fn valid_for_every_eager_limit(g: &ExecGraph) -> bool {
    (0..g.len() as u32).all(|v| g.preds(v).all(|(p, d)| p < v && (d == Dep::Irequires || g.kind(p) == Kind::Calc || g.partner(p) == NONE || g.partner(p) < v)))
}

/// The graph with ops named by (rank, position in the rank's stored order): its edges,
/// message pairs and ops.
fn shape(g: &ExecGraph) -> (Vec<((u32, u32), (u32, u32), bool)>, Vec<((u32, u32), u8, u64, u32, u32, u64)>) {
    let mut seen = vec![0u32; g.num_ranks() as usize];
    let pos: Vec<(u32, u32)> = (0..g.len() as u32)
        .map(|v| {
            let r = g.rank(v);
            seen[r as usize] += 1;
            (r, seen[r as usize] - 1)
        })
        .collect();
    let mut edges: Vec<_> = (0..g.len() as u32)
        .flat_map(|v| {
            let pair = (g.partner(v) != NONE).then(|| (pos[v as usize], pos[g.partner(v) as usize], false));
            g.preds(v).map(|(p, d)| (pos[v as usize], pos[p as usize], d == Dep::Irequires)).chain(pair).collect::<Vec<_>>()
        })
        .collect();
    edges.sort_unstable();
    let mut ops: Vec<_> = (0..g.len() as u32).map(|v| (pos[v as usize], g.kind(v) as u8, g.val(v), g.peer(v), g.tag(v), g.copy(v))).collect();
    ops.sort_unstable();
    (edges, ops)
}

#[test]
fn ranks_listed_in_a_valid_source_order_are_merged_into_the_same_graph() {
    let mut merged = 0;
    for seed in 0..40 {
        let p_copy = if seed % 2 == 0 { 0.3 } else { 0.0 }; // local copies (collectives' own blocks) move with their op
        let spec = RandomSpec { ranks: 6, rounds: 10, seed, unsafe_exchanges: seed % 3 == 0, p_copy, ..Default::default() };
        let g = random_graph(&spec).unwrap();
        let h = rank_by_rank(&g).finish().unwrap();
        assert_eq!(h.order_kind(), g.order_kind(), "seed {seed}");
        if g.order_kind() == OrderKind::AnyProtocol {
            // g's order, restricted to each rank, is a source order that works: merging
            // the ranks finds one, and it is the graph g.
            assert!(in_source_order(&h), "seed {seed}: not merged in source order");
            assert!(valid_for_every_eager_limit(&h), "seed {seed}: not an AnyProtocol order");
            assert!(shape(&h) == shape(&g), "seed {seed}: a different graph");
            merged += 1;
        }
    }
    assert!(merged >= 20, "only {merged} of 40 graphs have an AnyProtocol order");
}
