//! The collective-algorithm library: every MPI collective as point-to-point messages, per
//! algorithm, shared by the trace converter (`schedule`) and synthetic workload generation.
//!
//! A collective is described per rank, from that rank's own MPI arguments ([`RankCall`]):
//! [`emit`] writes the rank's sends/receives (peers are communicator ranks) and their local
//! dependencies into a [`Prog`]; [`place`] adds the program to a [`GraphBuilder`] for a
//! communicator given as its members' world ranks, with one tag for all its messages, and
//! returns the start set (ops with no predecessor inside the collective: they wait for the
//! rank's preceding work) and the end set (ops nothing inside requires: the collective is
//! complete on this rank when they are). A caller joins them the Schedgen way — start ops
//! `requires` the preceding computation, a zero-length `collop` requires the end set — or,
//! for a nonblocking collective, lets computation continue after the issue and joins
//! `collop` at the `Wait` ([`Placed::join`]).
//!
//! Message matching stays exact because every collective instance gets its own tag
//! ([`coll_tag`]) in a tag range point-to-point traffic never uses, and each algorithm
//! issues the messages between any two ranks in the same order on both sides (checked by
//! `tests/collectives.rs` against closed forms and a brute-force data-reach check).
//!
//! Conventions: algorithms follow MPICH's implementations (`MPIC_Sendrecv` rounds: a round
//! starts when the previous round's send and receive are both done; blocking sends issued
//! one after the other); reductions cost no computation (as in Schedgen and LLAMP); data
//! sizes are bytes and vectors are split into byte chunks. The Schedgen variants
//! (`schedgen.rs`) reproduce Schedgen v1 op for op.

mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod count;
mod halving;
mod prog;
mod reduce;
mod reduce_scatter;
mod rooted;
mod scan;
mod schedgen;
mod select;

pub use count::messages;
pub use prog::{ceil_log2, lowbit, pof2_floor, Frontier, Id, POp, Prog};
pub use select::{Preset, Rule, Selection};

use crate::graph::{Dep, GraphBuilder, Op};

/// The collectives the library models (nonblocking variants use the same kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollKind {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    ReduceScatter,
    Scan,
    Exscan,
}

use Algorithm as A;

impl CollKind {
    pub const ALL: [CollKind; 15] = [
        CollKind::Barrier,
        CollKind::Bcast,
        CollKind::Reduce,
        CollKind::Allreduce,
        CollKind::Allgather,
        CollKind::Allgatherv,
        CollKind::Alltoall,
        CollKind::Alltoallv,
        CollKind::Gather,
        CollKind::Gatherv,
        CollKind::Scatter,
        CollKind::Scatterv,
        CollKind::ReduceScatter,
        CollKind::Scan,
        CollKind::Exscan,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CollKind::Barrier => "barrier",
            CollKind::Bcast => "bcast",
            CollKind::Reduce => "reduce",
            CollKind::Allreduce => "allreduce",
            CollKind::Allgather => "allgather",
            CollKind::Allgatherv => "allgatherv",
            CollKind::Alltoall => "alltoall",
            CollKind::Alltoallv => "alltoallv",
            CollKind::Gather => "gather",
            CollKind::Gatherv => "gatherv",
            CollKind::Scatter => "scatter",
            CollKind::Scatterv => "scatterv",
            CollKind::ReduceScatter => "reduce_scatter",
            CollKind::Scan => "scan",
            CollKind::Exscan => "exscan",
        }
    }

    pub fn parse(s: &str) -> Option<CollKind> {
        CollKind::ALL.iter().copied().find(|k| k.name() == s)
    }

    pub fn rooted(self) -> bool {
        matches!(self, CollKind::Bcast | CollKind::Reduce | CollKind::Gather | CollKind::Gatherv | CollKind::Scatter | CollKind::Scatterv)
    }

    /// Algorithms available for this collective (besides `none`).
    pub fn algorithms(self) -> &'static [Algorithm] {
        const CHAIN: Algorithm = A::Chain { segment: DEFAULT_SEGMENT };
        match self {
            CollKind::Barrier => &[A::Dissemination, A::RecDoub, A::Linear, A::Schedgen],
            CollKind::Bcast => &[A::Binomial, A::Binary, A::Linear, CHAIN, A::ScatterAllgather, A::Schedgen],
            CollKind::Reduce => &[A::Binomial, A::Binary, A::Linear, CHAIN, A::Rabenseifner, A::Schedgen],
            CollKind::Allreduce => &[A::RecDoub, A::Ring, A::Rabenseifner, A::ReduceBcast, A::Dissemination, A::Schedgen],
            CollKind::Allgather => &[A::Ring, A::RecDoub, A::Bruck, A::Schedgen],
            CollKind::Allgatherv => &[A::Ring, A::RecDoub, A::Bruck],
            CollKind::Alltoall => &[A::Pairwise, A::Linear, A::Bruck, A::Schedgen],
            CollKind::Alltoallv => &[A::Pairwise, A::Linear],
            CollKind::Gather | CollKind::Scatter => &[A::Linear, A::Binomial],
            CollKind::Gatherv | CollKind::Scatterv => &[A::Linear],
            CollKind::ReduceScatter => &[A::Ring, A::RecHalving],
            CollKind::Scan | CollKind::Exscan => &[A::RecDoub, A::Linear],
        }
    }

    pub fn supports(self, alg: Algorithm) -> bool {
        alg == A::None || self.algorithms().iter().any(|a| a.same_kind(alg))
    }
}

/// Default pipeline segment of `chain` (Open MPI's tuned pipelines use 8–128 KiB).
pub const DEFAULT_SEGMENT: u64 = 64 * 1024;

/// An algorithm. `Schedgen` means "what Schedgen v1 generates for this collective".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Not modelled: the call's time stays computation.
    None,
    Linear,
    Binomial,
    Binary,
    Chain {
        segment: u64,
    },
    ScatterAllgather,
    RecDoub,
    Ring,
    Rabenseifner,
    ReduceBcast,
    Dissemination,
    Bruck,
    Pairwise,
    RecHalving,
    Schedgen,
}

impl Algorithm {
    pub const NAMES: [&'static str; 15] = [
        "none",
        "linear",
        "binomial",
        "binary",
        "chain",
        "scatter_allgather",
        "recdoub",
        "ring",
        "rabenseifner",
        "reduce_bcast",
        "dissemination",
        "bruck",
        "pairwise",
        "rechalving",
        "schedgen",
    ];

    pub fn name(self) -> &'static str {
        match self {
            A::None => "none",
            A::Linear => "linear",
            A::Binomial => "binomial",
            A::Binary => "binary",
            A::Chain { .. } => "chain",
            A::ScatterAllgather => "scatter_allgather",
            A::RecDoub => "recdoub",
            A::Ring => "ring",
            A::Rabenseifner => "rabenseifner",
            A::ReduceBcast => "reduce_bcast",
            A::Dissemination => "dissemination",
            A::Bruck => "bruck",
            A::Pairwise => "pairwise",
            A::RecHalving => "rechalving",
            A::Schedgen => "schedgen",
        }
    }

    /// `chain:64KiB` style label for reports.
    pub fn label(self) -> String {
        match self {
            A::Chain { segment } => format!("chain:{}", crate::units::fmt_size(segment)),
            a => a.name().to_string(),
        }
    }

    /// Parse a name; `chain` takes an optional segment size: `chain:16KiB`.
    pub fn parse(s: &str) -> Result<Algorithm, String> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let alg = match name {
            "none" => A::None,
            "linear" => A::Linear,
            "binomial" => A::Binomial,
            "binary" => A::Binary,
            "chain" => A::Chain { segment: DEFAULT_SEGMENT },
            "scatter_allgather" => A::ScatterAllgather,
            "recdoub" => A::RecDoub,
            "ring" => A::Ring,
            "rabenseifner" => A::Rabenseifner,
            "reduce_bcast" => A::ReduceBcast,
            "dissemination" => A::Dissemination,
            "bruck" => A::Bruck,
            "pairwise" => A::Pairwise,
            "rechalving" => A::RecHalving,
            "schedgen" => A::Schedgen,
            _ => return Err(format!("unknown algorithm {name:?} (known: {})", Algorithm::NAMES.join(", "))),
        };
        match (alg, arg) {
            (_, None) => Ok(alg),
            (A::Chain { .. }, Some(a)) => {
                let segment = crate::units::parse_size(a, u64::MAX)?;
                if segment == 0 {
                    return Err("the chain segment size must be at least 1 byte".into());
                }
                Ok(A::Chain { segment })
            }
            (_, Some(_)) => Err(format!("algorithm {name:?} takes no parameter (only chain:SIZE does)")),
        }
    }

    fn same_kind(self, other: Algorithm) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

/// One rank's arguments of a collective call, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct RankCall<'a> {
    pub kind: CollKind,
    /// Communicator size and this rank's (and the root's) rank in it.
    pub size: u32,
    pub me: u32,
    pub root: u32,
    /// Bcast, Reduce, Allreduce, Scan, Exscan: the vector. Allgather, Alltoall, Gather,
    /// Scatter: one block (per rank / per peer). Gatherv, Scatterv off the root: this rank's
    /// block.
    pub bytes: u64,
    /// Every rank's block, indexed by comm rank: Allgatherv, ReduceScatter (all ranks), and
    /// Gatherv/Scatterv at the root. Alltoallv: what this rank sends to each rank. Empty: every
    /// block is `bytes`.
    pub blocks: &'a [u64],
    /// Alltoallv: what this rank receives from each rank (empty: `bytes`).
    pub recv_blocks: &'a [u64],
}

impl<'a> RankCall<'a> {
    pub fn new(kind: CollKind, size: u32, me: u32, bytes: u64) -> RankCall<'a> {
        RankCall { kind, size, me, root: 0, bytes, blocks: &[], recv_blocks: &[] }
    }

    /// Block of comm rank i (or the uniform block).
    pub fn block(&self, i: u32) -> u64 {
        if self.blocks.is_empty() {
            self.bytes
        } else {
            self.blocks[i as usize]
        }
    }

    pub fn recv_block(&self, i: u32) -> u64 {
        if self.recv_blocks.is_empty() {
            self.bytes
        } else {
            self.recv_blocks[i as usize]
        }
    }

    /// Sum of all blocks.
    pub fn total(&self) -> u64 {
        if self.blocks.is_empty() {
            self.bytes.saturating_mul(self.size as u64)
        } else {
            self.blocks.iter().sum()
        }
    }

    /// The size algorithm selection looks at; identical on every rank of a correct program
    /// (so every rank picks the same algorithm). Alltoallv/Gatherv/Scatterv: 0, because
    /// their sizes differ between ranks.
    pub fn decision_bytes(&self) -> u64 {
        match self.kind {
            CollKind::Barrier | CollKind::Alltoallv | CollKind::Gatherv | CollKind::Scatterv => 0,
            CollKind::Allgatherv | CollKind::ReduceScatter => self.total(),
            _ => self.bytes,
        }
    }

    fn check(&self) -> Result<(), String> {
        if self.size == 0 {
            return Err("communicator of size 0".into());
        }
        if self.me >= self.size {
            return Err(format!("rank {} outside a communicator of {} ranks", self.me, self.size));
        }
        if self.kind.rooted() && self.root >= self.size {
            return Err(format!("root {} outside a communicator of {} ranks", self.root, self.size));
        }
        let p = self.size as usize;
        if !self.blocks.is_empty() && self.blocks.len() != p {
            return Err(format!("{} counts for a communicator of {} ranks", self.blocks.len(), p));
        }
        if !self.recv_blocks.is_empty() && self.recv_blocks.len() != p {
            return Err(format!("{} receive counts for a communicator of {} ranks", self.recv_blocks.len(), p));
        }
        Ok(())
    }
}

/// Write rank `c.me`'s part of collective `c` under `alg` into `g` (cleared first).
pub fn emit(alg: Algorithm, c: &RankCall, g: &mut Prog) -> Result<(), String> {
    g.clear();
    c.check()?;
    if !c.kind.supports(alg) {
        return Err(format!("{} has no algorithm {:?}", c.kind.name(), alg.name()));
    }
    use CollKind as K;
    match (c.kind, alg) {
        (_, A::None) => {}
        (K::Barrier, A::Dissemination) => barrier::dissemination(g, c, 0),
        (K::Barrier, A::RecDoub) => barrier::recdoub(g, c),
        (K::Barrier, A::Linear) => barrier::linear(g, c),
        (K::Bcast, A::Binomial) => bcast::binomial(g, c),
        (K::Bcast, A::Binary) => bcast::binary(g, c),
        (K::Bcast, A::Linear) => bcast::linear(g, c),
        (K::Bcast, A::Chain { segment }) => bcast::chain(g, c, segment),
        (K::Bcast, A::ScatterAllgather) => bcast::scatter_allgather(g, c),
        (K::Reduce, A::Binomial) => reduce::binomial(g, c),
        (K::Reduce, A::Binary) => reduce::binary(g, c),
        (K::Reduce, A::Linear) => reduce::linear(g, c),
        (K::Reduce, A::Chain { segment }) => reduce::chain(g, c, segment),
        (K::Reduce, A::Rabenseifner) => reduce::rabenseifner(g, c),
        (K::Allreduce, A::RecDoub) => allreduce::recdoub(g, c),
        (K::Allreduce, A::Ring) => allreduce::ring(g, c),
        (K::Allreduce, A::Rabenseifner) => allreduce::rabenseifner(g, c),
        (K::Allreduce, A::ReduceBcast) => allreduce::reduce_bcast(g, c),
        (K::Allreduce, A::Dissemination) => barrier::dissemination(g, c, c.bytes),
        (K::Allgather | K::Allgatherv, A::Ring) => allgather::ring(g, c),
        (K::Allgather | K::Allgatherv, A::RecDoub) => allgather::recdoub(g, c),
        (K::Allgather | K::Allgatherv, A::Bruck) => allgather::bruck(g, c),
        (K::Alltoall | K::Alltoallv, A::Pairwise) => alltoall::pairwise(g, c),
        (K::Alltoall | K::Alltoallv, A::Linear) => alltoall::linear(g, c),
        (K::Alltoall, A::Bruck) => alltoall::bruck(g, c),
        (K::Gather | K::Gatherv, A::Linear) => rooted::gather_linear(g, c),
        (K::Gather, A::Binomial) => rooted::gather_binomial(g, c),
        (K::Scatter | K::Scatterv, A::Linear) => rooted::scatter_linear(g, c),
        (K::Scatter, A::Binomial) => rooted::scatter_binomial(g, c),
        (K::ReduceScatter, A::Ring) => reduce_scatter::ring(g, c),
        (K::ReduceScatter, A::RecHalving) => reduce_scatter::rechalving(g, c),
        (K::Scan | K::Exscan, A::RecDoub) => scan::recdoub(g, c),
        (K::Scan | K::Exscan, A::Linear) => scan::linear(g, c),
        (K::Barrier, A::Schedgen) => schedgen::dissemination(g, c, 1),
        (K::Allreduce, A::Schedgen) => schedgen::dissemination(g, c, c.bytes),
        (K::Allgather, A::Schedgen) => schedgen::dissemination(g, c, c.bytes),
        (K::Bcast, A::Schedgen) => schedgen::binomial_bcast(g, c),
        (K::Reduce, A::Schedgen) => schedgen::binomial_reduce(g, c),
        (K::Alltoall, A::Schedgen) => alltoall::linear(g, c),
        (k, a) => return Err(format!("{} has no algorithm {:?}", k.name(), a.name())),
    }
    let own = own_copy(alg, c);
    if own > 0 {
        g.copy_first(own);
    }
    Ok(())
}

/// Bytes of the rank's own block that the MPI library copies locally before the algorithm
/// proper (docs/collectives.md, "Local copies"): alltoall(v) from the send to the receive
/// buffer, allgather(v) into the receive buffer, gather(v)/scatter(v) at the root. Schedgen's
/// graphs have no copies (its variants reproduce Schedgen), `none` models nothing, and a
/// call with MPI_IN_PLACE (which the trace does not tell apart) is charged the copy too.
pub fn own_copy(alg: Algorithm, c: &RankCall) -> u64 {
    use CollKind as K;
    if matches!(alg, A::None | A::Schedgen) {
        return 0;
    }
    match c.kind {
        K::Alltoall | K::Alltoallv | K::Allgather | K::Allgatherv => c.block(c.me),
        K::Gather | K::Gatherv | K::Scatter | K::Scatterv if c.me == c.root => c.block(c.me),
        _ => 0,
    }
}

/// Where a placed program landed in the builder: ids of its start and end ops.
#[derive(Clone, Debug, Default)]
pub struct Placed {
    pub rank: u32,
    pub start: Vec<u32>,
    pub end: Vec<u32>,
    /// Number of ops added.
    pub ops: u32,
    scratch_start: Vec<Id>,
    scratch_end: Vec<Id>,
}

impl Placed {
    /// A zero-length completion node (Schedgen's `collop`) requiring every end op.
    pub fn join(&self, b: &mut GraphBuilder) -> Result<u32, String> {
        let c = b.add(self.rank, Op::calc(0))?;
        for &e in &self.end {
            b.requires(c, e)?;
        }
        Ok(c)
    }

    /// Make every start op wait for `pred` to finish (or to start, with `Dep::Irequires`).
    pub fn after(&self, b: &mut GraphBuilder, pred: u32, dep: Dep) -> Result<(), String> {
        for &s in &self.start {
            b.dep(s, pred, dep)?;
        }
        Ok(())
    }
}

/// Add program `g` of comm rank `me` to `b`. `members[i]` is the world rank of comm rank i;
/// every message gets `tag`. Fills `out` (reused between calls).
pub fn place(b: &mut GraphBuilder, g: &Prog, members: &[u32], me: u32, tag: u32, out: &mut Placed) -> Result<(), String> {
    let world = |i: u32| -> Result<u32, String> {
        members.get(i as usize).copied().ok_or_else(|| format!("comm rank {i} outside a communicator of {} ranks", members.len()))
    };
    let rank = world(me)?;
    let base = b.len() as u32;
    for op in &g.ops {
        let op = match *op {
            POp::Send { peer, bytes } => Op::send(bytes, world(peer)?, tag),
            POp::Recv { peer, bytes } => Op::recv(bytes, world(peer)?, tag),
            POp::Calc { ns } => Op::calc(ns),
            POp::Copy { bytes } => Op::copy(bytes),
        };
        b.add(rank, op)?;
    }
    for &(a, p, dep) in &g.deps {
        b.dep(base + a, base + p, dep)?;
    }
    g.boundary(&mut out.scratch_start, &mut out.scratch_end);
    out.rank = rank;
    out.ops = g.ops.len() as u32;
    out.start.clear();
    out.end.clear();
    out.start.extend(out.scratch_start.iter().map(|&i| base + i));
    out.end.extend(out.scratch_end.iter().map(|&i| base + i));
    Ok(())
}

/// First tag of the collective range: point-to-point tags stay below it.
pub const COLL_TAG_BASE: u32 = 1 << 30;

/// Tag of the `seq`-th collective on communicator `comm` (a dense id): 14 bits of
/// communicator, 16 of sequence. Both wrap, which keeps matching exact because MPI orders
/// the collectives of a communicator identically on every member (the k-th message between
/// two ranks under one tag still pairs with the k-th receive).
pub fn coll_tag(comm: u32, seq: u32) -> u32 {
    COLL_TAG_BASE | ((comm & 0x3FFF) << 16) | (seq & 0xFFFF)
}

/// Emit a blocking collective for every member at once (generators): each rank's start ops
/// require `after[i]` (if any) and a `collop` joins its end ops. Returns the collops.
pub fn emit_blocking_all(
    b: &mut GraphBuilder,
    alg: Algorithm,
    calls: &[RankCall],
    members: &[u32],
    tag: u32,
    after: &[Option<u32>],
) -> Result<Vec<u32>, String> {
    let mut prog = Prog::new();
    let mut placed = Placed::default();
    let mut out = Vec::with_capacity(calls.len());
    for (i, c) in calls.iter().enumerate() {
        emit(alg, c, &mut prog)?;
        place(b, &prog, members, c.me, tag, &mut placed)?;
        if let Some(Some(a)) = after.get(i) {
            placed.after(b, *a, Dep::Requires)?;
        }
        out.push(placed.join(b)?);
    }
    Ok(out)
}
