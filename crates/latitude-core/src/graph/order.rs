//! Topological order of an execution graph.
//!
//! A forward pass computes each op's start S(v) at its position. Ends (docs/model.md §1): a calc's
//! or an eager send's E needs only its own S; a recv's E needs its send's S too, and a
//! *rendezvous* send's E its recv's S. So the ends of a matched pair are computed at the
//! position of whichever of the two comes second, and the only constraint the pair adds is
//! on ops that `require` an end that depends on the partner: they come after the partner.
//! `irequires` needs only a start, so a computation that overlaps a nonblocking recv never
//! waits for the message (Schedgen's Irecv-first ring exchange is a valid graph).
//!
//! `AnyProtocol` order (preferred) treats every send as possibly rendezvous, so it suits
//! every eager limit. `Eager` order (fallback) only orders requirers of recvs: graphs that
//! need more (blocking sends relying on eager buffering, e.g. both ranks `MPI_Send` then
//! `MPI_Recv`) deadlock under rendezvous, which plans detect per message size
//! (`reorder_rendezvous`).
//!
//! Ranks are visited round-robin and each rank emits its ready ops in source order, so the
//! stored order follows the program roughly in time (good locality for engine passes).
//! Most graphs (every GOAL file a tracer or Schedgen writes) have an order that keeps each
//! rank's ops in source order: `merge_ranks` finds it by merging the ranks' op sequences,
//! several times cheaper than `kahn` (no successor lists, in-degrees or heaps, and each
//! rank's ops read sequentially); `kahn` orders what it cannot (and reports cycles).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{Arr, ExecGraph, Kind, IREQ, NONE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderKind {
    /// Valid for every eager limit: every op that requires a message op comes after its
    /// partner.
    AnyProtocol,
    /// Every op that requires a recv comes after the recv's send (valid when every message
    /// is eager).
    Eager,
}

pub(crate) struct Topo<'a> {
    pub num_ranks: u32,
    pub kind: &'a [Kind],
    pub rank: &'a [u32],
    pub local: &'a [u32],
    pub pred_off: &'a [u32],
    pub pred: &'a [u32],
    pub partner: &'a [u32],
    /// A send's destination, a recv's source (`ANY` only with wildcards, never matched).
    pub peer: &'a [u32],
}

impl<'a> Topo<'a> {
    fn of(g: &'a ExecGraph) -> Self {
        Topo { num_ranks: g.num_ranks, kind: &g.kind, rank: &g.rank, local: &g.local, pred_off: &g.pred_off, pred: &g.pred, partner: &g.partner, peer: &g.peer }
    }
    fn matched(&self, v: usize) -> bool {
        self.kind[v] != Kind::Calc && self.partner[v] != NONE
    }
    /// The partner whose position a `requires` edge on `p` must also wait for, if E(p)
    /// depends on it (p a recv, or a rendezvous send).
    fn end_at_partner(&self, p: usize, rendezvous: &dyn Fn(usize) -> bool) -> Option<usize> {
        let depends = match self.kind[p] {
            Kind::Recv => true,
            Kind::Send => rendezvous(p),
            Kind::Calc => false,
        };
        (depends && self.matched(p)).then(|| self.partner[p] as usize)
    }
}

/// Order the graph: `perm[i]` is the old id of the vertex at position i. Err(cycle) lists
/// the vertices of a dependency cycle (old ids, in dependency order).
pub(crate) fn order(t: &Topo) -> Result<(Vec<u32>, OrderKind), Vec<u32>> {
    let succ = successors(t);
    if let Ok(perm) = kahn(t, &succ, &|_| true) {
        return Ok((perm, OrderKind::AnyProtocol));
    }
    match kahn(t, &succ, &|_| false) {
        Ok(perm) => Ok((perm, OrderKind::Eager)),
        Err(emitted) => Err(find_cycle(t, &emitted, &|_| false)),
    }
}

/// An `AnyProtocol` order that keeps each rank's ops in source order (`local`), found by
/// merging the ranks: each rank advances through its ops until one waits for a message
/// partner not yet placed, and resumes when that partner is placed. Ranks take turns in
/// runs of at most [`CHUNK`] ops (as `kahn`'s), so the order follows the program in time.
/// This is `kahn` without successor lists, in-degree counts or heaps: every op is read once
/// in its rank's source order (sequential memory), plus one look at a partner per message
/// dependency. None when the source order is not enough: ranks' ops not contiguous in id
/// order, a prerequisite later in its rank, or ops that could only be placed out of source
/// order (then `kahn` decides, and finds any cycle). The predecessor lists are renumbered
/// as each op is placed (they were just read), which spares `apply_order` that pass.
pub(crate) fn merge_ranks(t: &Topo) -> Option<Merged> {
    let n = t.kind.len();
    let p = t.num_ranks as usize;
    // first[r]: the id of rank r's op 0; ops of a rank must be contiguous, in source order.
    let mut first = vec![NONE; p];
    let mut count = vec![0u32; p];
    for v in 0..n {
        let r = t.rank[v] as usize;
        if t.local[v] == 0 {
            first[r] = v as u32;
        }
        if first[r] == NONE || first[r] as usize + t.local[v] as usize != v {
            return None;
        }
        count[r] += 1;
    }
    // Placed ops as bits: the one random access per message dependency stays in cache.
    let mut placed = vec![0u64; n.div_ceil(64)];
    let mut perm = Vec::with_capacity(n);
    let mut new_id = vec![NONE; n];
    let (mut off, mut pred) = (Vec::with_capacity(n + 1), Vec::with_capacity(t.pred.len()));
    off.push(0u32);
    let mut waits_for = vec![NONE; p];
    let mut next = vec![0u32; p];
    let mut ranks: VecDeque<u32> = (0..p as u32).filter(|&r| count[r as usize] > 0).collect();
    ranks.make_contiguous().sort_by_key(|&r| first[r as usize]);
    while let Some(r) = ranks.pop_front() {
        let r = r as usize;
        let mut blocked = false;
        for _ in 0..CHUNK {
            if next[r] == count[r] {
                break;
            }
            let v = (first[r] + next[r]) as usize;
            for &d in &t.pred[t.pred_off[v] as usize..t.pred_off[v + 1] as usize] {
                let q = (d & !IREQ) as usize;
                if q >= v {
                    return None;
                }
                if d & IREQ == 0 {
                    if let Some(w) = t.end_at_partner(q, &|_| true) {
                        if placed[w / 64] & 1 << (w % 64) == 0 {
                            waits_for[r] = w as u32;
                            blocked = true;
                            break;
                        }
                    }
                }
            }
            if blocked {
                break;
            }
            new_id[v] = perm.len() as u32;
            perm.push(v as u32);
            placed[v / 64] |= 1 << (v % 64);
            pred.extend(t.pred[t.pred_off[v] as usize..t.pred_off[v + 1] as usize].iter().map(|&d| new_id[(d & !IREQ) as usize] | (d & IREQ)));
            off.push(pred.len() as u32);
            next[r] += 1;
            // A rank waiting for v (its partner's rank: v's peer, as there are no wildcards) may go on.
            if t.matched(v) {
                let s = t.peer[v] as usize;
                if waits_for[s] == v as u32 {
                    waits_for[s] = NONE;
                    ranks.push_back(s as u32);
                }
            }
        }
        if !blocked && next[r] < count[r] {
            ranks.push_back(r as u32);
        }
    }
    (perm.len() == n).then_some(Merged { perm, new_id, pred_off: off, pred })
}

/// An order with the graph's predecessor lists already renumbered into it.
pub(crate) struct Merged {
    pub perm: Vec<u32>,
    /// `new_id[old]`: the inverse of `perm`.
    pub new_id: Vec<u32>,
    pub pred_off: Vec<u32>,
    pub pred: Vec<u32>,
}

/// Order for the sends satisfying `rendezvous` being rendezvous (the others eager).
/// Err(cycle) if that is impossible (deadlock under rendezvous).
pub(crate) fn order_rendezvous(t: &Topo, rendezvous: &dyn Fn(usize) -> bool) -> Result<Vec<u32>, Vec<u32>> {
    let succ = successors(t);
    kahn(t, &succ, rendezvous).map_err(|emitted| find_cycle(t, &emitted, rendezvous))
}

/// Is the current numbering already an `AnyProtocol` order? Every op comes after its local
/// prerequisites, and every op that `requires` a message op comes after that op's partner
/// (what `kahn` guarantees when every send is treated as rendezvous). One pass, no memory.
pub(crate) fn in_order(t: &Topo) -> bool {
    (0..t.kind.len()).all(|v| {
        t.pred[t.pred_off[v] as usize..t.pred_off[v + 1] as usize].iter().all(|&p| {
            let q = (p & !IREQ) as usize;
            q < v && (p & IREQ != 0 || t.end_at_partner(q, &|_| true).is_none_or(|x| x < v))
        })
    })
}

/// Successor CSR (offsets, ids with the IREQ flag of the edge) from the predecessor CSR.
fn successors(t: &Topo) -> (Vec<u32>, Vec<u32>) {
    let n = t.kind.len();
    let mut off = vec![0u32; n + 1];
    for &p in t.pred {
        off[(p & !IREQ) as usize + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mut fill = off.clone();
    let mut succ = vec![0u32; t.pred.len()];
    for v in 0..n {
        for &p in &t.pred[t.pred_off[v] as usize..t.pred_off[v + 1] as usize] {
            let q = (p & !IREQ) as usize;
            succ[fill[q] as usize] = v as u32 | (p & IREQ);
            fill[q] += 1;
        }
    }
    (off, succ)
}

/// Most ops a rank places before the next rank's turn.
const CHUNK: usize = 256;

/// Ready ops: a heap per rank (source order) and the queue of ranks with ready ops.
struct Ready {
    heaps: Vec<BinaryHeap<Reverse<(u32, u32)>>>,
    queued: Vec<bool>,
    ranks: VecDeque<u32>,
}

impl Ready {
    fn push(&mut self, r: usize, local: u32, v: u32) {
        self.heaps[r].push(Reverse((local, v)));
        if !self.queued[r] {
            self.queued[r] = true;
            self.ranks.push_back(r as u32);
        }
    }
}

/// Kahn's algorithm with per-rank ready heaps (source order) visited round-robin.
/// Err(emitted flags) when some vertices could not be emitted.
fn kahn(t: &Topo, succ: &(Vec<u32>, Vec<u32>), rendezvous: &dyn Fn(usize) -> bool) -> Result<Vec<u32>, Vec<bool>> {
    let n = t.kind.len();
    let mut indeg = vec![0u32; n];
    for v in 0..n {
        let preds = &t.pred[t.pred_off[v] as usize..t.pred_off[v + 1] as usize];
        indeg[v] = preds.len() as u32;
        for &p in preds {
            if p & IREQ == 0 && t.end_at_partner(p as usize, rendezvous).is_some() {
                indeg[v] += 1;
            }
        }
    }
    let p = t.num_ranks as usize;
    let mut ready = Ready { heaps: (0..p).map(|_| BinaryHeap::new()).collect(), queued: vec![false; p], ranks: VecDeque::new() };
    let release = |v: usize, indeg: &mut Vec<u32>, ready: &mut Ready| {
        indeg[v] -= 1;
        if indeg[v] == 0 {
            ready.push(t.rank[v] as usize, t.local[v], v as u32);
        }
    };
    for v in 0..n {
        if indeg[v] == 0 {
            indeg[v] = 1;
            release(v, &mut indeg, &mut ready);
        }
    }
    let mut perm = Vec::with_capacity(n);
    let mut emitted = vec![false; n];
    let succs = |x: usize| &succ.1[succ.0[x] as usize..succ.0[x + 1] as usize];
    while let Some(r) = ready.ranks.pop_front() {
        let r = r as usize;
        for _ in 0..CHUNK {
            let Some(Reverse((_, x))) = ready.heaps[r].pop() else { break };
            let x = x as usize;
            perm.push(x as u32);
            emitted[x] = true;
            for &y in succs(x) {
                release((y & !IREQ) as usize, &mut indeg, &mut ready);
            }
            // If the partner's end waits for x, release what requires the partner.
            if t.matched(x) {
                let q = t.partner[x] as usize;
                if t.end_at_partner(q, rendezvous).is_some() {
                    for &y in succs(q) {
                        if y & IREQ == 0 {
                            release(y as usize, &mut indeg, &mut ready);
                        }
                    }
                }
            }
        }
        if ready.heaps[r].is_empty() {
            ready.queued[r] = false;
        } else {
            ready.ranks.push_back(r as u32);
        }
    }
    if perm.len() == n {
        Ok(perm)
    } else {
        Err(emitted)
    }
}

/// A cycle among the vertices Kahn could not emit: walk backwards through unemitted
/// prerequisites (local ones first, then the partner of a required message op whose end
/// depends on it) until a vertex repeats. The required op itself is listed between them,
/// so the cycle reads as a chain of dependencies and messages.
fn find_cycle(t: &Topo, emitted: &[bool], rendezvous: &dyn Fn(usize) -> bool) -> Vec<u32> {
    let n = t.kind.len();
    let start = (0..n).find(|&v| !emitted[v]).expect("some vertex was not emitted");
    let mut seen_at = vec![u32::MAX; n];
    // (vertex, op between it and its prerequisite in the walk)
    let mut walk: Vec<(u32, Option<u32>)> = Vec::new();
    let mut v = start;
    loop {
        if seen_at[v] != u32::MAX {
            let mut cycle = Vec::new();
            for &(x, via) in &walk[seen_at[v] as usize..] {
                cycle.push(x);
                cycle.extend(via);
            }
            cycle.reverse(); // dependency order: prerequisite first
            return cycle;
        }
        seen_at[v] = walk.len() as u32;
        let preds = &t.pred[t.pred_off[v] as usize..t.pred_off[v + 1] as usize];
        let local = preds.iter().map(|&p| (p & !IREQ) as usize).find(|&p| !emitted[p]);
        let through = preds
            .iter()
            .filter(|&&p| p & IREQ == 0)
            .filter_map(|&p| t.end_at_partner(p as usize, rendezvous).map(|q| (p as usize, q)))
            .find(|&(_, q)| !emitted[q]);
        let (next, via) = match (local, through) {
            (Some(p), _) => (p, None),
            (None, Some((p, q))) => (q, Some(p as u32)),
            (None, None) => unreachable!("an unemitted vertex has an unemitted prerequisite"),
        };
        walk.push((v as u32, via));
        v = next;
    }
}

/// Renumber the graph so that the vertex at position i is old vertex `perm[i]`.
pub(crate) fn apply_permutation(g: &mut ExecGraph, perm: &[u32]) {
    let mut new_id = vec![0u32; perm.len()];
    for (i, &old) in perm.iter().enumerate() {
        new_id[old as usize] = i as u32;
    }
    renumber(g, perm, &new_id, None);
}

/// Renumber the graph into a merged order (its predecessor lists are ready).
pub(crate) fn apply_merged(g: &mut ExecGraph, m: Merged) {
    renumber(g, &m.perm, &m.new_id, Some((m.pred_off, m.pred)));
}

/// `apply_permutation` with the inverse permutation given, and the renumbered predecessor
/// CSR if it is already built.
fn renumber(g: &mut ExecGraph, perm: &[u32], new_id: &[u32], csr_done: Option<(Vec<u32>, Vec<u32>)>) {
    let n = perm.len();
    fn gather<T: Copy>(v: &mut Arr<T>, perm: &[u32]) {
        if v.is_empty() {
            return;
        }
        let out: Vec<T> = perm.iter().map(|&o| v[o as usize]).collect();
        *v = out.into();
    }
    // The predecessor CSR and the per-vertex arrays are independent: on large graphs the
    // CSR is rebuilt on a second thread (same result, about half the wall time).
    let csr = |pred_off: &[u32], pred_in: &[u32]| -> (Vec<u32>, Vec<u32>) {
        let mut off = Vec::with_capacity(n + 1);
        let mut pred = Vec::with_capacity(pred_in.len());
        off.push(0u32);
        for &o in perm {
            let o = o as usize;
            for &p in &pred_in[pred_off[o] as usize..pred_off[o + 1] as usize] {
                pred.push(new_id[(p & !IREQ) as usize] | (p & IREQ));
            }
            off.push(pred.len() as u32);
        }
        (off, pred)
    };
    let (pred_off, pred_in) = (std::mem::take(&mut g.pred_off), std::mem::take(&mut g.pred));
    let gather_all = |g: &mut ExecGraph| {
        gather(&mut g.kind, perm);
        gather(&mut g.rank, perm);
        gather(&mut g.local, perm);
        gather(&mut g.val, perm);
        gather(&mut g.peer, perm);
        gather(&mut g.tag, perm);
        gather(&mut g.cpu, perm);
        gather(&mut g.nic, perm);
        gather(&mut g.copy, perm);
        if let Some(src) = g.source.as_mut() {
            gather(&mut src.line, perm);
        }
        g.colls.renumber(new_id);
        g.partner = perm
            .iter()
            .map(|&o| {
                let p = g.partner[o as usize];
                if p == NONE {
                    NONE
                } else {
                    new_id[p as usize]
                }
            })
            .collect::<Vec<u32>>()
            .into();
    };
    let (off, pred) = match csr_done {
        Some(done) => {
            gather_all(g);
            done
        }
        None => crate::parallel::join(n > 1 << 20, || gather_all(g), || csr(&pred_off, &pred_in)).1,
    };
    g.pred_off = off.into();
    g.pred = pred.into();
    g.slots = None; // they were the old order's
}

/// Re-order a graph for the sends satisfying `rendezvous` being rendezvous (needed when a
/// graph stored in `Eager` order meets a model with rendezvous messages). Err(cycle) on
/// deadlock.
pub(crate) fn reorder_rendezvous(g: &mut ExecGraph, rendezvous: &dyn Fn(usize) -> bool) -> Result<(), Vec<u32>> {
    let perm = order_rendezvous(&Topo::of(g), rendezvous)?;
    apply_permutation(g, &perm);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{in_order, merge_ranks, OrderKind, Topo};
    use crate::graph::{ExecGraph, GraphBuilder, Op};

    fn in_source_order(g: &ExecGraph) -> bool {
        let mut next = vec![0u32; g.num_ranks as usize];
        (0..g.len()).all(|v| {
            let r = g.rank[v] as usize;
            next[r] += 1;
            g.local[v] == next[r] - 1
        })
    }

    #[test]
    fn a_later_prerequisite_is_left_to_kahn() {
        let mut b = GraphBuilder::new(1);
        let (a, c) = (b.add(0, Op::calc(1)).unwrap(), b.add(0, Op::calc(2)).unwrap());
        b.requires(a, c).unwrap();
        let g = b.finish().unwrap();
        assert!(merge_ranks(&Topo::of(&g)).is_none());
        assert_eq!((g.local[0], g.local[1]), (1, 0));
    }

    #[test]
    fn merge_gives_way_to_kahn_when_ops_must_leave_source_order() {
        // Each rank: recv, a calc that requires it, then the send the other rank waits
        // for. In source order both ranks wait at the calc; kahn places the sends first.
        let mut b = GraphBuilder::new(2);
        for r in 0..2 {
            let recv = b.add(r, Op::recv(8, 1 - r, 0)).unwrap();
            let calc = b.add(r, Op::calc(5)).unwrap();
            b.add(r, Op::send(8, 1 - r, 0)).unwrap();
            b.requires(calc, recv).unwrap();
        }
        let g = b.finish().unwrap();
        assert_eq!(g.order, OrderKind::AnyProtocol);
        assert!(!in_source_order(&g));
        assert!(in_order(&Topo::of(&g)));
    }

    #[test]
    fn ranks_in_source_order_are_merged() {
        // Rank 1 receives first; rank 0 computes, sends, then waits for the reply.
        let mut b = GraphBuilder::new(2);
        let c0 = b.add(0, Op::calc(3)).unwrap();
        let s0 = b.add(0, Op::send(8, 1, 0)).unwrap();
        let r0 = b.add(0, Op::recv(8, 1, 1)).unwrap();
        let e0 = b.add(0, Op::calc(1)).unwrap();
        let r1 = b.add(1, Op::recv(8, 0, 0)).unwrap();
        let s1 = b.add(1, Op::send(8, 0, 1)).unwrap();
        for (x, y) in [(s0, c0), (r0, s0), (e0, r0), (s1, r1)] {
            b.requires(x, y).unwrap();
        }
        let g = b.finish().unwrap();
        assert!(in_source_order(&g) && in_order(&Topo::of(&g)));
        // Rank 0 places c0 and s0, waits at r0 (s0 requires nothing of rank 1, but r0
        // requires s0, a send whose end waits for r1); rank 1 places r1, s1; rank 0 goes on.
        let order: Vec<(u32, u32)> = (0..6).map(|v| (g.rank[v], g.local[v])).collect();
        assert_eq!(order, [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (0, 3)]);
    }
}
