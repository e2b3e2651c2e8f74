//! A network given as a graph (`kind = "graph"`): compute nodes, switches and undirected
//! links, each link of a named class. A message between two nodes takes a shortest route
//! in hops that passes through switches only (never through another compute node); among
//! equally short routes, at every step the neighbour with the lowest id (nodes first, then
//! switches, each in file order) — so the route is one well-defined path. Its counts are the
//! links of each class plus `switch`, the switches it crosses.
//!
//! Routes are found by breadth-first search from the destination (distances to it), then a
//! walk from the source down the distances; they are computed for the node pairs that need
//! them (those whose ranks talk) when a machine is bound to a graph, never for all pairs.

use std::collections::VecDeque;

use super::topology::{Counts, MAX_CLASSES};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphNet {
    pub nodes: u32,
    pub switches: u32,
    /// Class names in order; `switch` is the last class.
    pub classes: Vec<String>,
    /// Adjacency (sorted by neighbour id): vertex ids 0..nodes are nodes, then switches.
    adj: Vec<Vec<(u32, u8)>>,
}

impl GraphNet {
    /// Links as (a, b, class index) over vertex ids (nodes, then switches). Errors name the
    /// link (its index in `links`).
    pub fn new(nodes: u32, switches: u32, classes: Vec<String>, links: &[(u32, u32, u8)]) -> Result<GraphNet, String> {
        let n = (nodes + switches) as usize;
        if classes.len() + 1 > MAX_CLASSES {
            return Err(format!("{} link classes; at most {} are supported", classes.len(), MAX_CLASSES - 1));
        }
        let mut adj: Vec<Vec<(u32, u8)>> = vec![Vec::new(); n];
        for (i, &(a, b, c)) in links.iter().enumerate() {
            if a as usize >= n || b as usize >= n || c as usize >= classes.len() || a == b {
                return Err(format!("link {} is not a link between two distinct known vertices of a known class", i + 1));
            }
            if adj[a as usize].iter().any(|&(x, _)| x == b) {
                return Err(format!("link {} connects the same two vertices as an earlier link", i + 1));
            }
            adj[a as usize].push((b, c));
            adj[b as usize].push((a, c));
        }
        for list in &mut adj {
            list.sort_unstable();
        }
        let mut classes = classes;
        classes.push("switch".into());
        Ok(GraphNet { nodes, switches, classes, adj })
    }

    fn is_switch(&self, v: u32) -> bool {
        v >= self.nodes
    }

    /// Hop distances to `dst` through switches (u32::MAX where unreachable).
    fn distances(&self, dst: u32) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.adj.len()];
        dist[dst as usize] = 0;
        let mut queue = VecDeque::from([dst]);
        while let Some(v) = queue.pop_front() {
            if v != dst && !self.is_switch(v) {
                continue; // a node ends a route, it does not forward
            }
            for &(w, _) in &self.adj[v as usize] {
                if dist[w as usize] == u32::MAX {
                    dist[w as usize] = dist[v as usize] + 1;
                    queue.push_back(w);
                }
            }
        }
        dist
    }

    /// The route's class counts from `src` to each of `dsts` (None: no route).
    pub fn routes_to(&self, dst: u32, srcs: &[u32]) -> Vec<Option<Counts>> {
        let dist = self.distances(dst);
        srcs.iter().map(|&s| self.walk(&dist, s, dst)).collect()
    }

    fn walk(&self, dist: &[u32], src: u32, dst: u32) -> Option<Counts> {
        if dist[src as usize] == u32::MAX {
            return None;
        }
        let mut c = [0u32; MAX_CLASSES];
        let switch = self.classes.len() - 1;
        let mut v = src;
        while v != dst {
            let d = dist[v as usize];
            // lowest-id neighbour one hop closer (that may forward, or is the destination)
            let &(w, class) = self.adj[v as usize].iter().find(|&&(w, _)| dist[w as usize] == d - 1 && (w == dst || self.is_switch(w)))?;
            c[class as usize] += 1;
            if self.is_switch(w) {
                c[switch] += 1;
            }
            v = w;
        }
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 nodes, 5 switches: n0, n1 on s0; n2 on s1; n3 on s2; s0-s3-s1 and s0-s4-s1 (ring of
    /// spines), s1-s2 direct, s2-s4.
    pub fn five_switches() -> GraphNet {
        let classes = vec!["host".to_string(), "wire".to_string()];
        let (n, s) = (4, |i: u32| 4 + i);
        let links = [
            (0, s(0), 0),
            (1, s(0), 0),
            (2, s(1), 0),
            (3, s(2), 0),
            (s(0), s(3), 1),
            (s(3), s(1), 1),
            (s(0), s(4), 1),
            (s(4), s(1), 1),
            (s(1), s(2), 1),
            (s(2), s(4), 1),
        ];
        GraphNet::new(n, 5, classes, &links).unwrap()
    }

    #[test]
    fn five_switch_routes_by_hand() {
        let g = five_switches();
        let at = |a: u32, b: u32| g.routes_to(b, &[a])[0].unwrap()[..3].to_vec();
        assert_eq!(g.classes, ["host", "wire", "switch"]);
        assert_eq!(at(0, 1), [2, 0, 1]); // n0 s0 n1
        assert_eq!(at(0, 2), [2, 2, 3]); // n0 s0 s3 s1 n2 (s3 before s4: lower id)
        assert_eq!(at(0, 3), [2, 2, 3]); // n0 s0 s4 s2 n3
        assert_eq!(at(2, 3), [2, 1, 2]); // n2 s1 s2 n3
        assert_eq!(at(3, 0), [2, 2, 3]);
    }

    #[test]
    fn nodes_do_not_forward() {
        // n0 - n1 - n2 in a line: n0 cannot reach n2 through n1.
        let g = GraphNet::new(3, 0, vec!["wire".into()], &[(0, 1, 0), (1, 2, 0)]).unwrap();
        assert_eq!(g.routes_to(2, &[0])[0], None);
        assert_eq!(g.routes_to(1, &[0])[0].unwrap()[..2], [1, 0]);
    }

    #[test]
    fn bad_links_are_refused() {
        assert!(GraphNet::new(2, 1, vec!["w".into()], &[(0, 2, 0), (2, 0, 0)]).is_err());
        assert!(GraphNet::new(2, 1, vec!["w".into()], &[(0, 7, 0)]).is_err());
        assert!(GraphNet::new(2, 1, vec!["w".into()], &[(0, 2, 3)]).is_err());
    }
}
