//! A builder's dependency store. Generators add each op's prerequisites right after the op,
//! dependents in increasing id order; those are kept directly as the predecessor CSR (4 bytes
//! per edge, nothing to sort at `finish`, which matters at 10⁸ vertices where every freshly
//! touched page costs). Dependencies in any other order (GOAL files list them after all
//! ops) switch the store to (dependent, prerequisite) pairs, counting-sorted at `finish`.

use super::IREQ;

pub(crate) enum DepStore {
    /// Prerequisites of v: `pred[off[v]..off[v + 1]]` for v < off.len() - 1; later
    /// vertices have none yet.
    Csr { off: Vec<u32>, pred: Vec<u32> },
    /// (dependent, prerequisite | IREQ)
    Pairs(Vec<(u32, u32)>),
}

impl Default for DepStore {
    fn default() -> Self {
        DepStore::Csr { off: vec![0], pred: Vec::new() }
    }
}

impl DepStore {
    /// `a` depends on `p` (a prerequisite id, `IREQ` flag included).
    pub(crate) fn push(&mut self, a: u32, p: u32) {
        let a = a as usize;
        match self {
            DepStore::Csr { off, pred } if a + 2 >= off.len() => {
                if a + 2 > off.len() {
                    off.resize(a + 1, pred.len() as u32);
                    off.push(pred.len() as u32);
                }
                pred.push(p);
                *off.last_mut().expect("off is never empty") += 1;
            }
            DepStore::Csr { .. } => {
                let pairs = self.to_pairs();
                *self = DepStore::Pairs(pairs);
                self.push(a as u32, p);
            }
            DepStore::Pairs(pairs) => pairs.push((a as u32, p)),
        }
    }

    fn to_pairs(&self) -> Vec<(u32, u32)> {
        match self {
            DepStore::Csr { off, pred } => {
                (0..off.len() - 1).flat_map(|v| pred[off[v] as usize..off[v + 1] as usize].iter().map(move |&p| (v as u32, p))).collect()
            }
            DepStore::Pairs(pairs) => pairs.clone(),
        }
    }

    /// The store of `n` vertices as one complete CSR, duplicates removed (readers that
    /// build parts of a graph in parallel seal each part, then `append` them).
    pub(crate) fn sealed(self, n: usize) -> Result<DepStore, u32> {
        let (off, pred) = self.into_csr(n)?;
        Ok(DepStore::Csr { off, pred })
    }

    /// Append a sealed store of the next vertices (ids shifted by `base`, the number of
    /// vertices before them); `self` must be sealed too.
    pub(crate) fn append(&mut self, other: DepStore, base: u32) {
        let (DepStore::Csr { off, pred }, DepStore::Csr { off: o2, pred: p2 }) = (self, other) else { unreachable!("append needs sealed stores") };
        let shift = pred.len() as u32;
        off.pop();
        off.extend(o2.iter().map(|&o| o + shift));
        pred.extend(p2.iter().map(|&p| p + base));
    }

    /// The CSR predecessor lists of `n` vertices, duplicates removed (`requires` subsumes
    /// `irequires` on the same pair). Err(v) if v depends on itself.
    pub(crate) fn into_csr(self, n: usize) -> Result<(Vec<u32>, Vec<u32>), u32> {
        let (mut off, mut pred) = match self {
            DepStore::Csr { mut off, pred } => {
                off.resize(n + 1, pred.len() as u32);
                (off, pred)
            }
            DepStore::Pairs(pairs) => sort_pairs(pairs, n),
        };
        dedupe(&mut off, &mut pred)?;
        Ok((off, pred))
    }
}

/// Counting sort of pairs by dependent (prerequisites keep their insertion order).
fn sort_pairs(pairs: Vec<(u32, u32)>, n: usize) -> (Vec<u32>, Vec<u32>) {
    let mut off = vec![0u32; n + 1];
    for &(a, _) in &pairs {
        off[a as usize + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mut fill = off.clone();
    let mut pred = vec![0u32; pairs.len()];
    for &(a, b) in &pairs {
        pred[fill[a as usize] as usize] = b;
        fill[a as usize] += 1;
    }
    (off, pred)
}

/// Sort each list and drop repeats in place, compacting the CSR.
fn dedupe(off: &mut [u32], pred: &mut Vec<u32>) -> Result<(), u32> {
    let n = off.len() - 1;
    let mut w = 0usize;
    let mut start = 0usize;
    for v in 0..n {
        let end = off[v + 1] as usize;
        let list = &mut pred[start..end];
        if list.iter().any(|&p| (p & !IREQ) as usize == v) {
            return Err(v as u32);
        }
        if list.len() > 1 {
            list.sort_unstable();
        }
        // Sorted, so the requires entries (no flag) come first and the kept ones form a
        // sorted prefix of what was written for v.
        off[v] = w as u32;
        for i in start..end {
            let p = pred[i];
            if i > start && pred[i - 1] == p {
                continue;
            }
            if p & IREQ != 0 && pred[off[v] as usize..w].binary_search(&(p & !IREQ)).is_ok() {
                continue;
            }
            pred[w] = p;
            w += 1;
        }
        start = end;
    }
    off[n] = w as u32;
    pred.truncate(w);
    pred.shrink_to_fit();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr(pairs: &[(u32, u32)], n: usize) -> (bool, Result<(Vec<u32>, Vec<u32>), u32>) {
        let mut s = DepStore::default();
        for &(a, p) in pairs {
            s.push(a, p);
        }
        (matches!(s, DepStore::Csr { .. }), s.into_csr(n))
    }

    #[test]
    fn in_order_dependencies_stay_a_csr_and_equal_the_sorted_pairs() {
        let pairs = [(1, 0), (1, 0), (3, 2 | IREQ), (3, 1), (3, 2), (5, 4 | IREQ)];
        let (stayed, got) = csr(&pairs, 7);
        assert!(stayed);
        let want = (vec![0, 0, 1, 1, 3, 3, 4, 4], vec![0, 1, 2, 4 | IREQ]);
        assert_eq!(got.unwrap(), want);
        assert_eq!(sort_pairs(pairs.to_vec(), 7).0.len(), 8);
        let mut shuffled = pairs.to_vec();
        shuffled.reverse();
        let (stayed, got) = csr(&shuffled, 7);
        assert!(!stayed, "an earlier dependent must switch to pairs");
        assert_eq!(got.unwrap(), want);
    }

    #[test]
    fn a_self_dependency_is_reported() {
        assert_eq!(csr(&[(1, 0), (2, 2)], 3).1, Err(2));
        assert_eq!(csr(&[(2, 1), (1, 1 | IREQ)], 3).1, Err(1));
    }
}
