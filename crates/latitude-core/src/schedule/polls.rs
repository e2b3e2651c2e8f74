//! Polls that complete nothing (MPI_Test* without a completion, MPI_Iprobe, folded `#@ polls`
//! records) and the completion that ends them (docs/schedule.md, "Polling").
//!
//! Two questions per rank. What a poll's own time is (RankState::polled): MPI time when the
//! rank only waited (polls back to back), computation in a work loop (the application's own
//! work between the polls). And, for a work loop, where the half poll interval after the
//! message's arrival goes (PollRun::shift).
//!
//! **The shift.** A work loop sees a message at its first poll after the arrival: up to one
//! poll interval I later, I/2 on average. The traced run's computation ends at the poll that
//! saw it, so a graph that keeps that computation whole completes the receive at
//! max(end of the computation, arrival): at ΔL = 0 the traced poll, but at ΔL > 0 the delayed
//! arrival first absorbs the slack between arrival and poll, and the rank then completes at
//! the arrival itself, as if it polled continuously — about I/2 per message too early (4 µs
//! between polls: about 1.8 ΔL predicted per round trip against 2.1 measured). So h = I/2 of the
//! computation before the completion moves after it: the completion waits for
//! max(end − h, arrival), then the rank works h more. At a ΔL spanning several poll
//! intervals that is arrival + ΔL + I/2, the mean of the real next poll; at ΔL = 0 it is the
//! traced poll when the message arrived at least h before it, and at most h later otherwise
//! (I/8 per message on average when arrivals fall anywhere in the interval).
//!
//! h is capped at SHIFT_CAP_NS: a latency change much smaller than the poll interval rarely
//! moves the completion to another poll at all (a loop polling every 10 ms: a 20 µs ΔL moves
//! it with probability 0.2 %), so for coarse loops the traced poll is the likely outcome and
//! a half interval would only cost accuracy at ΔL = 0 (up to 5 ms per message there). With
//! the cap the expected cost at ΔL = 0 is at most SHIFT_CAP_NS / 4 per polled message (at
//! I = 2 · SHIFT_CAP_NS).
//!
//! Which completions end a loop's polling: a successful MPI_Test/Testall/Testany/Testsome,
//! the poll that saw it; it joins requests posted before, so only the rank's own time moves.
//! A Wait, Recv or Probe after unsuccessful polls blocks until the arrival itself, with no
//! poll to round to: no shift; nor for any other call (the loop stopped for its own reasons),
//! nor for a loop whose polls ran back to back (waiting, less than a tenth of the time outside
//! the calls: its interval is the poll's own ~0.1 µs). A blocking MPI_Recv right after the
//! MPI_Iprobe that found its message (HPL's panel broadcast) also ends a loop, but is not
//! shifted: the receive is posted there, and a graph can only post it when the computation
//! before it ends — h early, which a rendezvous sender sees as a handshake h early at ΔL = 0
//! (one HPCC trace: −43 µs). HPL's probes are 0.4–30 ms apart in HPCC, where a ΔL of tens of
//! µs rarely moves the receive to another probe anyway.

use crate::trace::{Call, Record, Time};

/// A folded poll record (or a run of polls) with more than 1/WORK_LOOP_SHARE of its span
/// outside the calls is a work loop.
const WORK_LOOP_SHARE: i128 = 10;

/// Polls spanning `span` ns with `busy` ns inside the calls: a work loop (not waiting)?
pub(super) fn is_work_loop(span: i128, busy: i128) -> bool {
    (span - busy) * WORK_LOOP_SHARE > span
}

/// The most computation moved past a completion (ns, the graph's time), see the module doc.
pub(super) const SHIFT_CAP_NS: i128 = 10_000;

/// The unsuccessful polls since the last handled call.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PollRun {
    /// The first poll's start.
    first: Option<Time>,
    /// Polls (a folded record counts as many as it stands for).
    polls: u64,
    /// Time inside them (ns, the graph's time).
    busy: i128,
}

impl PollRun {
    /// Add a poll record: `n` polls, `busy` ns of them inside the calls.
    pub(super) fn add(&mut self, rec: &Record, n: u64, busy: i128) {
        if self.first.is_none() {
            self.first = rec.start;
        }
        self.polls += n;
        self.busy += busy;
    }

    /// The computation (ns) to move from before `rec` to after it, when `rec` is the Test
    /// that ends a work loop's polling (see the module doc).
    pub(super) fn shift(&self, rec: &Record, timemult: f64) -> Option<i128> {
        let first = self.first?;
        let seen = match rec.call {
            Call::Complete { what, .. } if what.is_test() => rec.start?,
            _ => return None,
        };
        let span = Time::scaled(seen.0 - first.0, timemult);
        if self.polls == 0 || span <= 0 || !is_work_loop(span, self.busy) {
            return None; // polls back to back: waiting
        }
        Some((span / i128::from(self.polls) / 2).min(SHIFT_CAP_NS))
    }
}
