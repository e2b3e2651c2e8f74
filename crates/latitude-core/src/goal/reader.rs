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

use std::fs::File;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

use super::parser::Parser;
use super::wide_tags::WideTags;
use crate::error::{Error, Result};
use crate::graph::{ExecGraph, GraphBuilder, ANY};
use crate::text::size_text;

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
    let threads = crate::parallel::threads();
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

/// Concatenate the parts' builders (None if a rank has blocks in two parts, a rank is
/// missing, or literal tags meet the ids of tags wider than 32 bits: the one-pass read
/// reports which). Each part numbered its wide tags on its own; they are renumbered into
/// the one file-wide table, as one pass would have numbered them.
fn merge(parsers: Vec<Parser>) -> Option<GraphBuilder> {
    let p = parsers[0].seen.len();
    let mut seen = vec![false; p];
    let mut lines = 0u64;
    let mut parts = Vec::with_capacity(parsers.len());
    let mut wide = WideTags::default();
    for mut q in parsers {
        for (s, &t) in seen.iter_mut().zip(&q.seen) {
            if *s && t {
                return None;
            }
            *s |= t;
        }
        let mut b = q.builder.take()?;
        let ids = q.wide_tags.fold_into(&mut wide);
        if !ids.is_empty() {
            // A part that passed its own check has no literal tag in its id range.
            let lowest = ANY - ids.len() as u32;
            b.map_tags(|t| if (lowest..ANY).contains(&t) { ids[(ANY - 1 - t) as usize] } else { t });
        }
        parts.push((b, u32::try_from(lines).ok()?));
        lines += q.line;
    }
    if seen.iter().any(|&s| !s) || lines > u32::MAX as u64 || wide.collides() {
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

#[cfg(test)]
mod tests {
    use super::{parse, PARALLEL_MIN};

    /// A GOAL text of 24 ranks, each with its ops and dependency lines: 500 rounds of a
    /// calc, a send to the right and a receive from the left (with wildcards now and then),
    /// each round after the last (about 1.5 MB: over 1 MiB, under the parallel threshold).
    fn text() -> String {
        text_tagged(&|_, k| k.to_string())
    }

    /// [`text`] with the tag of the message `sender` sends in round `k` given by `tag`.
    fn text_tagged(tag: &dyn Fn(usize, usize) -> String) -> String {
        let p = 24;
        let mut t = format!("num_ranks {p}\n");
        for r in 0..p {
            t += &format!("rank {r} {{\n");
            for k in 0..500 {
                let l = 3 * k + 1;
                let src = if k % 97 == 5 { "-1".to_string() } else { ((r + p - 1) % p).to_string() };
                t += &format!(
                    "l{l}: calc {}\nl{}: send {}b to {} tag {}\nl{}: recv {}b from {src} tag {}\n",
                    100 + k * r % 37,
                    l + 1,
                    8 << (k % 5),
                    (r + 1) % p,
                    tag(r, k),
                    l + 2,
                    8 << (k % 5),
                    tag((r + p - 1) % p, k)
                );
                t += &format!("l{} requires l{l}\nl{} requires l{l}\n", l + 1, l + 2);
                if k > 0 {
                    t += &format!("l{l} requires l{}\n", l - 1);
                }
            }
            t += "}\n";
        }
        t
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
        let cores = crate::parallel::threads();
        let parts = super::parse_parts(&t.as_bytes(), "t.goal", &std::sync::atomic::AtomicU64::new(0), &mut |_, _| {});
        assert_eq!(parts.is_some(), cores > 1, "a valid text is read in parts on a multi-core machine");
        // A comment at the top, CRLF line ends, no newline at the end.
        same(&format!("// header\n{}", t.replace('\n', "\r\n").trim_end())).unwrap();
    }

    /// ATLAHS-style tags wider than 32 bits, first seen in different parts.
    fn wide(sender: usize, k: usize) -> String {
        if k % 4 == 1 {
            (5_000_000_000 + 1000 * sender + k).to_string()
        } else {
            k.to_string()
        }
    }

    #[test]
    fn wide_tags_are_numbered_as_in_one_pass() {
        let t = text_tagged(&wide);
        same(&t).unwrap();
        let g = parse(&t.as_bytes(), "t.goal", &mut |_, _| {}, 0).unwrap().finish().unwrap();
        let tags: std::collections::HashSet<u32> = (0..g.len() as u32).map(|v| g.tag(v)).filter(|&t| t > 1 << 31).collect();
        assert!(tags.len() > 24 * 100, "every wide tag has its own id");
        // A literal tag in the id range: each part may be fine alone, the file is not.
        let lines: Vec<&str> = t.lines().collect();
        let at = lines.iter().position(|l| *l == "rank 20 {").unwrap() + 1;
        for tag in [u32::MAX - 1, u32::MAX - 24 * 125] {
            let mut l = lines.clone();
            let extra = format!("l99999: send 8b to 0 tag {tag}");
            l.insert(at, &extra);
            let e = same(&l.join("\n")).expect_err("a colliding literal tag was accepted");
            assert!(e.contains("collides"), "{e}");
        }
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
