//! Topological order of an execution graph.
//!
//! `Paired` order (preferred): every matched send/recv pair is emitted adjacently (send,
//! recv) once the predecessors of *both* are emitted. That order is valid for every
//! protocol: rendezvous needs each side's start before either side can finish.
//! `Eager` order (fallback): a recv only after its send. Graphs whose pairs cannot be
//! emitted together (blocking sends that rely on eager buffering, e.g. both ranks
//! `MPI_Send` then `MPI_Recv`) get this order; they deadlock under rendezvous, which plans
//! detect per message size.
//!
//! Ranks are visited round-robin and each rank emits its ready ops in source order, so the
//! stored order follows the program roughly in time (good locality for engine passes).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{ExecGraph, Kind, IREQ, NONE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderKind {
    /// Matched pairs adjacent (send, recv) with all predecessors of both before them.
    Paired,
    /// Each recv after its send; pairs not necessarily adjacent.
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
}

/// Order the graph: `perm[i]` is the old id of the vertex at position i. Err(cycle) lists
/// the vertices of a dependency cycle (old ids, in dependency order).
pub(crate) fn order(t: &Topo) -> Result<(Vec<u32>, OrderKind), Vec<u32>> {
    let succ = successors(t);
    if let Ok(perm) = kahn(t, &succ, &|_| true) {
        return Ok((perm, OrderKind::Paired));
    }
    match kahn(t, &succ, &|_| false) {
        Ok(perm) => Ok((perm, OrderKind::Eager)),
        Err(emitted) => Err(find_cycle(t, &emitted, &|_| false)),
    }
}

/// Order with only the pairs whose send satisfies `pair` emitted as units (the others
/// eager). Err(cycle) if that is impossible (deadlock under rendezvous).
pub(crate) fn order_pairing(t: &Topo, pair: &dyn Fn(usize) -> bool) -> Result<Vec<u32>, Vec<u32>> {
    let succ = successors(t);
    kahn(t, &succ, pair).map_err(|emitted| find_cycle(t, &emitted, pair))
}

/// Successor CSR (offsets, ids) from the predecessor CSR.
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
            let p = (p & !IREQ) as usize;
            succ[fill[p] as usize] = v as u32;
            fill[p] += 1;
        }
    }
    (off, succ)
}

/// Kahn's algorithm with per-rank ready heaps (source order) visited round-robin.
/// A matched pair whose send satisfies `pair` is one unit (emitted send, recv); other
/// recvs wait for their send. Err(emitted flags) when some vertices could not be emitted.
fn kahn(t: &Topo, succ: &(Vec<u32>, Vec<u32>), pair: &dyn Fn(usize) -> bool) -> Result<Vec<u32>, Vec<bool>> {
    let n = t.kind.len();
    let matched = |v: usize| t.kind[v] != Kind::Calc && t.partner[v] != NONE;
    let paired_send = |v: usize| t.kind[v] == Kind::Send && matched(v) && pair(v);
    let is_paired_recv = |v: usize| t.kind[v] == Kind::Recv && matched(v) && pair(t.partner[v] as usize);
    let eager_recv = |v: usize| t.kind[v] == Kind::Recv && matched(v) && !pair(t.partner[v] as usize);
    let unit = |v: usize| if is_paired_recv(v) { t.partner[v] as usize } else { v };
    let mut indeg = vec![0u32; n];
    for v in 0..n {
        let d = t.pred_off[v + 1] - t.pred_off[v];
        indeg[unit(v)] += d;
        if eager_recv(v) {
            indeg[v] += 1;
        }
    }
    let p = t.num_ranks as usize;
    let mut heaps: Vec<BinaryHeap<Reverse<(u32, u32)>>> = (0..p).map(|_| BinaryHeap::new()).collect();
    let mut queued = vec![false; p];
    let mut ranks: VecDeque<u32> = VecDeque::new();
    let push = |v: usize, heaps: &mut Vec<BinaryHeap<Reverse<(u32, u32)>>>, ranks: &mut VecDeque<u32>, queued: &mut Vec<bool>| {
        let r = t.rank[v] as usize;
        heaps[r].push(Reverse((t.local[v], v as u32)));
        if !queued[r] {
            queued[r] = true;
            ranks.push_back(r as u32);
        }
    };
    for v in 0..n {
        if !is_paired_recv(v) && indeg[v] == 0 {
            push(v, &mut heaps, &mut ranks, &mut queued);
        }
    }
    let mut perm = Vec::with_capacity(n);
    let mut emitted = vec![false; n];
    const CHUNK: usize = 256;
    while let Some(r) = ranks.pop_front() {
        let r = r as usize;
        let mut budget = CHUNK;
        while budget > 0 {
            let Some(Reverse((_, u))) = heaps[r].pop() else { break };
            budget -= 1;
            let u = u as usize;
            let mut members = [u, NONE as usize];
            if paired_send(u) {
                members[1] = t.partner[u] as usize;
            }
            for &x in members.iter().filter(|&&x| x != NONE as usize) {
                perm.push(x as u32);
                emitted[x] = true;
                for &y in &succ.1[succ.0[x] as usize..succ.0[x + 1] as usize] {
                    let uy = unit(y as usize);
                    indeg[uy] -= 1;
                    if indeg[uy] == 0 {
                        push(uy, &mut heaps, &mut ranks, &mut queued);
                    }
                }
                if t.kind[x] == Kind::Send && matched(x) && !pair(x) {
                    let r2 = t.partner[x] as usize;
                    indeg[r2] -= 1;
                    if indeg[r2] == 0 {
                        push(r2, &mut heaps, &mut ranks, &mut queued);
                    }
                }
            }
        }
        if heaps[r].is_empty() {
            queued[r] = false;
        } else {
            ranks.push_back(r as u32);
        }
    }
    if perm.len() == n {
        Ok(perm)
    } else {
        Err(emitted)
    }
}

/// A cycle among the vertices Kahn could not emit. A recv waits for its send; a paired
/// (rendezvous) send also waits for its recv's predecessors. Walk backwards through
/// unemitted predecessors (local ones first) until a vertex repeats.
fn find_cycle(t: &Topo, emitted: &[bool], pair: &dyn Fn(usize) -> bool) -> Vec<u32> {
    let n = t.kind.len();
    let start = (0..n).find(|&v| !emitted[v]).expect("some vertex was not emitted");
    let mut seen_at = vec![u32::MAX; n];
    let mut walk: Vec<u32> = Vec::new();
    let mut v = start;
    loop {
        if seen_at[v] != u32::MAX {
            let mut cycle = walk[seen_at[v] as usize..].to_vec();
            cycle.reverse(); // dependency order: prerequisite first
            return cycle;
        }
        seen_at[v] = walk.len() as u32;
        walk.push(v as u32);
        let local = t.pred[t.pred_off[v] as usize..t.pred_off[v + 1] as usize]
            .iter()
            .map(|&p| (p & !IREQ) as usize)
            .find(|&p| !emitted[p]);
        let partner = t.partner[v] as usize;
        let waits_for_partner = t.kind[v] != Kind::Calc
            && t.partner[v] != NONE
            && !emitted[partner]
            && (t.kind[v] == Kind::Recv || pair(v));
        let msg = waits_for_partner.then_some(partner);
        v = local.or(msg).expect("an unemitted vertex has an unemitted predecessor");
    }
}

/// Renumber the graph so that the vertex at position i is old vertex `perm[i]`.
pub(crate) fn apply_permutation(g: &mut ExecGraph, perm: &[u32]) {
    let n = perm.len();
    let mut new_id = vec![0u32; n];
    for (i, &old) in perm.iter().enumerate() {
        new_id[old as usize] = i as u32;
    }
    fn gather<T: Copy>(v: &mut Vec<T>, perm: &[u32]) {
        if v.is_empty() {
            return;
        }
        let out: Vec<T> = perm.iter().map(|&o| v[o as usize]).collect();
        *v = out;
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
    let (off, pred) = std::thread::scope(|scope| {
        let rebuilt = if n > 1 << 20 { Some(scope.spawn(|| csr(&pred_off, &pred_in))) } else { None };
        gather(&mut g.kind, perm);
        gather(&mut g.rank, perm);
        gather(&mut g.local, perm);
        gather(&mut g.val, perm);
        gather(&mut g.peer, perm);
        gather(&mut g.tag, perm);
        gather(&mut g.cpu, perm);
        gather(&mut g.nic, perm);
        if let Some(src) = g.source.as_mut() {
            gather(&mut src.line, perm);
        }
        let partner: Vec<u32> = perm
            .iter()
            .map(|&o| {
                let p = g.partner[o as usize];
                if p == NONE {
                    NONE
                } else {
                    new_id[p as usize]
                }
            })
            .collect();
        g.partner = partner;
        match rebuilt {
            Some(h) => h.join().expect("CSR rebuild panicked"),
            None => csr(&pred_off, &pred_in),
        }
    });
    g.pred_off = off;
    g.pred = pred;
}

/// Re-order a graph so that the pairs whose send satisfies `pair` are adjacent (needed for
/// rendezvous messages in a graph stored in `Eager` order). Err(cycle) on deadlock.
pub(crate) fn reorder_pairing(g: &mut ExecGraph, pair: &dyn Fn(usize) -> bool) -> Result<(), Vec<u32>> {
    let t = Topo { num_ranks: g.num_ranks, kind: &g.kind, rank: &g.rank, local: &g.local, pred_off: &g.pred_off, pred: &g.pred, partner: &g.partner };
    let perm = order_pairing(&t, pair)?;
    apply_permutation(g, &perm);
    Ok(())
}
