//! What a simulation needs beyond the [`ExecGraph`]: successor lists split by dependency
//! kind (an op's start releases its `irequires` dependents, its end its `requires`
//! dependents), the dependency counts, and the root operations. Built once per graph and
//! shared by every run (Monte Carlo samples, both semantics).

use crate::error::{Error, Result};
use crate::graph::{Dep, ExecGraph, Kind};

/// Largest rank count the event keys can encode.
pub const MAX_SIM_RANKS: u32 = 1 << 30;

pub struct SimGraph {
    /// Successors of v: `succ[off[v]..mid[v]]` start when v starts (irequires),
    /// `succ[mid[v]..off[v+1]]` when v ends (requires).
    pub(crate) off: Vec<u32>,
    pub(crate) mid: Vec<u32>,
    pub(crate) succ: Vec<u32>,
    /// Number of dependencies of each vertex.
    pub(crate) npred: Vec<u32>,
    /// Vertices without dependencies, by (rank, local index).
    pub(crate) roots: Vec<u32>,
    pub(crate) ncpu: usize,
    pub(crate) nnic: usize,
    /// Whether messages are matched statically (then the simulator counts deviations).
    pub(crate) static_matching: bool,
    /// Number of vertices of the graph this was built for (a cheap consistency check).
    pub(crate) n: usize,
}

impl SimGraph {
    pub fn new(g: &ExecGraph) -> Result<SimGraph> {
        if g.num_ranks() > MAX_SIM_RANKS {
            return Err(Error::new(format!("the simulator supports at most {MAX_SIM_RANKS} ranks, the graph has {}", g.num_ranks())));
        }
        let n = g.len();
        let mut nstart = vec![0u32; n];
        let mut off = vec![0u32; n + 1];
        let mut npred = vec![0u32; n];
        for v in 0..n as u32 {
            for (p, dep) in g.preds(v) {
                off[p as usize + 1] += 1;
                if dep == Dep::Irequires {
                    nstart[p as usize] += 1;
                }
                npred[v as usize] += 1;
            }
        }
        for i in 0..n {
            off[i + 1] += off[i];
        }
        let mid: Vec<u32> = (0..n).map(|v| off[v] + nstart[v]).collect();
        // Fill irequires dependents from off[v], requires dependents from mid[v].
        let mut fill_s: Vec<u32> = off[..n].to_vec();
        let mut fill_e = mid.clone();
        let mut succ = vec![0u32; off[n] as usize];
        for v in 0..n as u32 {
            for (p, dep) in g.preds(v) {
                let f = if dep == Dep::Irequires { &mut fill_s } else { &mut fill_e };
                succ[f[p as usize] as usize] = v;
                f[p as usize] += 1;
            }
        }
        let mut roots: Vec<u32> = (0..n as u32).filter(|&v| npred[v as usize] == 0).collect();
        roots.sort_unstable_by_key(|&v| (g.rank(v), g.local(v)));
        let static_matching = g.wildcard_recvs() == 0 && (0..n as u32).any(|v| g.kind(v) != Kind::Calc);
        Ok(SimGraph {
            off,
            mid,
            succ,
            npred,
            roots,
            ncpu: g.max_cpu() as usize + 1,
            nnic: g.max_nic() as usize + 1,
            static_matching,
            n,
        })
    }

    /// Dependents released when v starts.
    #[inline]
    pub(crate) fn on_start(&self, v: u32) -> &[u32] {
        &self.succ[self.off[v as usize] as usize..self.mid[v as usize] as usize]
    }

    /// Dependents released when v ends.
    #[inline]
    pub(crate) fn on_end(&self, v: u32) -> &[u32] {
        &self.succ[self.mid[v as usize] as usize..self.off[v as usize + 1] as usize]
    }

    pub(crate) fn check(&self, g: &ExecGraph) -> Result<()> {
        if g.len() != self.n {
            return Err(Error::new("simulation data was prepared for another graph"));
        }
        Ok(())
    }
}
