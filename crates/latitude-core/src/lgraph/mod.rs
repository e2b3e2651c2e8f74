//! `.lgraph`: the execution graph as it sits in memory, in one file that is mapped, not
//! parsed (docs/graph-format.md has the byte layout).
//!
//! The file is a fixed 128-byte header, a section table, and one section per `ExecGraph`
//! array (op kinds, values, ranks, local indices, peers, tags, CPU/NIC, the predecessor CSR,
//! the matched partners, source lines), each starting at a multiple of 64 bytes, all
//! little-endian, in the graph's stored topological order, so a loaded graph is valid for
//! the engine without ordering or matching. Loading maps the file read-only and views each
//! section in place (`graph::Arr`); nothing is copied on a little-endian machine.
//!
//! Trust nothing: the header and the section table carry an XXH3-64 checksum, every section
//! its own; every offset and length is checked against the file before it is used, and
//! then every value the engine relies on (kind bytes, ranks, CSR offsets, predecessors
//! before their dependents, symmetric partners on one message stream, each rank's local
//! indices a permutation) is checked before the graph is handed out. A bad file is one
//! line naming what is wrong, never a crash or a silently different answer.
//!
//! Writes are atomic (a temporary file in the same directory, renamed over the target), so a
//! mapped file is never rewritten under a reader. A file may record the *key* of what it
//! was made from (`cache_key`): callers keep a binary next to a GOAL file or a trace
//! directory and reuse it while the key matches (`read_if_key`).

mod check;
mod layout;
mod read;
mod write;

pub use layout::{MAGIC, VERSION};
pub use read::{read, read_if_key};
pub use write::write;

use std::time::UNIX_EPOCH;

/// Is the file at `path` an `.lgraph` (by its first bytes, whatever its name)?
pub fn is_lgraph(path: &str) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && head == MAGIC
}

/// A cache key for a graph made from these files: their paths, sizes and modification
/// times, plus `extra` (options that change the graph). Missing files give `None`.
/// Directories contribute the keys of their files (one level, sorted by name).
pub fn cache_key(paths: &[&str], extra: &[u8]) -> Option<u64> {
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    let mut add = |p: &std::path::Path| -> Option<()> {
        let m = std::fs::metadata(p).ok()?;
        let mtime = m.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
        h.update(p.as_os_str().as_encoded_bytes());
        h.update(&m.len().to_le_bytes());
        h.update(&mtime.to_le_bytes());
        Some(())
    };
    for &p in paths {
        let path = std::path::Path::new(p);
        if path.is_dir() {
            let mut names: Vec<_> = std::fs::read_dir(path).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
            names.sort();
            for n in names.iter().filter(|n| n.is_file()) {
                add(n)?;
            }
        } else {
            add(path)?;
        }
    }
    h.update(extra);
    // 0 means "no key" in the header.
    Some(h.digest().max(1))
}
