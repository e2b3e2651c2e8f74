//! Shared helpers for the integration tests: the LLAMP worked example and an independent
//! reference evaluator (memoised recursion over the model's rules, no order, no slots).
#![allow(dead_code)]

use latitude_core::graph::{Dep, ExecGraph, GraphBuilder, Kind, Op};
use latitude_core::model::{b, p, Model, Point, Protocol, NPARAM};
use latitude_core::net::{Flat, Routes};

/// LLAMP paper Fig. 4: rank 0: c0 -> send(4 B) -> c1; rank 1: c2 -> recv -> c3.
pub fn worked_example(c0: u64) -> ExecGraph {
    let mut g = GraphBuilder::new(2);
    let a0 = g.add(0, Op::calc(c0)).unwrap();
    let s = g.add(0, Op::send(4, 1, 0)).unwrap();
    let a1 = g.add(0, Op::calc(1000)).unwrap();
    let b2 = g.add(1, Op::calc(500)).unwrap();
    let r = g.add(1, Op::recv(4, 0, 0)).unwrap();
    let b3 = g.add(1, Op::calc(1000)).unwrap();
    g.requires(s, a0).unwrap();
    g.requires(a1, s).unwrap();
    g.requires(r, b2).unwrap();
    g.requires(b3, r).unwrap();
    g.finish().unwrap()
}

pub fn point(l: f64, o: f64, gap: f64, gb: f64, ob: f64) -> Point {
    Point::from_ns(&[l, o, gap, gb, ob]).unwrap()
}

/// Index of the copy parameter C in the points of `with_c` (right after the globals).
pub const C_INDEX: u16 = NPARAM as u16;

/// `m` with the copy parameter C at `C_INDEX` pricing every local copy.
pub fn copy_model(m: Model) -> Model {
    Model { copy: Some(C_INDEX), ..m }
}

/// `pt` (the five globals) with C = `c` ns per byte appended, for a `copy_model`.
pub fn with_c(pt: &Point, c: f64) -> Point {
    let mut v = pt.ns();
    v.push(c);
    Point::from_named(&v, &["L", "o", "g", "G", "O", "C"]).unwrap()
}

/// Index of the call cost K in the points of `with_k` (after C).
pub const K_INDEX: u16 = NPARAM as u16 + 1;

/// `m` with C at `C_INDEX` and the call cost K at `K_INDEX`.
pub fn call_model(m: Model) -> Model {
    Model { copy: Some(C_INDEX), call: Some(K_INDEX), ..m }
}

/// `pt` (the five globals) with C = `c` ns per byte and K = `k` ns appended, for a `call_model`.
pub fn with_ck(pt: &Point, c: f64, k: f64) -> Point {
    let mut v = pt.ns();
    v.extend([c, k]);
    Point::from_named(&v, &["L", "o", "g", "G", "O", "C", "K"]).unwrap()
}

/// Reference T(θ) by memoised recursion on (vertex, start/end); a message's L and G are
/// its pair's latency and gap on `net`.
pub struct Reference<'a> {
    g: &'a ExecGraph,
    m: Model,
    pt: Point,
    net: &'a dyn Routes,
    memo: Vec<[Option<i128>; 2]>,
    gap_prev: Vec<u32>,
}

impl<'a> Reference<'a> {
    pub fn new(g: &'a ExecGraph, m: Model, pt: Point) -> Self {
        Self::on(g, m, pt, &Flat)
    }

    pub fn on(g: &'a ExecGraph, m: Model, pt: Point, net: &'a dyn Routes) -> Self {
        let mut gap_prev = vec![u32::MAX; g.len()];
        if m.nic_serialization {
            let (off, ids) = g.by_rank();
            for r in 0..g.num_ranks() as usize {
                let mut last: Vec<u32> = vec![u32::MAX; 256];
                for &v in &ids[off[r]..off[r + 1]] {
                    if g.kind(v) == Kind::Send {
                        gap_prev[v as usize] = last[g.nic(v) as usize];
                        last[g.nic(v) as usize] = v;
                    }
                }
            }
        }
        Reference { g, m, pt, net, memo: vec![[None, None]; g.len()], gap_prev }
    }

    /// K when calc v ends a collective call and the model prices calls, else 0 (read from
    /// the marks directly, not through the engine's set).
    fn call_cost(&self, v: u32) -> i128 {
        match self.m.call {
            Some(k) if self.g.colls().marks.iter().any(|m| m.vertex == v) => self.pt.theta[k as usize],
            _ => 0,
        }
    }

    /// Cost terms of send u's message.
    fn c(&self, u: u32, terms: &[(usize, u64)]) -> i128 {
        let route = self.net.route(self.g.rank(u), self.g.peer(u));
        terms
            .iter()
            .map(|&(k, n)| {
                n as i128
                    * match k {
                        p::L => route.lat.at(&self.pt),
                        p::G_BYTE => route.gap.at(&self.pt),
                        _ => self.pt.theta[k],
                    }
            })
            .sum()
    }

    pub fn start(&mut self, v: u32) -> i128 {
        if let Some(x) = self.memo[v as usize][0] {
            return x;
        }
        let mut s = 0i128;
        let preds: Vec<(u32, Dep)> = self.g.preds(v).collect();
        for (q, dep) in preds {
            let t = if dep == Dep::Requires { self.end(q) } else { self.start(q) };
            s = s.max(t);
        }
        let gp = self.gap_prev[v as usize];
        if gp != u32::MAX {
            let t = self.start(gp) + self.c(gp, &[(p::G_MSG, 1), (p::G_BYTE, b(self.g.val(gp)))]);
            s = s.max(t);
        }
        self.memo[v as usize][0] = Some(s);
        s
    }

    pub fn end(&mut self, v: u32) -> i128 {
        if let Some(x) = self.memo[v as usize][1] {
            return x;
        }
        let g = self.g;
        let sv = self.start(v);
        let (o, l, gb, ob) = (p::O_MSG, p::L, p::G_BYTE, p::O_BYTE);
        let e = match g.kind(v) {
            // a local copy pays the model's copy parameter C per byte (O without one)
            Kind::Calc => sv + g.val(v) as i128 * self.pt.unit + b(g.copy(v)) as i128 * self.pt.theta[self.m.copy_param()] + self.call_cost(v),
            kind => {
                let (u, r) = if kind == Kind::Send { (v, g.partner(v)) } else { (g.partner(v), v) };
                let s = g.val(u);
                let (su, sr) = (self.start(u), self.start(r));
                let arrival = su + self.c(u, &[(o, 1), (l, 1), (gb, b(s))]);
                if self.m.is_eager(s) {
                    if kind == Kind::Send {
                        sv + self.c(u, &[(o, 1), (ob, b(s))])
                    } else {
                        sr.max(arrival) + self.c(u, &[(o, 1), (ob, b(s))])
                    }
                } else {
                    let rts = su + self.c(u, &[(o, 1), (l, 1)]);
                    match (self.m.protocol, kind) {
                        (Protocol::Handshake, Kind::Recv) => rts.max(sr) + self.c(u, &[(o, 2), (l, 2), (gb, b(s))]),
                        (Protocol::Handshake, _) => rts.max(sr) + self.c(u, &[(o, 2), (l, 3), (gb, b(s))]),
                        (Protocol::LogGopSim, Kind::Recv) => sr.max(arrival) + self.c(u, &[(o, 1)]),
                        (Protocol::LogGopSim, _) => rts.max(sr),
                    }
                }
            }
        };
        self.memo[v as usize][1] = Some(e);
        e
    }

    pub fn runtime(&mut self) -> i128 {
        (0..self.g.len() as u32).map(|v| self.end(v)).max().unwrap_or(0)
    }
}

pub const _N: usize = NPARAM;
