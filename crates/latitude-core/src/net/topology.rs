//! Regular topologies: link classes and the class counts of a minimal route between two
//! nodes, computed on the fly (no table).
//!
//! * Fat tree (k-ary, `levels` tiers; k = 16, 3 tiers is the paper's): 2·(k/2)^levels nodes,
//!   numbered so that each group of (k/2)^m consecutive nodes shares a level-m subtree
//!   (k/2 per edge switch, (k/2)² per pod with 3 tiers). Two nodes whose lowest common
//!   subtree is at level m are h = 2m − 1 switch hops apart: (h + 1) = 2m `wire`s and h
//!   `switch`es (the paper's (h + 1)·l_wire + h·d_switch).
//! * Dragonfly (g groups of a routers, p nodes per router, h global links per router,
//!   default ⌈(g − 1)/a⌉): node n sits on router n / p, in group n / (a·p). Minimal routing:
//!   2 `terminal` links (node–router), a `local` link inside a group where the route
//!   changes router, one `global` link between groups; `switch` counts routers visited.
//!   Group i's t-th other group (t = (j − i − 1) mod g) is reached through its router
//!   t / h; the same rule at group j gives the link's other end.
//! * Torus (dims d₀ × d₁ × …, one node per router, node id = x₀ + d₀·(x₁ + d₁·(…))):
//!   dimension-order routing, each dimension the shorter way round (ties: the positive
//!   direction); one class per dimension (`x`, `y`, `z`, `a`, `b`, `c`) counting its
//!   links, and `switch` counting the routers visited (hops + 1).

/// Links (and switches) of each class on a route, in the topology's class order.
pub type Counts = [u32; MAX_CLASSES];

/// Most classes a topology may have (a route's latency holds L plus at most this many).
pub const MAX_CLASSES: usize = 7;

pub const TORUS_DIMS: [&str; 6] = ["x", "y", "z", "a", "b", "c"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatTree {
    pub k: u32,
    pub levels: u32,
}

impl FatTree {
    pub fn nodes(&self) -> u64 {
        2 * (self.k as u64 / 2).pow(self.levels)
    }
    pub fn classes() -> Vec<String> {
        vec!["wire".into(), "switch".into()]
    }
    pub fn counts(&self, a: u32, b: u32) -> Counts {
        let half = (self.k / 2) as u64;
        let (mut x, mut y) = (a as u64 / half, b as u64 / half);
        let mut m = 1;
        while x != y && m < self.levels {
            x /= half;
            y /= half;
            m += 1;
        }
        let mut c = [0; MAX_CLASSES];
        c[0] = 2 * m;
        c[1] = 2 * m - 1;
        c
    }
    pub fn max_counts(&self) -> Counts {
        let mut c = [0; MAX_CLASSES];
        c[0] = 2 * self.levels;
        c[1] = 2 * self.levels - 1;
        c
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dragonfly {
    pub g: u32,
    pub a: u32,
    pub p: u32,
    pub h: u32,
}

impl Dragonfly {
    pub fn nodes(&self) -> u64 {
        self.g as u64 * self.a as u64 * self.p as u64
    }
    pub fn classes() -> Vec<String> {
        vec!["terminal".into(), "local".into(), "global".into(), "switch".into()]
    }
    /// Router (within its group) holding group `i`'s global link to group `j`.
    fn gateway(&self, i: u32, j: u32) -> u32 {
        let t = (j + self.g - i - 1) % self.g;
        t / self.h
    }
    pub fn counts(&self, x: u32, y: u32) -> Counts {
        let (rx, ry) = (x / self.p, y / self.p);
        let (gx, gy) = (rx / self.a, ry / self.a);
        let (lx, ly) = (rx % self.a, ry % self.a);
        let (local, global) = if rx == ry {
            (0, 0)
        } else if gx == gy {
            (1, 0)
        } else {
            let (ex, ey) = (self.gateway(gx, gy), self.gateway(gy, gx));
            ((lx != ex) as u32 + (ly != ey) as u32, 1)
        };
        let mut c = [0; MAX_CLASSES];
        c[0] = 2;
        c[1] = local;
        c[2] = global;
        c[3] = 1 + local + global;
        c
    }
    pub fn max_counts(&self) -> Counts {
        let mut c = [0; MAX_CLASSES];
        c[..4].copy_from_slice(&[2, 2, 1, 4]);
        c
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Torus {
    pub dims: Vec<u32>,
}

impl Torus {
    pub fn nodes(&self) -> u64 {
        self.dims.iter().map(|&d| d as u64).product()
    }
    pub fn classes(&self) -> Vec<String> {
        TORUS_DIMS[..self.dims.len()].iter().map(|s| s.to_string()).chain(["switch".to_string()]).collect()
    }
    pub fn counts(&self, a: u32, b: u32) -> Counts {
        let (mut x, mut y) = (a, b);
        let mut c = [0; MAX_CLASSES];
        let mut hops = 0;
        for (i, &d) in self.dims.iter().enumerate() {
            let (px, py) = (x % d, y % d);
            let fwd = (py + d - px) % d;
            let n = fwd.min(d - fwd);
            c[i] = n;
            hops += n;
            x /= d;
            y /= d;
        }
        c[self.dims.len()] = hops + 1;
        c
    }
    pub fn max_counts(&self) -> Counts {
        let mut c = [0; MAX_CLASSES];
        let mut hops = 0;
        for (i, &d) in self.dims.iter().enumerate() {
            c[i] = d / 2;
            hops += d / 2;
        }
        c[self.dims.len()] = hops + 1;
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(c: Counts, n: usize) -> Vec<u32> {
        c[..n].to_vec()
    }

    #[test]
    fn fat_tree_two_tiers_k4_by_hand() {
        // 8 nodes, 4 edge switches of 2 nodes, 2 spines.
        let ft = FatTree { k: 4, levels: 2 };
        assert_eq!(ft.nodes(), 8);
        assert_eq!(first(ft.counts(0, 1), 2), [2, 1]); // n0 - e0 - n1
        assert_eq!(first(ft.counts(0, 2), 2), [4, 3]); // n0 - e0 - spine - e1 - n2
        assert_eq!(first(ft.counts(6, 7), 2), [2, 1]);
        assert_eq!(first(ft.counts(1, 7), 2), [4, 3]);
    }

    #[test]
    fn fat_tree_three_tiers_k16() {
        let ft = FatTree { k: 16, levels: 3 };
        assert_eq!(ft.nodes(), 1024);
        assert_eq!(first(ft.counts(0, 7), 2), [2, 1]);
        assert_eq!(first(ft.counts(0, 8), 2), [4, 3]);
        assert_eq!(first(ft.counts(0, 63), 2), [4, 3]);
        assert_eq!(first(ft.counts(0, 64), 2), [6, 5]);
        assert_eq!(first(ft.counts(1000, 3), 2), [6, 5]);
    }

    #[test]
    fn dragonfly_g3_a2_p2_by_hand() {
        // 12 nodes: group 0 = routers 0, 1 (nodes 0-3), group 1 = routers 2, 3, group 2 = 4, 5.
        // h = 1: g0r0-g1r1, g0r1-g2r0, g1r0-g2r1 (router t of a group links its t-th next group).
        let df = Dragonfly { g: 3, a: 2, p: 2, h: 1 };
        assert_eq!(df.nodes(), 12);
        assert_eq!(first(df.counts(0, 1), 4), [2, 0, 0, 1]); // same router
        assert_eq!(first(df.counts(0, 2), 4), [2, 1, 0, 2]); // same group
        assert_eq!(first(df.counts(0, 6), 4), [2, 0, 1, 2]); // g0r0 -> g1r1 directly
        assert_eq!(first(df.counts(0, 4), 4), [2, 1, 1, 3]); // g0r0 -> g1r1 -> g1r0
        assert_eq!(first(df.counts(2, 4), 4), [2, 2, 1, 4]); // g0r1 -> g0r0 -> g1r1 -> g1r0
        assert_eq!(first(df.counts(2, 8), 4), [2, 0, 1, 2]); // g0r1 -> g2r0
        assert_eq!(first(df.counts(4, 10), 4), [2, 0, 1, 2]); // g1r0 -> g2r1
        assert_eq!(df.counts(6, 0), df.counts(0, 6));
    }

    #[test]
    fn torus_3x3_by_hand() {
        let t = Torus { dims: vec![3, 3] };
        assert_eq!(t.classes(), ["x", "y", "switch"]);
        assert_eq!(first(t.counts(0, 1), 3), [1, 0, 2]);
        assert_eq!(first(t.counts(0, 2), 3), [1, 0, 2]); // the wrap-around link
        assert_eq!(first(t.counts(0, 4), 3), [1, 1, 3]);
        assert_eq!(first(t.counts(0, 8), 3), [1, 1, 3]); // (0,0) -> (2,2): both wrap
        assert_eq!(first(t.counts(1, 7), 3), [0, 1, 2]);
        let t4 = Torus { dims: vec![4] };
        assert_eq!(first(t4.counts(0, 2), 2), [2, 3]); // tie: either way is 2 links
    }
}
