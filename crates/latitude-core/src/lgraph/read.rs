//! Loading an `.lgraph`: map the file, check header, table, bounds and checksums, check the
//! values (check.rs), and view each section in place as a graph array.

use std::fs::File;
use std::sync::Arc;

use memmap2::{Mmap, MmapOptions};

use super::check;
use super::layout::{decode_header, decode_table, Entry, Header, Sec, ALIGN, ENTRY_LEN, HEADER_LEN, SECTIONS};
use crate::error::{Error, Result};
use crate::graph::{Arr, CollCalls, ExecGraph, Kind, SourceMap, MAX_VERTICES};

/// Load the graph stored at `path`.
pub fn read(path: &str) -> Result<ExecGraph> {
    let map = map_file(path)?;
    let (h, table) = layout_of(&map).map_err(|m| Error::in_file(path, m))?;
    load(map, &h, &table).map_err(|m| Error::in_file(path, m))
}

/// Load the graph at `path` if it exists, is intact and was made from what `key` names;
/// `None` otherwise (a stale or damaged cache is rebuilt by the caller, not an error).
pub fn read_if_key(path: &str, key: u64) -> Option<ExecGraph> {
    let map = map_file(path).ok()?;
    let (h, table) = layout_of(&map).ok()?;
    if h.key != key {
        return None;
    }
    load(map, &h, &table).ok()
}

fn map_file(path: &str) -> Result<Mmap> {
    let f = File::open(path).map_err(|e| Error::io(path, &e))?;
    if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(Error::in_file(path, "is a directory, expected an .lgraph file"));
    }
    // SAFETY: the mapping is read-only; Latitude replaces graph files by rename, never in place
    // (a file truncated by someone else while mapped is the one thing this cannot guard against).
    unsafe { MmapOptions::new().populate().map(&f) }.map_err(|e| Error::io(path, &e))
}

/// Header and section table, with every section's bounds checked against the file.
fn layout_of(b: &[u8]) -> std::result::Result<(Header, Vec<Entry>), String> {
    let h = decode_header(b)?;
    if h.file_len != b.len() as u64 {
        let what = if (b.len() as u64) < h.file_len { "truncated" } else { "corrupted" };
        return Err(format!("{what} .lgraph file ({} bytes, the header says {})", b.len(), h.file_len));
    }
    let table = decode_table(b, &h)?;
    let n = h.vertices;
    if n > MAX_VERTICES as u64 || h.edges > u32::MAX as u64 || h.ranks == 0 || h.ranks > 1 << 24 {
        return Err(format!("corrupted .lgraph header ({n} vertices, {} edges, {} ranks)", h.edges, h.ranks));
    }
    for &sec in &SECTIONS {
        let found: Vec<&Entry> = table.iter().filter(|e| e.sec == sec).collect();
        let [e] = found[..] else {
            return Err(format!("corrupted .lgraph file (section {} appears {} times)", sec.name(), found.len()));
        };
        let ok_count = match sec {
            Sec::PredOff => e.count == n + 1,
            Sec::Pred => e.count == h.edges,
            Sec::Cpu | Sec::Nic | Sec::SourceLine | Sec::Copy => e.count == 0 || e.count == n,
            Sec::Slot => (e.count == 0 && h.slots == 0) || (e.count == n && h.slots <= n && (h.slots > 0 || n == 0)),
            Sec::SourcePath => e.count <= 1 << 16,
            Sec::Colls => true,
            _ => e.count == n,
        };
        let end = e.count.checked_mul(sec.elem_size() as u64).and_then(|len| e.offset.checked_add(len));
        if !ok_count || e.offset & (ALIGN as u64 - 1) != 0 || end.is_none_or(|end| end > b.len() as u64) {
            return Err(format!("corrupted .lgraph file (section {}: {} elements at offset {})", sec.name(), e.count, e.offset));
        }
    }
    padding(b, &table)?;
    Ok((h, table))
}

/// Sections do not overlap, and the bytes between them (alignment) are zero, so that every
/// byte of the file is covered by a checksum or known.
fn padding(b: &[u8], table: &[Entry]) -> std::result::Result<(), String> {
    let mut spans: Vec<(usize, usize)> = table.iter().map(|e| (e.offset as usize, e.offset as usize + e.count as usize * e.sec.elem_size())).collect();
    spans.sort_unstable();
    let mut at = HEADER_LEN + ENTRY_LEN * table.len();
    for (start, end) in spans.into_iter().chain([(b.len(), b.len())]) {
        if start < at || start - at >= ALIGN || b[at..start].iter().any(|&x| x != 0) {
            return Err(format!("corrupted .lgraph file (bytes {at}..{start} between sections)"));
        }
        at = end;
    }
    Ok(())
}

fn bytes<'a>(b: &'a [u8], e: &Entry) -> &'a [u8] {
    &b[e.offset as usize..e.offset as usize + e.count as usize * e.sec.elem_size()]
}

fn load(map: Mmap, h: &Header, table: &[Entry]) -> std::result::Result<ExecGraph, String> {
    verify_checksums(&map, table)?;
    let map = Arc::new(map);
    let entry = |sec: Sec| *table.iter().find(|e| e.sec == sec).expect("every section is present (layout_of)");
    let source = {
        let e = entry(Sec::SourcePath);
        let path = std::str::from_utf8(bytes(&map, &e)).map_err(|_| "corrupted .lgraph file (source path is not UTF-8)".to_string())?;
        (!path.is_empty()).then(|| path.to_string())
    };
    // SAFETY (all `arr` calls): layout_of checked that each section lies inside the mapping at
    // a 64-byte aligned offset with the right element count; u8/u32/u64 accept every bit
    // pattern, and kind bytes are checked before the kind array is viewed as `Kind`.
    let arr = |sec: Sec| -> std::result::Result<Arr<u32>, String> { plain(&map, &entry(sec)) };
    let kind_bytes: Arr<u8> = plain(&map, &entry(Sec::Kind))?;
    check::kinds(&kind_bytes)?;
    let kind: Arr<Kind> = unsafe { Arr::mapped(&map, entry(Sec::Kind).offset as usize, h.vertices as usize) };
    let line = arr(Sec::SourceLine)?;
    let g = ExecGraph {
        num_ranks: h.ranks,
        kind,
        rank: arr(Sec::Rank)?,
        local: arr(Sec::Local)?,
        val: plain(&map, &entry(Sec::Val))?,
        peer: arr(Sec::Peer)?,
        tag: arr(Sec::Tag)?,
        cpu: plain(&map, &entry(Sec::Cpu))?,
        nic: plain(&map, &entry(Sec::Nic))?,
        copy: plain(&map, &entry(Sec::Copy))?,
        pred_off: arr(Sec::PredOff)?,
        pred: arr(Sec::Pred)?,
        partner: arr(Sec::Partner)?,
        order: h.order,
        wildcards: h.wildcards,
        source: source.filter(|_| line.len() == h.vertices as usize).map(|path| SourceMap { path, line }),
        colls: CollCalls::from_bytes(bytes(&map, &entry(Sec::Colls)), h.vertices as usize)?,
        slots: Some((arr(Sec::Slot)?, h.slots as usize)).filter(|(s, _)| s.len() == h.vertices as usize && h.vertices > 0),
    };
    check::graph(&g)?;
    Ok(g)
}

/// A section viewed in place (little-endian machines) or decoded into a Vec.
fn plain<T: crate::graph::Plain + FromLe>(map: &Arc<Mmap>, e: &Entry) -> std::result::Result<Arr<T>, String> {
    let (off, n) = (e.offset as usize, e.count as usize);
    let aligned = (map.as_ptr().wrapping_add(off) as *const T).is_aligned();
    if cfg!(target_endian = "little") && aligned {
        // SAFETY: see load().
        Ok(unsafe { Arr::mapped(map, off, n) })
    } else {
        let size = std::mem::size_of::<T>();
        Ok(Arr::from(bytes(map, e).chunks_exact(size).map(T::from_le).collect::<Vec<T>>()))
    }
}

pub(crate) trait FromLe: Sized {
    fn from_le(b: &[u8]) -> Self;
}
impl FromLe for u8 {
    fn from_le(b: &[u8]) -> u8 {
        b[0]
    }
}
impl FromLe for u16 {
    fn from_le(b: &[u8]) -> u16 {
        u16::from_le_bytes(b.try_into().expect("2 bytes"))
    }
}
impl FromLe for u32 {
    fn from_le(b: &[u8]) -> u32 {
        u32::from_le_bytes(b.try_into().expect("4 bytes"))
    }
}
impl FromLe for u64 {
    fn from_le(b: &[u8]) -> u64 {
        u64::from_le_bytes(b.try_into().expect("8 bytes"))
    }
}

/// Every section's XXH3-64, the sections split between two threads by size.
fn verify_checksums(b: &[u8], table: &[Entry]) -> std::result::Result<(), String> {
    let mut order: Vec<&Entry> = table.iter().collect();
    order.sort_by_key(|e| std::cmp::Reverse(e.count * e.sec.elem_size() as u64));
    // Greedy: each section to the lighter of the two threads.
    let (mut a, mut b_) = (Vec::new(), Vec::new());
    let (mut wa, mut wb) = (0u64, 0u64);
    for e in order {
        let w = e.count * e.sec.elem_size() as u64;
        if wa <= wb {
            a.push(e);
            wa += w;
        } else {
            b_.push(e);
            wb += w;
        }
    }
    let check = |es: &[&Entry]| -> std::result::Result<(), String> {
        for e in es {
            if xxhash_rust::xxh3::xxh3_64(bytes(b, e)) != e.checksum {
                return Err(format!("corrupted .lgraph file (checksum mismatch in section {})", e.sec.name()));
            }
        }
        Ok(())
    };
    let (mine, other) = crate::parallel::join(b.len() > 1 << 22, || check(&a), || check(&b_));
    mine.and(other)
}
