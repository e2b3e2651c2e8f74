//! Pricing an execution graph: plans, the generic forward pass, predictions and their
//! critical paths.

pub mod path;
pub mod plan;
pub mod predict;
pub mod walk;

pub use path::{summarize, PathSummary, Step, StepKind};
pub use plan::Plan;
pub use predict::{predict, Prediction};
