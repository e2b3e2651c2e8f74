//! Before the graph is matched, check that every (source, destination, tag) stream has as
//! many sends as receives, so that a bad trace is reported at the trace line of the
//! offending call rather than as an anonymous graph error.

use rustc_hash::FxHashMap as FxMap;

#[derive(Clone, Copy, Default)]
struct Count {
    sends: u64,
    recvs: u64,
    /// Last call of each side: (world rank, line).
    last_send: (u32, u64),
    last_recv: (u32, u64),
}

#[derive(Default)]
pub struct MatchCheck {
    streams: FxMap<(u32, u32, u32), Count>,
}

/// An unbalanced stream: (rank, line) of the last excess call and a message.
pub struct Unbalanced {
    pub rank: u32,
    pub line: u64,
    pub message: String,
}

impl MatchCheck {
    pub fn send(&mut self, src: u32, dst: u32, tag: u32, line: u64) {
        let c = self.streams.entry((src, dst, tag)).or_default();
        c.sends += 1;
        c.last_send = (src, line);
    }

    pub fn recv(&mut self, src: u32, dst: u32, tag: u32, line: u64) {
        let c = self.streams.entry((src, dst, tag)).or_default();
        c.recvs += 1;
        c.last_recv = (dst, line);
    }

    /// Take back a send or receive counted before (a cancelled request).
    pub fn retract(&mut self, src: u32, dst: u32, tag: u32, send: bool) {
        if let Some(c) = self.streams.get_mut(&(src, dst, tag)) {
            let n = if send { &mut c.sends } else { &mut c.recvs };
            *n = n.saturating_sub(1);
        }
    }

    /// The first unbalanced stream (smallest key), described with `tag_name`.
    pub fn first_unbalanced(&self, tag_name: &dyn Fn(u32) -> String) -> Option<Unbalanced> {
        let mut bad: Vec<(&(u32, u32, u32), &Count)> = self.streams.iter().filter(|(_, c)| c.sends != c.recvs).collect();
        bad.sort_by_key(|(k, _)| **k);
        let (&(src, dst, tag), c) = *bad.first()?;
        let what = tag_name(tag);
        Some(if c.sends > c.recvs {
            Unbalanced {
                rank: c.last_send.0,
                line: c.last_send.1,
                message: format!(
                    "send to rank {dst} ({what}) has no matching receive: rank {src} sends {} such messages, rank {dst} receives {} (this is the last send)",
                    c.sends, c.recvs
                ),
            }
        } else {
            Unbalanced {
                rank: c.last_recv.0,
                line: c.last_recv.1,
                message: format!(
                    "receive from rank {src} ({what}) has no matching send: rank {dst} receives {} such messages, rank {src} sends {} (this is the last receive)",
                    c.recvs, c.sends
                ),
            }
        })
    }
}
