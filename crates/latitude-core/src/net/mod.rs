//! Machines: what a message between two ranks costs, beyond one L and one G.
//!
//! A machine places ranks on nodes (`placement.rs`) and connects the nodes by a network
//! (`topology.rs`, `graph_net.rs`). The latency of a message between ranks i, j on nodes
//! A, B is
//!
//! ```text
//! A ≠ B:  L + R(i, j)     R = the pair's matrix entry if the machine has one,
//!                             else Σ_c n_c(A, B)·l_c over the route's link classes c
//!                             (0 on a flat network: there the latency is L)
//! A = B:  the pair's matrix entry if there is one, else the intra-node L if the
//!         machine has one, else L
//! ```
//!
//! and its gap per byte is the pair's G-matrix entry, else the intra-node G (A = B, if
//! given), else G. Each l_c, the intra-node L and G and the machine's own parameters are
//! named parameters; matrix entries are sums of a constant and named parameters. So every
//! cost stays affine in θ with integer coefficients and the engine stays exact for any
//! named parameter. L is thus the latency added to every message between nodes (the
//! network latency on a flat machine, an extra end-to-end latency — 0 unless set — on a
//! topology).
//!
//! The graph never changes with the machine: the forward pass asks a [`Routes`] for the
//! route of each message's pair of ranks. A [`Machine`] is the description; binding it to a
//! graph ([`Machine::bind`]) resolves the placement for the graph's ranks, checks that they
//! fit, and, for graph-file topologies, finds the routes of the node pairs that talk. A new
//! placement is a new binding of the same plan: no graph reload, no new plan.

mod graph_net;
mod placement;
mod route;
mod topology;

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::graph::{ExecGraph, Kind};
use crate::model::{p, Point};

pub use graph_net::GraphNet;
pub use placement::Placement;
pub use route::{Flat, GapTerms, LatTerms, Route, Routes, Terms, NO_CLASS};
pub use topology::{Counts, Dragonfly, FatTree, Torus, MAX_CLASSES, TORUS_DIMS};

/// The network between nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// Every pair of nodes one L apart.
    Flat,
    FatTree(FatTree),
    Dragonfly(Dragonfly),
    Torus(Torus),
    Graph(GraphNet),
}

impl Topology {
    pub fn kind(&self) -> &'static str {
        match self {
            Topology::Flat => "flat",
            Topology::FatTree(_) => "fat_tree",
            Topology::Dragonfly(_) => "dragonfly",
            Topology::Torus(_) => "torus",
            Topology::Graph(_) => "graph",
        }
    }
    /// Link classes in count order.
    pub fn classes(&self) -> Vec<String> {
        match self {
            Topology::Flat => Vec::new(),
            Topology::FatTree(_) => FatTree::classes(),
            Topology::Dragonfly(_) => Dragonfly::classes(),
            Topology::Torus(t) => t.classes(),
            Topology::Graph(g) => g.classes.clone(),
        }
    }
    /// Nodes the network connects (None: any number).
    pub fn nodes(&self) -> Option<u64> {
        match self {
            Topology::Flat => None,
            Topology::FatTree(t) => Some(t.nodes()),
            Topology::Dragonfly(t) => Some(t.nodes()),
            Topology::Torus(t) => Some(t.nodes()),
            Topology::Graph(g) => Some(g.nodes as u64),
        }
    }
    fn describe(&self) -> String {
        match self {
            Topology::Flat => "the flat network".into(),
            Topology::FatTree(t) => format!("the fat tree (k = {}, {} levels)", t.k, t.levels),
            Topology::Dragonfly(t) => format!("the dragonfly (g = {}, a = {}, p = {})", t.g, t.a, t.p),
            Topology::Torus(t) => format!("the torus {}", t.dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("×")),
            Topology::Graph(g) => format!("the network graph ({} nodes)", g.nodes),
        }
    }
}

/// Per-pair entries (App. I's matrices), by rank or by node, symmetric: entry ids per
/// (i, j) into a table of distinct entries (a dense n×n array of ids, asked for by the
/// machine file; no entry = `NONE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix<T> {
    pub by_node: bool,
    pub n: usize,
    pub ids: Vec<u32>,
    pub entries: Vec<T>,
}

pub const NO_ENTRY: u32 = u32::MAX;

impl<T: Copy> Matrix<T> {
    #[inline]
    fn get(&self, i: u32, j: u32) -> Option<T> {
        let id = self.ids[i as usize * self.n + j as usize];
        (id != NO_ENTRY).then(|| self.entries[id as usize])
    }
    #[inline]
    fn lookup(&self, (ri, rj): (u32, u32), (a, b): (u32, u32)) -> Option<T> {
        if self.by_node {
            self.get(a, b)
        } else {
            self.get(ri, rj)
        }
    }
}

/// A machine: parameters' roles, network, placement, per-pair overrides. `source` names
/// the machine file in error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    pub source: String,
    /// Number of named parameters (the point's `n`).
    pub nparams: usize,
    pub topology: Topology,
    /// Named parameter of each link class (in `topology.classes()` order).
    pub class_param: Vec<u16>,
    pub ranks_per_node: u32,
    pub placement: Placement,
    /// Intra-node L and G parameters.
    pub intra: Option<(u16, u16)>,
    pub lat_matrix: Option<Matrix<LatTerms>>,
    pub gap_matrix: Option<Matrix<GapTerms>>,
}

impl Machine {
    /// The flat LogGPS machine with the five global parameters.
    pub fn flat() -> Machine {
        Machine {
            source: String::new(),
            nparams: crate::model::NPARAM,
            topology: Topology::Flat,
            class_param: Vec::new(),
            ranks_per_node: 1,
            placement: Placement::Block,
            intra: None,
            lat_matrix: None,
            gap_matrix: None,
        }
    }

    fn err(&self, key: &str, msg: impl std::fmt::Display) -> Error {
        let text = format!("{key}: {msg}");
        if self.source.is_empty() {
            Error::new(text)
        } else {
            Error::in_file(&self.source, text)
        }
    }

    /// Check the description (parameter indices, limits); bind checks what needs the graph.
    pub fn validate(&self) -> Result<()> {
        let classes = self.topology.classes();
        if classes.len() != self.class_param.len() {
            return Err(self.err("topology.latency", format!("{} link classes but {} latency parameters", classes.len(), self.class_param.len())));
        }
        if classes.len() > MAX_CLASSES {
            return Err(self.err("topology", format!("{} link classes; at most {MAX_CLASSES} are supported", classes.len())));
        }
        let max = self.class_param.iter().chain(self.intra.iter().flat_map(|(l, g)| [l, g])).copied().max().unwrap_or(0) as usize;
        if max >= self.nparams || self.nparams > crate::model::MAXP {
            return Err(self.err("topology", "a link class or intra-node parameter has no value"));
        }
        if self.ranks_per_node == 0 {
            return Err(self.err("nodes.ranks_per_node", "expected a positive number of ranks per node"));
        }
        match &self.topology {
            Topology::FatTree(t) if t.k < 2 || t.k % 2 == 1 => return Err(self.err("topology.k", format!("expected an even switch radix k ≥ 2, got {}", t.k))),
            Topology::FatTree(t) if t.levels == 0 || t.nodes() > u32::MAX as u64 => {
                return Err(self.err("topology.levels", format!("expected 1 or more levels with at most 2^32 nodes, got {}", t.levels)))
            }
            Topology::Dragonfly(t) if t.g == 0 || t.a == 0 || t.p == 0 || t.nodes() > u32::MAX as u64 => {
                return Err(self.err("topology", "expected positive g, a, p with at most 2^32 nodes"))
            }
            Topology::Dragonfly(t) if t.h == 0 || (t.a as u64 * t.h as u64) < t.g as u64 - 1 => {
                return Err(self.err("topology.h", format!("{} routers × h = {} global links cannot reach the other {} groups", t.a, t.h, t.g - 1)))
            }
            Topology::Torus(t) if t.dims.is_empty() || t.dims.len() > TORUS_DIMS.len() || t.dims.contains(&0) || t.nodes() > u32::MAX as u64 => {
                return Err(self.err("topology.dims", format!("expected 1 to {} positive dimensions with at most 2^32 nodes", TORUS_DIMS.len())))
            }
            _ => {}
        }
        Ok(())
    }

    /// Resolve the machine for `g`: every rank's node, the fit checks, and the routes a
    /// graph-file network needs.
    pub fn bind(self: &Arc<Self>, g: &ExecGraph) -> Result<Network> {
        self.validate()?;
        let ranks = g.num_ranks();
        let node_of = self.placement.nodes(ranks, self.ranks_per_node, self.topology.nodes()).map_err(|(key, m)| self.err(key, m))?;
        let used = node_of.iter().copied().max().map_or(0, |n| n as u64 + 1);
        if let Some(cap) = self.topology.nodes() {
            if used > cap {
                return Err(self
                    .err("nodes", format!("{ranks} ranks at {} per node need {used} nodes, but {} has {cap}", self.ranks_per_node, self.topology.describe())));
            }
        }
        for (key, m) in [("matrix.L", self.lat_matrix.as_ref().map(|m| (m.by_node, m.n))), ("matrix.G", self.gap_matrix.as_ref().map(|m| (m.by_node, m.n)))] {
            match m {
                Some((false, n)) if n != ranks as usize => return Err(self.err(key, format!("a {n}×{n} matrix of ranks for a graph of {ranks} ranks"))),
                Some((true, n)) if (n as u64) < used => {
                    return Err(self.err(key, format!("a {n}×{n} matrix of nodes, but the ranks are placed on {used} nodes")))
                }
                _ => {}
            }
        }
        let mut net = Network { machine: self.clone(), node_of, routes: FxHashMap::default() };
        if let Topology::Graph(gn) = &self.topology {
            net.routes = graph_routes(self, gn, &net.node_of, g)?;
        }
        Ok(net)
    }

    fn class_terms(&self, counts: &Counts) -> LatTerms {
        let mut t = LatTerms::param(p::L);
        for (c, &k) in self.class_param.iter().enumerate() {
            t.add(k as usize, counts[c]);
        }
        t
    }
}

/// The pairs of ranks that exchange messages, i < j, sorted.
pub fn talking_pairs(g: &ExecGraph) -> Vec<(u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = (0..g.len() as u32)
        .filter(|&v| g.kind(v) == Kind::Send)
        .map(|v| {
            let (a, b) = (g.rank(v), g.peer(v));
            (a.min(b), a.max(b))
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// Routes of the node pairs whose ranks talk, for a graph-file network.
fn graph_routes(m: &Machine, gn: &GraphNet, node_of: &[u32], g: &ExecGraph) -> Result<FxHashMap<(u32, u32), Counts>> {
    let mut by_dst: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for (i, j) in talking_pairs(g) {
        let (a, b) = (node_of[i as usize], node_of[j as usize]);
        if a != b {
            by_dst.entry(a.max(b)).or_default().push(a.min(b));
        }
    }
    let mut out = FxHashMap::default();
    let mut dsts: Vec<_> = by_dst.into_iter().collect();
    dsts.sort_unstable();
    for (b, mut srcs) in dsts {
        srcs.sort_unstable();
        srcs.dedup();
        for (a, c) in srcs.iter().zip(gn.routes_to(b, &srcs)) {
            match c {
                Some(c) => out.insert((*a, b), c),
                None => return Err(m.err("topology.file", format!("no route from node n{a} to node n{b} through switches"))),
            };
        }
    }
    Ok(out)
}

/// A machine bound to a graph's ranks.
#[derive(Clone, Debug)]
pub struct Network {
    pub machine: Arc<Machine>,
    /// Node of each rank.
    pub node_of: Vec<u32>,
    /// Graph-file networks: class counts per node pair (a < b) that talks.
    routes: FxHashMap<(u32, u32), Counts>,
}

impl Network {
    /// The flat machine for any graph.
    pub fn flat(ranks: u32) -> Network {
        Network { machine: Arc::new(Machine::flat()), node_of: (0..ranks).collect(), routes: FxHashMap::default() }
    }

    /// Class counts between two distinct nodes.
    pub fn counts(&self, a: u32, b: u32) -> Counts {
        match &self.machine.topology {
            Topology::Flat => [0; MAX_CLASSES],
            Topology::FatTree(t) => t.counts(a, b),
            Topology::Dragonfly(t) => t.counts(a, b),
            Topology::Torus(t) => t.counts(a, b),
            Topology::Graph(gn) => {
                let key = (a.min(b), a.max(b));
                match self.routes.get(&key) {
                    Some(c) => *c,
                    // a pair nobody bound it for (not on a message of the graph): search
                    None => gn.routes_to(key.1, &[key.0])[0].unwrap_or([0; MAX_CLASSES]),
                }
            }
        }
    }

    fn max_counts(&self) -> Counts {
        match &self.machine.topology {
            Topology::Flat => [0; MAX_CLASSES],
            Topology::FatTree(t) => t.max_counts(),
            Topology::Dragonfly(t) => t.max_counts(),
            Topology::Torus(t) => t.max_counts(),
            Topology::Graph(_) => self.routes.values().fold([0; MAX_CLASSES], |mut m, c| {
                for i in 0..MAX_CLASSES {
                    m[i] = m[i].max(c[i]);
                }
                m
            }),
        }
    }
}

impl Routes for Network {
    #[inline]
    fn route(&self, src: u32, dst: u32) -> Route {
        let m = &*self.machine;
        let (a, b) = (self.node_of[src as usize], self.node_of[dst as usize]);
        let (ri, rj) = (src.min(dst), src.max(dst));
        let (na, nb) = (a.min(b), a.max(b));
        let lat_entry = m.lat_matrix.as_ref().and_then(|x| x.lookup((ri, rj), (na, nb)));
        let gap_entry = m.gap_matrix.as_ref().and_then(|x| x.lookup((ri, rj), (na, nb)));
        let lat = if a != b {
            match lat_entry {
                Some(e) => {
                    let mut t = e;
                    t.add(p::L, 1);
                    t
                }
                None if m.class_param.is_empty() => LatTerms::param(p::L),
                None => m.class_terms(&self.counts(na, nb)),
            }
        } else {
            match (lat_entry, m.intra) {
                (Some(e), _) => e,
                (None, Some((l, _))) => LatTerms::param(l as usize),
                (None, None) => LatTerms::param(p::L),
            }
        };
        let gap = match (gap_entry, m.intra) {
            (Some(e), _) => e,
            (None, Some((_, g))) if a == b => GapTerms::param(g as usize),
            _ => GapTerms::param(p::G_BYTE),
        };
        Route { lat, gap, ovh: NO_CLASS }
    }

    fn is_flat(&self) -> bool {
        let m = &*self.machine;
        m.topology == Topology::Flat && m.intra.is_none() && m.lat_matrix.is_none() && m.gap_matrix.is_none()
    }

    fn max_route(&self, pt: &Point) -> (f64, f64) {
        let m = &*self.machine;
        let th = |k: usize| pt.theta[k] as f64;
        let counts = self.max_counts();
        let mut lat = th(p::L) + m.class_param.iter().enumerate().map(|(c, &k)| counts[c] as f64 * th(k as usize)).sum::<f64>();
        let mut gap = th(p::G_BYTE);
        if let Some((l, g)) = m.intra {
            lat = lat.max(th(l as usize));
            gap = gap.max(th(g as usize));
        }
        if let Some(x) = &m.lat_matrix {
            for e in &x.entries {
                lat = lat.max(th(p::L) + e.at(pt) as f64);
            }
        }
        if let Some(x) = &m.gap_matrix {
            for e in &x.entries {
                gap = gap.max(e.at(pt) as f64);
            }
        }
        (lat, gap)
    }
}
