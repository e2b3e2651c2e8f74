//! Checking a loaded graph's values before anyone indexes with them: the checksum catches
//! accidental damage, these checks make even a deliberately crafted file safe (no panic, no
//! out-of-bounds access, no cycle) and keep the contract of a built graph: predecessors
//! before their dependents, the stored order valid for its kind, every message op paired
//! with an op of the other kind on the same (src, dst, tag) stream, each rank's local
//! indices a permutation of 0..count. (Which k-th send a k-th receive gets is not re-derived:
//! that would be a full matching pass; the checksum vouches for it.)

use crate::graph::{ExecGraph, Kind, OrderKind, ANY, IREQ, NONE};

type Res = std::result::Result<(), String>;

fn bad(what: impl std::fmt::Display) -> String {
    format!("corrupted .lgraph file ({what})")
}

/// Every kind byte names a kind.
pub(super) fn kinds(k: &[u8]) -> Res {
    match k.iter().position(|&b| b > Kind::Recv as u8) {
        Some(v) => Err(bad(format_args!("vertex {v} has kind byte {}", k[v]))),
        None => Ok(()),
    }
}

/// The graph invariants, on two threads for large graphs (ops and messages | dependencies
/// and order).
pub(super) fn graph(g: &ExecGraph) -> Res {
    let (a, b) = crate::parallel::join(g.len() > 1 << 16, || ops(g).and_then(|_| locals(g)), || dependencies(g).and_then(|_| slots(g)));
    a.and(b)
}

/// Every stored engine slot indexes the value store the header sizes (which vertices share
/// a slot is not re-derived, like the pairing: the checksum vouches for it).
fn slots(g: &ExecGraph) -> Res {
    let Some((slot, nslots)) = &g.slots else { return Ok(()) };
    match slot.iter().position(|&s| s as usize >= *nslots) {
        Some(v) => Err(bad(format_args!("vertex {v} has value slot {}, the header says {nslots}", slot[v]))),
        None => Ok(()),
    }
}

fn ops(g: &ExecGraph) -> Res {
    let (n, p) = (g.len(), g.num_ranks);
    let mut wildcards = 0u64;
    for v in 0..n {
        if g.rank[v] >= p {
            return Err(bad(format_args!("vertex {v} on rank {}, the graph has {p}", g.rank[v])));
        }
        match g.kind[v] {
            Kind::Calc if g.partner[v] != NONE => return Err(bad(format_args!("calc vertex {v} has a message partner"))),
            Kind::Calc => {}
            kind if g.copy(v as u32) != 0 => return Err(bad(format_args!("{} vertex {v} copies bytes (only a calc can)", kind.name()))),
            kind => {
                let peer = g.peer[v];
                if peer >= p && !(kind == Kind::Recv && peer == ANY) {
                    return Err(bad(format_args!("vertex {v} has peer {peer}, the graph has {p} ranks")));
                }
                if kind == Kind::Recv && (peer == ANY || g.tag[v] == ANY) {
                    wildcards += 1;
                }
            }
        }
    }
    if wildcards != g.wildcards {
        return Err(bad(format_args!("{wildcards} wildcard receives, the header says {}", g.wildcards)));
    }
    for v in 0..n {
        let q = g.partner[v];
        let paired = match g.kind[v] {
            Kind::Calc => true,
            _ if wildcards > 0 => q == NONE,
            Kind::Send => {
                let q = q as usize;
                q < n && g.kind[q] == Kind::Recv && g.partner[q] as usize == v && g.peer[v] == g.rank[q] && g.peer[q] == g.rank[v] && g.tag[v] == g.tag[q]
            }
            Kind::Recv => (q as usize) < n && g.kind[q as usize] == Kind::Send && g.partner[q as usize] as usize == v,
        };
        if !paired {
            return Err(bad(format_args!("vertex {v} is not paired with a matching message op")));
        }
    }
    Ok(())
}

/// Each rank's local indices are 0..count in some order (`by_rank` places ops by them).
fn locals(g: &ExecGraph) -> Res {
    let off = g.rank_offsets();
    let mut seen = vec![0u64; g.len().div_ceil(64)];
    for v in 0..g.len() {
        let r = g.rank[v] as usize;
        let l = g.local[v] as usize;
        let i = off[r] + l;
        if l >= off[r + 1] - off[r] || seen[i >> 6] & (1 << (i & 63)) != 0 {
            return Err(bad(format_args!("vertex {v} has local index {l} on rank {r}")));
        }
        seen[i >> 6] |= 1 << (i & 63);
    }
    Ok(())
}

/// The predecessor CSR is well formed, every predecessor comes before its dependent, and
/// an op that requires a message op whose end needs its partner (a recv; under an
/// any-protocol order also a send) comes after that partner (graph/order.rs).
fn dependencies(g: &ExecGraph) -> Res {
    let (n, off, pred) = (g.len(), &g.pred_off, &g.pred);
    if off[0] != 0 || off[n] as usize != pred.len() {
        return Err(bad("predecessor offsets do not span the predecessor list"));
    }
    let rendezvous = g.order == OrderKind::AnyProtocol;
    for v in 0..n {
        let (a, b) = (off[v] as usize, off[v + 1] as usize);
        if b < a || b > pred.len() {
            return Err(bad(format_args!("predecessor offsets of vertex {v} are out of order")));
        }
        for &p in &pred[a..b] {
            let q = (p & !IREQ) as usize;
            if q >= v {
                return Err(bad(format_args!("vertex {v} depends on vertex {q}, which does not come before it")));
            }
            if p & IREQ != 0 || g.partner[q] == NONE {
                continue;
            }
            let needs_partner = match g.kind[q] {
                Kind::Recv => true,
                Kind::Send => rendezvous,
                Kind::Calc => false,
            };
            if needs_partner && g.partner[q] as usize >= v {
                return Err(bad(format_args!("vertex {v} requires vertex {q} before its message partner")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::graph;
    use crate::graph::{ExecGraph, GraphBuilder, Op, IREQ, NONE};

    /// rank 0: calc -> send; rank 1: recv -> calc.
    fn pair() -> ExecGraph {
        let mut b = GraphBuilder::new(2);
        let c = b.add(0, Op::calc(5)).unwrap();
        let s = b.add(0, Op::send(8, 1, 0)).unwrap();
        let r = b.add(1, Op::recv(8, 0, 0)).unwrap();
        let d = b.add(1, Op::calc(5)).unwrap();
        b.requires(s, c).unwrap();
        b.requires(d, r).unwrap();
        b.finish().unwrap()
    }

    fn broken(f: impl Fn(&mut ExecGraph)) -> String {
        let mut g = pair();
        assert_eq!(graph(&g), Ok(()));
        f(&mut g);
        graph(&g).expect_err("a broken graph passed the checks")
    }

    #[test]
    fn each_invariant_is_checked() {
        let at = |g: &ExecGraph, k: crate::graph::Kind| (0..g.len()).find(|&v| g.kind[v] == k).unwrap();
        use crate::graph::Kind::*;
        assert!(broken(|g| g.rank.make_mut()[0] = 2).contains("on rank 2"));
        assert!(broken(|g| {
            let s = at(g, Send);
            g.peer.make_mut()[s] = 9
        })
        .contains("peer 9"));
        assert!(broken(|g| g.local.make_mut()[0] = 7).contains("local index"));
        assert!(broken(|g| g.wildcards = 1).contains("wildcard"));
        assert!(broken(|g| {
            let s = at(g, Send);
            g.tag.make_mut()[s] = 3
        })
        .contains("not paired"));
        assert!(broken(|g| {
            let s = at(g, Send);
            g.partner.make_mut()[s] = NONE
        })
        .contains("not paired"));
        assert!(broken(|g| {
            let c = at(g, Calc);
            g.partner.make_mut()[c] = 1
        })
        .contains("calc vertex"));
        assert!(broken(|g| {
            let v = (0..g.len()).find(|&v| g.pred_off[v + 1] > g.pred_off[v]).unwrap();
            let i = g.pred_off[v] as usize;
            g.pred.make_mut()[i] = v as u32 | IREQ
        })
        .contains("does not come before"));
        assert!(broken(|g| g.pred_off.make_mut()[2] = 9).contains("out of order"));
        assert!(broken(|g| *g.pred_off.make_mut().last_mut().unwrap() = 0).contains("span"));
        assert!(broken(|g| g.slots = Some((vec![0, 1, 2, 0].into(), 2))).contains("value slot 2"));
    }
}
