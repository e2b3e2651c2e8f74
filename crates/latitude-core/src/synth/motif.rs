//! Motifs and their parameters: `[MOTIF] kind key=value ...` → a typed [`MotifSpec`].
//!
//! Validation order (the C runner follows the same, so both report the same first error):
//! tokens left to right (`key=value` form, known key, not repeated); the common values
//! (`compute`, `iterations`, `every`); the motif's own values in key order (the order of
//! [`keys`]) and its consistency checks; checks against the job's rank count.
//! Every motif takes `iterations` (repeats inside one occurrence), `every` (run on chain
//! iterations i with (i+1) mod every = 0) and, except `compute`, `compute` (a computation
//! before each repeat). Canonical text of a spec: [`MotifSpec::canonical`].

use super::grid::fill_dims;
use super::value::{parse_count, parse_duration, parse_fraction, parse_size, MAX_COUNT};
use crate::collectives::{Algorithm, CollKind, DEFAULT_SEGMENT};

/// Motif names in the order `known:` lists print them.
pub const NAMES: [&str; 11] = ["compute", "pingpong", "halo2d", "halo3d", "sweep3d", "allreduce", "bcast", "reduce", "alltoall", "barrier", "incast"];

/// Distribution of a compute motif's durations (all have mean `time`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    Const,
    /// Normal with standard deviation `sd` ns (negative draws become 0).
    Gaussian {
        sd: u64,
    },
    /// Uniform on [time − spread, time + spread].
    Uniform {
        spread: u64,
    },
    /// exp(N(μ, σ²)) with μ = ln(time) − σ²/2.
    Lognormal {
        sigma: f64,
    },
}

/// Draw once per rank (a fixed load imbalance) or once per call (noise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vary {
    Call,
    Rank,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compute {
    pub time: u64,
    pub dist: Dist,
    pub vary: Vary,
}

/// Nearest-neighbour exchange on a 2-D or 3-D process grid: per repeat, Irecv from every
/// neighbour (−x, +x, −y, +y, −z, +z), Isend to every neighbour, Waitall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Halo {
    pub ndims: usize,
    pub dims: [u32; 3],
    /// Bytes of one message along x, y, z.
    pub face: [u64; 3],
    pub periodic: bool,
}

/// KBA wavefront sweep on a px × py grid: 8 octants × angle blocks × k-blocks of blocking
/// Recv(x), Recv(y), compute, Send(x), Send(y).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sweep {
    pub px: u32,
    pub py: u32,
    pub nx: u64,
    pub ny: u64,
    pub nz: u64,
    pub kba: u64,
    pub angles: u64,
    pub mmi: u64,
}

impl Sweep {
    pub fn k_blocks(&self) -> u64 {
        self.nz / self.kba
    }
    pub fn angle_blocks(&self) -> u64 {
        self.angles / self.mmi
    }
    /// Bytes of a message to the x neighbour: ⌈ny/py⌉·kba·mmi doubles (and y: ⌈nx/px⌉…).
    pub fn x_bytes(&self) -> u64 {
        self.ny.div_ceil(self.py as u64) * self.kba * self.mmi * 8
    }
    pub fn y_bytes(&self) -> u64 {
        self.nx.div_ceil(self.px as u64) * self.kba * self.mmi * 8
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coll {
    pub kind: CollKind,
    pub bytes: u64,
    pub root: u32,
    /// None: the generation's selection (`--coll`, default preset).
    pub alg: Option<Algorithm>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Motif {
    Compute(Compute),
    /// Pairs (2i, 2i+1) of the job: even sends then receives, odd receives then sends.
    PingPong {
        bytes: u64,
    },
    Halo(Halo),
    Sweep(Sweep),
    Coll(Coll),
    /// N−1: every rank but the root Sends to it; the root Irecvs from all, then Waitall.
    Incast {
        bytes: u64,
        root: u32,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct MotifSpec {
    pub line: u64,
    pub name: &'static str,
    pub motif: Motif,
    pub iterations: u64,
    pub every: u64,
    /// Computation before each repeat (ns); not used by `compute` itself.
    pub compute: u64,
}

/// Keys of a motif, in validation and canonical order.
pub fn keys(name: &str) -> &'static [&'static str] {
    match name {
        "compute" => &["time", "dist", "sd", "spread", "sigma", "vary", "iterations", "every"],
        "pingpong" => &["bytes", "compute", "iterations", "every"],
        "halo2d" => &["px", "py", "x", "y", "periodic", "compute", "iterations", "every"],
        "halo3d" => &["px", "py", "pz", "x", "y", "z", "periodic", "compute", "iterations", "every"],
        "sweep3d" => &["px", "py", "nx", "ny", "nz", "kba", "angles", "mmi", "compute", "iterations", "every"],
        "allreduce" | "alltoall" => &["bytes", "alg", "compute", "iterations", "every"],
        "bcast" | "reduce" => &["bytes", "root", "alg", "compute", "iterations", "every"],
        "barrier" => &["alg", "compute", "iterations", "every"],
        "incast" => &["bytes", "root", "compute", "iterations", "every"],
        _ => &[],
    }
}

/// Parameter values of one motif line, checked against its key list.
struct Params<'a> {
    name: &'static str,
    given: Vec<(&'a str, &'a str)>,
}

impl<'a> Params<'a> {
    fn new(name: &'static str, tokens: &[&'a str]) -> Result<Params<'a>, String> {
        let known = keys(name);
        let mut given: Vec<(&str, &str)> = Vec::new();
        for &tok in tokens {
            let (k, v) = match tok.split_once('=') {
                Some((k, v)) if !k.is_empty() && !v.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') => (k, v),
                _ => return Err(format!("{name}: expected key=value, got '{tok}'")),
            };
            if !known.contains(&k) {
                return Err(format!("{name}: unknown parameter '{k}' (known: {})", known.join(", ")));
            }
            if given.iter().any(|&(g, _)| g == k) {
                return Err(format!("{name}: parameter '{k}' given twice"));
            }
            given.push((k, v));
        }
        Ok(Params { name, given })
    }

    fn raw(&self, key: &str) -> Option<&'a str> {
        self.given.iter().find(|&&(k, _)| k == key).map(|&(_, v)| v)
    }

    fn value<T>(&self, key: &str, dflt: T, parse: impl Fn(&str) -> Result<T, String>) -> Result<T, String> {
        match self.raw(key) {
            None => Ok(dflt),
            Some(v) => parse(v).map_err(|e| format!("{}: {key}: {e}", self.name)),
        }
    }

    fn count(&self, key: &str, dflt: u64, min: u64) -> Result<u64, String> {
        self.value(key, dflt, |v| {
            let n = parse_count(v, MAX_COUNT)?;
            if n < min {
                return Err(format!("must be at least {min}, got '{v}'"));
            }
            Ok(n)
        })
    }

    fn err(&self, msg: impl std::fmt::Display) -> String {
        format!("{}: {msg}", self.name)
    }
}

/// Parse `[MOTIF] <name> key=value...` for a job of `n` ranks. `name` is lowercase.
pub fn parse_motif(name: &str, tokens: &[&str], n: u32, line: u64) -> Result<MotifSpec, String> {
    let Some(&name) = NAMES.iter().find(|&&k| k == name) else {
        return Err(format!("unknown motif '{name}' (known: {})", NAMES.join(", ")));
    };
    let p = Params::new(name, tokens)?;
    let n = n as u64;
    let compute = if name == "compute" { 0 } else { p.value("compute", 0, parse_duration)? };
    let iterations = p.count("iterations", 1, 1)?;
    let every = p.count("every", 1, 1)?;
    let motif = match name {
        "compute" => Motif::Compute(compute_motif(&p)?),
        "pingpong" => {
            let bytes = p.value("bytes", 8, parse_size)?;
            Motif::PingPong { bytes }
        }
        "halo2d" | "halo3d" => Motif::Halo(halo(&p, if name == "halo2d" { 2 } else { 3 })?),
        "sweep3d" => Motif::Sweep(sweep(&p)?),
        "incast" => {
            let bytes = p.value("bytes", 8, parse_size)?;
            let root = p.count("root", 0, 0)?;
            Motif::Incast { bytes, root: root as u32 }
        }
        _ => Motif::Coll(coll(&p)?),
    };
    check_job_size(&p, &motif, n)?;
    let mut spec = MotifSpec { line, name, motif, iterations, every, compute };
    resolve_grid(&mut spec, n)?;
    Ok(spec)
}

fn compute_motif(p: &Params) -> Result<Compute, String> {
    let time = match p.raw("time") {
        Some(_) => p.value("time", 0, parse_duration)?,
        None => return Err(p.err("missing time=DURATION")),
    };
    const DISTS: [&str; 4] = ["const", "gaussian", "uniform", "lognormal"];
    let dist: &str = p.value("dist", "const", |v| {
        DISTS.iter().copied().find(|&d| d == v).ok_or_else(|| format!("expected const, gaussian, uniform or lognormal, got '{v}'"))
    })?;
    let sd = p.value("sd", None, |v| parse_duration(v).map(Some))?;
    let spread = p.value("spread", None, |v| parse_duration(v).map(Some))?;
    let sigma = p.value("sigma", None, |v| parse_fraction(v, 10.0).map(Some))?;
    let vary = p.value("vary", Vary::Call, |v| match v {
        "call" => Ok(Vary::Call),
        "rank" => Ok(Vary::Rank),
        _ => Err(format!("expected call or rank, got '{v}'")),
    })?;
    let wants = |key: &str, dist_name: &str, given: bool| -> Result<(), String> {
        match (dist == dist_name, given) {
            (true, false) => Err(p.err(format!("dist={dist_name} needs {key}="))),
            (false, true) => Err(p.err(format!("{key} applies only to dist={dist_name}"))),
            _ => Ok(()),
        }
    };
    wants("sd", "gaussian", sd.is_some())?;
    wants("spread", "uniform", spread.is_some())?;
    wants("sigma", "lognormal", sigma.is_some())?;
    let dist = match dist {
        "gaussian" => Dist::Gaussian { sd: sd.unwrap_or(0) },
        "uniform" => {
            let spread = spread.unwrap_or(0);
            if spread > time {
                return Err(p.err("spread must not exceed time (durations are not negative)"));
            }
            Dist::Uniform { spread }
        }
        "lognormal" => {
            if time == 0 {
                return Err(p.err("dist=lognormal needs time > 0"));
            }
            Dist::Lognormal { sigma: sigma.unwrap_or(1.0) }
        }
        _ => Dist::Const,
    };
    Ok(Compute { time, dist, vary })
}

fn halo(p: &Params, ndims: usize) -> Result<Halo, String> {
    let axes = ["x", "y", "z"];
    let mut dims = [0u64; 3];
    for a in 0..ndims {
        dims[a] = p.count(&format!("p{}", axes[a]), 0, 1)?;
    }
    let mut face = [0u64; 3];
    for a in 0..ndims {
        face[a] = p.value(axes[a], 8192, parse_size)?;
    }
    let periodic = p.value("periodic", false, |v| match v {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(format!("expected 0 or 1, got '{v}'")),
    })?;
    if ndims == 2 {
        dims[2] = 1;
    }
    Ok(Halo { ndims, dims: dims.map(|d| d as u32), face, periodic })
}

fn sweep(p: &Params) -> Result<Sweep, String> {
    let px = p.count("px", 0, 1)?;
    let py = p.count("py", 0, 1)?;
    let nx = p.count("nx", 64, 1)?;
    let ny = p.count("ny", 64, 1)?;
    let nz = p.count("nz", 64, 1)?;
    let kba = p.count("kba", 8, 1)?;
    let angles = p.count("angles", 6, 1)?;
    let mmi = p.count("mmi", 3, 1)?;
    if nz % kba != 0 {
        return Err(p.err(format!("kba={kba} does not divide nz={nz}")));
    }
    if angles % mmi != 0 {
        return Err(p.err(format!("mmi={mmi} does not divide angles={angles}")));
    }
    Ok(Sweep { px: px as u32, py: py as u32, nx, ny, nz, kba, angles, mmi })
}

fn coll(p: &Params) -> Result<Coll, String> {
    let kind = CollKind::parse(p.name).expect("collective motif names are collective kinds");
    let bytes = if kind == CollKind::Barrier { 0 } else { p.value("bytes", 8, parse_size)? };
    let root = if kind.rooted() { p.count("root", 0, 0)? as u32 } else { 0 };
    let alg = p.value("alg", None, |v| parse_alg(kind, v).map(Some))?;
    Ok(Coll { kind, bytes, root, alg })
}

/// An algorithm name the collective supports (`chain:SIZE` for chain); `default` = None.
fn parse_alg(kind: CollKind, v: &str) -> Result<Algorithm, String> {
    let names: Vec<&str> = kind.algorithms().iter().map(|a| a.name()).collect();
    let unknown = || format!("unknown algorithm '{v}' for {} (choose from {})", kind.name(), names.join(", "));
    let (name, seg) = match v.split_once(':') {
        Some((n, s)) => (n, Some(s)),
        None => (v, None),
    };
    if !names.contains(&name) {
        return Err(unknown());
    }
    match (name, seg) {
        ("chain", Some(s)) => {
            let segment = parse_size(s)?;
            if segment == 0 {
                return Err("the chain segment must be at least 1 byte".into());
            }
            Ok(Algorithm::Chain { segment })
        }
        ("chain", None) => Ok(Algorithm::Chain { segment: DEFAULT_SEGMENT }),
        (_, Some(_)) => Err(format!("only chain takes a segment size, got '{v}'")),
        _ => Algorithm::parse(name),
    }
}

/// Checks against the job's rank count; fills default grid dimensions.
fn check_job_size(p: &Params, motif: &Motif, n: u64) -> Result<(), String> {
    let root_ok = |root: u32| {
        if root as u64 >= n {
            Err(p.err(format!("root {root} is outside the job's {n} ranks")))
        } else {
            Ok(())
        }
    };
    match *motif {
        Motif::PingPong { .. } if n < 2 => Err(p.err(format!("needs at least 2 ranks, the job has {n}"))),
        Motif::Incast { root, .. } => root_ok(root),
        Motif::Coll(c) if c.kind.rooted() => root_ok(c.root),
        _ => Ok(()),
    }
}

/// Fill a grid motif's unset dimensions for a job of `n` ranks.
fn resolve_grid(spec: &mut MotifSpec, n: u64) -> Result<(), String> {
    let name = spec.name;
    match &mut spec.motif {
        Motif::Halo(h) => {
            let mut d: Vec<u64> = h.dims[..h.ndims].iter().map(|&x| x as u64).collect();
            fill_dims(&mut d, n).map_err(|e| format!("{name}: {e}"))?;
            for (a, &x) in d.iter().enumerate() {
                h.dims[a] = x as u32;
            }
        }
        Motif::Sweep(s) => {
            let mut d = [s.px as u64, s.py as u64];
            fill_dims(&mut d, n).map_err(|e| format!("{name}: {e}"))?;
            (s.px, s.py) = (d[0] as u32, d[1] as u32);
        }
        _ => {}
    }
    Ok(())
}

impl MotifSpec {
    /// One line, every parameter resolved (sizes in bytes, durations in ns), in key order:
    /// the plan `latitude generate --check` prints and apps/motifs runs (docs/workloads.md).
    pub fn canonical(&self) -> String {
        let mut kv: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String| kv.push((k.to_string(), v));
        match &self.motif {
            Motif::Compute(c) => {
                put("time", c.time.to_string());
                let (d, extra) = match c.dist {
                    Dist::Const => ("const", None),
                    Dist::Gaussian { sd } => ("gaussian", Some(("sd", sd.to_string()))),
                    Dist::Uniform { spread } => ("uniform", Some(("spread", spread.to_string()))),
                    Dist::Lognormal { sigma } => ("lognormal", Some(("sigma", sigma.to_string()))), // exact: reads back as the same f64
                };
                put("dist", d.into());
                if let Some((k, v)) = extra {
                    put(k, v);
                }
                put("vary", if c.vary == Vary::Rank { "rank" } else { "call" }.into());
            }
            Motif::PingPong { bytes } => put("bytes", bytes.to_string()),
            Motif::Halo(h) => {
                for (a, axis) in ["x", "y", "z"].iter().enumerate().take(h.ndims) {
                    put(&format!("p{axis}"), h.dims[a].to_string());
                }
                for (a, axis) in ["x", "y", "z"].iter().enumerate().take(h.ndims) {
                    put(axis, h.face[a].to_string());
                }
                put("periodic", (h.periodic as u8).to_string());
            }
            Motif::Sweep(s) => {
                for (k, v) in
                    [("px", s.px as u64), ("py", s.py as u64), ("nx", s.nx), ("ny", s.ny), ("nz", s.nz), ("kba", s.kba), ("angles", s.angles), ("mmi", s.mmi)]
                {
                    put(k, v.to_string());
                }
                put("xbytes", s.x_bytes().to_string());
                put("ybytes", s.y_bytes().to_string());
            }
            Motif::Coll(c) => {
                if c.kind != CollKind::Barrier {
                    put("bytes", c.bytes.to_string());
                }
                if c.kind.rooted() {
                    put("root", c.root.to_string());
                }
                put("alg", c.alg.map_or("default".into(), |a| a.label()));
            }
            Motif::Incast { bytes, root } => {
                put("bytes", bytes.to_string());
                put("root", root.to_string());
            }
        }
        if self.name != "compute" {
            put("compute", self.compute.to_string());
        }
        put("iterations", self.iterations.to_string());
        put("every", self.every.to_string());
        let params: Vec<String> = kv.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("motif {} {} {}", self.line, self.name, params.join(" "))
    }
}
