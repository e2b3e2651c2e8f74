//! Tags wider than 32 bits, as ATLAHS's NCCL GOAL generator writes them (a decimal
//! concatenation of step, channel, sequence, event type and communicator, e.g.
//! `5000000300`). LogGOPSim's `txt2bin` keeps a tag's low 32 bits, so two different wide
//! tags can silently match each other; here each distinct wide tag gets its own 32-bit id,
//! handed out downwards from just below `ANY`. Tags only ever compare for equality, so the
//! graph matches exactly as the file says, provided no literal tag of the file lands in the
//! id range handed out — checked, it is an error, never a silent merge.

use std::collections::HashMap;

use crate::graph::ANY;

#[derive(Default)]
pub(super) struct WideTags {
    ids: HashMap<u64, u32>,
    /// Largest tag below 2^32 the file has written literally (not `-1`).
    max_literal: Option<u32>,
}

impl WideTags {
    /// The tag to store for `tag` as written in the file.
    pub fn id(&mut self, tag: u64) -> Result<u32, String> {
        if let Ok(t) = u32::try_from(tag) {
            self.max_literal = self.max_literal.max(Some(t));
            return self.check().map(|_| t);
        }
        let next = ANY - 1 - self.ids.len() as u32;
        let id = *self.ids.entry(tag).or_insert(next);
        self.check().map(|_| id)
    }

    /// Literal tags and ids handed out must not meet.
    fn check(&self) -> Result<(), String> {
        let lowest = ANY - self.ids.len() as u32;
        match self.max_literal {
            Some(t) if !self.ids.is_empty() && t >= lowest => Err(format!(
                "tag {t} collides with the ids given to the file's {} tags wider than 32 bits (from {lowest} up); renumber the tags",
                self.ids.len()
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_tags_get_distinct_ids_and_narrow_ones_stay() {
        let mut w = WideTags::default();
        assert_eq!(w.id(7).unwrap(), 7);
        let a = w.id(5_000_000_300).unwrap();
        let b = w.id(5_000_000_300 + (1 << 32)).unwrap(); // same low 32 bits: txt2bin would merge them
        assert_ne!(a, b);
        assert_eq!(w.id(5_000_000_300).unwrap(), a);
        assert!(a < ANY && b < ANY && a != 7);
    }

    #[test]
    fn a_literal_tag_in_the_id_range_is_an_error() {
        let mut w = WideTags::default();
        w.id(u64::MAX).unwrap();
        assert!(w.id(u64::from(ANY - 1)).unwrap_err().contains("collides"));
    }
}
