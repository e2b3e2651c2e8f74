//! Writing an `.lgraph`: checksums of the sections (on two threads), then header, table
//! and sections into a temporary file next to the target, renamed over it at the end.

use std::borrow::Cow;
use std::io::Write;

use super::layout::{align_up, encode, Entry, Header, Sec, ENTRY_LEN, HEADER_LEN, SECTIONS, VERSION};
use crate::error::Result;
use crate::graph::{ExecGraph, Plain};
use crate::output::atomic_write;

/// Little-endian bytes of a plain array (a view on little-endian machines).
pub(crate) fn le_bytes<T: Plain>(s: &[T]) -> Cow<'_, [u8]> {
    let size = std::mem::size_of::<T>();
    // SAFETY: Plain types have no padding; the byte view covers exactly the slice.
    let raw = unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) };
    if cfg!(target_endian = "little") || size == 1 {
        Cow::Borrowed(raw)
    } else {
        Cow::Owned(raw.chunks_exact(size).flat_map(|c| c.iter().rev().copied()).collect())
    }
}

/// The bytes of one section of `g`.
pub(crate) fn section_bytes(g: &ExecGraph, sec: Sec) -> Cow<'_, [u8]> {
    match sec {
        // SAFETY: Kind is repr(u8).
        Sec::Kind => Cow::Borrowed(unsafe { std::slice::from_raw_parts(g.kind.as_ptr() as *const u8, g.kind.len()) }),
        Sec::Rank => le_bytes(&g.rank),
        Sec::Local => le_bytes(&g.local),
        Sec::Val => le_bytes(&g.val),
        Sec::Peer => le_bytes(&g.peer),
        Sec::Tag => le_bytes(&g.tag),
        Sec::Cpu => le_bytes(&g.cpu),
        Sec::Copy => le_bytes(&g.copy),
        Sec::Nic => le_bytes(&g.nic),
        Sec::PredOff => le_bytes(&g.pred_off),
        Sec::Pred => le_bytes(&g.pred),
        Sec::Partner => le_bytes(&g.partner),
        Sec::SourcePath => Cow::Borrowed(g.source.as_ref().map(|s| s.path.as_bytes()).unwrap_or_default()),
        Sec::SourceLine => le_bytes(g.source.as_ref().map(|s| &s.line[..]).unwrap_or_default()),
        Sec::Colls => Cow::Owned(g.colls.to_bytes()),
        Sec::Slot => unreachable!("the slots are computed by `write`"),
    }
}

/// Write `g` to `path` atomically; `key` (0: none) records what the graph was made from.
pub fn write(g: &ExecGraph, path: &str, key: u64) -> Result<()> {
    // The engine's slots (no plan exists for unmatched wildcard receives: none stored).
    let (slot, nslots) = if g.wildcard_recvs() == 0 { crate::graph::slots::stored(g) } else { (Cow::Owned(Vec::new()), 0) };
    let slot_bytes = le_bytes(&slot); // a view, not a copy (4 bytes per op: 400 MB at 10^8 ops)
    let bytes: Vec<Cow<[u8]>> = SECTIONS.iter().map(|&s| if s == Sec::Slot { slot_bytes.clone() } else { section_bytes(g, s) }).collect();
    let sums = checksums(&bytes);
    let mut offset = align_up((HEADER_LEN + ENTRY_LEN * SECTIONS.len()) as u64);
    let mut table = Vec::with_capacity(SECTIONS.len());
    for (i, &sec) in SECTIONS.iter().enumerate() {
        table.push(Entry { sec, offset, count: (bytes[i].len() / sec.elem_size()) as u64, checksum: sums[i] });
        offset = align_up(offset + bytes[i].len() as u64);
    }
    let header = Header {
        version: VERSION,
        vertices: g.len() as u64,
        edges: g.num_edges() as u64,
        ranks: g.num_ranks(),
        order: g.order_kind(),
        wildcards: g.wildcard_recvs(),
        sections: SECTIONS.len() as u32,
        file_len: offset,
        key,
        slots: nslots as u64,
    };
    atomic_write(path, |f| {
        let head = encode(&header, &table);
        f.write_all(&head)?;
        let mut at = head.len() as u64;
        let zeros = [0u8; 64];
        for (e, b) in table.iter().zip(&bytes) {
            f.write_all(&zeros[..(e.offset - at) as usize])?;
            f.write_all(b)?;
            at = e.offset + b.len() as u64;
        }
        f.write_all(&zeros[..(offset - at) as usize])
    })
}

/// XXH3-64 of each section; the sections are split between two threads by size.
fn checksums(bytes: &[Cow<[u8]>]) -> Vec<u64> {
    let total: usize = bytes.iter().map(|b| b.len()).sum();
    let mut first = 0;
    let mut acc = 0;
    while first < bytes.len() && 2 * (acc + bytes[first].len()) <= total {
        acc += bytes[first].len();
        first += 1;
    }
    let hash = |bs: &[Cow<[u8]>]| bs.iter().map(|b| xxhash_rust::xxh3::xxh3_64(b)).collect::<Vec<u64>>();
    let (mut sums, tail) = crate::parallel::join(total > 1 << 22, || hash(&bytes[..first]), || hash(&bytes[first..]));
    sums.extend(tail);
    sums
}
