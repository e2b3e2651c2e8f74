//! Pricing an execution graph: plans, the generic forward pass, predictions and their
//! critical paths.

pub mod decompose;
pub mod envelope;
pub mod multi;
pub mod pairs;
pub mod parametric;
pub mod path;
pub mod plan;
pub mod predict;
pub mod rational;
pub mod tolerance;
pub mod walk;
mod width;

pub use path::{summarize, PathSummary, Step, StepKind};
pub use plan::Plan;
pub use predict::{predict, Prediction};
