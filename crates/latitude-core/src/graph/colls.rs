//! Which vertices end a collective call. A schedule expands each rank's part of a collective
//! into sends, receives and a zero-length join (`collop`, schedule/coll.rs) that every later
//! op of the rank waits for; that join is the rank's completion of the call. The table marks
//! it with the call's collective, algorithm, communicator size, bytes and an instance key
//! shared by all members of the call, so a simulation can delay the completion of a
//! measured collective (`--noise coll:SAMPLES`, sim/noise.rs) on the one shared graph.
//! Generated jobs mark their collective motifs' joins the same way (synth/sink.rs). Graphs
//! that carry no calls (GOAL text without `//@call`) have an empty table; an .lgraph
//! keeps the table in its `colls` section (`to_bytes`).

/// One rank's completion of one collective call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollMark {
    /// The join vertex (a zero-length calc).
    pub vertex: u32,
    /// Index into [`CollCalls::kinds`].
    pub kind: u32,
    /// Communicator size.
    pub procs: u32,
    /// The call's message size (`collectives::RankCall::bytes`).
    pub bytes: u64,
    /// Same for every member of the call: (communicator << 32) | its call number there.
    pub instance: u64,
}

/// The vertices that end a rank's part of a collective call, as a bitset (`CollCalls::ends`;
/// the simulator keeps one by its program index).
#[derive(Clone, Debug, Default)]
pub struct CallEnds(Vec<u64>);

impl CallEnds {
    /// No vertex ends a call (`has` is always false).
    pub const NONE: CallEnds = CallEnds(Vec::new());

    /// The set of `ids` (each below `n`); empty, with no allocation, when there are none.
    pub fn of(n: usize, ids: impl IntoIterator<Item = u32>) -> CallEnds {
        let mut bits = Vec::new();
        for v in ids {
            if bits.is_empty() {
                bits = vec![0u64; n.div_ceil(64)];
            }
            bits[v as usize >> 6] |= 1 << (v & 63);
        }
        CallEnds(bits)
    }

    #[inline]
    pub fn has(&self, v: u32) -> bool {
        self.0.get(v as usize >> 6).is_some_and(|w| w >> (v & 63) & 1 == 1)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The collective calls of a graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CollCalls {
    /// Distinct (collective, algorithm label) pairs, e.g. ("allreduce", "recdoub").
    pub kinds: Vec<(String, String)>,
    pub marks: Vec<CollMark>,
}

impl CollCalls {
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// Mark `vertex` as a rank's end of a call of `coll` run with `alg`.
    pub fn mark(&mut self, vertex: u32, coll: &str, alg: &str, procs: u32, bytes: u64, instance: u64) {
        let kind = match self.kinds.iter().position(|(c, a)| c == coll && a == alg) {
            Some(k) => k,
            None => {
                self.kinds.push((coll.to_string(), alg.to_string()));
                self.kinds.len() - 1
            }
        };
        self.marks.push(CollMark { vertex, kind: kind as u32, procs, bytes, instance });
    }

    /// Add the marks of a part whose vertices start at `base` (GraphBuilder::concat).
    pub(crate) fn append(&mut self, other: &CollCalls, base: u32) {
        for m in &other.marks {
            let (coll, alg) = &other.kinds[m.kind as usize];
            self.mark(m.vertex + base, coll, alg, m.procs, m.bytes, m.instance);
        }
    }

    /// Little-endian bytes: kinds (u32 count, then per kind two u32-length UTF-8 strings),
    /// marks (u64 count, then vertex, kind, procs as u32 and bytes, instance as u64).
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut b = Vec::with_capacity(16 + 28 * self.marks.len());
        b.extend_from_slice(&(self.kinds.len() as u32).to_le_bytes());
        for (c, a) in &self.kinds {
            for s in [c, a] {
                b.extend_from_slice(&(s.len() as u32).to_le_bytes());
                b.extend_from_slice(s.as_bytes());
            }
        }
        b.extend_from_slice(&(self.marks.len() as u64).to_le_bytes());
        for m in &self.marks {
            for x in [m.vertex, m.kind, m.procs] {
                b.extend_from_slice(&x.to_le_bytes());
            }
            b.extend_from_slice(&m.bytes.to_le_bytes());
            b.extend_from_slice(&m.instance.to_le_bytes());
        }
        b
    }

    /// The table `to_bytes` wrote, checked against a graph of `n` vertices.
    pub fn from_bytes(b: &[u8], n: usize) -> Result<CollCalls, String> {
        let bad = |what: &str| format!("corrupted .lgraph file (colls section: {what})");
        let mut at = 0usize;
        let mut take = |k: usize| -> Result<&[u8], String> {
            let s = b.get(at..at + k).ok_or_else(|| bad("truncated"))?;
            at += k;
            Ok(s)
        };
        let mut out = CollCalls::default();
        if b.is_empty() {
            return Ok(out);
        }
        let u32_of = |s: &[u8]| u32::from_le_bytes(s.try_into().expect("4 bytes"));
        let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().expect("8 bytes"));
        let kinds = u32_of(take(4)?) as usize;
        for _ in 0..kinds {
            let mut pair = Vec::with_capacity(2);
            for _ in 0..2 {
                let len = u32_of(take(4)?) as usize;
                pair.push(std::str::from_utf8(take(len)?).map_err(|_| bad("a name is not UTF-8"))?.to_string());
            }
            let a = pair.pop().unwrap_or_default();
            out.kinds.push((pair.pop().unwrap_or_default(), a));
        }
        let marks = u64_of(take(8)?);
        for _ in 0..marks {
            let m = CollMark { vertex: u32_of(take(4)?), kind: u32_of(take(4)?), procs: u32_of(take(4)?), bytes: u64_of(take(8)?), instance: u64_of(take(8)?) };
            if m.vertex as usize >= n || m.kind as usize >= kinds {
                return Err(bad("a mark outside the graph"));
            }
            out.marks.push(m);
        }
        if at != b.len() {
            return Err(bad("trailing bytes"));
        }
        Ok(out)
    }

    /// The marked vertices as a set over a graph of `n` vertices (what the call cost K
    /// prices, model.rs); empty without marks.
    pub fn ends(&self, n: usize) -> CallEnds {
        CallEnds::of(n, self.marks.iter().map(|m| m.vertex))
    }

    /// After the graph was renumbered: vertex `old` is now `new_id[old]`.
    pub(crate) fn renumber(&mut self, new_id: &[u32]) {
        for m in &mut self.marks {
            m.vertex = new_id[m.vertex as usize];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_damage_is_refused() {
        let mut c = CollCalls::default();
        c.mark(3, "allreduce", "recdoub", 2, 16, 7);
        c.mark(5, "allreduce", "recdoub", 2, 16, 7);
        c.mark(9, "bcast", "chain:64KiB", 4, 1 << 20, 1 << 32);
        let b = c.to_bytes();
        assert_eq!(CollCalls::from_bytes(&b, 10).unwrap(), c);
        assert_eq!(CollCalls::from_bytes(&[], 10).unwrap(), CollCalls::default());
        assert!(CollCalls::from_bytes(&b, 9).unwrap_err().contains("outside the graph"));
        assert!(CollCalls::from_bytes(&b[..b.len() - 1], 10).is_err());
        let mut longer = b.clone();
        longer.push(0);
        assert!(CollCalls::from_bytes(&longer, 10).unwrap_err().contains("trailing"));
    }
}
