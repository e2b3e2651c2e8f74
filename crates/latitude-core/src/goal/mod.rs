//! GOAL text, LogGOPSim's schedule format (docs/reference/goal.md): a parallel reader (its
//! statement parser in parser.rs) and a Schedgen-style writer.

mod parser;
mod reader;
mod wide_tags;
mod writer;

pub use reader::{read_goal, read_goal_from, read_goal_progress};
pub use writer::{write_goal, write_goal_to};
