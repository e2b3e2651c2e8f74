//! Which algorithm a collective call uses: a preset plus per-collective rules.
//!
//! Spec syntax (`--coll`): entries `COLL=RULE,RULE,…` separated by `;` (or by `,` before the
//! next `COLL=`); a rule is `ALG` or `ALG<=SIZE` (first matching rule wins; a call no rule
//! covers falls back to the preset). A bare `default` or `schedgen` picks the preset:
//!
//! ```text
//! allreduce=recdoub<=64KiB,ring;bcast=binomial
//! allreduce=ring,bcast=binomial
//! schedgen;bcast=binary
//! ```
//!
//! The size a rule compares with is `RankCall::decision_bytes` (the vector for
//! bcast/reduce/allreduce/scan, one block for allgather/alltoall/gather/scatter, the whole
//! vector for allgatherv/reduce_scatter; 0 for alltoallv/gatherv/scatterv, whose sizes
//! differ between ranks — every rank must pick the same algorithm).
//!
//! The `default` preset follows MPICH's selection with its default thresholds
//! (`MPIR_CVAR_*`): see [`Preset::choose`] and docs/schedule.md for why.

use std::collections::BTreeMap;

use super::{Algorithm, CollKind, RankCall};
use crate::units::{fmt_size, parse_size};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// MPICH-like choices by size and communicator size.
    Default,
    /// Schedgen v1: dissemination barrier/allreduce/allgather, binomial bcast/reduce, linear
    /// alltoall; everything else not modelled.
    Schedgen,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub alg: Algorithm,
    /// Applies when the decision size is ≤ this (None: always).
    pub max_bytes: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    pub preset: Preset,
    pub rules: BTreeMap<CollKind, Vec<Rule>>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection { preset: Preset::Default, rules: BTreeMap::new() }
    }
}

const KIB: u64 = 1024;

impl Preset {
    /// The preset's algorithm for a call on a communicator of p ranks.
    pub fn choose(self, kind: CollKind, bytes: u64, p: u32) -> Algorithm {
        use Algorithm as A;
        use CollKind as K;
        if self == Preset::Schedgen {
            return match kind {
                K::Barrier | K::Bcast | K::Reduce | K::Allreduce | K::Allgather | K::Alltoall => A::Schedgen,
                _ => A::None,
            };
        }
        let pof2 = p.is_power_of_two();
        let pof2_floor = super::pof2_floor(p.max(1)) as u64;
        match kind {
            // MPICH: dissemination ("Bruck") barrier.
            K::Barrier => A::Dissemination,
            // BCAST_SHORT_MSG_SIZE = 12288, BCAST_MIN_PROCS = 8.
            K::Bcast if bytes < 12 * KIB || p < 8 => A::Binomial,
            K::Bcast => A::ScatterAllgather,
            // REDUCE_SHORT_MSG_SIZE = 2048; Rabenseifner needs at least p' elements.
            K::Reduce if bytes <= 2 * KIB || bytes < pof2_floor => A::Binomial,
            K::Reduce => A::Rabenseifner,
            // ALLREDUCE_SHORT_MSG_SIZE = 2048.
            K::Allreduce if bytes <= 2 * KIB || bytes < pof2_floor => A::RecDoub,
            K::Allreduce => A::Rabenseifner,
            // ALLGATHER_LONG_MSG_SIZE = 512 KiB (total), ALLGATHER_SHORT_MSG_SIZE = 80 KiB.
            K::Allgather | K::Allgatherv => {
                let total = if kind == K::Allgather { bytes.saturating_mul(p as u64) } else { bytes };
                if total < 512 * KIB && pof2 {
                    A::RecDoub
                } else if total < 80 * KIB {
                    A::Bruck
                } else {
                    A::Ring
                }
            }
            // ALLTOALL_SHORT_MSG_SIZE = 256 (with ≥ 8 ranks), ALLTOALL_MEDIUM_MSG_SIZE = 32768.
            K::Alltoall if bytes <= 256 && p >= 8 => A::Bruck,
            K::Alltoall if bytes <= 32 * KIB => A::Linear,
            K::Alltoall => A::Pairwise,
            K::Alltoallv | K::Gatherv | K::Scatterv => A::Linear,
            K::Gather | K::Scatter => A::Binomial,
            // REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE = 512 KiB (MPICH then uses pairwise).
            K::ReduceScatter if bytes < 512 * KIB => A::RecHalving,
            K::ReduceScatter => A::Ring,
            K::Scan | K::Exscan => A::RecDoub,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Preset::Default => "default",
            Preset::Schedgen => "schedgen",
        }
    }
}

impl Selection {
    pub fn schedgen() -> Selection {
        Selection { preset: Preset::Schedgen, rules: BTreeMap::new() }
    }

    /// The algorithm for one rank's call.
    pub fn choose(&self, c: &RankCall) -> Algorithm {
        let bytes = c.decision_bytes();
        if let Some(rules) = self.rules.get(&c.kind) {
            for r in rules {
                if r.max_bytes.is_none_or(|m| bytes <= m) {
                    return r.alg;
                }
            }
        }
        self.preset.choose(c.kind, bytes, c.size)
    }

    /// Parse a `--coll` spec (see the module comment).
    pub fn parse(spec: &str) -> Result<Selection, String> {
        let mut sel = Selection::default();
        for entry in spec.split(';') {
            let mut current: Option<CollKind> = None;
            for token in entry.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                if let Some((name, rest)) = split_entry(token) {
                    let kind = CollKind::parse(name).ok_or_else(|| {
                        let names: Vec<&str> = CollKind::ALL.iter().map(|k| k.name()).collect();
                        format!("unknown collective {name:?} in {token:?} (known: {})", names.join(", "))
                    })?;
                    sel.rules.insert(kind, Vec::new());
                    current = Some(kind);
                    sel.add_rule(kind, rest)?;
                } else if current.is_none() && (token == "default" || token == "schedgen") {
                    sel.preset = if token == "default" { Preset::Default } else { Preset::Schedgen };
                } else if let Some(kind) = current {
                    sel.add_rule(kind, token)?;
                } else {
                    return Err(format!("expected COLLECTIVE=ALGORITHM, `default` or `schedgen`, got {token:?}"));
                }
            }
        }
        Ok(sel)
    }

    fn add_rule(&mut self, kind: CollKind, text: &str) -> Result<(), String> {
        let (alg_text, max_bytes) = match text.split_once("<=") {
            Some((a, s)) => (a.trim(), Some(parse_size(s.trim(), u64::MAX).map_err(|e| format!("{text:?}: {e}"))?)),
            None => (text.trim(), None),
        };
        let alg = Algorithm::parse(alg_text).map_err(|e| format!("{}: {e}", kind.name()))?;
        if !kind.supports(alg) {
            let names: Vec<String> = kind.algorithms().iter().map(|a| a.name().to_string()).chain(["none".to_string()]).collect();
            return Err(format!("{} has no algorithm {:?} (choose from {})", kind.name(), alg.name(), names.join(", ")));
        }
        let rules = self.rules.entry(kind).or_default();
        if rules.last().is_some_and(|r| r.max_bytes.is_none()) {
            return Err(format!("{}: rule {text:?} can never apply (an earlier rule has no size limit)", kind.name()));
        }
        rules.push(Rule { alg, max_bytes });
        Ok(())
    }

    /// The spec back as text (`default;allreduce=ring`).
    pub fn describe(&self) -> String {
        let mut parts = vec![self.preset.name().to_string()];
        for (kind, rules) in &self.rules {
            let r: Vec<String> = rules
                .iter()
                .map(|r| match r.max_bytes {
                    Some(m) => format!("{}<={}", r.alg.label(), fmt_size(m)),
                    None => r.alg.label(),
                })
                .collect();
            parts.push(format!("{}={}", kind.name(), r.join(",")));
        }
        parts.join(";")
    }
}

/// `allreduce=ring` → Some(("allreduce", "ring")); `recdoub<=64KiB` → None.
fn split_entry(token: &str) -> Option<(&str, &str)> {
    let eq = token.find('=')?;
    if eq > 0 && token.as_bytes()[eq - 1] == b'<' {
        return None;
    }
    let name = token[..eq].trim();
    name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_').then(|| (name, token[eq + 1..].trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(kind: CollKind, bytes: u64, p: u32) -> RankCall<'static> {
        RankCall::new(kind, p, 0, bytes)
    }

    #[test]
    fn parses_both_separators_and_size_rules() {
        let s = Selection::parse("allreduce=recdoub<=64KiB,ring;bcast=binomial").unwrap();
        assert_eq!(s.choose(&call(CollKind::Allreduce, 65536, 8)), Algorithm::RecDoub);
        assert_eq!(s.choose(&call(CollKind::Allreduce, 65537, 8)), Algorithm::Ring);
        assert_eq!(s.choose(&call(CollKind::Bcast, 1 << 30, 8)), Algorithm::Binomial);
        let t = Selection::parse("allreduce=ring,bcast=binomial").unwrap();
        assert_eq!(t.choose(&call(CollKind::Allreduce, 8, 8)), Algorithm::Ring);
        assert_eq!(t.choose(&call(CollKind::Bcast, 8, 8)), Algorithm::Binomial);
        assert_eq!(t.describe(), "default;bcast=binomial;allreduce=ring");
    }

    #[test]
    fn presets_and_fallback() {
        let s = Selection::parse("schedgen;bcast=binary").unwrap();
        assert_eq!(s.choose(&call(CollKind::Bcast, 8, 8)), Algorithm::Binary);
        assert_eq!(s.choose(&call(CollKind::Allreduce, 8, 8)), Algorithm::Schedgen);
        assert_eq!(s.choose(&call(CollKind::Gather, 8, 8)), Algorithm::None);
        let d = Selection::parse("allreduce=ring<=1KiB").unwrap();
        assert_eq!(d.choose(&call(CollKind::Allreduce, 4096, 8)), Algorithm::Rabenseifner);
        assert_eq!(d.choose(&call(CollKind::Allreduce, 8, 8)), Algorithm::Ring);
        let c = Selection::parse("bcast=chain:16KiB").unwrap();
        assert_eq!(c.choose(&call(CollKind::Bcast, 8, 8)), Algorithm::Chain { segment: 16384 });
    }

    #[test]
    fn bad_specs_say_what_was_expected() {
        for (spec, want) in [
            ("allreduce=fastest", "unknown algorithm"),
            ("bcast=ring", "bcast has no algorithm \"ring\""),
            ("allreduc=ring", "unknown collective"),
            ("ring", "expected COLLECTIVE=ALGORITHM"),
            ("allreduce=ring,recdoub", "can never apply"),
            ("allreduce=recdoub<=64XB", "unknown size unit"),
            ("bcast=binomial:4", "takes no parameter"),
        ] {
            let err = Selection::parse(spec).unwrap_err();
            assert!(err.contains(want), "{spec}: {err}");
        }
    }
}
