//! The execution graph (docs/model.md §0): a DAG over the operations of P ranks, stored as flat
//! arrays in a topological order so that one forward pass prices it.
//!
//! Vertex kinds: `calc(c)` (c ns of local work), `send(s, dst, tag)`, `recv(s, src, tag)`.
//! Local edges (same rank): `a requires b` (a starts after b finished) and `a irequires b`
//! (a starts after b started). Message edges: every send is matched to one recv with the
//! same (src, dst, tag) in issue order (MPI non-overtaking); `partner` links the two.
//!
//! The order is topological with each recv after its send. When possible it is also valid
//! for rendezvous: every op that requires a send comes after that send's recv
//! (`OrderKind::AnyProtocol`). Engine plans check and, where a model needs it, re-order
//! (see `order.rs`).

mod arr;
mod builder;
mod colls;
mod deps;
pub(crate) mod matching;
pub(crate) mod order;
pub(crate) mod slots;
mod source;

pub use arr::{Arr, Plain};
pub use builder::{GraphBuilder, Op};
pub use colls::{CallEnds, CollCalls, CollMark};
pub use order::OrderKind;
pub use source::SourceMap;

/// Operation kind of a vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    Calc = 0,
    Send = 1,
    Recv = 2,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Calc => "calc",
            Kind::Send => "send",
            Kind::Recv => "recv",
        }
    }
}

/// `MPI_ANY_SOURCE` / `MPI_ANY_TAG` as stored (GOAL `-1`).
pub const ANY: u32 = u32::MAX;
/// "No vertex" in index arrays (`partner` of a calc, unmatched ops).
pub const NONE: u32 = u32::MAX;
/// Flag bit in a predecessor entry: the edge is `irequires` (start-to-start).
pub const IREQ: u32 = 1 << 31;
/// Largest number of vertices a graph may hold (indices are 31-bit + flag).
pub const MAX_VERTICES: usize = (IREQ - 1) as usize;

/// Dependency kind of a local edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dep {
    Requires,
    Irequires,
}

/// The execution graph. All per-vertex arrays have length `len()` and are indexed by the
/// vertex id, which is the vertex's position in the stored topological order.
#[derive(Clone, Debug)]
pub struct ExecGraph {
    pub(crate) num_ranks: u32,
    pub(crate) kind: Arr<Kind>,
    pub(crate) rank: Arr<u32>,
    /// Index of the op within its rank in source order (GOAL node offset).
    pub(crate) local: Arr<u32>,
    /// calc: duration in ns; send/recv: bytes.
    pub(crate) val: Arr<u64>,
    /// send: destination; recv: source (`ANY` allowed); calc: 0.
    pub(crate) peer: Arr<u32>,
    pub(crate) tag: Arr<u32>,
    /// Per-vertex CPU / NIC index; empty when every op uses 0. u16: ATLAHS GOAL files number
    /// streams and NICs past 255, and 2 bytes per vertex each keeps a 10^8-vertex graph within
    /// 400 MB for both (u32 would double that for indices nobody reaches).
    pub(crate) cpu: Arr<u16>,
    pub(crate) nic: Arr<u16>,
    /// Bytes each calc copies on its CPU (a collective's local copy, priced b(s)·C, C the
    /// model's copy parameter or O); empty
    /// when no op copies, which is every graph without collectives that copy.
    pub(crate) copy: Arr<u64>,
    /// CSR predecessor lists: `pred[pred_off[v]..pred_off[v+1]]`, `IREQ` flag on irequires.
    pub(crate) pred_off: Arr<u32>,
    pub(crate) pred: Arr<u32>,
    /// Matched message partner (send <-> recv) or `NONE`.
    pub(crate) partner: Arr<u32>,
    pub(crate) order: OrderKind,
    /// Number of receives with `ANY_SOURCE`/`ANY_TAG`; if > 0 nothing is matched statically.
    pub(crate) wildcards: u64,
    pub(crate) source: Option<SourceMap>,
    /// Where each rank's part of each collective call ends (empty without calls: colls.rs).
    pub(crate) colls: CollCalls,
    /// The engine's value slots for this order (engine/plan.rs, without NIC chains) and
    /// their number, when the graph came with them (an .lgraph stores them, so that a
    /// plan is a read); any re-ordering drops them.
    pub(crate) slots: Option<(Arr<u32>, usize)>,
}

impl ExecGraph {
    pub fn len(&self) -> usize {
        self.kind.len()
    }
    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }
    pub fn num_ranks(&self) -> u32 {
        self.num_ranks
    }
    pub fn num_edges(&self) -> usize {
        self.pred.len()
    }
    pub fn kind(&self, v: u32) -> Kind {
        self.kind[v as usize]
    }
    pub fn rank(&self, v: u32) -> u32 {
        self.rank[v as usize]
    }
    pub fn local(&self, v: u32) -> u32 {
        self.local[v as usize]
    }
    /// calc: ns; send/recv: bytes.
    pub fn val(&self, v: u32) -> u64 {
        self.val[v as usize]
    }
    pub fn peer(&self, v: u32) -> u32 {
        self.peer[v as usize]
    }
    pub fn tag(&self, v: u32) -> u32 {
        self.tag[v as usize]
    }
    pub fn cpu(&self, v: u32) -> u16 {
        self.cpu.get(v as usize).copied().unwrap_or(0)
    }
    pub fn nic(&self, v: u32) -> u16 {
        self.nic.get(v as usize).copied().unwrap_or(0)
    }
    /// Bytes calc `v` copies on its CPU (0 for every other op and without copies).
    #[inline]
    pub fn copy(&self, v: u32) -> u64 {
        self.copy.get(v as usize).copied().unwrap_or(0)
    }
    /// Whether any op copies bytes (graphs without copies skip their cost entirely).
    pub fn has_copies(&self) -> bool {
        !self.copy.is_empty()
    }
    pub fn partner(&self, v: u32) -> u32 {
        self.partner[v as usize]
    }
    pub fn order_kind(&self) -> OrderKind {
        self.order
    }
    /// Receives with a wildcard source or tag (then no message is matched statically).
    pub fn wildcard_recvs(&self) -> u64 {
        self.wildcards
    }
    pub fn source(&self) -> Option<&SourceMap> {
        self.source.as_ref()
    }
    /// The collective calls' end vertices (empty when the graph was not scheduled from calls).
    pub fn colls(&self) -> &CollCalls {
        &self.colls
    }
    /// Raw predecessor entries of `v` (with the `IREQ` flag bit).
    pub fn preds_raw(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.pred[self.pred_off[v] as usize..self.pred_off[v + 1] as usize]
    }
    /// Predecessors of `v` with their dependency kind.
    pub fn preds(&self, v: u32) -> impl Iterator<Item = (u32, Dep)> + '_ {
        self.preds_raw(v).iter().map(|&p| if p & IREQ != 0 { (p & !IREQ, Dep::Irequires) } else { (p, Dep::Requires) })
    }
    pub fn max_cpu(&self) -> u16 {
        self.cpu.iter().copied().max().unwrap_or(0)
    }
    pub fn max_nic(&self) -> u16 {
        self.nic.iter().copied().max().unwrap_or(0)
    }

    /// Prefix sums of the ops per rank: rank r has `off[r+1] - off[r]` ops.
    pub fn rank_offsets(&self) -> Vec<usize> {
        let p = self.num_ranks as usize;
        let mut off = vec![0usize; p + 1];
        for &r in &self.rank {
            off[r as usize + 1] += 1;
        }
        for r in 0..p {
            off[r + 1] += off[r];
        }
        off
    }

    /// Vertex ids grouped by rank in source order: `(offsets, ids)` with rank r's ops at
    /// `ids[offsets[r]..offsets[r+1]]` sorted by `local`.
    pub fn by_rank(&self) -> (Vec<usize>, Vec<u32>) {
        let off = self.rank_offsets();
        let mut ids = vec![0u32; self.len()];
        for v in 0..self.len() {
            let r = self.rank[v] as usize;
            ids[off[r] + self.local[v] as usize] = v as u32;
        }
        (off, ids)
    }

    /// Human-readable name of a vertex for messages: `rank 3 op 17 (app.goal:120)`, or
    /// with labels when the source file is available: `rank 3 l17 (app.goal:120)`.
    pub fn describe(&self, v: u32) -> String {
        let base = format!("rank {} {} #{}", self.rank(v), self.kind(v).name(), self.local(v));
        match &self.source {
            Some(src) => src.describe(v as usize, &base),
            None => base,
        }
    }

    /// Location `file:line` of a vertex, if it came from a file.
    pub fn location(&self, v: u32) -> String {
        self.source.as_ref().map(|s| s.location(v as usize)).unwrap_or_default()
    }

    /// Total bytes sent and number of messages.
    pub fn message_stats(&self) -> (u64, u64) {
        let mut bytes = 0u64;
        let mut n = 0u64;
        for v in 0..self.len() {
            if self.kind[v] == Kind::Send {
                bytes += self.val[v];
                n += 1;
            }
        }
        (bytes, n)
    }
}
