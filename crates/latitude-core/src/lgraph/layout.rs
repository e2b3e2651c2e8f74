//! The byte layout of an `.lgraph` file: header, section table, section ids.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "\x89LGRAPH\n"
//!      8     4  format version (3)
//!     12     4  header size (128)
//!     16     8  vertices n
//!     24     8  edges e (predecessor entries)
//!     32     4  ranks
//!     36     1  order: 0 any protocol, 1 eager
//!     37     3  zero
//!     40     8  wildcard receives
//!     48     4  sections k
//!     52     4  zero
//!     56     8  file length in bytes
//!     64     8  cache key (0: none)
//!     72     8  engine value slots (0 when the slot section is empty)
//!     80    40  zero
//!    120     8  XXH3-64 of bytes 0..120 and the section table
//!    128  32·k  section table: id u32, element size u32, offset u64, count u64, XXH3-64 u64
//! ```
//! Sections start at multiples of 64 bytes, in the order of the table.

use crate::graph::OrderKind;

pub const MAGIC: [u8; 8] = *b"\x89LGRAPH\n";
/// 2: the collective calls (section `colls`) and the engine's value slots (section `slot`,
/// header field `slots`) are stored. 3: the bytes each calc copies (section `copy`).
pub const VERSION: u32 = 3;
pub const HEADER_LEN: usize = 128;
pub const ENTRY_LEN: usize = 32;
pub const ALIGN: usize = 64;
const CHECKSUM_AT: usize = 120;

/// Sections: id, name (for errors), element size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Sec {
    Kind = 1,
    Rank,
    Local,
    Val,
    Peer,
    Tag,
    Cpu,
    Nic,
    PredOff,
    Pred,
    Partner,
    SourcePath,
    SourceLine,
    /// The collective calls (graph/colls.rs), bytes.
    Colls,
    Slot,
    /// Bytes each calc copies (empty when no op copies).
    Copy,
}

pub const SECTIONS: [Sec; 16] = [
    Sec::Kind,
    Sec::Rank,
    Sec::Local,
    Sec::Val,
    Sec::Peer,
    Sec::Tag,
    Sec::Cpu,
    Sec::Nic,
    Sec::PredOff,
    Sec::Pred,
    Sec::Partner,
    Sec::SourcePath,
    Sec::SourceLine,
    Sec::Colls,
    Sec::Slot,
    Sec::Copy,
];

impl Sec {
    pub fn name(self) -> &'static str {
        match self {
            Sec::Kind => "kind",
            Sec::Rank => "rank",
            Sec::Local => "local",
            Sec::Val => "val",
            Sec::Peer => "peer",
            Sec::Tag => "tag",
            Sec::Cpu => "cpu",
            Sec::Nic => "nic",
            Sec::PredOff => "pred_off",
            Sec::Pred => "pred",
            Sec::Partner => "partner",
            Sec::SourcePath => "source_path",
            Sec::SourceLine => "source_line",
            Sec::Colls => "colls",
            Sec::Slot => "slot",
            Sec::Copy => "copy",
        }
    }
    pub fn elem_size(self) -> usize {
        match self {
            Sec::Kind | Sec::SourcePath | Sec::Colls => 1,
            Sec::Cpu | Sec::Nic => 2,
            Sec::Val | Sec::Copy => 8,
            _ => 4,
        }
    }
    pub fn from_id(id: u32) -> Option<Sec> {
        SECTIONS.iter().copied().find(|&s| s as u32 == id)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u32,
    pub vertices: u64,
    pub edges: u64,
    pub ranks: u32,
    pub order: OrderKind,
    pub wildcards: u64,
    pub sections: u32,
    pub file_len: u64,
    pub key: u64,
    pub slots: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub sec: Sec,
    pub offset: u64,
    pub count: u64,
    pub checksum: u64,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Header and table bytes, checksum included.
pub fn encode(h: &Header, table: &[Entry]) -> Vec<u8> {
    let mut b = vec![0u8; HEADER_LEN + ENTRY_LEN * table.len()];
    b[..8].copy_from_slice(&MAGIC);
    b[8..12].copy_from_slice(&h.version.to_le_bytes());
    b[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
    b[16..24].copy_from_slice(&h.vertices.to_le_bytes());
    b[24..32].copy_from_slice(&h.edges.to_le_bytes());
    b[32..36].copy_from_slice(&h.ranks.to_le_bytes());
    b[36] = match h.order {
        OrderKind::AnyProtocol => 0,
        OrderKind::Eager => 1,
    };
    b[40..48].copy_from_slice(&h.wildcards.to_le_bytes());
    b[48..52].copy_from_slice(&(table.len() as u32).to_le_bytes());
    b[56..64].copy_from_slice(&h.file_len.to_le_bytes());
    b[64..72].copy_from_slice(&h.key.to_le_bytes());
    b[72..80].copy_from_slice(&h.slots.to_le_bytes());
    for (i, e) in table.iter().enumerate() {
        let at = HEADER_LEN + ENTRY_LEN * i;
        b[at..at + 4].copy_from_slice(&(e.sec as u32).to_le_bytes());
        b[at + 4..at + 8].copy_from_slice(&(e.sec.elem_size() as u32).to_le_bytes());
        b[at + 8..at + 16].copy_from_slice(&e.offset.to_le_bytes());
        b[at + 16..at + 24].copy_from_slice(&e.count.to_le_bytes());
        b[at + 24..at + 32].copy_from_slice(&e.checksum.to_le_bytes());
    }
    let sum = header_checksum(&b);
    b[CHECKSUM_AT..CHECKSUM_AT + 8].copy_from_slice(&sum.to_le_bytes());
    b
}

fn header_checksum(b: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    h.update(&b[..CHECKSUM_AT]);
    h.update(&b[HEADER_LEN..]);
    h.digest()
}

/// The header alone (magic, version and lengths checked; not yet its checksum, which
/// covers the table that follows).
pub fn decode_header(b: &[u8]) -> Result<Header, String> {
    if b.len() < 8 || b[..8] != MAGIC {
        return Err("not an .lgraph file (bad magic bytes)".into());
    }
    if b.len() < HEADER_LEN {
        return Err(format!("truncated .lgraph file ({} bytes, the header alone is {HEADER_LEN})", b.len()));
    }
    let version = u32_at(b, 8);
    if version != VERSION {
        return Err(format!("written in .lgraph format version {version}; this Latitude reads version {VERSION} (convert the GOAL file again)"));
    }
    if u32_at(b, 12) as usize != HEADER_LEN {
        return Err(format!("corrupted .lgraph header (header size {}, expected {HEADER_LEN})", u32_at(b, 12)));
    }
    let order = match b[36] {
        0 => OrderKind::AnyProtocol,
        1 => OrderKind::Eager,
        x => return Err(format!("corrupted .lgraph header (order byte {x})")),
    };
    Ok(Header {
        version,
        vertices: u64_at(b, 16),
        edges: u64_at(b, 24),
        ranks: u32_at(b, 32),
        order,
        wildcards: u64_at(b, 40),
        sections: u32_at(b, 48),
        file_len: u64_at(b, 56),
        key: u64_at(b, 64),
        slots: u64_at(b, 72),
    })
}

/// The section table after the header (bounds of the table and the checksum checked).
pub fn decode_table(b: &[u8], h: &Header) -> Result<Vec<Entry>, String> {
    let k = h.sections as usize;
    if k > 64 {
        return Err(format!("corrupted .lgraph header ({k} sections)"));
    }
    let end = HEADER_LEN + ENTRY_LEN * k;
    if b.len() < end {
        return Err(format!("truncated .lgraph file ({} bytes, the section table ends at {end})", b.len()));
    }
    if header_checksum(&b[..end]) != u64_at(b, CHECKSUM_AT) {
        return Err("corrupted .lgraph file (header checksum mismatch)".into());
    }
    (0..k)
        .map(|i| {
            let at = HEADER_LEN + ENTRY_LEN * i;
            let id = u32_at(b, at);
            let sec = Sec::from_id(id).ok_or_else(|| format!("corrupted .lgraph file (unknown section id {id})"))?;
            if u32_at(b, at + 4) as usize != sec.elem_size() {
                return Err(format!("corrupted .lgraph file (section {} has element size {})", sec.name(), u32_at(b, at + 4)));
            }
            Ok(Entry { sec, offset: u64_at(b, at + 8), count: u64_at(b, at + 16), checksum: u64_at(b, at + 24) })
        })
        .collect()
}

/// The first multiple of `ALIGN` at or after `x`.
pub fn align_up(x: u64) -> u64 {
    x.div_ceil(ALIGN as u64) * ALIGN as u64
}
