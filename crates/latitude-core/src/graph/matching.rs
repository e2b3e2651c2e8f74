//! Static message matching: the k-th send from a to b with tag t is received by the k-th
//! recv on b from a with tag t, both counted in issue (source) order — MPI's
//! non-overtaking rule. Graphs with wildcard receives are not matched here (only the
//! simulator can match them, dynamically).

use super::{Kind, NONE};

pub(crate) struct Messages<'a> {
    pub kind: &'a [Kind],
    pub rank: &'a [u32],
    pub peer: &'a [u32],
    pub tag: &'a [u32],
    pub val: &'a [u64],
}

/// Returns `partner` (send <-> recv), or the first unmatched op and a message.
/// Ids must be in per-rank issue order (ids of one rank increase with their local index).
pub(crate) fn match_messages(m: &Messages) -> Result<Vec<u32>, (u32, String)> {
    let n = m.kind.len();
    // Key: (src, dst, tag, id). Sorting ids by key keeps per-rank issue order.
    let key = |v: u32| -> (u32, u32, u32, u32) {
        let i = v as usize;
        match m.kind[i] {
            Kind::Send => (m.rank[i], m.peer[i], m.tag[i], v),
            _ => (m.peer[i], m.rank[i], m.tag[i], v),
        }
    };
    // Sort packed keys ((src, dst) high, (tag, id) low) rather than recomputing the tuple
    // in every comparison: same order, a fraction of the memory traffic.
    let sorted = |want: Kind| -> Vec<u32> {
        let mut keys: Vec<(u64, u64)> = (0..n as u32)
            .filter(|&v| m.kind[v as usize] == want)
            .map(|v| {
                let (a, b, t, id) = key(v);
                (((a as u64) << 32) | b as u64, ((t as u64) << 32) | id as u64)
            })
            .collect();
        keys.sort_unstable();
        keys.into_iter().map(|(_, lo)| lo as u32).collect()
    };
    // Two independent sorts: on large graphs the receives sort on a second thread.
    let (sends, recvs) = crate::parallel::join(n > 1 << 20, || sorted(Kind::Send), || sorted(Kind::Recv));
    let mut partner = vec![NONE; n];
    let (mut i, mut j) = (0usize, 0usize);
    let group = |v: u32| {
        let k = key(v);
        (k.0, k.1, k.2)
    };
    while i < sends.len() || j < recvs.len() {
        let gs = sends.get(i).map(|&v| group(v));
        let gr = recvs.get(j).map(|&v| group(v));
        match (gs, gr) {
            (Some(a), Some(b)) if a == b => {
                partner[sends[i] as usize] = recvs[j];
                partner[recvs[j] as usize] = sends[i];
                i += 1;
                j += 1;
            }
            (Some(a), b) if b.is_none() || a < b.unwrap() => {
                return Err(unmatched(m, sends[i], &sends, &recvs));
            }
            _ => return Err(unmatched(m, recvs[j], &sends, &recvs)),
        }
    }
    Ok(partner)
}

fn unmatched(m: &Messages, v: u32, sends: &[u32], recvs: &[u32]) -> (u32, String) {
    let i = v as usize;
    let (src, dst, tag) = match m.kind[i] {
        Kind::Send => (m.rank[i], m.peer[i], m.tag[i]),
        _ => (m.peer[i], m.rank[i], m.tag[i]),
    };
    let same = |u: &u32| {
        let k = *u as usize;
        let g = match m.kind[k] {
            Kind::Send => (m.rank[k], m.peer[k], m.tag[k]),
            _ => (m.peer[k], m.rank[k], m.tag[k]),
        };
        g == (src, dst, tag)
    };
    let ns = sends.iter().filter(|u| same(u)).count();
    let nr = recvs.iter().filter(|u| same(u)).count();
    let msg = match m.kind[i] {
        Kind::Send => format!(
            "unmatched send of {} bytes from rank {src} to rank {dst} tag {tag}: rank {src} sends {ns} such messages, rank {dst} posts {nr} matching recvs",
            m.val[i]
        ),
        _ => format!(
            "unmatched recv of {} bytes on rank {dst} from rank {src} tag {tag}: rank {dst} posts {nr} such recvs, rank {src} sends {ns} matching messages",
            m.val[i]
        ),
    };
    (v, msg)
}

/// The same pairs as [`match_messages`] (k-th send ↔ k-th recv of each (src, dst, tag)
/// stream in issue order) found in one pass over the ids, keeping per stream only the
/// queue of ops still waiting for a partner. For graphs added roughly in time order (a
/// generator's output) the open queues stay small, so this avoids sorting every message op;
/// for rank-by-rank input (GOAL files) they grow to whole streams, where sorting wins.
/// Errors are those of [`match_messages`].
pub(crate) fn match_streaming(m: &Messages) -> Result<Vec<u32>, (u32, String)> {
    let mut s = Streams::default();
    s.run(m)?;
    Ok(std::mem::take(&mut s.partner))
}

/// The streaming matcher's state, reusable across calls (generators match many small
/// instances; fresh buffers each time would cost page faults).
#[derive(Default)]
pub(crate) struct Streams {
    pub partner: Vec<u32>,
    next: Vec<u32>,
    open: rustc_hash::FxHashMap<(u32, u32, u32), Queue>,
}

/// Ops of one stream waiting for a partner (all sends or all recvs), linked by `next`.
#[derive(Clone, Copy)]
struct Queue {
    head: u32,
    tail: u32,
}

impl Streams {
    /// Match `m` into `self.partner` (see [`match_streaming`]).
    pub(crate) fn run(&mut self, m: &Messages) -> Result<(), (u32, String)> {
        let n = m.kind.len();
        let (partner, next, open) = (&mut self.partner, &mut self.next, &mut self.open);
        partner.clear();
        partner.resize(n, NONE);
        next.clear();
        next.resize(n, NONE);
        open.clear();
        for v in 0..n {
            let (key, kind) = match m.kind[v] {
                Kind::Send => ((m.rank[v], m.peer[v], m.tag[v]), Kind::Send),
                Kind::Recv => ((m.peer[v], m.rank[v], m.tag[v]), Kind::Recv),
                Kind::Calc => continue,
            };
            let v = v as u32;
            match open.get_mut(&key) {
                // The waiting ops are of the other kind: v pairs with the oldest.
                Some(q) if m.kind[q.head as usize] != kind => {
                    let u = q.head;
                    partner[u as usize] = v;
                    partner[v as usize] = u;
                    if u == q.tail {
                        open.remove(&key);
                    } else {
                        q.head = next[u as usize];
                    }
                }
                Some(q) => {
                    next[q.tail as usize] = v;
                    q.tail = v;
                }
                None => {
                    open.insert(key, Queue { head: v, tail: v });
                }
            }
        }
        if open.is_empty() {
            return Ok(());
        }
        // Report exactly as the sorting matcher does.
        match match_messages(m) {
            Err(e) => Err(e),
            Ok(_) => unreachable!("a stream with an op left open has an unmatched op"),
        }
    }
}
