//! Collective calls: the rank's part of the chosen algorithm (`collectives`), joined the
//! Schedgen way (docs/reference/schedgen.md §4): the algorithm's start ops require the computation before
//! the call, a zero-length `collop` requires its end ops. Blocking: the next computation
//! requires `collop`. Nonblocking: the next computation only follows the issue, and the
//! request's Wait joins `collop`, so computation overlaps the collective.
//!
//! Every instance gets the tag `coll_tag(communicator, k)` for the k-th collective of the
//! rank on that communicator (MPI orders them identically on all members).

use super::rank::RankState;
use crate::collectives::{coll_tag, emit, place, Algorithm, CollKind, RankCall};
use crate::error::Result;
use crate::graph::Dep;
use crate::trace::{CollCall, Record};

impl RankState<'_, '_> {
    pub(super) fn collective(&mut self, rec: &Record, cc: &CollCall) -> Result<()> {
        if !self.sh.opts.collectives {
            self.unmodelled(rec, "collectives dropped (--no-collectives)");
            return Ok(());
        }
        let (comm, me) = match self.comm(rec, &cc.comm)? {
            Ok(c) => c,
            Err(why) => {
                self.unusable(rec, why);
                return Ok(());
            }
        };
        if comm.inter {
            self.unmodelled(rec, "collective on an intercommunicator");
            return Ok(());
        }
        let p = comm.size;
        let root = if cc.kind.rooted() {
            match u32::try_from(cc.root).ok().filter(|&r| r < p) {
                Some(r) => r,
                None => return Err(self.err(rec.line, format!("{}: root {} outside its communicator of {p} ranks", rec.name(), cc.root))),
            }
        } else {
            0
        };
        let mut counts = std::mem::take(&mut self.sh.counts);
        let mut rcounts = std::mem::take(&mut self.sh.rcounts);
        counts.clear();
        rcounts.clear();
        if cc.has_counts {
            counts.extend_from_slice(&rec.counts);
        }
        if cc.has_rcounts {
            rcounts.extend_from_slice(&rec.rcounts);
        }
        if cc.alltoallw {
            match &rec.ext.typesizes {
                Some((s, r)) if s.len() == counts.len() && r.len() == rcounts.len() => {
                    counts.iter_mut().zip(s).for_each(|(c, t)| *c = c.saturating_mul(*t));
                    rcounts.iter_mut().zip(r).for_each(|(c, t)| *c = c.saturating_mul(*t));
                }
                _ => {
                    self.sh.counts = counts;
                    self.sh.rcounts = rcounts;
                    self.unmodelled(rec, "MPI_Alltoallw without per-peer type sizes ('#@ typesizes')");
                    return Ok(());
                }
            }
        }
        // Gatherv/Scatterv: only the root's count list is significant.
        if matches!(cc.kind, CollKind::Gatherv | CollKind::Scatterv) && me != root {
            counts.clear();
        }
        let bad = [("counts", counts.len()), ("receive counts", rcounts.len())].into_iter().find(|&(_, n)| n != 0 && n != p as usize);
        if let Some((what, n)) = bad {
            self.sh.counts = counts;
            self.sh.rcounts = rcounts;
            return Err(self.err(rec.line, format!("{}: {n} {what} for a communicator of {p} ranks", rec.name())));
        }
        let call = RankCall { kind: cc.kind, size: p, me, root, bytes: cc.bytes, blocks: &counts, recv_blocks: &rcounts };
        let alg = self.sh.opts.coll.choose(&call);
        let r = self.place_collective(rec, cc, alg, &call, &comm);
        self.sh.counts = counts;
        self.sh.rcounts = rcounts;
        r
    }

    fn place_collective(&mut self, rec: &Record, cc: &CollCall, alg: Algorithm, call: &RankCall, comm: &super::comms::Comm) -> Result<()> {
        if alg == Algorithm::None {
            self.unmodelled(rec, "algorithm `none` selected (or not in the preset)");
            return Ok(());
        }
        let mut prog = std::mem::take(&mut self.sh.prog);
        let mut placed = std::mem::take(&mut self.sh.placed);
        let res = (|| -> Result<()> {
            emit(alg, call, &mut prog).map_err(|m| self.err(rec.line, format!("{}: {m}", rec.name())))?;
            let seq = self.coll_seq.entry(comm.id).or_insert(0);
            let (tag, instance) = (coll_tag(comm.id, *seq), ((comm.id as u64) << 32) | *seq as u64);
            *seq = seq.wrapping_add(1);
            let sh = &mut *self.sh;
            let first = sh.b.len() as u32;
            let r = place(&mut sh.b, &prog, sh.reg.members(*comm), call.me, tag, &mut placed);
            self.at(rec.line, r)?;
            let r = placed.join(&mut self.sh.b);
            let collop = self.at(rec.line, r)?;
            self.sh.b.mark_collective(collop, cc.kind.name(), &alg.label(), call.size, call.bytes, instance);
            self.sh.b.set_lines_from(first, u32::try_from(rec.line).unwrap_or(u32::MAX));
            self.next.extend(placed.start.iter().map(|&s| (s, Dep::Requires)));
            let c = self.gap(rec)?;
            if placed.start.is_empty() {
                // No messages on this rank (a one-rank communicator): keep the chain.
                self.dep(rec.line, collop, c, Dep::Requires)?;
            }
            if cc.nonblocking {
                let key = if self.extended { rec.index } else { cc.req };
                self.reqs.add(key, collop);
                self.prev.push((c, Dep::Requires));
                self.issued(rec);
            } else {
                self.prev.push((collop, Dep::Requires));
            }
            *self.sh.stats.collectives.entry(format!("{} {}", cc.kind.name(), alg.label())).or_insert(0) += 1;
            Ok(())
        })();
        self.sh.prog = prog;
        self.sh.placed = placed;
        res
    }
}
