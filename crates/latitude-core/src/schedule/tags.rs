//! The tag space of a converted trace. Matching is exact because every (communicator, user
//! tag) pair gets its own GOAL tag and collectives live in their own range:
//!
//! ```text
//! 0 .. 2^29            point-to-point on MPI_COMM_WORLD, the user's tag unchanged
//! 2^29 .. 2^30         point-to-point on other communicators (or tags ≥ 2^29): one dense
//!                      id per (communicator, tag), in order of first use
//! 2^30 .. 2^31         collectives: collectives::coll_tag(communicator, sequence number)
//! ```
//! `0xFFFFFFFF` (GOAL's `-1`, ANY_TAG) is never produced for a resolved receive.

use crate::collectives::COLL_TAG_BASE;
use rustc_hash::FxHashMap as FxMap;

pub const DIRECT_LIMIT: u32 = 1 << 29;

#[derive(Default)]
pub struct Tags {
    dense: FxMap<(u32, i64), u32>,
    by_id: Vec<(u32, i64)>,
}

impl Tags {
    /// GOAL tag of user tag `tag` (≥ 0) on communicator id `comm` (0 = world).
    pub fn p2p(&mut self, comm: u32, tag: i64) -> Result<u32, String> {
        if comm == 0 && (0..DIRECT_LIMIT as i64).contains(&tag) {
            return Ok(tag as u32);
        }
        if let Some(&t) = self.dense.get(&(comm, tag)) {
            return Ok(t);
        }
        let id = self.by_id.len() as u32;
        if id >= COLL_TAG_BASE - DIRECT_LIMIT {
            return Err(format!("more than {} distinct (communicator, tag) pairs", COLL_TAG_BASE - DIRECT_LIMIT));
        }
        self.by_id.push((comm, tag));
        self.dense.insert((comm, tag), DIRECT_LIMIT + id);
        Ok(DIRECT_LIMIT + id)
    }

    /// What a GOAL tag stands for, for error messages.
    pub fn describe(&self, tag: u32, comm_name: &dyn Fn(u32) -> String) -> String {
        if tag < DIRECT_LIMIT {
            format!("tag {tag} on MPI_COMM_WORLD")
        } else if tag < COLL_TAG_BASE {
            match self.by_id.get((tag - DIRECT_LIMIT) as usize) {
                Some(&(c, t)) => format!("tag {t} on {}", comm_name(c)),
                None => format!("tag {tag}"),
            }
        } else if tag != u32::MAX {
            format!("collective #{} (mod 65536) on {}", tag & 0xFFFF, comm_name((tag >> 16) & 0x3FFF))
        } else {
            "ANY_TAG".into()
        }
    }
}
