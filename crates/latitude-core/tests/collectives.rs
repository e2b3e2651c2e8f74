//! Every collective algorithm against closed forms (messages, bytes, messages on the longest
//! dependency path) for p = 2..64, and a brute-force data-reach check: "which ranks'
//! contributions has this op seen" is propagated along `requires` edges and matched messages
//! in topological order, and each collective's postcondition is checked on the result.

use latitude_core::collectives::{ceil_log2, emit, messages, place, pof2_floor, Algorithm, CollKind, Placed, Prog, RankCall};
use latitude_core::graph::{Dep, ExecGraph, GraphBuilder, Kind, NONE};
use latitude_core::net::Flat;

use Algorithm as A;
use CollKind as K;

/// Shape of a collective's graph.
#[derive(Debug, PartialEq, Eq)]
struct Shape {
    messages: u64,
    bytes: u64,
    depth: u64,
}

struct Case {
    kind: CollKind,
    alg: Algorithm,
    p: u32,
    root: u32,
    bytes: u64,
    blocks: Vec<u64>,
}

impl Case {
    fn new(kind: CollKind, alg: Algorithm, p: u32, bytes: u64) -> Case {
        Case { kind, alg, p, root: 0, bytes, blocks: Vec::new() }
    }

    /// Build the collective for every rank on a communicator whose members are world ranks
    /// `members` (a permutation inside a larger world, to exercise the mapping).
    fn build(&self, world: u32, members: &[u32]) -> ExecGraph {
        let mut b = GraphBuilder::new(world);
        let mut prog = Prog::new();
        let mut placed = Placed::default();
        for me in 0..self.p {
            let c = RankCall { kind: self.kind, size: self.p, me, root: self.root, bytes: self.bytes, blocks: &self.blocks, recv_blocks: &[] };
            emit(self.alg, &c, &mut prog).unwrap_or_else(|e| panic!("{:?} {:?} p={}: {e}", self.kind, self.alg, self.p));
            place(&mut b, &prog, members, me, 7, &mut placed).unwrap();
        }
        b.finish().unwrap_or_else(|e| panic!("{:?} {:?} p={} root={}: {e}", self.kind, self.alg, self.p, self.root))
    }

    fn graph(&self) -> ExecGraph {
        let members: Vec<u32> = (0..self.p).collect();
        self.build(self.p, &members)
    }
}

/// Vertices in an order where every op comes after its local predecessors and every recv
/// after its send (the stored order only guarantees what the engine needs: a recv's start
/// may come before its send).
fn message_order(g: &ExecGraph) -> Vec<u32> {
    let n = g.len();
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut indeg = vec![0u32; n];
    for v in 0..n as u32 {
        for (p, _) in g.preds(v) {
            succ[p as usize].push(v);
            indeg[v as usize] += 1;
        }
        if g.kind(v) == Kind::Recv {
            succ[g.partner(v) as usize].push(v);
            indeg[v as usize] += 1;
        }
    }
    let mut ready: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut out = Vec::with_capacity(n);
    while let Some(v) = ready.pop() {
        out.push(v);
        for &w in &succ[v as usize] {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                ready.push(w);
            }
        }
    }
    assert_eq!(out.len(), n, "messages and dependencies form a cycle");
    out
}

/// Messages, bytes, and the largest number of messages on a dependency path.
fn shape(g: &ExecGraph) -> Shape {
    let n = g.len();
    let mut depth = vec![0u64; n];
    let (mut messages, mut bytes) = (0, 0);
    for v in message_order(g) {
        let mut d = g.preds(v).map(|(p, _)| depth[p as usize]).max().unwrap_or(0);
        match g.kind(v) {
            Kind::Send => {
                messages += 1;
                bytes += g.val(v);
                let r = g.partner(v);
                assert_ne!(r, NONE);
                assert_eq!(g.val(v), g.val(r), "matched send and recv differ in size");
            }
            Kind::Recv => {
                let s = g.partner(v);
                d = d.max(depth[s as usize] + 1);
            }
            Kind::Calc => {}
        }
        depth[v as usize] = d;
    }
    Shape { messages, bytes, depth: depth.into_iter().max().unwrap_or(0) }
}

/// Per rank: the set of ranks whose contribution reached its ops (bit i = rank i).
fn reach(g: &ExecGraph) -> Vec<u64> {
    let n = g.len();
    let mut know = vec![0u64; n];
    let mut rank_know = vec![0u64; g.num_ranks() as usize];
    for v in message_order(g) {
        let mut k = 1u64 << g.rank(v);
        for (p, dep) in g.preds(v) {
            if dep == Dep::Requires {
                k |= know[p as usize];
            }
        }
        if g.kind(v) == Kind::Recv {
            k |= know[g.partner(v) as usize];
        }
        know[v as usize] = k;
        rank_know[g.rank(v) as usize] |= k;
    }
    rank_know
}

/// The collective's postcondition on the reach sets.
fn reach_ok(c: &Case, know: &[u64]) -> Result<(), String> {
    let p = c.p;
    let all = if p == 64 { u64::MAX } else { (1u64 << p) - 1 };
    for r in 0..p {
        let k = know[r as usize];
        let need = match c.kind {
            K::Bcast | K::Scatter | K::Scatterv => 1u64 << c.root,
            K::Reduce | K::Gather | K::Gatherv => {
                if r == c.root {
                    all
                } else {
                    0
                }
            }
            K::Scan => all >> (63 - r),
            K::Exscan => (1u64 << r) - 1,
            _ => all,
        };
        if k & need != need {
            return Err(format!("rank {r} has {k:b}, needs {need:b}"));
        }
    }
    Ok(())
}

fn lg(p: u32) -> u64 {
    ceil_log2(p) as u64
}

/// Closed forms. Sizes: `n` bytes (vector or block); tests use n divisible by p and p'.
fn expected(c: &Case) -> Shape {
    let p = c.p as u64;
    let n = c.bytes;
    let q = pof2_floor(c.p) as u64;
    let lq = q.trailing_zeros() as u64;
    let rem = p - q;
    let ex = u64::from(rem > 0);
    // A path through the fold, every round and the unfold exists iff rem > p'/2 (it runs
    // from a folded x to the folded x XOR (p' − 1)).
    let ex2 = u64::from(2 * rem > q);
    let lowbit = |v: u64| v & v.wrapping_neg();
    let subtree_sum: u64 = (1..p).map(|v| lowbit(v).min(p - v)).sum();
    let nseg = |seg: u64| if n == 0 { 1 } else { n.div_ceil(seg) };
    let s = |messages: u64, bytes: u64, depth: u64| Shape { messages, bytes, depth };
    match (c.kind, c.alg) {
        (K::Barrier, A::Dissemination) => s(p * lg(c.p), 0, lg(c.p)),
        (K::Barrier, A::RecDoub) => s(q * lq + 2 * rem, 0, lq + ex + ex2),
        (K::Barrier, A::Linear) => s(2 * (p - 1), 0, 2),
        (K::Barrier, A::Schedgen) => s(p * lg(c.p), p * lg(c.p), lg(c.p)),
        (K::Bcast | K::Reduce, A::Binomial | A::Binary | A::Schedgen) => s(p - 1, (p - 1) * n, lq),
        (K::Bcast | K::Reduce, A::Linear) => s(p - 1, (p - 1) * n, 1),
        (K::Bcast | K::Reduce, A::Chain { segment }) => s((p - 1) * nseg(segment), (p - 1) * n, p - 1),
        (K::Bcast, A::ScatterAllgather) => s(p - 1 + p * (p - 1), n / p * subtree_sum + (p - 1) * n, lq + p - 1),
        (K::Reduce, A::Rabenseifner) => s(rem + q * lq + q - 1, rem * n + n * (q - 1) + n * lq / 2, 2 * lq + ex),
        (K::Allreduce, A::RecDoub) => s(q * lq + 2 * rem, (q * lq + 2 * rem) * n, lq + ex + ex2),
        (K::Allreduce, A::Ring) => s(2 * p * (p - 1), 2 * (p - 1) * n, 2 * (p - 1)),
        (K::Allreduce, A::Rabenseifner) => s(2 * rem + 2 * q * lq, 2 * rem * n + 2 * n * (q - 1), 2 * lq + 2 * ex),
        (K::Allreduce, A::ReduceBcast) => s(2 * (p - 1), 2 * (p - 1) * n, 2 * lq),
        (K::Allreduce | K::Allgather, A::Dissemination | A::Schedgen) => s(p * lg(c.p), p * lg(c.p) * n, lg(c.p)),
        (K::Allgather, A::Ring) => s(p * (p - 1), p * (p - 1) * n, p - 1),
        (K::Allgather, A::RecDoub) => s(q * lq + 2 * rem, rem * n + p * (q - 1) * n + rem * p * n, lq + ex + ex2),
        (K::Allgather, A::Bruck) => s(p * lg(c.p), p * (p - 1) * n, lg(c.p)),
        (K::Alltoall, A::Pairwise) => s(p * (p - 1), p * (p - 1) * n, p - 1),
        (K::Alltoall, A::Linear | A::Schedgen) => s(p * (p - 1), p * (p - 1) * n, 1),
        (K::Alltoall, A::Bruck) => {
            let blocks: u64 = (0..lg(c.p)).map(|k| (0..p).filter(|j| j & (1 << k) != 0).count() as u64).sum();
            s(p * lg(c.p), p * blocks * n, lg(c.p))
        }
        (K::Gather | K::Scatter, A::Linear) => s(p - 1, (p - 1) * n, 1),
        (K::Gather | K::Scatter, A::Binomial) => s(p - 1, subtree_sum * n, lq),
        (K::ReduceScatter, A::Ring) => s(p * (p - 1), (p - 1) * p * n, p - 1),
        (K::ReduceScatter, A::RecHalving) => s(2 * rem + q * lq, rem * p * n + (q - 1) * p * n + rem * n, lq + ex + ex2),
        (K::Scan | K::Exscan, A::RecDoub) => {
            let m: u64 = (0..lg(c.p)).map(|k| (0..p).filter(|r| (r ^ (1 << k)) < p).count() as u64).sum();
            s(m, m * n, lg(c.p))
        }
        (K::Scan | K::Exscan, A::Linear) => s(p - 1, (p - 1) * n, p - 1),
        other => panic!("no closed form for {other:?}"),
    }
}

/// Every (collective, algorithm) pair with a closed form.
fn all_pairs() -> Vec<(CollKind, Algorithm)> {
    let mut v = Vec::new();
    for kind in [K::Barrier, K::Bcast, K::Reduce, K::Allreduce, K::Allgather, K::Alltoall, K::Gather, K::Scatter, K::ReduceScatter, K::Scan, K::Exscan] {
        for &alg in kind.algorithms() {
            if let A::Chain { .. } = alg {
                v.push((kind, A::Chain { segment: 1000 }));
            }
            v.push((kind, alg));
        }
    }
    v
}

fn bytes_for(p: u32) -> u64 {
    // Divisible by p and by p', so chunked algorithms split evenly.
    64 * p as u64 * pof2_floor(p) as u64
}

/// Does Schedgen's dissemination carry every rank's data to every rank? The k-th receive of
/// rank r carries the chain r − 2^k, r − 2^k − 2^(k−1), …, r − (2^(k+1) − 1) only, because a
/// send requires just the previous receive.
fn schedgen_covers(p: u32) -> bool {
    let mut seen = vec![false; p as usize];
    seen[0] = true;
    for k in 0..ceil_log2(p) {
        for j in 0..=k {
            let off = (1u64 << (k + 1)) - (1u64 << j);
            seen[(off % p as u64) as usize] = true;
        }
    }
    seen.iter().all(|&x| x)
}

/// Schedgen's dissemination misses data paths for some p (6, 10, …; see schedgen.rs).
fn schedgen_dissemination(kind: CollKind, alg: Algorithm) -> bool {
    alg == A::Schedgen && matches!(kind, K::Barrier | K::Allreduce | K::Allgather)
}

#[test]
fn closed_forms_and_data_reach_p2_to_64() {
    for (kind, alg) in all_pairs() {
        for p in 2..=64u32 {
            let roots: Vec<u32> = if kind.rooted() { vec![0, p - 1, p / 2] } else { vec![0] };
            for root in roots {
                let mut c = Case::new(kind, alg, p, bytes_for(p));
                c.root = root;
                let g = c.graph();
                let got = shape(&g);
                let want = expected(&c);
                assert_eq!(got, want, "{kind:?} {alg:?} p={p} root={root}");
                // The library's closed form (graph-size estimates) says the same.
                assert_eq!(messages(kind, alg, p, c.bytes), Some(want.messages as u128), "{kind:?} {alg:?} p={p}");
                let ok = reach_ok(&c, &reach(&g));
                if schedgen_dissemination(kind, alg) {
                    assert_eq!(ok.is_ok(), schedgen_covers(p), "{kind:?} {alg:?} p={p}: Schedgen's dissemination reach");
                } else {
                    ok.unwrap_or_else(|e| panic!("{kind:?} {alg:?} p={p} root={root}: {e}"));
                }
            }
        }
    }
}

#[test]
fn schedgen_dissemination_is_incomplete_for_some_sizes() {
    let bad: Vec<u32> = (2..=64).filter(|&p| !schedgen_covers(p)).collect();
    assert!(bad.contains(&6) && bad.contains(&8) && !bad.contains(&9), "{bad:?}");
}

#[test]
fn uneven_sizes_still_match_and_reach() {
    // Sizes not divisible by p: chunked algorithms must still pair sends and receives.
    for (kind, alg) in all_pairs() {
        for p in [2u32, 3, 5, 7, 12, 33] {
            for bytes in [0u64, 1, 13, 1001] {
                let c = Case { root: p - 1, ..Case::new(kind, alg, p, bytes) };
                let g = c.graph();
                let got = shape(&g);
                if !schedgen_dissemination(kind, alg) {
                    reach_ok(&c, &reach(&g)).unwrap_or_else(|e| panic!("{kind:?} {alg:?} p={p} n={bytes}: {e}"));
                }
                let want = match (kind, alg) {
                    (K::Bcast | K::Reduce, A::Binomial | A::Binary | A::Linear | A::Chain { .. } | A::Schedgen) => Some((p as u64 - 1) * bytes),
                    (K::Allreduce, A::Ring) => Some(2 * (p as u64 - 1) * bytes),
                    (K::Allreduce, A::Rabenseifner) => {
                        let q = pof2_floor(p) as u64;
                        Some(2 * (p as u64 - q) * bytes + 2 * bytes * (q - 1))
                    }
                    _ => None,
                };
                if let Some(w) = want {
                    assert_eq!(got.bytes, w, "{kind:?} {alg:?} p={p} n={bytes}");
                }
            }
        }
    }
}

#[test]
fn vector_variants_with_per_rank_counts() {
    let mut rng = latitude_core::gen::Rng::new(5);
    for p in [2u32, 3, 4, 6, 8, 13, 16, 31, 64] {
        let blocks: Vec<u64> = (0..p).map(|_| rng.below(5000)).collect();
        let total: u64 = blocks.iter().sum();
        let pq = pof2_floor(p) as u64;
        let rem = p as u64 - pq;
        for alg in [A::Ring, A::RecDoub, A::Bruck] {
            let c = Case { blocks: blocks.clone(), ..Case::new(K::Allgatherv, alg, p, 0) };
            let g = c.graph();
            reach_ok(&c, &reach(&g)).unwrap();
            let want = match alg {
                A::RecDoub => blocks[pq as usize..].iter().sum::<u64>() + (pq - 1) * total + rem * total,
                _ => (p as u64 - 1) * total,
            };
            assert_eq!(shape(&g).bytes, want, "allgatherv {alg:?} p={p}");
        }
        for alg in [A::Ring, A::RecHalving] {
            let c = Case { blocks: blocks.clone(), ..Case::new(K::ReduceScatter, alg, p, 0) };
            let g = c.graph();
            reach_ok(&c, &reach(&g)).unwrap();
            let want = match alg {
                A::RecHalving => rem * total + (pq - 1) * total + (0..rem as usize).map(|i| blocks[2 * i]).sum::<u64>(),
                _ => (p as u64 - 1) * total,
            };
            assert_eq!(shape(&g).bytes, want, "reduce_scatter {alg:?} p={p}");
        }
    }
}

/// Alltoallv, gatherv and scatterv: each rank only passes what its own MPI call has.
#[test]
fn per_rank_arguments_of_v_collectives() {
    let mut rng = latitude_core::gen::Rng::new(9);
    for p in [2u32, 3, 5, 8, 17] {
        let m: Vec<Vec<u64>> = (0..p).map(|_| (0..p).map(|_| rng.below(100)).collect()).collect();
        for alg in [A::Pairwise, A::Linear] {
            let mut b = GraphBuilder::new(p);
            let members: Vec<u32> = (0..p).collect();
            let (mut prog, mut placed) = (Prog::new(), Placed::default());
            for me in 0..p {
                let send = &m[me as usize];
                let recv: Vec<u64> = (0..p as usize).map(|j| m[j][me as usize]).collect();
                let c = RankCall { kind: K::Alltoallv, size: p, me, root: 0, bytes: 0, blocks: send, recv_blocks: &recv };
                emit(alg, &c, &mut prog).unwrap();
                place(&mut b, &prog, &members, me, 3, &mut placed).unwrap();
            }
            let g = b.finish().unwrap();
            let off_diag: u64 = (0..p as usize).flat_map(|i| (0..p as usize).filter(move |&j| j != i).map(move |j| (i, j))).map(|(i, j)| m[i][j]).sum();
            assert_eq!(shape(&g).bytes, off_diag, "alltoallv {alg:?} p={p}");
        }
        let root = p / 2;
        for kind in [K::Gatherv, K::Scatterv] {
            let mut b = GraphBuilder::new(p);
            let members: Vec<u32> = (0..p).collect();
            let (mut prog, mut placed) = (Prog::new(), Placed::default());
            let counts = &m[0];
            for me in 0..p {
                let c = if me == root {
                    RankCall { kind, size: p, me, root, bytes: counts[me as usize], blocks: counts, recv_blocks: &[] }
                } else {
                    RankCall { kind, size: p, me, root, bytes: counts[me as usize], blocks: &[], recv_blocks: &[] }
                };
                emit(A::Linear, &c, &mut prog).unwrap();
                place(&mut b, &prog, &members, me, 3, &mut placed).unwrap();
            }
            let g = b.finish().unwrap();
            let want: u64 = counts.iter().enumerate().filter(|&(i, _)| i != root as usize).map(|(_, c)| c).sum();
            assert_eq!(shape(&g).bytes, want);
        }
    }
}

#[test]
fn sub_communicator_members_map_to_world_ranks() {
    // A 5-rank communicator made of world ranks 9, 2, 7, 0, 4 in a 10-rank world.
    let members = [9u32, 2, 7, 0, 4];
    for (kind, alg) in all_pairs() {
        let c = Case { root: 3, ..Case::new(kind, alg, 5, 640) };
        let g = c.build(10, &members);
        let want = expected(&c);
        assert_eq!(shape(&g), want, "{kind:?} {alg:?}");
        for v in 0..g.len() as u32 {
            assert!(members.contains(&g.rank(v)));
            if g.kind(v) != Kind::Calc {
                assert!(members.contains(&g.peer(v)));
            }
        }
    }
}

#[test]
fn schedgen_variants_match_the_reference_op_order() {
    // docs/reference/schedgen.md §6, binomial bcast: round 0: 0→1; round 1: 0→2, 1→3; root 0, p = 4.
    let c = RankCall::new(K::Bcast, 4, 1, 8);
    let mut g = Prog::new();
    emit(A::Schedgen, &c, &mut g).unwrap();
    use latitude_core::collectives::POp;
    assert_eq!(g.ops, vec![POp::Recv { peer: 0, bytes: 8 }, POp::Send { peer: 3, bytes: 8 }]);
    // Dissemination: S(r+1), R(r−1), S(r+2), R(r−2); the second send requires the first recv only.
    let c = RankCall::new(K::Allreduce, 4, 0, 8);
    emit(A::Schedgen, &c, &mut g).unwrap();
    assert_eq!(g.ops, vec![POp::Send { peer: 1, bytes: 8 }, POp::Recv { peer: 3, bytes: 8 }, POp::Send { peer: 2, bytes: 8 }, POp::Recv { peer: 2, bytes: 8 }]);
    assert_eq!(g.deps, vec![(2, 1, Dep::Requires)]);
    // Root swap: with root 2, rank 0 plays virtual rank 2 and receives from virtual 0 = rank 2.
    let c = RankCall { root: 2, ..RankCall::new(K::Bcast, 4, 0, 8) };
    emit(A::Schedgen, &c, &mut g).unwrap();
    assert_eq!(g.ops, vec![POp::Recv { peer: 2, bytes: 8 }]);
}

#[test]
fn single_rank_and_bad_arguments() {
    let mut g = Prog::new();
    for (kind, alg) in all_pairs() {
        let c = RankCall::new(kind, 1, 0, 100);
        emit(alg, &c, &mut g).unwrap();
        use latitude_core::collectives::POp;
        assert!(g.ops.iter().all(|op| matches!(op, POp::Calc { .. } | POp::Copy { .. })), "{kind:?} {alg:?} on one rank sends");
    }
    assert!(emit(A::Ring, &RankCall::new(K::Bcast, 4, 0, 1), &mut g).unwrap_err().contains("no algorithm"));
    assert!(emit(A::Binomial, &RankCall::new(K::Bcast, 4, 4, 1), &mut g).unwrap_err().contains("outside"));
    let c = RankCall { root: 9, ..RankCall::new(K::Reduce, 4, 0, 1) };
    assert!(emit(A::Binomial, &c, &mut g).unwrap_err().contains("root 9"));
}

/// The generator-facing API: every rank of a sub-communicator at once, chained after each
/// rank's computation; T = computation + depth × L (eager, o = G = 0).
#[test]
fn emit_blocking_all_chains_after_each_rank() {
    use latitude_core::collectives::{coll_tag, emit_blocking_all};
    use latitude_core::engine::{predict, Plan};
    use latitude_core::graph::Op;
    use latitude_core::model::{Model, Point};
    let members = [1u32, 3, 5, 7, 9, 11, 13, 15];
    let mut b = GraphBuilder::new(16);
    let mut after = Vec::new();
    for (i, &w) in members.iter().enumerate() {
        after.push(Some(b.add(w, Op::calc(100 * (i as u64 + 1))).unwrap()));
    }
    let calls: Vec<RankCall> = (0..8).map(|me| RankCall::new(K::Allreduce, 8, me, 64)).collect();
    let done = emit_blocking_all(&mut b, A::RecDoub, &calls, &members, coll_tag(1, 0), &after).unwrap();
    assert_eq!(done.len(), 8);
    let mut g = b.finish().unwrap();
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let pr = predict(&g, &plan, &Flat, &Point::from_ns(&[1000.0, 0.0, 0.0, 0.0, 0.0]).unwrap()).unwrap();
    // The slowest rank (800 ns) starts the last round-1 exchange; 3 rounds of L follow.
    assert_eq!(pr.runtime_ns(), 800.0 + 3.0 * 1000.0);
}

/// The own-block copies MPI libraries make (docs/collectives.md, "Local copies"): alltoall(v)
/// and allgather(v) on every rank, gather(v)/scatter(v) at the root only, none for the other
/// collectives, Schedgen's variants or `none`; the copy is op 0 and every other op without a
/// predecessor requires it, so the algorithm starts after it.
#[test]
fn own_block_copies_come_first() {
    use latitude_core::collectives::POp;
    use latitude_core::graph::Dep;
    let mut g = Prog::new();
    for (kind, alg) in all_pairs().into_iter().chain([(K::Alltoall, A::None), (K::Gather, A::None)]) {
        for me in 0..4 {
            let blocks = [10u64, 20, 30, 40];
            let mut c = RankCall { root: 2, ..RankCall::new(kind, 4, me, 100) };
            if matches!(kind, K::Alltoallv | K::Allgatherv | K::Gatherv | K::Scatterv) && (me == 2 || matches!(kind, K::Alltoallv | K::Allgatherv)) {
                c.blocks = &blocks;
            }
            emit(alg, &c, &mut g).unwrap();
            let copies: Vec<u64> = g.ops.iter().filter_map(|op| if let POp::Copy { bytes } = op { Some(*bytes) } else { None }).collect();
            let own = if c.blocks.is_empty() { 100 } else { blocks[me as usize] };
            let want = match (kind, alg) {
                (_, A::Schedgen | A::None) => vec![],
                (K::Alltoall | K::Alltoallv | K::Allgather | K::Allgatherv, _) => vec![own],
                (K::Gather | K::Gatherv | K::Scatter | K::Scatterv, _) if me == 2 => vec![own],
                _ => vec![],
            };
            assert_eq!(copies, want, "{kind:?} {alg:?} rank {me}");
            if want.is_empty() {
                continue;
            }
            assert_eq!(g.ops[0], POp::Copy { bytes: own }, "{kind:?} {alg:?}: the copy comes first");
            for i in 1..g.ops.len() as u32 {
                let preds: Vec<_> = g.deps.iter().filter(|d| d.0 == i).collect();
                assert!(!preds.is_empty(), "{kind:?} {alg:?} op {i} does not wait for the copy");
                assert!(preds.iter().all(|d| d.1 < i && (d.1 != 0 || d.2 == Dep::Requires)), "{kind:?} {alg:?} op {i}");
            }
        }
    }
}
