//! Latitude core: execution graphs of MPI applications, the LogGPS cost model, the engine
//! that prices a graph in one pass, and the LP that LLAMP builds from it.
//!
//! Pipeline (docs/architecture.md): traces or job files → [`graph::ExecGraph`] → engine / LP /
//! simulator → analyses. This crate does no printing; the Python front end reports.

pub mod collectives;
pub mod engine;
pub mod error;
pub mod gen;
pub mod goal;
pub mod graph;
pub mod lgraph;
pub mod lp;
pub mod model;
pub mod net;
pub mod output;
pub mod parallel;
pub mod schedule;
pub mod sim;
pub mod synth;
pub mod text;
pub mod trace;
pub mod units;

pub use error::{Error, Result};
pub use graph::{ExecGraph, GraphBuilder};
