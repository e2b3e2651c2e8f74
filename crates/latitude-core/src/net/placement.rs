//! Which node each rank runs on. `block` packs ranks densely (ranks 0..r−1 on node 0, …,
//! r = ranks per node), as the paper assumes; `round-robin` deals them out over the nodes a
//! dense packing would use; an explicit map gives each rank's node.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    Block,
    RoundRobin,
    /// Node of each rank.
    Explicit(Vec<u32>),
}

impl Placement {
    /// Node of each of `ranks` ranks, at most `per_node` on one node and node ids below
    /// `nodes` (if bounded). Errors: (machine-file key, message).
    pub fn nodes(&self, ranks: u32, per_node: u32, nodes: Option<u64>) -> Result<Vec<u32>, (&'static str, String)> {
        let used = ranks.div_ceil(per_node).max(1);
        Ok(match self {
            Placement::Block => (0..ranks).map(|r| r / per_node).collect(),
            Placement::RoundRobin => (0..ranks).map(|r| r % used).collect(),
            Placement::Explicit(map) => {
                if map.len() != ranks as usize {
                    return Err(("nodes.placement_file", format!("gives the node of {} ranks, the graph has {ranks}", map.len())));
                }
                let mut load: rustc_hash::FxHashMap<u32, u32> = Default::default();
                for (r, &n) in map.iter().enumerate() {
                    if nodes.is_some_and(|cap| n as u64 >= cap) {
                        return Err(("nodes.placement_file", format!("rank {r} is placed on node {n}, but the network has {} nodes", nodes.unwrap_or(0))));
                    }
                    let l = load.entry(n).or_insert(0);
                    *l += 1;
                    if *l > per_node {
                        return Err(("nodes.placement_file", format!("node {n} gets more than ranks_per_node = {per_node} ranks")));
                    }
                }
                map.clone()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_round_robin() {
        assert_eq!(Placement::Block.nodes(6, 4, None).unwrap(), [0, 0, 0, 0, 1, 1]);
        assert_eq!(Placement::RoundRobin.nodes(6, 4, None).unwrap(), [0, 1, 0, 1, 0, 1]);
        assert_eq!(Placement::Explicit(vec![3, 3, 0]).nodes(3, 2, Some(4)).unwrap(), [3, 3, 0]);
        assert!(Placement::Explicit(vec![3, 3, 3]).nodes(3, 2, None).is_err());
        assert!(Placement::Explicit(vec![4]).nodes(1, 2, Some(4)).is_err());
        assert!(Placement::Explicit(vec![0]).nodes(2, 2, None).is_err());
    }
}
