//! Reading liballprof v1 traces (docs/reference/liballprof.md): ours — with
//! Latitude's `#@` extension lines — and other people's (old `collprof 0.9` files with µs
//! float timestamps, padded or unpadded rank numbers, Fortran traces).
//!
//! [`discover`] finds the per-rank files; [`RankReader`] streams one file as typed call
//! [`Record`]s (`calls::Call`), each with the extension lines that follow it. Malformed
//! input gives a one-line error naming the file, the line and what was expected.

pub mod call_types;
pub mod calls;
mod coll_layouts;
pub mod ext;
pub mod fields;
mod files;
mod ledger;
mod names;
mod reader;
mod times;

pub use calls::{known_calls, Call, CollCall, Completion, P2p, SendMode};
pub use ext::{CommDef, Ext, Header, Polls, Status};
pub use fields::{CommArg, Time};
pub use files::{discover, open_text, TraceSet, TraceText};
pub use reader::{RankReader, Record};
pub use times::{call_times, RankTimes};
