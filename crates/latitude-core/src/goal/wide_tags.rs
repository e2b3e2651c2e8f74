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

    /// Fold the table of one part of a text read in parts into the file-wide `all` (parts in
    /// file order): the file-wide id of each of this part's ids, indexed by `ANY - 1 - id`.
    /// Ids come out exactly as one pass over the file hands them out (in order of first
    /// appearance), so a text read in parts is the same graph as one read in one pass.
    pub fn fold_into(&self, all: &mut WideTags) -> Vec<u32> {
        all.max_literal = all.max_literal.max(self.max_literal);
        let mut mine: Vec<(u32, u64)> = self.ids.iter().map(|(&tag, &id)| (id, tag)).collect();
        mine.sort_unstable_by_key(|&(id, _)| std::cmp::Reverse(id)); // the highest id was handed out first
        mine.into_iter()
            .map(|(_, tag)| {
                let next = ANY - 1 - all.ids.len() as u32;
                *all.ids.entry(tag).or_insert(next)
            })
            .collect()
    }

    /// Whether literal tags and ids meet (the one-pass read then says where).
    pub fn collides(&self) -> bool {
        self.check().is_err()
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
    fn parts_folded_in_order_number_like_one_pass() {
        let tags = [[7, 1 << 40, 5 << 33], [5 << 33, 3 << 35, 1 << 40], [9, 1 << 41, 3 << 35]];
        let mut one = WideTags::default();
        let ids: Vec<Vec<u32>> = tags.iter().map(|p| p.iter().map(|&t| one.id(t).unwrap()).collect()).collect();
        let mut all = WideTags::default();
        for (part, want) in tags.iter().zip(&ids) {
            let mut w = WideTags::default();
            let local: Vec<u32> = part.iter().map(|&t| w.id(t).unwrap()).collect();
            let global = w.fold_into(&mut all);
            let mapped: Vec<u32> = local.iter().map(|&id| if id > 9 { global[(ANY - 1 - id) as usize] } else { id }).collect();
            assert_eq!(&mapped, want);
        }
        assert!(!all.collides());
        // Each part alone is fine; together a literal tag meets the ids.
        let (mut a, mut b, mut all) = (WideTags::default(), WideTags::default(), WideTags::default());
        a.id(u64::from(ANY - 2)).unwrap();
        b.id(1 << 40).unwrap();
        b.id(1 << 41).unwrap();
        a.fold_into(&mut all);
        b.fold_into(&mut all);
        assert!(all.collides());
    }

    #[test]
    fn a_literal_tag_in_the_id_range_is_an_error() {
        let mut w = WideTags::default();
        w.id(u64::MAX).unwrap();
        assert!(w.id(u64::from(ANY - 1)).unwrap_err().contains("collides"));
    }
}
