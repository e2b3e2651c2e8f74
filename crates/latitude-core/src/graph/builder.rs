//! Building an [`ExecGraph`]: parsers, trace converters and generators add operations rank
//! by rank and local dependencies between them; `finish` matches messages, orders the graph
//! topologically and validates it (one-line errors naming the operations involved).

use super::deps::DepStore;
use super::{matching, order, CollCalls, Dep, ExecGraph, Kind, OrderKind, SourceMap, ANY, IREQ, MAX_VERTICES, NONE};
use crate::error::{Error, Result};

/// One operation to add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: Kind,
    /// calc: ns; send/recv: bytes.
    pub val: u64,
    /// send: destination; recv: source (`ANY` allowed); calc: ignored.
    pub peer: u32,
    pub tag: u32,
    pub cpu: u16,
    pub nic: u16,
    /// calc only: bytes the op copies in memory on its CPU (a collective's own block),
    /// priced b(s)·O on top of `val` ns (docs/model.md §1); 0 for every other op.
    pub copy: u64,
}

impl Op {
    pub fn calc(ns: u64) -> Op {
        Op { kind: Kind::Calc, val: ns, peer: 0, tag: 0, cpu: 0, nic: 0, copy: 0 }
    }
    pub fn send(bytes: u64, dst: u32, tag: u32) -> Op {
        Op { kind: Kind::Send, val: bytes, peer: dst, tag, cpu: 0, nic: 0, copy: 0 }
    }
    pub fn recv(bytes: u64, src: u32, tag: u32) -> Op {
        Op { kind: Kind::Recv, val: bytes, peer: src, tag, cpu: 0, nic: 0, copy: 0 }
    }
    /// A local copy of `bytes` on the rank's CPU (a calc of 0 ns that copies them).
    pub fn copy(bytes: u64) -> Op {
        Op { copy: bytes, ..Op::calc(0) }
    }
    pub fn on_cpu(mut self, cpu: u16) -> Op {
        self.cpu = cpu;
        self
    }
    pub fn on_nic(mut self, nic: u16) -> Op {
        self.nic = nic;
        self
    }
}

/// Accumulates operations and dependencies; ids are returned in insertion order and are
/// only meaningful until `finish` (which renumbers vertices into topological order).
#[derive(Default)]
pub struct GraphBuilder {
    num_ranks: u32,
    kind: Vec<Kind>,
    rank: Vec<u32>,
    local: Vec<u32>,
    val: Vec<u64>,
    peer: Vec<u32>,
    tag: Vec<u32>,
    cpu: Vec<u16>,
    nic: Vec<u16>,
    any_cpu_nic: bool,
    /// Bytes each op copies (`Op::copy`); empty until the first op that copies.
    copy: Vec<u64>,
    any_copy: bool,
    line: Vec<u32>,
    path: Option<String>,
    deps: DepStore,
    /// Message partners declared by the generator (`pair`); empty: match at `finish`.
    partner: Vec<u32>,
    ops_in_rank: Vec<u32>,
    wildcards: u64,
    colls: CollCalls,
}

impl GraphBuilder {
    pub fn new(num_ranks: u32) -> Self {
        GraphBuilder { num_ranks, ops_in_rank: vec![0; num_ranks as usize], ..Default::default() }
    }

    /// Record source lines for every vertex (call before adding ops); errors then name
    /// `path:line`.
    pub fn with_source(mut self, path: &str) -> Self {
        self.path = Some(path.to_string());
        self
    }

    pub fn num_ranks(&self) -> u32 {
        self.num_ranks
    }
    pub fn len(&self) -> usize {
        self.kind.len()
    }
    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }
    /// Reserve room for `n` more vertices.
    pub fn reserve(&mut self, n: usize) {
        self.kind.reserve(n);
        self.rank.reserve(n);
        self.local.reserve(n);
        self.val.reserve(n);
        self.peer.reserve(n);
        self.tag.reserve(n);
    }

    /// Add an op to `rank`; returns its id. `line` is its source line (0 if none).
    pub fn add_at(&mut self, rank: u32, op: Op, line: u32) -> std::result::Result<u32, String> {
        if rank >= self.num_ranks {
            return Err(format!("rank {rank} out of range (the graph has {} ranks)", self.num_ranks));
        }
        if self.kind.len() >= MAX_VERTICES {
            return Err(format!("more than {MAX_VERTICES} operations"));
        }
        match op.kind {
            Kind::Send if op.peer >= self.num_ranks => return Err(format!("send to rank {} out of range (num_ranks {})", op.peer, self.num_ranks)),
            Kind::Recv if op.peer != ANY && op.peer >= self.num_ranks => {
                return Err(format!("recv from rank {} out of range (num_ranks {})", op.peer, self.num_ranks))
            }
            Kind::Recv if op.peer == ANY || op.tag == ANY => self.wildcards += 1,
            _ => {}
        }
        if op.copy != 0 && op.kind != Kind::Calc {
            return Err(format!("a {} cannot copy bytes (only a calc can)", op.kind.name()));
        }
        let id = self.kind.len() as u32;
        self.kind.push(op.kind);
        self.rank.push(rank);
        self.local.push(self.ops_in_rank[rank as usize]);
        self.ops_in_rank[rank as usize] += 1;
        self.val.push(op.val);
        self.peer.push(if op.kind == Kind::Calc { 0 } else { op.peer });
        self.tag.push(if op.kind == Kind::Calc { 0 } else { op.tag });
        if (op.cpu != 0 || op.nic != 0) && !self.any_cpu_nic {
            self.any_cpu_nic = true;
            self.cpu.resize(id as usize, 0);
            self.nic.resize(id as usize, 0);
        }
        if self.any_cpu_nic {
            self.cpu.push(op.cpu);
            self.nic.push(op.nic);
        }
        if op.copy != 0 && !self.any_copy {
            self.any_copy = true;
            self.copy.resize(id as usize, 0);
        }
        if self.any_copy {
            self.copy.push(op.copy);
        }
        if self.path.is_some() {
            self.line.push(line);
        }
        Ok(id)
    }

    /// The source line of op `id` (None without source lines).
    pub fn line_of(&self, id: u32) -> Option<u32> {
        self.line.get(id as usize).copied().filter(|&l| l > 0)
    }

    /// Append the ops and dependencies of `parts` (each built on its own, e.g. by one
    /// reader thread, with every rank's ops in one part), in order: ids of a part shift by
    /// the ops before it, its source lines by its `line_offset`. Err(v) if a part has a
    /// self-dependency (at merged id v).
    pub fn concat(parts: Vec<(GraphBuilder, u32)>) -> std::result::Result<GraphBuilder, u32> {
        let mut it = parts.into_iter();
        let Some((mut all, first_offset)) = it.next() else { return Ok(GraphBuilder::default()) };
        let rest: Vec<(GraphBuilder, u32)> = it.collect();
        let extra: usize = rest.iter().map(|(b, _)| b.len()).sum();
        all.reserve(extra);
        all.line.reserve(extra);
        for l in all.line.iter_mut() {
            *l += first_offset;
        }
        let n0 = all.len();
        all.deps = std::mem::take(&mut all.deps).sealed(n0)?;
        for (mut b, line_offset) in rest {
            let base = all.len() as u32;
            let deps = std::mem::take(&mut b.deps).sealed(b.len()).map_err(|v| v + base)?;
            all.deps.append(deps, base);
            if b.any_cpu_nic && !all.any_cpu_nic {
                all.any_cpu_nic = true;
                all.cpu.resize(base as usize, 0);
                all.nic.resize(base as usize, 0);
            }
            if all.any_cpu_nic {
                let n = b.len();
                all.cpu.extend(b.cpu.iter().copied().chain(std::iter::repeat(0)).take(n));
                all.nic.extend(b.nic.iter().copied().chain(std::iter::repeat(0)).take(n));
            }
            if b.any_copy && !all.any_copy {
                all.any_copy = true;
                all.copy.resize(base as usize, 0);
            }
            if all.any_copy {
                let n = b.len();
                all.copy.extend(b.copy.iter().copied().chain(std::iter::repeat(0)).take(n));
            }
            all.kind.extend_from_slice(&b.kind);
            all.rank.extend_from_slice(&b.rank);
            all.local.extend_from_slice(&b.local);
            all.val.extend_from_slice(&b.val);
            all.peer.extend_from_slice(&b.peer);
            all.tag.extend_from_slice(&b.tag);
            all.line.extend(b.line.iter().map(|&l| l + line_offset));
            for (a, x) in all.ops_in_rank.iter_mut().zip(&b.ops_in_rank) {
                *a += x;
            }
            all.wildcards += b.wildcards;
            all.colls.append(&b.colls, base);
        }
        Ok(all)
    }

    /// Add an op (no source line).
    pub fn add(&mut self, rank: u32, op: Op) -> std::result::Result<u32, String> {
        self.add_at(rank, op, 0)
    }

    /// Put the vertices from `first` on on source line `line` (ops a library added without
    /// knowing lines, such as a collective's algorithm).
    pub fn set_lines_from(&mut self, first: u32, line: u32) {
        if self.path.is_some() {
            for l in self.line.iter_mut().skip(first as usize) {
                *l = line;
            }
        }
    }

    /// Mark `vertex` as a rank's end of one collective call (graph/colls.rs).
    pub fn mark_collective(&mut self, vertex: u32, coll: &str, alg: &str, procs: u32, bytes: u64, instance: u64) {
        self.colls.mark(vertex, coll, alg, procs, bytes, instance);
    }

    /// Replace every op's tag `t` by `f(t)` (a reader renumbering the tags of a part).
    pub fn map_tags(&mut self, f: impl Fn(u32) -> u32) {
        for t in self.tag.iter_mut() {
            *t = f(*t);
        }
    }

    /// Set the source and tag of receive `id` (trace converters learn a wildcard receive's
    /// actual source only when it completes, after the op was added).
    pub fn resolve_recv(&mut self, id: u32, src: u32, tag: u32) -> std::result::Result<(), String> {
        let i = id as usize;
        if i >= self.kind.len() || self.kind[i] != Kind::Recv {
            return Err(format!("operation {id} is not a receive"));
        }
        if src != ANY && src >= self.num_ranks {
            return Err(format!("recv from rank {src} out of range (num_ranks {})", self.num_ranks));
        }
        let was = self.peer[i] == ANY || self.tag[i] == ANY;
        let now = src == ANY || tag == ANY;
        self.peer[i] = src;
        self.tag[i] = tag;
        match (was, now) {
            (true, false) => self.wildcards -= 1,
            (false, true) => self.wildcards += 1,
            _ => {}
        }
        Ok(())
    }

    /// Turn message op `id` into a zero-length computation and return what it was: trace
    /// converters learn that a request was cancelled only when it completes (or is freed),
    /// after its op was added. Its dependencies stay, so the graph around it is unchanged.
    pub fn cancel(&mut self, id: u32) -> std::result::Result<Op, String> {
        let i = id as usize;
        if i >= self.kind.len() {
            return Err(format!("operation {id} does not exist"));
        }
        let was = Op { kind: self.kind[i], val: self.val[i], peer: self.peer[i], tag: self.tag[i], cpu: 0, nic: 0, copy: 0 };
        if was.kind == Kind::Recv && (was.peer == ANY || was.tag == ANY) {
            self.wildcards -= 1;
        }
        self.kind[i] = Kind::Calc;
        self.val[i] = 0;
        self.peer[i] = 0;
        self.tag[i] = 0;
        Ok(was)
    }

    /// `a` depends on `b` (`a requires b` or `a irequires b`); both on the same rank.
    pub fn dep(&mut self, a: u32, b: u32, dep: Dep) -> std::result::Result<(), String> {
        let n = self.kind.len() as u32;
        if a >= n || b >= n {
            return Err(format!("dependency on unknown operation {}", a.max(b)));
        }
        if self.rank[a as usize] != self.rank[b as usize] {
            return Err("dependencies must connect operations of the same rank".to_string());
        }
        let flag = if dep == Dep::Irequires { IREQ } else { 0 };
        self.deps.push(a, b | flag);
        Ok(())
    }

    /// Declare that send `s` and receive `r` are a matched pair. A generator that already
    /// matched its messages (each stream's k-th send with its k-th receive, as
    /// `graph/matching.rs`) declares every pair and saves `finish` the matching pass; the
    /// pairs are checked for consistency there, and matched afresh if any is off.
    pub fn pair(&mut self, s: u32, r: u32) {
        let n = self.kind.len();
        if self.partner.len() < n {
            self.partner.resize(n, NONE);
        }
        if (s as usize) < n && (r as usize) < n {
            self.partner[s as usize] = r;
            self.partner[r as usize] = s;
        }
    }

    /// Are the declared pairs a complete, consistent matching (every message op paired with
    /// an op of the other kind on the same (src, dst, tag) stream)?
    fn declared_pairs_hold(&self) -> bool {
        let p = &self.partner;
        (0..self.kind.len()).all(|v| {
            let q = p[v] as usize;
            match self.kind[v] {
                Kind::Calc => p[v] == NONE,
                Kind::Send => {
                    q < p.len()
                        && p[q] as usize == v
                        && self.kind[q] == Kind::Recv
                        && self.peer[v] == self.rank[q]
                        && self.peer[q] == self.rank[v]
                        && self.tag[v] == self.tag[q]
                }
                Kind::Recv => q < p.len() && self.kind[q] == Kind::Send && p[q] as usize == v,
            }
        })
    }

    pub fn requires(&mut self, a: u32, b: u32) -> std::result::Result<(), String> {
        self.dep(a, b, Dep::Requires)
    }

    pub fn irequires(&mut self, a: u32, b: u32) -> std::result::Result<(), String> {
        self.dep(a, b, Dep::Irequires)
    }

    /// Match messages, order topologically, validate. Consumes the builder.
    pub fn finish(self) -> Result<ExecGraph> {
        self.finish_with(false)
    }

    /// Like [`finish`](Self::finish) for ops added in a time-like order (generators that
    /// emit every op after its prerequisites and after the partners of the message ops it
    /// requires): messages are matched in one streaming pass, and if the insertion order is
    /// already a valid `AnyProtocol` order (checked in one pass: graph/order.rs) it is kept —
    /// no ordering, no renumbering. Otherwise the graph is ordered as by `finish`. Either
    /// way the result satisfies the same contract; only the stored order may differ.
    pub fn finish_in_order(self) -> Result<ExecGraph> {
        self.finish_with(true)
    }

    fn finish_with(mut self, in_order: bool) -> Result<ExecGraph> {
        let n = self.kind.len();
        let path = self.path.clone().unwrap_or_default();
        let loc = |b: &GraphBuilder, v: u32| -> (String, u64) { (path.clone(), b.line.get(v as usize).copied().unwrap_or(0) as u64) };
        let (pred_off, pred) = std::mem::take(&mut self.deps).into_csr(n).map_err(|v| {
            let (f, l) = loc(&self, v);
            self.error_at(&f, l, "operation depends on itself (dependency cycle)".into())
        })?;
        if !self.partner.is_empty() {
            self.partner.resize(n, NONE);
        }
        let partner = if self.wildcards > 0 {
            vec![NONE; n]
        } else if !self.partner.is_empty() && self.declared_pairs_hold() {
            std::mem::take(&mut self.partner)
        } else {
            let m = matching::Messages { kind: &self.kind, rank: &self.rank, peer: &self.peer, tag: &self.tag, val: &self.val };
            let matched = if in_order { matching::match_streaming(&m) } else { matching::match_messages(&m) };
            matched.map_err(|(v, msg)| {
                let (f, l) = loc(&self, v);
                // "unmatched send of ..." -> "unmatched send l7 of ..."
                let msg = match self.label(v) {
                    Some(label) => msg.replacen(" of ", &format!(" {label} of "), 1),
                    None => msg,
                };
                self.error_at(&f, l, msg)
            })?
        };
        let topo = order::Topo {
            num_ranks: self.num_ranks,
            kind: &self.kind,
            rank: &self.rank,
            local: &self.local,
            pred_off: &pred_off,
            pred: &pred,
            partner: &partner,
            peer: &self.peer,
        };
        let (perm, merged, kind) = if in_order && self.wildcards == 0 && order::in_order(&topo) {
            (None, None, OrderKind::AnyProtocol)
        } else if let Some(m) = (self.wildcards == 0).then(|| order::merge_ranks(&topo)).flatten() {
            (None, Some(m), OrderKind::AnyProtocol)
        } else {
            let (perm, kind) = order::order(&topo).map_err(|cycle| self.cycle_error(&cycle))?;
            (Some(perm), None, kind)
        };
        let mut g = ExecGraph {
            num_ranks: self.num_ranks,
            kind: std::mem::take(&mut self.kind).into(),
            rank: std::mem::take(&mut self.rank).into(),
            local: std::mem::take(&mut self.local).into(),
            val: std::mem::take(&mut self.val).into(),
            peer: std::mem::take(&mut self.peer).into(),
            tag: std::mem::take(&mut self.tag).into(),
            cpu: std::mem::take(&mut self.cpu).into(),
            nic: std::mem::take(&mut self.nic).into(),
            copy: std::mem::take(&mut self.copy).into(),
            pred_off: pred_off.into(),
            pred: pred.into(),
            partner: partner.into(),
            order: kind,
            wildcards: self.wildcards,
            source: self.path.take().map(|path| SourceMap { path, line: std::mem::take(&mut self.line).into() }),
            colls: std::mem::take(&mut self.colls),
            slots: None,
        };
        if let Some(perm) = perm {
            order::apply_permutation(&mut g, &perm);
        }
        if let Some(m) = merged {
            order::apply_merged(&mut g, m);
        }
        Ok(g)
    }

    /// The source label of op `v`, read back from its line (errors only).
    fn label(&self, v: u32) -> Option<String> {
        let path = self.path.as_ref()?;
        let line = *self.line.get(v as usize)?;
        SourceMap { path: path.clone(), line: Default::default() }.labels(&[line]).pop().flatten()
    }

    fn error_at(&self, file: &str, line: u64, msg: String) -> Error {
        if file.is_empty() {
            Error::new(msg)
        } else if line == 0 {
            Error::in_file(file, msg)
        } else {
            Error::at(file, line, msg)
        }
    }

    fn cycle_error(&self, cycle: &[u32]) -> Error {
        let path = self.path.clone().unwrap_or_default();
        let lines: Vec<u32> = cycle.iter().map(|&v| self.line.get(v as usize).copied().unwrap_or(0)).collect();
        let labels = if path.is_empty() { vec![None; cycle.len()] } else { SourceMap { path: path.clone(), line: Default::default() }.labels(&lines) };
        let shown = 8.min(cycle.len());
        let mut parts: Vec<String> = (0..shown)
            .map(|i| {
                let v = cycle[i] as usize;
                let what = match &labels[i] {
                    Some(l) => l.clone(),
                    None => format!("{} #{}", self.kind[v].name(), self.local[v]),
                };
                format!("rank {} {}", self.rank[v], what)
            })
            .collect();
        if cycle.len() > shown {
            parts.push(format!("... ({} operations)", cycle.len()));
        }
        parts.push(parts[0].clone());
        let msg = format!("dependency cycle (deadlock): {}", parts.join(" -> "));
        self.error_at(&path, lines[0] as u64, msg)
    }
}
