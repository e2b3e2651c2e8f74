//! The typed parameter object that crosses the boundary whole: named parameter values,
//! model options and the machine (`Config`), and the machine itself (`Machine`), built once
//! from the dict `latitude.machine` makes of a machine file and shared by every call.

use std::sync::Arc;

use latitude_core::graph::ExecGraph;
use latitude_core::model::{Classes, Model, Point, Protocol, CALL_NAME, CLASS_L, CLASS_O, COPY_NAME, MAXP, TICKS_PER_NS};
use latitude_core::net::{Dragonfly, FatTree, Flat, GraphNet, Machine as CoreMachine, Matrix, Network, Placement, Topology, Torus, NO_ENTRY};
use latitude_core::Error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn bad(m: impl Into<String>) -> PyErr {
    PyValueError::new_err(m.into())
}

fn get<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    match d.get_item(key)? {
        Some(v) => v.extract().map_err(Into::into),
        None => Err(bad(format!("machine spec lacks {key:?}"))),
    }
}

/// A machine description (topology, placement, intra-node parameters, matrices), with the
/// named parameter each of its classes stands for.
#[pyclass(frozen, module = "latitude._core")]
pub struct Machine {
    pub inner: Arc<CoreMachine>,
}

/// Terms of a matrix entry: (constant ns, [(parameter index, count)]).
type Entry = (f64, Vec<(usize, u32)>);

fn terms<const N: usize>(e: &Entry) -> PyResult<latitude_core::net::Terms<N>> {
    let mut t = latitude_core::net::Terms::<N> { c: (e.0 * TICKS_PER_NS as f64).round() as i128, ..Default::default() };
    if !(e.0.is_finite() && e.0 >= 0.0) || e.1.len() > N - 1 {
        return Err(bad("a matrix entry must be a non-negative constant and a few parameters"));
    }
    for &(k, n) in &e.1 {
        t.add(k, n);
    }
    Ok(t)
}

fn matrix<const N: usize>(d: Option<Bound<'_, PyDict>>) -> PyResult<Option<Matrix<latitude_core::net::Terms<N>>>> {
    let Some(d) = d else { return Ok(None) };
    let n: usize = get(&d, "n")?;
    let ids: Vec<i64> = get(&d, "ids")?;
    let entries: Vec<Entry> = get(&d, "entries")?;
    if ids.len() != n * n {
        return Err(bad("matrix ids must be n×n"));
    }
    let entries = entries.iter().map(terms::<N>).collect::<PyResult<Vec<_>>>()?;
    let ids = ids.into_iter().map(|x| if x < 0 { NO_ENTRY } else { x as u32 }).collect::<Vec<_>>();
    if ids.iter().any(|&x| x != NO_ENTRY && x as usize >= entries.len()) {
        return Err(bad("matrix id out of range"));
    }
    Ok(Some(Matrix { by_node: get(&d, "by_node")?, n, ids, entries }))
}

fn topology(d: &Bound<'_, PyDict>) -> PyResult<Topology> {
    let kind: String = get(d, "kind")?;
    Ok(match kind.as_str() {
        "flat" => Topology::Flat,
        "fat_tree" => Topology::FatTree(FatTree { k: get(d, "k")?, levels: get(d, "levels")? }),
        "dragonfly" => {
            let (g, a): (u32, u32) = (get(d, "g")?, get(d, "a")?);
            let h: Option<u32> = d.get_item("h")?.map(|v| v.extract()).transpose()?;
            Topology::Dragonfly(Dragonfly { g, a, p: get(d, "p")?, h: h.unwrap_or_else(|| g.saturating_sub(1).div_ceil(a.max(1)).max(1)) })
        }
        "torus" => Topology::Torus(Torus { dims: get(d, "dims")? }),
        "graph" => {
            let links: Vec<(u32, u32, u8)> = get(d, "links")?;
            Topology::Graph(GraphNet::new(get(d, "nodes")?, get(d, "switches")?, get(d, "classes")?, &links).map_err(bad)?)
        }
        other => return Err(bad(format!("unknown topology kind {other:?}"))),
    })
}

#[pymethods]
impl Machine {
    /// From the dict `latitude.machine.Machine.core_spec()` makes (parameter indices
    /// resolved against the configuration's names).
    #[new]
    fn new(spec: Bound<'_, PyDict>) -> PyResult<Machine> {
        let placement: Bound<'_, PyAny> = get(&spec, "placement")?;
        let placement = match placement.extract::<String>() {
            Ok(s) if s == "block" => Placement::Block,
            Ok(s) if s == "round-robin" => Placement::RoundRobin,
            Ok(s) => return Err(bad(format!("unknown placement {s:?}"))),
            Err(_) => Placement::Explicit(placement.extract()?),
        };
        let m = CoreMachine {
            source: get(&spec, "source")?,
            nparams: get(&spec, "nparams")?,
            topology: topology(&get(&spec, "topology")?)?,
            class_param: get(&spec, "class_param")?,
            ranks_per_node: get(&spec, "ranks_per_node")?,
            placement,
            intra: get(&spec, "intra")?,
            lat_matrix: matrix(get(&spec, "lat_matrix")?)?,
            gap_matrix: matrix(get(&spec, "gap_matrix")?)?,
        };
        m.validate().map_err(|e| Python::attach(|py| crate::errors::input_error(py, e)))?;
        Ok(Machine { inner: Arc::new(m) })
    }

    /// Class counts of the route between nodes a ≠ b (hop counts), in class order.
    fn node_route(&self, a: u32, b: u32) -> PyResult<Vec<u32>> {
        let m = &self.inner;
        if m.topology.nodes().is_some_and(|n| a as u64 >= n || b as u64 >= n) || a == b {
            return Err(bad(format!("expected two distinct nodes below {}", m.topology.nodes().unwrap_or(0))));
        }
        let c = match &m.topology {
            Topology::Flat => [0; latitude_core::net::MAX_CLASSES],
            Topology::FatTree(t) => t.counts(a, b),
            Topology::Dragonfly(t) => t.counts(a, b),
            Topology::Torus(t) => t.counts(a, b),
            Topology::Graph(g) => g.routes_to(b, &[a])[0].ok_or_else(|| bad(format!("no route from n{a} to n{b}")))?,
        };
        Ok(c[..m.topology.classes().len()].to_vec())
    }

    /// Nodes of the network (None: any number).
    fn nodes(&self) -> Option<u64> {
        self.inner.topology.nodes()
    }
}

/// Protocol classes with cut-off S₁ = `small_limit`: their parameters are found by name.
fn classes(names: &[String], small_limit: u64, eager_limit: u64) -> PyResult<Classes> {
    if small_limit >= eager_limit {
        return Err(bad(format!("protocol classes need S1 < S (the small limit {small_limit} below the eager limit {eager_limit})")));
    }
    let find = |n: &str| names.iter().position(|x| x == n).map(|i| i as u16).ok_or_else(|| bad(format!("protocol classes need the parameter {n:?}")));
    let (mut o, mut l) = ([0u16; 3], [0u16; 3]);
    for i in 0..3 {
        o[i] = find(CLASS_O[i])?;
        l[i] = find(CLASS_L[i])?;
    }
    Ok(Classes { small_limit, o, l })
}

/// Named parameter values, model options and machine: what every analysis call takes.
#[pyclass(frozen, module = "latitude._core")]
pub struct Config {
    pub names: Vec<String>,
    pub point: Point,
    pub model: Model,
    pub machine: Option<Arc<CoreMachine>>,
}

#[pymethods]
impl Config {
    #[new]
    #[pyo3(signature = (names, values, protocol="handshake", eager_limit=262144, nic_serialization=false, machine=None, small_limit=None))]
    fn new(
        names: Vec<String>,
        values: Vec<f64>,
        protocol: &str,
        eager_limit: u64,
        nic_serialization: bool,
        machine: Option<PyRef<'_, Machine>>,
        small_limit: Option<u64>,
    ) -> PyResult<Config> {
        let protocol = Protocol::parse(protocol).ok_or_else(|| bad(format!("unknown rendezvous protocol {protocol:?} (handshake or loggopsim)")))?;
        if names.len() != values.len() || names.len() > MAXP {
            return Err(bad(format!("{} names for {} values (at most {MAXP})", names.len(), values.len())));
        }
        let point = Point::from_named(&values, &names).map_err(bad)?;
        let machine = machine.map(|m| m.inner.clone());
        if let Some(m) = &machine {
            if m.nparams != names.len() {
                return Err(bad(format!("the machine has {} parameters, the configuration {}", m.nparams, names.len())));
            }
        }
        let classes = small_limit.map(|s| classes(&names, s, eager_limit)).transpose()?;
        // The copy parameter C, when the configuration names it, prices every local copy.
        let copy = names.iter().position(|n| n == COPY_NAME).map(|i| i as u16);
        // The call cost K, when named, is paid at the end of every collective call.
        let call = names.iter().position(|n| n == CALL_NAME).map(|i| i as u16);
        Ok(Config { names, point, model: Model { protocol, eager_limit, nic_serialization, classes, copy, call }, machine })
    }

    /// Index of a named parameter.
    fn index(&self, name: &str) -> PyResult<usize> {
        self.names.iter().position(|n| n == name).ok_or_else(|| bad(format!("no parameter named {name:?}")))
    }

    #[getter]
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }
}

/// The routes a call uses: the flat network (no machine) or a bound machine.
pub enum Net {
    Flat(Flat),
    Machine(Arc<Network>),
}

/// Run `$body` with `$r` bound to the concrete routes (monomorphized per kind, so the flat
/// pass stays the flat pass).
macro_rules! on_net {
    ($net:expr, |$r:ident| $body:expr) => {
        match $net {
            $crate::config::Net::Flat(x) => {
                let $r = x;
                $body
            }
            $crate::config::Net::Machine(n) => {
                let $r = &**n;
                $body
            }
        }
    };
}
pub(crate) use on_net;

/// A bound network cached per graph (re-bound when the machine object changes).
#[derive(Default)]
pub struct NetCache {
    bound: Option<(Arc<CoreMachine>, Arc<Network>)>,
}

impl NetCache {
    pub fn get(&mut self, g: &ExecGraph, machine: &Option<Arc<CoreMachine>>) -> Result<Net, Error> {
        let Some(m) = machine else { return Ok(Net::Flat(Flat)) };
        if let Some((bm, net)) = &self.bound {
            if Arc::ptr_eq(bm, m) {
                return Ok(Net::Machine(net.clone()));
            }
        }
        let net = Arc::new(m.bind(g)?);
        self.bound = Some((m.clone(), net.clone()));
        Ok(Net::Machine(net))
    }
}
