//! Streaming reader of one rank's liballprof v1 file: yields one typed [`Record`] per call
//! line together with the `#@` extension lines that follow it. Holds one line of lookahead,
//! never the file.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::calls::{parse_call, plausible_name, Call};
use super::ext::{parse_line, Ext, Header, Line};
use super::fields::{Fields, Time};
use super::files::{open_text, TraceText};
use super::ledger::Ledger;
use crate::error::{Error, Result};
use crate::text::{read_line, shown, size_text, Line as TextLine};

/// Longest line accepted (a v-collective's count lists have one entry per rank: 64 MiB holds
/// those of millions of ranks); longer is not a trace, and must not grow memory without bound.
pub const MAX_LINE: usize = 64 << 20;

/// One call record.
#[derive(Debug, Default)]
pub struct Record {
    /// 1-based line of the call in its file.
    pub line: u64,
    /// 0-based index among the file's call records (our traces name requests by it).
    pub index: u64,
    name: Vec<u8>,
    /// None for `MPI_Init`'s start and `MPI_Finalize`'s end (`-`).
    pub start: Option<Time>,
    pub end: Option<Time>,
    pub call: Call,
    /// Per-rank byte counts of v-collectives (see `calls::CollCall`).
    pub counts: Vec<u64>,
    pub rcounts: Vec<u64>,
    pub ext: Ext,
}

impl Record {
    pub fn name(&self) -> &str {
        std::str::from_utf8(&self.name).unwrap_or("?")
    }
}

pub struct RankReader<R: Read = TraceText> {
    path: String,
    src: BufReader<R>,
    line_no: u64,
    /// The next call line, already read (with its line number).
    pending: Vec<u8>,
    pending_line: u64,
    have_pending: bool,
    buf: Vec<u8>,
    spans: Vec<(u32, u32)>,
    pub header: Header,
    rec: Record,
    records: u64,
    /// Bytes read so far (progress reports).
    pub bytes: u64,
    /// The file ended in zero bytes (a killed rank): records up to there were read.
    pub truncated: bool,
    ledger: Ledger,
}

impl RankReader<TraceText> {
    /// A rank file, plain or gzip-compressed.
    pub fn open(path: &str) -> Result<RankReader<TraceText>> {
        // Only a regular file ends: the zeros of a device or pipe may never stop.
        if !std::fs::metadata(path).map_err(|e| Error::io(path, &e))?.is_file() {
            return Err(Error::in_file(path, "not a regular file; expected a liballprof trace file"));
        }
        let f = open_text(Path::new(path)).map_err(|e| Error::io(path, &e))?;
        RankReader::new(f, path)
    }
}

fn trim_eol(v: &mut Vec<u8>) {
    while let Some(b'\n' | b'\r') = v.last() {
        v.pop();
    }
}

impl<R: Read> RankReader<R> {
    /// Read the header up to the first call line.
    pub fn new(src: R, path: &str) -> Result<RankReader<R>> {
        let mut r = RankReader {
            path: path.to_string(),
            src: BufReader::with_capacity(1 << 20, src),
            line_no: 0,
            pending: Vec::with_capacity(256),
            pending_line: 0,
            have_pending: false,
            buf: Vec::with_capacity(256),
            spans: Vec::with_capacity(32),
            header: Header::default(),
            rec: Record::default(),
            records: 0,
            bytes: 0,
            truncated: false,
            ledger: Ledger::default(),
        };
        r.read_until_call(true, &mut Ext::default())?;
        Ok(r)
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    fn err(&self, line: u64, msg: impl Into<String>) -> Error {
        Error::at(&self.path, line, msg)
    }

    /// Read lines into `buf`; `#@` lines go to the header (`in_header`) or the current
    /// record; stops after stashing the next call line in `pending`.
    fn read_until_call(&mut self, in_header: bool, ext: &mut Ext) -> Result<()> {
        self.have_pending = false;
        loop {
            if self.truncated {
                return Ok(());
            }
            let got = read_line(&mut self.src, &mut self.buf, MAX_LINE).map_err(|e| Error::io(&self.path, &e))?;
            if got == TextLine::Eof {
                return self.at_end();
            }
            self.line_no += 1;
            if let Some(z) = self.buf.iter().position(|&c| c == 0) {
                // A rank killed while tracing leaves zeros after its last record (the tracer
                // writes through a mapped window), up to the end of the file: the trace ends
                // here, and the line cut short by the zeros is incomplete.
                self.zeros_to_the_end(z)?;
                self.truncated = true;
                return Ok(());
            }
            let TextLine::Read(n) = got else {
                return Err(self.err(self.line_no, format!("line longer than {} (not a liballprof trace?)", size_text(MAX_LINE))));
            };
            self.bytes += n as u64;
            trim_eol(&mut self.buf);
            if let Some(text) = self.buf.strip_prefix(b"#@ ") {
                let attach = !in_header && self.records > 0;
                let r = parse_line(text, !attach, &mut self.header, ext).map_err(|m| Error::at(&self.path, self.line_no, m))?;
                if matches!(r, Line::Attached) && !attach {
                    let key = shown(text.split(|&c| c == b' ').next().unwrap_or_default());
                    return Err(self.err(self.line_no, format!("'#@ {key}' before the first call record")));
                }
                if matches!(r, Line::Attached) {
                    let key = match text.split(|&c| c == b' ').next().unwrap_or_default() {
                        b"done" => "done",
                        b"start" => "start",
                        b"free" => "free",
                        b"cancel" => "cancel",
                        b"status" => "status",
                        b"cancelled" => "cancelled",
                        _ => continue,
                    };
                    self.check_requests(key, ext)?;
                }
                continue;
            }
            let t = self.buf.trim_ascii();
            if t.is_empty() || t[0] == b'#' {
                continue;
            }
            std::mem::swap(&mut self.pending, &mut self.buf);
            self.pending_line = self.line_no;
            self.have_pending = true;
            return Ok(());
        }
    }

    /// A NUL byte at offset `z` of the current line: everything after it must be zero too,
    /// else the file is damaged in the middle (not a killed rank) and the rest would be lost.
    fn zeros_to_the_end(&mut self, z: usize) -> Result<()> {
        let mut offset = self.bytes + z as u64;
        let mut bad = self.buf[z..].iter().position(|&c| c != 0).map(|i| offset + i as u64);
        offset += (self.buf.len() - z) as u64;
        while bad.is_none() {
            let chunk = self.src.fill_buf().map_err(|e| Error::io(&self.path, &e))?;
            if chunk.is_empty() {
                break;
            }
            bad = chunk.iter().position(|&c| c != 0).map(|i| offset + i as u64);
            let n = chunk.len();
            offset += n as u64;
            self.src.consume(n);
        }
        match bad {
            None => Ok(()),
            Some(at) => Err(self.err(
                self.line_no,
                format!("a NUL byte in mid-file, with data after it (byte {at}): a rank killed while tracing leaves only zeros to the end of its file; this file is damaged"),
            )),
        }
    }

    /// `#@ done/start/free/cancel/status` just parsed into `ext`: do the indices name
    /// requests that exist (see `ledger.rs`)?
    fn check_requests(&mut self, key: &'static str, ext: &Ext) -> Result<()> {
        let current = self.records - 1;
        let ids = match key {
            "done" => &ext.done,
            "start" => &ext.start,
            "free" => &ext.free,
            "cancel" => &ext.cancel,
            "cancelled" => {
                let k = *ext.cancelled.last().expect("a cancelled line was just parsed");
                return match &ext.done {
                    Some(d) if d.contains(&k) => Ok(()),
                    _ => Err(self.err(self.line_no, format!("'#@ cancelled {k}': request {k} is not in this call's '#@ done' line (which must come first)"))),
                };
            }
            _ => {
                let s = ext.statuses.last().expect("a status line was just parsed");
                return match s.call {
                    Some(k) if !ext.done.as_ref().is_some_and(|d| d.contains(&k)) => {
                        Err(self.err(self.line_no, format!("'#@ status call={k}': request {k} is not in this call's '#@ done' line (which must come first)")))
                    }
                    _ => Ok(()),
                };
            }
        };
        let ids = ids.as_deref().unwrap_or_default();
        self.ledger.apply(key, ids, current).map_err(|m| Error::at(&self.path, self.line_no, m))
    }

    /// End of the file: a file without a single call record is not a trace (an empty
    /// file would become an empty rank); what the ledger says about requests left open.
    fn at_end(&mut self) -> Result<()> {
        if self.records == 0 && !self.have_pending {
            let what = if self.line_no == 0 { "an empty file" } else { "no call records" };
            return Err(Error::in_file(&self.path, format!("{what}: expected a liballprof trace (lines NAME:TSTART:...:TEND, starting with MPI_Init)")));
        }
        self.header.unfinished_requests = self.ledger.unfinished();
        Ok(())
    }

    /// The next call record with its extension lines, or None at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<&Record>> {
        let mut rec = std::mem::take(&mut self.rec);
        let more = self.next_into(&mut rec);
        self.rec = rec;
        Ok(if more? { Some(&self.rec) } else { None })
    }

    /// Read the next record into `rec` (whose buffers are reused); false at the end.
    pub fn next_into(&mut self, rec: &mut Record) -> Result<bool> {
        if !self.have_pending {
            return Ok(false);
        }
        std::mem::swap(&mut self.pending, &mut self.buf);
        let line = self.pending_line;
        rec.ext.clear();
        self.parse_record(line, rec)?;
        self.ledger.record(self.records, line, &rec.call, rec.name());
        self.records += 1;
        self.read_until_call(false, &mut rec.ext)?;
        Ok(true)
    }

    fn parse_record(&mut self, line: u64, rec: &mut Record) -> Result<()> {
        let text = &self.buf;
        self.spans.clear();
        let mut start = 0usize;
        // Word-at-a-time search for ':' (lines are ~100 bytes of digits).
        let mut i = 0usize;
        while i + 8 <= text.len() {
            let w = u64::from_le_bytes(text[i..i + 8].try_into().unwrap()) ^ 0x3A3A_3A3A_3A3A_3A3A;
            let mut hit = w.wrapping_sub(0x0101_0101_0101_0101) & !w & 0x8080_8080_8080_8080;
            while hit != 0 {
                let j = i + (hit.trailing_zeros() / 8) as usize;
                // The borrow trick can flag a ';' right after a ':' too: check.
                if text[j] == b':' {
                    self.spans.push((start as u32, j as u32));
                    start = j + 1;
                }
                hit &= hit - 1;
            }
            i += 8;
        }
        for (j, &c) in text.iter().enumerate().skip(i) {
            if c == b':' {
                self.spans.push((start as u32, j as u32));
                start = j + 1;
            }
        }
        self.spans.push((start as u32, text.len() as u32));
        let part = |k: usize| &text[self.spans[k].0 as usize..self.spans[k].1 as usize];
        let name = part(0);
        if !plausible_name(name) || self.spans.len() < 3 {
            let got: String = shown(text).chars().take(60).collect();
            return Err(Error::at(&self.path, line, format!("expected a call record NAME:TSTART:...:TEND, got '{got}'")));
        }
        let last = self.spans.len() - 1;
        let is_init = name == b"MPI_Init" || name == b"MPI_Init_thread";
        let (ts, te) = (part(1), part(last));
        let time = |t: &[u8], dash_ok: bool, what: &str| -> Result<Option<Time>> {
            if t == b"-" && dash_ok {
                return Ok(None);
            }
            Time::parse(t).map(Some).ok_or_else(|| {
                Error::at(&self.path, line, format!("{}: {what} time: expected µs such as 1298365588610860 or 12.345, got '{}'", shown(name), shown(t)))
            })
        };
        let t_start = time(ts, is_init, "start")?;
        let t_end = time(te, name == b"MPI_Finalize", "end")?;
        let mut fields = Fields::new(text, &self.spans[2..last]);
        let call =
            parse_call(name, &mut fields, &mut rec.counts, &mut rec.rcounts).map_err(|m| Error::at(&self.path, line, format!("{}: {m}", shown(name))))?;
        rec.line = line;
        rec.index = self.records;
        rec.name.clear();
        rec.name.extend_from_slice(name);
        rec.start = t_start;
        rec.end = t_end;
        rec.call = call;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "# htor's PMPI Tracer 0.9 Output File\n\
# clockdiff: 0.000000 s (relative to rank 0)\n\n\
MPI_Init:-:140735000539132:140735000539120:1298365588610809\n\
MPI_Comm_rank:1298365588610827:6575616,0,4:140735000539176:1298365588610834\n\
MPI_Isend:1298365588610860:140735000539176:1:1,4,4:1:0:6575616,0,4:140735000539136:1298365588610888\n\
MPI_Irecv:1298365588610895:140735000539176:1:1,4,4:3:0:6575616,0,4:140735000539144:1298365588610906\n\
MPI_Waitall:1298365588610914:2:140735000539136:0:1298365588610934\n\
MPI_Allreduce:1298365588610951:1:140735000539160:1:10,8,8:3:6575616,0,4:1298365588613619\n\
# Finalize clockdiff: 0.000000\n\
MPI_Finalize:1298365588621191:-\n";

    #[test]
    fn reads_the_reference_example() {
        let mut r = RankReader::new(SAMPLE.as_bytes(), "rank0.txt").unwrap();
        let mut names = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            names.push((rec.name().to_string(), rec.line, rec.index));
        }
        assert_eq!(names.len(), 7);
        assert_eq!(names[0], ("MPI_Init".to_string(), 4, 0));
        assert_eq!(names[6], ("MPI_Finalize".to_string(), 11, 6));
    }

    #[test]
    fn attaches_extension_lines_to_the_preceding_call() {
        let text = "#@ latitude-trace 1\n#@ comm 5 seq=0 world=0-1\n\nMPI_Init:-:1:2:10.000\n\
                    MPI_Isend:10.5:1:1:1,4,4:1:0:5,0,2:8:10.6\nMPI_Irecv:10.7:1:1:1,4,4:1:0:5,0,2:16:10.8\n\
                    MPI_Waitall:11.000:2:3:0:12.000\n#@ done 2,1\nMPI_Finalize:13.000:-\n#@ end finalize\n";
        let mut r = RankReader::new(text.as_bytes(), "t").unwrap();
        assert_eq!(r.header.latitude, Some(1));
        assert_eq!(r.header.comms.len(), 1);
        for _ in 0..3 {
            r.next_record().unwrap();
        }
        let w = r.next_record().unwrap().unwrap();
        assert_eq!(w.ext.done, Some(vec![2, 1]));
        let f = r.next_record().unwrap().unwrap();
        assert!(f.ext.done.is_none());
        assert!(r.next_record().unwrap().is_none());
        assert_eq!(r.header.end.as_deref(), Some("finalize"));
    }

    #[test]
    fn splits_fields_exactly() {
        // ':' then ';' is the case a word-at-a-time zero-byte test can mistake.
        let text = "MPI_Init:-:1:2:3\nMPI_Foo:4.0:a;:;b:1234567890123:x:5.0\n";
        let mut r = RankReader::new(text.as_bytes(), "t").unwrap();
        r.next_record().unwrap();
        r.next_record().unwrap();
        assert_eq!(r.spans.len(), 7);
    }

    #[test]
    fn stops_at_the_zeros_of_a_killed_rank() {
        let text = "MPI_Init:-:1:2:3\nMPI_Barrier:4:5,0,1:6\nMPI_Barr\0\0\0\0\0\0";
        let mut r = RankReader::new(text.as_bytes(), "t").unwrap();
        let mut n = 0;
        while r.next_record().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 2);
        assert!(r.truncated);
    }

    /// Read every record; the first error.
    fn read_all(text: &[u8]) -> std::result::Result<RankReader<&[u8]>, Error> {
        let mut r = RankReader::new(text, "t")?;
        while r.next_record()?.is_some() {}
        Ok(r)
    }

    const REQS: &str = "#@ latitude-trace 1\nMPI_Init:-:1:2:10.000\n\
                        MPI_Isend:10.5:1:1:1,4,4:1:0:5,0,2:8:10.6\n\
                        MPI_Irecv:10.7:1:1:1,4,4:1:0:5,0,2:16:10.8\n\
                        MPI_Waitall:11.000:2:3:0:12.000\n#@ done 1,2\n\
                        MPI_Finalize:13.000:-\n#@ end finalize\n";

    #[test]
    fn request_indices_must_name_requests() {
        read_all(REQS.as_bytes()).unwrap();
        let lines: Vec<&str> = REQS.lines().collect();
        let edit = |f: &dyn Fn(&mut Vec<&str>)| {
            let mut l = lines.clone();
            f(&mut l);
            read_all((l.join("\n") + "\n").as_bytes()).map(|_| ()).unwrap_err().to_string()
        };
        // A request that does not exist.
        let e = edit(&|l| l[5] = "#@ done 99999");
        assert!(e.starts_with("t:6: '#@ done 99999': call 99999 is not before this call"), "{e}");
        // A deleted call line: index 2 is now the Waitall itself.
        let e = edit(&|l| {
            l.remove(2);
        });
        assert!(e.starts_with("t:5: '#@ done 2'") && e.contains("duplicated or deleted"), "{e}");
        // A duplicated completion: the requests were completed before.
        let e = edit(&|l| {
            l.insert(6, "MPI_Waitall:12.000:2:3:0:12.500");
            l.insert(7, "#@ done 1,2");
        });
        assert!(e.starts_with("t:8: '#@ done 1': request 1 was already completed"), "{e}");
        // A duplicated Isend line: call 1 and 2 are Isends, the Irecv (3) is never completed.
        let mut l = lines.clone();
        l.insert(2, lines[2]);
        let dup = l.join("\n") + "\n";
        assert_eq!(read_all(dup.as_bytes()).unwrap().header.unfinished_requests, Some((1, 5)));
        // A status naming a request the call did not complete.
        let e = edit(&|l| l.insert(6, "#@ status call=7 src=1 tag=0 bytes=4"));
        assert!(e.starts_with("t:7: '#@ status call=7'"), "{e}");
        let e = edit(&|l| l[5] = "#@ done 0");
        assert!(e.contains("call 0 created no request"), "{e}");
    }

    #[test]
    fn zeros_only_at_the_end() {
        let mut text = REQS.as_bytes()[..REQS.find("MPI_Waitall").unwrap() + 8].to_vec();
        text.resize(text.len() + 100_000, 0);
        let r = read_all(&text).unwrap();
        assert!(r.truncated);
        text.extend_from_slice(b"\nMPI_Barrier:4:5,0,1:6\n");
        let e = read_all(&text).map(|_| ()).unwrap_err().to_string();
        assert!(e.starts_with("t:5: a NUL byte in mid-file, with data after it"), "{e}");
    }

    #[test]
    fn lines_are_bounded_and_shown_escaped() {
        let e = read_all(&b"MPI_Init:-:1:2:3\nMPI_\x1b[1mX\n"[..]).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("'MPI_\\x1b[1mX'"), "{e}");
        let e = RankReader::new(std::io::repeat(b'M'), "endless").map(|_| ()).unwrap_err().to_string();
        assert!(e.starts_with("endless:1: line longer than 64 MiB"), "{e}");
    }

    #[test]
    fn errors_name_the_line() {
        for (text, want) in [
            ("MPI_Init:-:1:2:3\nMPI_Send:4:1:2:10,8,8:1:0:5,0,2:x\n", "t:2: MPI_Send: end time: expected µs"),
            ("MPI_Init:-:1:2:3\nhello world\n", "t:2: expected a call record"),
            ("MPI_Init:-:1:2:3\nMPI_Send:4:1:2:10,8,8:1:0:5\n", "t:2: MPI_Send: missing field 6 (comm)"),
            ("#@ done 1\nMPI_Init:-:1:2:3\n", "t:1: '#@ done' before the first call record"),
            ("", "t: an empty file: expected a liballprof trace"),
            ("# only a comment\n\n", "t: no call records"),
            ("MPI_Init:-:1:2:3\n#@ status src=x\n", "t:2: expected '[call=I]"),
        ] {
            let mut r = match RankReader::new(text.as_bytes(), "t") {
                Ok(r) => r,
                Err(e) => {
                    assert!(e.to_string().contains(want), "{e} / {want}");
                    continue;
                }
            };
            let mut err = None;
            loop {
                match r.next_record() {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
            }
            let e = err.unwrap_or_else(|| panic!("no error for {text:?}"));
            assert!(e.to_string().contains(want), "{e} / {want}");
        }
    }
}
