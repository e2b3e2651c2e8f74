//! What each motif does on each rank, for one repeat (`apps/motifs.c` does the same calls
//! in the same order). Peers are job ranks, mapped to world ranks through the job's list.
//!
//! Tags (one space per job: jobs have disjoint ranks): pingpong 1, incast 2, halo 10 + d
//! for a message sent toward direction d (0..6 = −x, +x, −y, +y, −z, +z), sweep x 20 and
//! y 21; collectives `coll_tag(job + 1, instance)` like the trace converter's.

use super::dist::{draw, DrawKey};
use super::emit::Emitter;
use super::grid::{coords, neighbour, rank_at};
use super::motif::{Coll, Compute, Halo, Sweep};
use super::sink::CallInfo;
use crate::collectives::{coll_tag, emit, Algorithm, Prog, RankCall, Selection};
use crate::graph::Op;

pub const TAG_PINGPONG: u32 = 1;
pub const TAG_INCAST: u32 = 2;
pub const TAG_HALO: u32 = 10;
pub const TAG_SWEEP_X: u32 = 20;
pub const TAG_SWEEP_Y: u32 = 21;

type R<T> = Result<T, String>;

/// One job's context while its motifs are emitted.
pub struct JobCtx<'a> {
    pub em: &'a mut Emitter,
    /// World rank of each job rank.
    pub ranks: &'a [u32],
    pub index: u32,
    /// Collective instances so far (tag sequence).
    pub coll_seq: u32,
    pub prog: Prog,
}

impl JobCtx<'_> {
    fn world(&self, me: u32) -> u32 {
        self.ranks[me as usize]
    }

    fn n(&self) -> u32 {
        self.ranks.len() as u32
    }

    /// The motif's computation before a repeat, on job ranks 0..active.
    pub fn pre_compute(&mut self, ns: u64, active: u32) {
        if ns > 0 {
            for me in 0..active {
                self.em.compute(self.world(me), ns);
            }
        }
    }

    pub fn compute(&mut self, c: &Compute, seed: u64, motif: u32, call: u64) {
        for me in 0..self.n() {
            let k = DrawKey { seed, job: self.index as u64, motif: motif as u64, rank: me as u64, call };
            self.em.compute(self.world(me), draw(c, &k));
        }
    }

    /// Pairs (2i, 2i+1): the even rank sends then receives, the odd one the reverse.
    pub fn pingpong(&mut self, bytes: u64) -> R<()> {
        for a in (0..self.n().saturating_sub(1)).step_by(2) {
            let (wa, wb) = (self.world(a), self.world(a + 1));
            self.em.blocking(wa, Op::send(bytes, wb, TAG_PINGPONG));
            self.em.blocking(wa, Op::recv(bytes, wb, TAG_PINGPONG));
            self.em.blocking(wb, Op::recv(bytes, wa, TAG_PINGPONG));
            self.em.blocking(wb, Op::send(bytes, wa, TAG_PINGPONG));
        }
        self.em.flush()
    }

    /// Irecv from every neighbour, Isend to every neighbour (both in direction order −x, +x,
    /// −y, +y, −z, +z), Waitall. Job ranks beyond the grid are idle.
    pub fn halo(&mut self, h: &Halo) -> R<()> {
        let mut ops = Vec::with_capacity(12);
        for me in 0..h.dims.iter().product::<u32>() {
            let nbs = halo_neighbours(me, h);
            let w = self.world(me);
            ops.clear();
            for (d, nb) in nbs.iter().enumerate() {
                if let Some(q) = *nb {
                    // q sent it toward us: direction d ^ 1.
                    ops.push(self.em.nonblocking(w, Op::recv(h.face[d / 2], self.world(q), TAG_HALO + (d as u32 ^ 1))));
                }
            }
            for (d, nb) in nbs.iter().enumerate() {
                if let Some(q) = *nb {
                    ops.push(self.em.nonblocking(w, Op::send(h.face[d / 2], self.world(q), TAG_HALO + d as u32)));
                }
            }
            self.em.waitall(w, &ops);
        }
        self.em.flush()
    }

    /// KBA sweep: per octant (di, dj from bits 0, 1; bit 2 flips z, which changes no
    /// message), per angle block, per k-block: Recv from the upstream x then y neighbour,
    /// compute `block_ns`, Send to the downstream x then y neighbour.
    pub fn sweep(&mut self, s: &Sweep, block_ns: u64) -> R<()> {
        let dims = [s.px, s.py, 1];
        let steps = s.angle_blocks() * s.k_blocks();
        let (xb, yb) = (s.x_bytes(), s.y_bytes());
        let at = |x: i64, y: i64| -> Option<u32> {
            ((0..s.px as i64).contains(&x) && (0..s.py as i64).contains(&y)).then(|| rank_at([x as u32, y as u32, 0], &dims))
        };
        // One instance per octant: its messages all pair inside it.
        for o in 0..8u32 {
            let (di, dj) = (if o & 1 != 0 { -1 } else { 1 }, if o & 2 != 0 { -1 } else { 1 });
            for me in 0..s.px * s.py {
                let w = self.world(me);
                let c = coords(me, &dims);
                let (cx, cy) = (c[0] as i64, c[1] as i64);
                let world = |q: Option<u32>| q.map(|q| self.ranks[q as usize]);
                let (up_x, up_y) = (world(at(cx - di, cy)), world(at(cx, cy - dj)));
                let (down_x, down_y) = (world(at(cx + di, cy)), world(at(cx, cy + dj)));
                for _ in 0..steps {
                    if let Some(q) = up_x {
                        self.em.blocking(w, Op::recv(xb, q, TAG_SWEEP_X));
                    }
                    if let Some(q) = up_y {
                        self.em.blocking(w, Op::recv(yb, q, TAG_SWEEP_Y));
                    }
                    self.em.compute(w, block_ns);
                    if let Some(q) = down_x {
                        self.em.blocking(w, Op::send(xb, q, TAG_SWEEP_X));
                    }
                    if let Some(q) = down_y {
                        self.em.blocking(w, Op::send(yb, q, TAG_SWEEP_Y));
                    }
                }
            }
            self.em.flush()?;
        }
        Ok(())
    }

    /// N−1: every rank but the root sends; the root posts an Irecv per rank (job rank
    /// order), then Waitall.
    pub fn incast(&mut self, bytes: u64, root: u32) -> R<()> {
        let wr = self.world(root);
        let mut ops = Vec::with_capacity(self.n() as usize);
        for me in (0..self.n()).filter(|&me| me != root) {
            ops.push(self.em.nonblocking(wr, Op::recv(bytes, self.world(me), TAG_INCAST)));
        }
        self.em.waitall(wr, &ops);
        for me in (0..self.n()).filter(|&me| me != root) {
            self.em.blocking(self.world(me), Op::send(bytes, wr, TAG_INCAST));
        }
        self.em.flush()
    }

    /// One collective instance through the library. Returns the algorithm used (`None`:
    /// the selection does not model it, nothing is emitted).
    pub fn collective(&mut self, c: &Coll, sel: &Selection) -> R<Algorithm> {
        let n = self.n();
        let mut call = RankCall::new(c.kind, n, 0, c.bytes);
        call.root = c.root;
        let alg = c.alg.unwrap_or_else(|| sel.choose(&call));
        if alg == Algorithm::None {
            return Ok(alg);
        }
        let tag = coll_tag(self.index + 1, self.coll_seq);
        let instance = (self.index as u64 + 1) << 32 | self.coll_seq as u64;
        self.coll_seq = self.coll_seq.wrapping_add(1);
        let mut prog = std::mem::take(&mut self.prog);
        for me in 0..n {
            call.me = me;
            emit(alg, &call, &mut prog)?;
            self.em.collective(&prog, self.ranks, me, tag);
        }
        self.prog = prog;
        self.em.call(CallInfo { coll: c.kind.name(), alg: alg.label(), procs: n, bytes: c.bytes, instance });
        self.em.flush()?;
        Ok(alg)
    }
}

/// Neighbours of grid rank `me` in direction order −x, +x, −y, +y, −z, +z.
pub fn halo_neighbours(me: u32, h: &Halo) -> [Option<u32>; 6] {
    let mut out = [None; 6];
    for (d, slot) in out.iter_mut().enumerate().take(2 * h.ndims) {
        let dir = if d % 2 == 0 { -1 } else { 1 };
        *slot = neighbour(me, &h.dims, d / 2, dir, h.periodic);
    }
    out
}
