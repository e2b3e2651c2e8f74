//! Pricing an execution graph: plans, the generic forward pass, and predictions.

pub mod plan;
pub mod predict;
pub mod walk;

pub use plan::Plan;
pub use predict::{predict, Prediction, Step, StepKind};
