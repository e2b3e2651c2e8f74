//! The LLAMP linear program (paper, Algorithm 1), assembled as a sparse row-wise matrix.
//!
//! Walking the graph in topological order with the same rules as the engine
//! (`engine::walk`), every time is an expression `x + c + Σ a_k θ_k` where x is at most one
//! LP variable. A max of one term is that term (no variable: "only vertices with several
//! predecessors get a variable"); a max of several terms gets a new variable y with one
//! constraint `y ≥ term` per term. The parameters are variables too — one column per named
//! parameter (the globals `l`, `o`, `gap`, `g`, `O` as LLAMP names them, `g` being the
//! per-byte gap G; then every link class and intra-node parameter of the machine: the
//! paper's Fig. 18/19) with lower bound = its value — and `t ≥ E(v)` for every op whose end
//! no `requires` edge consumes. Minimising t pushes every variable to its lower bound, so
//! the optimum equals the engine's T, and the reduced cost of column k is a subgradient of
//! T in θ_k: the engine's λ_k wherever T is differentiable in θ_k, and at a breakpoint some
//! subgradient in [λ_k(left), λ_k(right)] (which one depends on the optimal basis).
//!
//! The pairwise variant (the paper's App. I) replaces each message's latency and gap by two
//! columns of its pair of ranks, `l_i_j` and `g_i_j` (i < j), with lower bounds = that pair's
//! latency and gap on the machine; their reduced costs are the pairwise sensitivities.
//!
//! Rows are `y − x − Σ a_k θ_k ≥ c` (c in ns); the matrix is row-wise CSR with 32-bit
//! indices, ready for HiGHS' `passModel`.

use rustc_hash::FxHashMap;

use crate::engine::walk::{walk, Domain, Quantity};
use crate::engine::Plan;
use crate::error::{Error, Result};
use crate::graph::{ExecGraph, NONE};
use crate::model::{Lin, Point, TICKS_PER_NS};
use crate::net::{GapTerms, LatTerms, Route, Routes, NO_CLASS};

/// Column names of the global parameter columns, in θ order (L, o, g, G, O).
pub const PARAM_COLS: [&str; crate::model::NPARAM] = ["l", "o", "gap", "g", "O"];

/// A row-wise sparse LP: minimise `cost · x` s.t. `row_lower ≤ A x`, `col_lower ≤ x`.
pub struct LpModel {
    pub num_col: usize,
    pub num_row: usize,
    pub start: Vec<i32>,
    pub index: Vec<i32>,
    pub value: Vec<f64>,
    pub row_lower: Vec<f64>,
    pub col_lower: Vec<f64>,
    pub col_cost: Vec<f64>,
    /// Parameter columns: the named parameters, then (pairwise) `l_i_j`, `g_i_j` per pair.
    pub param_cols: usize,
    /// Pairwise variant: the pairs (i < j) of the pair columns, in column order.
    pub pairs: Vec<(u32, u32)>,
    /// For each y variable (column param_cols + i): the vertex and what it stands for.
    pub var_vertex: Vec<u32>,
    pub var_kind: Vec<Quantity>,
    /// Column of t (the runtime).
    pub t_col: usize,
}

#[derive(Clone, Copy)]
struct Expr {
    var: u32,
    cost: Lin,
}

struct Builder {
    m: LpModel,
    /// Op and quantity the walk is computing (for variable names).
    note: (u32, Quantity),
    sinks: Vec<Expr>,
    overflow: bool,
}

impl Builder {
    fn new_var(&mut self, v: u32, kind: Quantity) -> u32 {
        let col = self.m.num_col as u32;
        self.m.num_col += 1;
        self.m.col_lower.push(0.0);
        self.m.col_cost.push(0.0);
        self.m.var_vertex.push(v);
        self.m.var_kind.push(kind);
        col
    }
    /// Row `y − x − Σ a_k θ_k ≥ c`.
    fn row_ge(&mut self, y: u32, x: &Expr) {
        self.m.index.push(y as i32);
        self.m.value.push(1.0);
        if x.var != NONE {
            self.m.index.push(x.var as i32);
            self.m.value.push(-1.0);
        }
        for (k, a) in x.cost.terms() {
            self.m.index.push(k as i32);
            self.m.value.push(-(a as f64));
        }
        self.m.row_lower.push(x.cost.c as f64 / TICKS_PER_NS as f64);
        self.m.num_row += 1;
        if self.m.index.len() >= i32::MAX as usize {
            self.overflow = true;
        }
        self.m.start.push(self.m.index.len().min(i32::MAX as usize) as i32);
    }
}

impl Domain for Builder {
    type Val = Expr;
    fn zero(&mut self) -> Expr {
        Expr { var: NONE, cost: Lin::ZERO }
    }
    fn add(&mut self, x: &Expr, a: &Lin) -> Expr {
        if let Some(cost) = x.cost.plus(a) {
            return Expr { var: x.var, cost };
        }
        // More distinct parameters than an expression holds: a variable for x first.
        let y = self.new_var(self.note.0, self.note.1);
        self.row_ge(y, x);
        Expr { var: y, cost: *a }
    }
    fn max(&mut self, cands: &[Expr]) -> (Expr, usize) {
        if cands.len() == 1 {
            return (cands[0], 0);
        }
        let y = self.new_var(self.note.0, self.note.1);
        for c in cands {
            self.row_ge(y, c);
        }
        (Expr { var: y, cost: Lin::ZERO }, 0)
    }
    fn note(&mut self, v: u32, q: Quantity) {
        self.note = (v, q);
    }
    fn end(&mut self, _v: u32, e: &Expr) {
        self.sinks.push(*e);
    }
}

/// The pairwise variant's routes: each pair's latency and gap are its own two columns.
struct PairColumns<'a, R> {
    net: &'a R,
    first: usize,
    index: FxHashMap<(u32, u32), u32>,
}

impl<R: Routes> Routes for PairColumns<'_, R> {
    fn route(&self, src: u32, dst: u32) -> Route {
        let i = self.index[&(src.min(dst), src.max(dst))] as usize;
        Route { lat: LatTerms::param(self.first + 2 * i), gap: GapTerms::param(self.first + 2 * i + 1), ovh: NO_CLASS }
    }
    fn max_route(&self, pt: &Point) -> (f64, f64) {
        self.net.max_route(pt)
    }
}

/// Build the LP of `g` at `pt` (parameter lower bounds) on the machine `net` under the
/// plan's model; `pairwise` gives each pair of ranks its own latency and gap columns.
pub fn build_lp<R: Routes>(g: &ExecGraph, plan: &Plan, net: &R, pt: &Point, pairwise: bool) -> Result<LpModel> {
    let mut col_lower = pt.ns();
    let pairs = if pairwise { crate::net::talking_pairs(g) } else { Vec::new() };
    if pt.n + 2 * pairs.len() > u16::MAX as usize {
        return Err(Error::new(format!("{} pairs of ranks talk: too many for the pairwise LP (at most {})", pairs.len(), (u16::MAX as usize - pt.n) / 2)));
    }
    for &(a, b) in &pairs {
        let r = net.route(a, b);
        col_lower.push(pt.to_ns(r.lat.at(pt)));
        col_lower.push(pt.to_ns(r.gap.at(pt)));
    }
    let param_cols = col_lower.len();
    let m = LpModel {
        num_col: param_cols,
        num_row: 0,
        start: vec![0],
        index: Vec::new(),
        value: Vec::new(),
        row_lower: Vec::new(),
        col_lower,
        col_cost: vec![0.0; param_cols],
        param_cols,
        pairs: pairs.clone(),
        var_vertex: Vec::new(),
        var_kind: Vec::new(),
        t_col: 0,
    };
    let mut b = Builder { m, note: (NONE, Quantity::Start), sinks: Vec::new(), overflow: false };
    if pairwise {
        let index = pairs.iter().enumerate().map(|(i, &p)| (p, i as u32)).collect();
        walk(g, plan, &PairColumns { net, first: pt.n, index }, &mut b, None);
    } else {
        walk(g, plan, net, &mut b, None);
    }
    let t = b.new_var(NONE, Quantity::Runtime);
    b.m.col_cost[t as usize] = 1.0;
    b.m.t_col = t as usize;
    for e in std::mem::take(&mut b.sinks) {
        b.row_ge(t, &e);
    }
    if b.overflow || b.m.num_col > i32::MAX as usize {
        return Err(Error::new("the LP has more than 2^31 nonzeros or columns; use the engine (the default method)"));
    }
    Ok(b.m)
}
