//! The engine's value slots (engine/plan.rs): a forward pass only needs a vertex's S and E
//! until its last reader, so each vertex gets a *slot* that is recycled after that reader,
//! and passes touch a store of `nslots` entries (the live frontier, typically a few per
//! rank) instead of one per vertex. The assignment depends only on the graph's order and
//! its reads (plus the NIC chains of a model that serializes sends), so it lives with the
//! graph: an .lgraph stores it and a plan reads it.

use std::borrow::Cow;

use super::{ExecGraph, Kind, NONE};

/// Readers of each vertex's values at each position, in a pass: local predecessors, the NIC
/// predecessor, and the message partner when it came earlier (the second op of a pair reads
/// the first's start and writes the first's end).
fn for_each_read(g: &ExecGraph, gap_prev: &[u32], v: usize, mut f: impl FnMut(usize)) {
    for (p, _) in g.preds(v as u32) {
        f(p as usize);
    }
    if let Some(&p) = gap_prev.get(v) {
        if p != NONE {
            f(p as usize);
        }
    }
    let q = g.partner[v];
    if g.kind[v] != Kind::Calc && q != NONE && (q as usize) < v {
        f(q as usize);
    }
}

/// The slots a plan without NIC chains gives `g` in its order (what an .lgraph stores).
pub(crate) fn stored(g: &ExecGraph) -> (Cow<'_, [u32]>, usize) {
    match &g.slots {
        Some((slot, nslots)) => (Cow::Borrowed(&slot[..]), *nslots),
        None => {
            let (slot, nslots) = assign(g, &[]);
            (Cow::Owned(slot), nslots)
        }
    }
}

/// Linear-scan slot allocation: a vertex's slot is freed after its last reader.
pub(crate) fn assign(g: &ExecGraph, gap_prev: &[u32]) -> (Vec<u32>, usize) {
    const FREED: u32 = u32::MAX;
    let n = g.len();
    let mut last: Vec<u32> = (0..n as u32).collect();
    for v in 0..n {
        for_each_read(g, gap_prev, v, |x| last[x] = v as u32); // v only grows: the last reader
    }
    let mut slot = vec![0u32; n];
    let mut free: Vec<u32> = Vec::new();
    let mut nslots = 0u32;
    for v in 0..n {
        slot[v] = free.pop().unwrap_or_else(|| {
            nslots += 1;
            nslots - 1
        });
        for_each_read(g, gap_prev, v, |x| {
            if last[x] == v as u32 {
                last[x] = FREED;
                free.push(slot[x]);
            }
        });
        if last[v] == v as u32 {
            last[v] = FREED;
            free.push(slot[v]);
        }
    }
    (slot, nslots as usize)
}
