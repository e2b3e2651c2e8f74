//! The GOAL statement parser: one line at a time into a [`GraphBuilder`], with the labels
//! of the current rank block. The reader (reader.rs) feeds it lines, one parser for the
//! whole text or one per part when the text is read in parallel.

use std::collections::HashMap;

use super::wide_tags::WideTags;
use crate::error::{Error, Result};
use crate::graph::{Dep, GraphBuilder, Kind, Op, ANY, NONE};
use crate::text::shown;

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

pub(super) struct Parser {
    pub(super) name: String,
    pub(super) line: u64,
    pub(super) builder: Option<GraphBuilder>,
    pub(super) rank: Option<u32>,
    block_line: u64,
    pub(super) seen: Vec<bool>,
    labels: Labels,
    ops_in_block: usize,
    pub(super) in_comment: bool,
    comment_line: u64,
    pub(super) wide_tags: WideTags,
    /// A `//@copy Sb` line waiting for its calc: (bytes, line).
    pending_copy: Option<(u64, u64)>,
    /// A `//@call` line waiting for its calc: (the mark, line).
    pending_call: Option<(CallMark, u64)>,
}

/// What a `//@call` annotation says of the calc that follows it.
struct CallMark {
    coll: String,
    alg: String,
    procs: u32,
    bytes: u64,
    instance: u64,
}

/// The annotations' names in messages.
const COPY: &str = "'//@copy'";
const CALL: &str = "'//@call'";

/// An annotation just read.
enum Pending {
    Copy(u64),
    Call(CallMark),
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
    pub(super) fn new(name: &str) -> Self {
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
            pending_copy: None,
            pending_call: None,
        }
    }

    pub(super) fn err(&self, msg: impl Into<String>) -> Error {
        Error::at(&self.name, self.line, msg)
    }

    /// Parse the statements of one line.
    pub(super) fn statement_line(&mut self, s: &[u8]) -> Result<()> {
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
            if c.starts(b"//@") {
                return self.pragma(&mut c);
            }
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
        if c.peek().is_some_and(is_ident) && what != "message size" && what != "copy size" {
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

    /// `//@copy Sb` and `//@call COLL ALG P BYTES ID`, Latitude's annotations
    /// (docs/graph-format.md) of the calc that follows: it also copies S bytes on its CPU, or
    /// it ends a rank's part of a collective call (graph/colls.rs). A foreign reader sees a
    /// comment before an ordinary calc.
    fn pragma(&mut self, c: &mut Cur) -> Result<()> {
        c.i += 3;
        let (what, pending) = match c.ident() {
            Some(b"copy") => (COPY, self.copy_annotation(c)?),
            Some(b"call") => (CALL, self.call_annotation(c)?),
            _ => {
                return Err(self.err(format!(
                "expected 'copy' or 'call' after '//@' (Latitude's annotations: '//@copy 8b' and '//@call allreduce recdoub 2 8 1' before a calc), found {}",
                c.found()
            )))
            }
        };
        self.end_of_statement(c, || format!("a {what} annotation"))?;
        if self.rank.is_none() {
            return Err(self.err(format!("{what} outside a rank block (it annotates the calc that follows it)")));
        }
        let waiting = match pending {
            Pending::Copy(_) => self.pending_copy.as_ref().map(|p| p.1),
            Pending::Call(_) => self.pending_call.as_ref().map(|p| p.1),
        };
        if let Some(at) = waiting {
            return Err(self.err(format!("a second {what} before a calc (the one on line {at} has no calc yet)")));
        }
        match pending {
            Pending::Copy(bytes) => self.pending_copy = Some((bytes, self.line)),
            Pending::Call(mark) => self.pending_call = Some((mark, self.line)),
        }
        Ok(())
    }

    /// `Sb` after `//@copy`.
    fn copy_annotation(&self, c: &mut Cur) -> Result<Pending> {
        let bytes = self.int(c, "copy size")?;
        if c.peek() != Some(b'b') {
            return Err(self.err(format!("expected 'b' after the copy size (e.g. '//@copy 8b'), found {}", c.found())));
        }
        c.i += 1;
        Ok(Pending::Copy(bytes))
    }

    /// `COLL ALG P BYTES ID` after `//@call`: the collective, its algorithm's label, the
    /// communicator size, the call's bytes and the id all members of the call share.
    fn call_annotation(&self, c: &mut Cur) -> Result<Pending> {
        let mut word = |what: &str| {
            c.ws();
            let start = c.i;
            while c.peek().is_some_and(|x| x.is_ascii_graphic()) {
                c.i += 1;
            }
            match std::str::from_utf8(&c.s[start..c.i]) {
                Ok(w) if !w.is_empty() => Ok(w.to_string()),
                _ => Err(self.err(format!("expected {what} after '//@call' (e.g. '//@call allreduce recdoub 2 8 1'), found {}", c.found()))),
            }
        };
        let (coll, alg) = (word("the collective")?, word("its algorithm")?);
        let procs = u32::try_from(self.int(c, "communicator size")?).map_err(|_| self.err("communicator size does not fit in 32 bits"))?;
        Ok(Pending::Call(CallMark { coll, alg, procs, bytes: self.int(c, "call size")?, instance: self.int(c, "call id")? }))
    }

    /// The earliest annotation still waiting for its calc: (its line, its name).
    fn pending_first(&self) -> Option<(u64, &'static str)> {
        let copy = self.pending_copy.as_ref().map(|p| (p.1, COPY));
        copy.into_iter().chain(self.pending_call.as_ref().map(|p| (p.1, CALL))).min()
    }

    fn close_block(&mut self) -> Result<()> {
        if let Some((at, what)) = self.pending_first() {
            return Err(Error::at(&self.name, at, format!("{what} is not followed by a calc in its rank block")));
        }
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
                op.copy = self.pending_copy.take().map_or(0, |(bytes, _)| bytes);
                if self.option(c, b"cpu")? {
                    op.cpu = self.small(c, "cpu index")?;
                }
                op
            }
            _ => {
                if let Some((at, what)) = self.pending_first() {
                    let does = if what == COPY { "copy bytes" } else { "end a collective call" };
                    return Err(self.err(format!("a {} after {what} (line {at}): only a calc can {does}", kind.name())));
                }
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
        if let Some((m, _)) = self.pending_call.take() {
            b.mark_collective(id, &m.coll, &m.alg, m.procs, m.bytes, m.instance);
        }
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

    fn small(&self, c: &mut Cur, what: &str) -> Result<u16> {
        let v = self.int(c, what)?;
        u16::try_from(v).map_err(|_| self.err(format!("{what} {v} is out of range (0..65535)")))
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
    pub(super) fn finish(mut self) -> Result<GraphBuilder> {
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
