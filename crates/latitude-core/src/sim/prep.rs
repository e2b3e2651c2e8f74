//! What a simulation needs, prepared once per graph and shared by every run (Monte Carlo
//! samples, both semantics): the operations renumbered in *program order* (rank-major, each
//! rank's ops by local index), successor lists split by dependency kind (an op's start
//! releases its `irequires` dependents, its end its `requires` dependents), dependency
//! counts and roots.
//!
//! Why program order: a simulation advances every rank's frontier in time; with the ops of
//! a rank stored contiguously each frontier walks memory sequentially, whereas the graph's
//! topological ids scatter a rank's ops across the whole array (measured: ~20–40 % faster
//! on 10⁶-op graphs). The index is also the event tie-break key: (rank, local) order,
//! independent of how the graph happens to be stored.

use crate::error::{Error, Result};
use crate::graph::{CallEnds, Dep, ExecGraph, Kind, NONE};

/// Largest rank count the simulator supports.
pub const MAX_SIM_RANKS: u32 = 1 << 30;

/// The fields of an op the simulators read, in one 32-byte record (two per cache line).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SimOp {
    /// calc: ns; send/recv: bytes.
    pub val: u64,
    /// send: destination; recv: source (ANY allowed).
    pub peer: u32,
    pub tag: u32,
    pub rank: u32,
    /// Successors: `succ[off..mid]` released at the start, `succ[mid..next op's off]` at
    /// the end.
    pub off: u32,
    pub mid: u32,
    pub kind: Kind,
}

// The event loop reads one SimOp per event: keep it at half a cache line.
const _: () = assert!(std::mem::size_of::<SimOp>() == 32);

pub struct SimGraph {
    /// Ops by program index, plus a sentinel whose `off` ends the last op's successors.
    pub(crate) ops: Vec<SimOp>,
    /// Program index → graph vertex id, and back.
    pub(crate) orig: Vec<u32>,
    pub(crate) index: Vec<u32>,
    /// Successor lists (program indices), delimited by `SimOp::off/mid`.
    pub(crate) succ: Vec<u32>,
    /// Number of dependencies of each op.
    pub(crate) npred: Vec<u32>,
    /// Ops without dependencies, ascending (= by rank, then local index).
    pub(crate) roots: Vec<u32>,
    /// Static message partner (program index) when the graph is matched statically.
    pub(crate) partner: Vec<u32>,
    /// CPU / NIC slot of each op (program index; empty when all are 0) and the index each
    /// slot stands for. Slots number the distinct indices in ascending order, so per-rank
    /// state is ranks × distinct indices however sparse the graph's numbering is; kept beside
    /// `ops` so that `SimOp` stays 32 bytes.
    cpu: Slots,
    nic: Slots,
    pub(crate) ncpu: usize,
    pub(crate) nnic: usize,
    /// Bytes each calc copies (program index; empty when no op copies), beside `ops` too.
    copy: Vec<u64>,
    /// The calcs that end a collective call (program index; empty without calls): each
    /// lasts K more when the model has the call cost K.
    call_end: CallEnds,
    /// Number of vertices of the graph this was built for (a consistency check).
    n: usize,
}

impl SimGraph {
    pub fn new(g: &ExecGraph) -> Result<SimGraph> {
        if g.num_ranks() > MAX_SIM_RANKS {
            return Err(Error::new(format!("the simulator supports at most {MAX_SIM_RANKS} ranks, the graph has {}", g.num_ranks())));
        }
        let n = g.len();
        let (_, orig) = g.by_rank();
        let mut index = vec![0u32; n];
        for (i, &v) in orig.iter().enumerate() {
            index[v as usize] = i as u32;
        }
        let (off, mid, succ, npred) = successors(g, &index);
        let mut ops: Vec<SimOp> = orig
            .iter()
            .enumerate()
            .map(|(i, &v)| SimOp { val: g.val(v), peer: g.peer(v), tag: g.tag(v), rank: g.rank(v), off: off[i], mid: mid[i], kind: g.kind(v) })
            .collect();
        ops.push(SimOp { val: 0, peer: 0, tag: 0, rank: 0, off: off[n], mid: off[n], kind: Kind::Calc });
        let roots = (0..n as u32).filter(|&i| npred[i as usize] == 0).collect();
        let statically = g.wildcard_recvs() == 0;
        let partner =
            if statically { orig.iter().map(|&v| if g.partner(v) == NONE { NONE } else { index[g.partner(v) as usize] }).collect() } else { Vec::new() };
        let cpu = Slots::new(&orig, |v| g.cpu(v));
        let nic = Slots::new(&orig, |v| g.nic(v));
        let (ncpu, nnic) = (cpu.len(), nic.len());
        let copy = if g.has_copies() { orig.iter().map(|&v| g.copy(v)).collect() } else { Vec::new() };
        let call_end = CallEnds::of(n, g.colls().marks.iter().map(|m| index[m.vertex as usize]));
        Ok(SimGraph { ops, orig, index, succ, npred, roots, partner, cpu, nic, ncpu, nnic, copy, call_end, n })
    }

    /// Dependents released when i starts.
    #[inline]
    pub(crate) fn on_start(&self, i: u32) -> &[u32] {
        let op = &self.ops[i as usize];
        &self.succ[op.off as usize..op.mid as usize]
    }

    /// Dependents released when i ends.
    #[inline]
    pub(crate) fn on_end(&self, i: u32) -> &[u32] {
        let end = self.ops[i as usize + 1].off;
        &self.succ[self.ops[i as usize].mid as usize..end as usize]
    }

    #[inline]
    pub(crate) fn op(&self, i: u32) -> &SimOp {
        &self.ops[i as usize]
    }

    /// Bytes calc i (program index) copies on its CPU (0 without copies).
    #[inline]
    pub(crate) fn copy(&self, i: u32) -> u64 {
        self.copy.get(i as usize).copied().unwrap_or(0)
    }

    /// Whether calc i (program index) ends a collective call (what K prices).
    #[inline]
    pub(crate) fn call_end(&self, i: u32) -> bool {
        self.call_end.has(i)
    }

    /// CPU slot of program index i (see `cpu_index` for the graph's number).
    #[inline]
    pub(crate) fn cpu(&self, i: u32) -> usize {
        self.cpu.slot(i)
    }
    #[inline]
    pub(crate) fn nic(&self, i: u32) -> usize {
        self.nic.slot(i)
    }
    /// The graph's cpu index of program index i.
    pub(crate) fn cpu_index(&self, i: u32) -> u16 {
        self.cpu.index(i)
    }

    /// Graph vertex id of program index i.
    #[inline]
    pub(crate) fn vertex(&self, i: u32) -> u32 {
        self.orig[i as usize]
    }

    pub(crate) fn check(&self, g: &ExecGraph) -> Result<()> {
        if g.len() != self.n {
            return Err(Error::new("simulation data was prepared for another graph"));
        }
        Ok(())
    }
}

/// Dense numbering of one per-op index (cpu or nic): `slot[i]` for program index i, `index`
/// slot → the graph's number (ascending, so slot order is index order).
struct Slots {
    slot: Vec<u16>,
    index: Vec<u16>,
}

impl Slots {
    fn new(orig: &[u32], of: impl Fn(u32) -> u16) -> Slots {
        let mut seen = vec![false; u16::MAX as usize + 1];
        for &v in orig {
            seen[of(v) as usize] = true;
        }
        let index: Vec<u16> = (0..=u16::MAX).filter(|&c| seen[c as usize]).collect();
        if index.len() <= 1 && index.first().is_none_or(|&c| c == 0) {
            return Slots { slot: Vec::new(), index: vec![0] };
        }
        let mut dense = vec![0u16; u16::MAX as usize + 1];
        for (k, &c) in index.iter().enumerate() {
            dense[c as usize] = k as u16;
        }
        Slots { slot: orig.iter().map(|&v| dense[of(v) as usize]).collect(), index }
    }
    fn len(&self) -> usize {
        self.index.len()
    }
    #[inline]
    fn slot(&self, i: u32) -> usize {
        self.slot.get(i as usize).map_or(0, |&k| k as usize)
    }
    fn index(&self, i: u32) -> u16 {
        self.index[self.slot(i)]
    }
}

/// Successor CSR in program indices, irequires dependents first; dependency counts.
fn successors(g: &ExecGraph, index: &[u32]) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) {
    let n = g.len();
    let mut nstart = vec![0u32; n];
    let mut off = vec![0u32; n + 1];
    let mut npred = vec![0u32; n];
    for v in 0..n as u32 {
        let iv = index[v as usize] as usize;
        for (p, dep) in g.preds(v) {
            let ip = index[p as usize] as usize;
            off[ip + 1] += 1;
            nstart[ip] += (dep == Dep::Irequires) as u32;
            npred[iv] += 1;
        }
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mid: Vec<u32> = (0..n).map(|i| off[i] + nstart[i]).collect();
    let mut fill_s: Vec<u32> = off[..n].to_vec();
    let mut fill_e = mid.clone();
    let mut succ = vec![0u32; off[n] as usize];
    for v in 0..n as u32 {
        let iv = index[v as usize];
        for (p, dep) in g.preds(v) {
            let ip = index[p as usize] as usize;
            let f = if dep == Dep::Irequires { &mut fill_s } else { &mut fill_e };
            succ[f[ip] as usize] = iv;
            f[ip] += 1;
        }
    }
    (off, mid, succ, npred)
}
const _: () = assert!(std::mem::size_of::<SimOp>() == 32);
