//! GOAL reader: the dialect of LogGOPSim's `txt2bin` (docs/reference/goal.md §1–2), in parallel.
//!
//! The file is cut into parts at rank-block starts (a line `rank N {`), and each part is
//! parsed on its own thread into its own [`GraphBuilder`] — labels are scoped to a rank
//! block, so a part needs nothing from the others but `num_ranks`, read first. The parts are
//! concatenated in file order (ids, dependencies and source lines shifted), which gives
//! exactly the builder a single pass would have built. Each thread streams its byte range
//! through a fixed buffer with positioned reads (never the whole file in memory, no copy
//! per line: lines are found with `memchr` and parsed in place). Whenever anything is off
//! (an error in any part, a part ending inside a block or a comment, a rank in two parts)
//! the file is parsed again in one pass, so errors are exactly those of a sequential read:
//! the first problem in file order, with its line.
//!
//! Deviations from txt2bin, all of which reject input txt2bin would mis-handle: numbers
//! that overflow their field are errors instead of being truncated (except tags wider than
//! 32 bits, which get exact ids of their own: `wide_tags`), `num_ranks` must precede the
//! first op, rank blocks may come in any order but each exactly once, a label defined twice
//! in a rank block is an error (txt2bin keeps the first and leaves the second operation
//! unconnected, which silently changes the graph), lines are at most [`MAX_LINE`] bytes and
//! contain no NUL byte (binary data, `/dev/zero`), and the error names the line and what
//! was expected.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

use super::wide_tags::WideTags;
use crate::error::{Error, Result};
use crate::text::{shown, size_text};

use crate::graph::{Dep, ExecGraph, GraphBuilder, Kind, Op, ANY, NONE};

/// Longest line accepted: GOAL statements are short; anything longer is not GOAL text.
pub const MAX_LINE: usize = 1 << 20;
/// Bytes per positioned read (more than a line, so a line always fits).
const BLOCK: usize = 4 << 20;
/// Files smaller than this are parsed in one pass (threads would not pay off).
const PARALLEL_MIN: u64 = 8 << 20;

/// Read a GOAL file.
pub fn read_goal(path: &str) -> Result<ExecGraph> {
    read_goal_progress(path, &mut |_, _| {})
}

/// Read a GOAL file, reporting (bytes read, total bytes) now and then.
pub fn read_goal_progress(path: &str, progress: &mut dyn FnMut(u64, u64)) -> Result<ExecGraph> {
    let f = File::open(path).map_err(|e| Error::io(path, &e))?;
    if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(Error::in_file(path, "is a directory, expected a GOAL file"));
    }
    let total = f.metadata().map(|m| m.len()).unwrap_or(0);
    parse(&FileBytes(f, total), path, progress, PARALLEL_MIN)?.finish()
}

/// Read GOAL text from any reader (streamed, one pass); `name` is used in error messages.
pub fn read_goal_from<R: Read>(mut r: R, name: &str) -> Result<ExecGraph> {
    let mut p = Parser::new(name);
    stream(&mut |buf, _| r.read(buf), 0, u64::MAX, &mut p, &AtomicU64::new(0), &mut |_| {})?;
    p.finish()?.finish()
}

/// Random access to the text (a file by positioned reads, or bytes in memory).
trait Text: Sync {
    fn len(&self) -> u64;
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize>;
}

struct FileBytes(File, u64);

impl Text for FileBytes {
    fn len(&self) -> u64 {
        self.1
    }
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(&self.0, buf, at)
    }
}

impl Text for &[u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        let rest = self.get(at as usize..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}

/// The builder of the whole text: in parallel parts when that is safe and the text has at
/// least `parallel_min` bytes, else one pass.
fn parse(text: &dyn Text, name: &str, progress: &mut dyn FnMut(u64, u64), parallel_min: u64) -> Result<GraphBuilder> {
    let total = text.len();
    let done = AtomicU64::new(0);
    let parallel = if total >= parallel_min { parse_parts(text, name, &done, progress) } else { None };
    if let Some(b) = parallel {
        progress(total, total);
        return Ok(b);
    }
    done.store(0, Ordering::Relaxed);
    let mut p = Parser::new(name);
    let mut report = |n: u64| progress(n, total);
    stream(&mut |buf, at| text.read_at(buf, at), 0, total, &mut p, &done, &mut report)?;
    progress(total, total);
    p.finish()
}

/// Parse in parts on all cores; None if the text must be read in one pass (small, no
/// usable block boundaries, or any problem: the one-pass read then reports it).
fn parse_parts(text: &dyn Text, name: &str, done: &AtomicU64, progress: &mut dyn FnMut(u64, u64)) -> Option<GraphBuilder> {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let total = text.len();
    if threads < 2 {
        return None;
    }
    let num_ranks = header(text, name)?;
    let cuts = cuts(text, 4 * threads);
    if cuts.len() < 3 {
        return None;
    }
    let parts: Vec<(u64, u64)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    let next = AtomicU64::new(0);
    let results: Vec<std::sync::Mutex<Option<Option<Parser>>>> = parts.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(&(from, to)) = parts.get(k) else { break };
                let mut p = Parser::new(name);
                if k > 0 {
                    p.builder = Some(GraphBuilder::new(num_ranks).with_source(name));
                    p.seen = vec![false; num_ranks as usize];
                }
                let ok = stream(&mut |buf, at| text.read_at(buf, at), from, to, &mut p, done, &mut |_| {}).is_ok()
                    && !p.in_comment
                    && p.rank.is_none()
                    && p.builder.is_some();
                *results[k].lock().expect("no thread panics holding it") = Some(ok.then_some(p));
            });
        }
        while next.load(Ordering::Relaxed) < parts.len() as u64 {
            progress(done.load(Ordering::Relaxed), total);
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    let parsers: Vec<Parser> = results.into_iter().map(|m| m.into_inner().ok().flatten().flatten()).collect::<Option<_>>()?;
    merge(parsers)
}

/// Concatenate the parts' builders (None if a rank has blocks in two parts, or a rank is
/// missing: the one-pass read reports which).
fn merge(parsers: Vec<Parser>) -> Option<GraphBuilder> {
    let p = parsers[0].seen.len();
    let mut seen = vec![false; p];
    let mut lines = 0u64;
    let mut parts = Vec::with_capacity(parsers.len());
    for mut q in parsers {
        for (s, &t) in seen.iter_mut().zip(&q.seen) {
            if *s && t {
                return None;
            }
            *s |= t;
        }
        parts.push((q.builder.take()?, u32::try_from(lines).ok()?));
        lines += q.line;
    }
    if seen.iter().any(|&s| !s) || lines > u32::MAX as u64 {
        return None;
    }
    GraphBuilder::concat(parts).ok()
}

/// `num_ranks`, read by a parser from the start of the text (None if it is not there
/// before the first rank block).
fn header(text: &dyn Text, name: &str) -> Option<u32> {
    let mut buf = vec![0u8; 1 << 16];
    let n = text.read_at(&mut buf, 0).ok()?;
    let mut p = Parser::new(name);
    for line in buf[..n].split(|&c| c == b'\n') {
        p.line += 1;
        p.statement_line(trim_eol(line)).ok()?;
        if let Some(b) = &p.builder {
            return Some(b.num_ranks());
        }
    }
    None
}

/// Part boundaries: 0, then the start of the first `rank` line after each of `parts`
/// evenly spaced positions, then the end.
fn cuts(text: &dyn Text, parts: usize) -> Vec<u64> {
    let total = text.len();
    let mut out = vec![0u64];
    let mut buf = vec![0u8; 1 << 20];
    for k in 1..parts as u64 {
        let at = (total * k / parts as u64).max(*out.last().expect("non-empty"));
        let Ok(n) = text.read_at(&mut buf, at) else { continue };
        if let Some(i) = memchr::memmem::find(&buf[..n], b"\nrank ") {
            let cut = at + i as u64 + 1;
            if cut > *out.last().expect("non-empty") {
                out.push(cut);
            }
        }
    }
    out.push(total);
    out
}

fn trim_eol(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r'] = line {
        line = rest;
    }
    line
}

/// Feed the lines of bytes `from..to` to `p`, reading through a fixed buffer with `read`
/// (positioned reads of the file, or the next bytes of a stream).
fn stream(
    read: &mut dyn FnMut(&mut [u8], u64) -> std::io::Result<usize>,
    from: u64,
    to: u64,
    p: &mut Parser,
    done: &AtomicU64,
    report: &mut dyn FnMut(u64),
) -> Result<()> {
    let mut buf = vec![0u8; BLOCK];
    let (mut at, mut have) = (from, 0usize);
    let mut next_report = 16u64 << 20;
    loop {
        let want = (buf.len() - have).min((to - at).try_into().unwrap_or(usize::MAX));
        let n = if want == 0 { 0 } else { read_retrying(read, &mut buf[have..have + want], at).map_err(|e| Error::io(&p.name, &e))? };
        at += n as u64;
        have += n;
        let eof = n == 0;
        let nul = memchr::memchr(0, &buf[..have]).unwrap_or(usize::MAX);
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &buf[..have]) {
            line(p, &buf[start..nl], nul.wrapping_sub(start) < nl - start)?;
            start = nl + 1;
        }
        let rest = have - start;
        if rest >= MAX_LINE || (eof && rest > 0) {
            // The last line (no newline), or one that cannot end within the limit.
            let end = start + rest.min(MAX_LINE);
            line(p, &buf[start..end], nul.wrapping_sub(start) < end - start)?;
        }
        if eof {
            return Ok(());
        }
        if start > 0 {
            let total = done.fetch_add(start as u64, Ordering::Relaxed) + start as u64;
            if total >= next_report {
                report(total);
                next_report = total + (16 << 20);
            }
        }
        buf.copy_within(start..have, 0);
        have = rest;
    }
}

/// One line (without its newline) to `p`, checked first: no NUL byte, not too long.
fn line(p: &mut Parser, text: &[u8], has_nul: bool) -> Result<()> {
    p.line += 1;
    if has_nul {
        return Err(p.err("a NUL byte: binary data, expected GOAL text"));
    }
    if text.len() >= MAX_LINE {
        return Err(p.err(format!("line longer than {} (not GOAL text?)", size_text(MAX_LINE))));
    }
    p.statement_line(trim_eol(text))
}

fn read_retrying(read: &mut dyn FnMut(&mut [u8], u64) -> std::io::Result<usize>, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    loop {
        match read(buf, at) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Labels of the current rank block: `l<n>` in a vector, anything else in a map.
#[derive(Default)]
struct Labels {
    num: Vec<u32>,
    other: HashMap<Vec<u8>, u32>,
}

impl Labels {
    fn fast_key(label: &[u8]) -> Option<usize> {
        match label {
            [b'l', b'1'..=b'9', rest @ ..] if rest.len() < 9 && rest.iter().all(u8::is_ascii_digit) => {
                Some(label[1..].iter().fold(0usize, |n, &d| n * 10 + (d - b'0') as usize))
            }
            _ => None,
        }
    }
    /// Define `label` as op `id`; the op of an earlier definition if there is one (kept).
    fn define(&mut self, label: &[u8], id: u32, ops_in_block: usize) -> Option<u32> {
        match Self::fast_key(label) {
            Some(k) if k <= 4 * ops_in_block + 4096 => {
                if k >= self.num.len() {
                    self.num.resize(k + 1, NONE);
                }
                if self.num[k] != NONE {
                    return Some(self.num[k]);
                }
                self.num[k] = id;
                None
            }
            _ => {
                if let Some(&first) = self.other.get(label) {
                    return Some(first);
                }
                self.other.insert(label.to_vec(), id);
                None
            }
        }
    }
    fn get(&self, label: &[u8]) -> Option<u32> {
        if let Some(k) = Self::fast_key(label) {
            if let Some(&id) = self.num.get(k) {
                if id != NONE {
                    return Some(id);
                }
            }
        }
        self.other.get(label).copied()
    }
    fn clear(&mut self) {
        self.num.clear();
        self.other.clear();
    }
}

struct Parser {
    name: String,
    line: u64,
    builder: Option<GraphBuilder>,
    rank: Option<u32>,
    block_line: u64,
    seen: Vec<bool>,
    labels: Labels,
    ops_in_block: usize,
    in_comment: bool,
    comment_line: u64,
    wide_tags: WideTags,
}

/// A cursor over one line.
struct Cur<'a> {
    s: &'a [u8],
    i: usize,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic()
}
fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'a> Cur<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && (self.s[self.i] == b' ' || self.s[self.i] == b'\t') {
            self.i += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }
    fn starts(&self, t: &[u8]) -> bool {
        self.s[self.i..].starts_with(t)
    }
    fn ident(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        if !self.peek().is_some_and(is_ident_start) {
            return None;
        }
        while self.peek().is_some_and(is_ident) {
            self.i += 1;
        }
        Some(&self.s[start..self.i])
    }
    /// The next token, for "found ..." in errors.
    fn found(&self) -> String {
        let rest = &self.s[self.i.min(self.s.len())..];
        if rest.is_empty() {
            return "end of line".to_string();
        }
        let end = rest.iter().position(|&c| c == b' ' || c == b'\t').unwrap_or(rest.len()).min(24);
        format!("'{}'", shown(&rest[..end]))
    }
}

impl Parser {
    fn new(name: &str) -> Self {
        Parser {
            name: name.to_string(),
            line: 0,
            builder: None,
            rank: None,
            block_line: 0,
            seen: Vec::new(),
            labels: Labels::default(),
            ops_in_block: 0,
            in_comment: false,
            comment_line: 0,
            wide_tags: WideTags::default(),
        }
    }

    fn err(&self, msg: impl Into<String>) -> Error {
        Error::at(&self.name, self.line, msg)
    }

    /// Parse the statements of one line.
    fn statement_line(&mut self, s: &[u8]) -> Result<()> {
        let mut c = Cur { s, i: 0 };
        loop {
            if self.in_comment {
                match s[c.i..].windows(2).position(|w| w == b"*/") {
                    None => return Ok(()),
                    Some(k) => {
                        c.i += k + 2;
                        self.in_comment = false;
                    }
                }
            }
            c.ws();
            if c.at_end() || c.starts(b"//") {
                return Ok(());
            }
            if c.starts(b"/*") {
                self.in_comment = true;
                self.comment_line = self.line;
                c.i += 2;
                continue;
            }
            if c.peek() == Some(b'}') {
                c.i += 1;
                self.close_block()?;
                continue;
            }
            let Some(word) = c.ident() else {
                return Err(self.err(format!("expected a statement (num_ranks, rank N {{, }}, an operation or a dependency), found {}", c.found())));
            };
            match word {
                b"num_ranks" => self.num_ranks(&mut c)?,
                b"rank" => self.open_block(&mut c)?,
                b"send" | b"recv" | b"calc" => {
                    c.i -= word.len();
                    return self.operation(&mut c, None);
                }
                label => {
                    c.ws();
                    if c.peek() == Some(b':') {
                        c.i += 1;
                        c.ws();
                        return self.operation(&mut c, Some(label));
                    }
                    return self.dependency(&mut c, label);
                }
            }
        }
    }

    fn int(&self, c: &mut Cur, what: &str) -> Result<u64> {
        c.ws();
        let start = c.i;
        let mut v: u64 = 0;
        while let Some(d) = c.peek().filter(u8::is_ascii_digit) {
            v = v.checked_mul(10).and_then(|v| v.checked_add((d - b'0') as u64)).ok_or_else(|| self.err(format!("{what} is too large")))?;
            c.i += 1;
        }
        if c.i == start {
            let sign = if c.peek() == Some(b'-') { " (negative numbers other than -1 for a wildcard source/tag are not allowed)" } else { "" };
            return Err(self.err(format!("expected {what} (a non-negative integer), found {}{sign}", c.found())));
        }
        if c.peek().is_some_and(is_ident) && what != "message size" {
            return Err(self.err(format!("expected {what} (an integer), found {}", c.found())));
        }
        Ok(v)
    }

    /// An integer or `-1` (wildcard) fitting in 32 bits.
    fn int32(&self, c: &mut Cur, what: &str, wildcard: bool) -> Result<u32> {
        c.ws();
        if c.starts(b"-1") && !c.s.get(c.i + 2).is_some_and(|&d| d.is_ascii_digit()) {
            if !wildcard {
                return Err(self.err(format!("{what} cannot be -1 (a wildcard is only allowed for a recv's source and tags)")));
            }
            c.i += 2;
            return Ok(ANY);
        }
        let v = self.int(c, what)?;
        u32::try_from(v).map_err(|_| self.err(format!("{what} {v} does not fit in 32 bits")))
    }

    /// A tag: `-1` (any), or an integer; tags wider than 32 bits get ids of their own.
    fn tag(&mut self, c: &mut Cur) -> Result<u32> {
        c.ws();
        if c.starts(b"-1") {
            return self.int32(c, "tag", true);
        }
        let t = self.int(c, "tag")?;
        self.wide_tags.id(t).map_err(|m| self.err(m))
    }

    /// `kw` must come next, before the `what` it introduces.
    fn keyword(&self, c: &mut Cur, kw: &[u8], what: &str) -> Result<()> {
        c.ws();
        let save = c.i;
        match c.ident() {
            Some(w) if w == kw => Ok(()),
            _ => {
                c.i = save;
                Err(self.err(format!("expected '{}' before the {what}, found {}", shown(kw), c.found())))
            }
        }
    }

    /// The rest of the line must be empty; `after` names what came before (for the error).
    fn end_of_statement(&self, c: &mut Cur, after: impl Fn() -> String) -> Result<()> {
        c.ws();
        if c.at_end() {
            return Ok(());
        }
        if c.starts(b"//") || c.starts(b"/*") {
            return Err(self.err(format!("comment after {}: comments must start their own line (LogGOPSim rejects this)", after())));
        }
        Err(self.err(format!("unexpected {} after {}", c.found(), after())))
    }

    fn num_ranks(&mut self, c: &mut Cur) -> Result<()> {
        let n = self.int(c, "the number of ranks")?;
        if n == 0 || n > (1 << 24) {
            return Err(self.err(format!("num_ranks must be between 1 and 16777216, got {n}")));
        }
        if self.builder.is_some() {
            return Err(self.err("num_ranks given twice"));
        }
        let n = n as u32;
        self.builder = Some(GraphBuilder::new(n).with_source(&self.name));
        self.seen = vec![false; n as usize];
        Ok(())
    }

    fn open_block(&mut self, c: &mut Cur) -> Result<()> {
        let r = self.int(c, "a rank number")?;
        c.ws();
        if c.peek() != Some(b'{') {
            return Err(self.err(format!("expected '{{' after 'rank {r}' on the same line, found {}", c.found())));
        }
        c.i += 1;
        if let Some(open) = self.rank {
            return Err(self.err(format!("rank {r} block opened inside the block of rank {open} (missing '}}')")));
        }
        let Some(b) = &self.builder else {
            return Err(self.err("expected 'num_ranks N' before the first rank block"));
        };
        if r >= b.num_ranks() as u64 {
            return Err(self.err(format!("rank {r} out of range: num_ranks is {}", b.num_ranks())));
        }
        if self.seen[r as usize] {
            return Err(self.err(format!("rank {r} has a second block (each rank must appear once)")));
        }
        self.seen[r as usize] = true;
        self.rank = Some(r as u32);
        self.block_line = self.line;
        self.ops_in_block = 0;
        Ok(())
    }

    fn close_block(&mut self) -> Result<()> {
        if self.rank.take().is_none() {
            return Err(self.err("'}' without an open 'rank N {' block"));
        }
        self.labels.clear();
        Ok(())
    }

    fn operation(&mut self, c: &mut Cur, label: Option<&[u8]>) -> Result<()> {
        let Some(rank) = self.rank else {
            return Err(self.err("operation outside a rank block (expected 'rank N {' first)"));
        };
        let kind = match c.ident() {
            Some(b"send") => Kind::Send,
            Some(b"recv") => Kind::Recv,
            Some(b"calc") => Kind::Calc,
            _ => return Err(self.err(format!("expected send, recv or calc, found {}", c.found()))),
        };
        let op = match kind {
            Kind::Calc => {
                let ns = self.int(c, "calc duration")?;
                let mut op = Op::calc(ns);
                if self.option(c, b"cpu")? {
                    op.cpu = self.small(c, "cpu index")?;
                }
                op
            }
            _ => {
                let size = self.int(c, "message size")?;
                c.ws();
                if c.peek() != Some(b'b') || c.s.get(c.i + 1).is_some_and(|&x| is_ident(x)) {
                    return Err(self.err(format!(
                        "expected 'b' after the message size (e.g. '{} 8b {} 1'), found {}",
                        kind.name(),
                        if kind == Kind::Send { "to" } else { "from" },
                        c.found()
                    )));
                }
                c.i += 1;
                let (kw, what) = if kind == Kind::Send { (&b"to"[..], "destination rank") } else { (&b"from"[..], "source rank") };
                self.keyword(c, kw, what)?;
                let peer = self.int32(c, what, kind == Kind::Recv)?;
                let mut op = if kind == Kind::Send { Op::send(size, peer, 0) } else { Op::recv(size, peer, 0) };
                if self.option(c, b"tag")? {
                    op.tag = self.tag(c)?;
                }
                if self.option(c, b"cpu")? {
                    op.cpu = self.small(c, "cpu index")?;
                }
                if self.option(c, b"nic")? {
                    op.nic = self.small(c, "nic index")?;
                }
                op
            }
        };
        self.end_of_statement(c, || format!("a {} operation (only tag, cpu, nic may follow, in that order)", kind.name()))?;
        let line = self.line as u32;
        let b = self.builder.as_mut().expect("rank block implies num_ranks");
        let id = b.add_at(rank, op, line).map_err(|m| Error::at(&self.name, self.line, m))?;
        self.ops_in_block += 1;
        if let Some(label) = label {
            if let Some(first) = self.labels.define(label, id, self.ops_in_block) {
                let b = self.builder.as_ref().expect("rank block implies num_ranks");
                let at = b.line_of(first).map(|l| format!(" on line {l}")).unwrap_or_default();
                return Err(self.err(format!(
                    "label '{}' is defined twice in the block of rank {rank} (first{at}); labels must be unique within a rank block",
                    shown(label)
                )));
            }
        }
        Ok(())
    }

    /// Consume `kw` if it is the next word.
    fn option(&self, c: &mut Cur, kw: &[u8]) -> Result<bool> {
        c.ws();
        let save = c.i;
        match c.ident() {
            Some(w) if w == kw => Ok(true),
            _ => {
                c.i = save;
                Ok(false)
            }
        }
    }

    fn small(&self, c: &mut Cur, what: &str) -> Result<u8> {
        let v = self.int(c, what)?;
        u8::try_from(v).map_err(|_| self.err(format!("{what} {v} is out of range (0..255)")))
    }

    fn dependency(&mut self, c: &mut Cur, a: &[u8]) -> Result<()> {
        let dep = match c.ident() {
            Some(b"requires") => Dep::Requires,
            Some(b"irequires") => Dep::Irequires,
            _ => return Err(self.err(format!("expected ':' (label of an operation) or 'requires'/'irequires' after '{}', found {}", shown(a), c.found()))),
        };
        c.ws();
        let Some(b) = c.ident() else {
            return Err(self.err(format!("expected a label after '{}', found {}", if dep == Dep::Requires { "requires" } else { "irequires" }, c.found())));
        };
        self.end_of_statement(c, || "a dependency".to_string())?;
        if self.rank.is_none() {
            return Err(self.err("dependency outside a rank block"));
        }
        let lookup = |l: &[u8]| {
            self.labels.get(l).ok_or_else(|| self.err(format!("unknown label '{}' (labels must be defined earlier in the same rank block)", shown(l))))
        };
        let (ia, ib) = (lookup(a)?, lookup(b)?);
        if ia == ib {
            return Err(self.err(format!("'{}' depends on itself", shown(a))));
        }
        let builder = self.builder.as_mut().expect("rank block implies num_ranks");
        builder.dep(ia, ib, dep).map_err(|m| Error::at(&self.name, self.line, m))
    }

    /// The builder of a complete text (the end-of-file checks done).
    fn finish(mut self) -> Result<GraphBuilder> {
        if self.in_comment {
            return Err(Error::at(&self.name, self.comment_line, "unterminated block comment (missing '*/')"));
        }
        if let Some(r) = self.rank {
            return Err(Error::at(&self.name, self.block_line, format!("block of rank {r} is not closed (missing '}}')")));
        }
        let Some(b) = self.builder.take() else {
            return Err(Error::in_file(&self.name, "expected 'num_ranks N' (no GOAL header found; is this a GOAL file?)"));
        };
        if let Some(missing) = self.seen.iter().position(|&s| !s) {
            let have = self.seen.iter().filter(|&&s| s).count();
            return Err(Error::in_file(
                &self.name,
                format!("wrong rank count: num_ranks is {} but the file has blocks for {have} ranks (rank {missing} is missing)", self.seen.len()),
            ));
        }
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, PARALLEL_MIN};
    use crate::gen::random::{random_graph, RandomSpec};
    use crate::goal::write_goal_to;

    fn text() -> String {
        let g = random_graph(&RandomSpec { ranks: 24, rounds: 400, seed: 3, ..Default::default() }).unwrap();
        let mut t = Vec::new();
        write_goal_to(&g, &mut t).unwrap();
        String::from_utf8(t).unwrap()
    }

    /// Parsed in parts (threshold 0) and in one pass: the same graph, or the same error.
    fn same(text: &str) -> Result<(), String> {
        let run = |min| parse(&text.as_bytes(), "t.goal", &mut |_, _| {}, min).and_then(|b| b.finish());
        match (run(0), run(u64::MAX)) {
            (Ok(a), Ok(b)) => {
                let fp = |g: &crate::graph::ExecGraph| {
                    (0..g.len() as u32)
                        .map(|v| (g.kind(v), g.rank(v), g.local(v), g.val(v), g.peer(v), g.tag(v), g.preds_raw(v).to_vec(), g.location(v)))
                        .collect::<Vec<_>>()
                };
                assert!(fp(&a) == fp(&b), "parts and one pass built different graphs");
                Ok(())
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, b);
                Err(a.to_string())
            }
            (a, b) => panic!("parts: {:?}, one pass: {:?}", a.map(|_| ()), b.map(|_| ())),
        }
    }

    #[test]
    fn parts_build_the_graph_of_one_pass() {
        let t = text();
        assert!(t.len() > 1 << 20 && (t.len() as u64) < PARALLEL_MIN);
        same(&t).unwrap();
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let parts = super::parse_parts(&t.as_bytes(), "t.goal", &std::sync::atomic::AtomicU64::new(0), &mut |_, _| {});
        assert_eq!(parts.is_some(), cores > 1, "a valid text is read in parts on a multi-core machine");
        // A comment at the top, CRLF line ends, no newline at the end.
        same(&format!("// header\n{}", t.replace('\n', "\r\n").trim_end())).unwrap();
    }

    #[test]
    fn errors_anywhere_are_those_of_one_pass() {
        let t = text();
        let lines: Vec<&str> = t.lines().collect();
        let with = |at: usize, extra: &str| {
            let mut l = lines.clone();
            l.insert(at, extra);
            l.join("\n")
        };
        let mid = lines.len() * 5 / 8;
        let block = |r: usize| {
            let start = lines.iter().position(|l| *l == format!("rank {r} {{")).unwrap();
            let len = lines[start..].iter().position(|l| *l == "}").unwrap() + 1;
            (start, len)
        };
        let (b3, n3) = block(3);
        let dup = format!("{}\n{}", t, lines[b3..b3 + n3].join("\n"));
        let mut missing = lines.clone();
        missing.drain(b3..b3 + n3);
        let cases = [
            with(mid, "garbage here"),
            with(mid, "/* an open comment"),
            with(lines.len() - 3, "l1: calc 5 6"),
            with(block(20).0, "rank 20 {"),
            dup,
            missing.join("\n"),
            t.replacen("num_ranks 24", "num_ranks 23", 1),
            t.replace("l2: send", "l2: sendx"),
            with(mid, "l999: calc\0 5"),
            with(mid, &"x".repeat(super::MAX_LINE + 10)),
            with(mid + 2, "l1: calc 5"),
        ];
        // A block that looks like a rank block inside a comment is no error (but a cut there
        // ends a part inside the comment: the one-pass read decides).
        same(&with(mid, "/*\nrank 5 {\n*/")).unwrap();
        for (i, c) in cases.iter().enumerate() {
            let e = same(c).expect_err("a broken text was accepted");
            assert!(e.starts_with("t.goal"), "case {i}: {e}");
        }
    }
}
