//! Streaming reader of one rank's liballprof v1 file: yields one typed [`Record`] per call
//! line together with the `#@` extension lines that follow it. Holds one line of lookahead,
//! never the file.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use super::calls::{parse_call, plausible_name, Call};
use super::ext::{parse_line, Ext, Header, Line};
use super::fields::{Fields, Time};
use crate::error::{Error, Result};

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

pub struct RankReader<R: Read = File> {
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
}

impl RankReader<File> {
    pub fn open(path: &str) -> Result<RankReader<File>> {
        let f = File::open(path).map_err(|e| Error::io(path, &e))?;
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
            self.buf.clear();
            let n = self.src.read_until(b'\n', &mut self.buf).map_err(|e| Error::io(&self.path, &e))?;
            if n == 0 {
                return Ok(());
            }
            self.bytes += n as u64;
            self.line_no += 1;
            if self.truncated {
                return Ok(());
            }
            if self.buf.contains(&0) {
                // A rank killed while tracing leaves zeros after its last record (the tracer
                // writes through a mapped window): the trace ends here, and the line cut
                // short by the zeros is incomplete (a complete line ends with its newline).
                self.truncated = true;
                return Ok(());
            }
            trim_eol(&mut self.buf);
            if let Some(text) = self.buf.strip_prefix(b"#@ ") {
                let attach = !in_header && self.records > 0;
                let r = parse_line(text, !attach, &mut self.header, ext).map_err(|m| Error::at(&self.path, self.line_no, m))?;
                if matches!(r, Line::Attached) && !attach {
                    let key = String::from_utf8_lossy(text.split(|&c| c == b' ').next().unwrap_or_default()).into_owned();
                    return Err(self.err(self.line_no, format!("'#@ {key}' before the first call record")));
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
            let shown: String = String::from_utf8_lossy(text).chars().take(60).collect();
            return Err(Error::at(&self.path, line, format!("expected a call record NAME:TSTART:...:TEND, got '{shown}'")));
        }
        let last = self.spans.len() - 1;
        let is_init = name == b"MPI_Init" || name == b"MPI_Init_thread";
        let (ts, te) = (part(1), part(last));
        let time = |t: &[u8], dash_ok: bool, what: &str| -> Result<Option<Time>> {
            if t == b"-" && dash_ok {
                return Ok(None);
            }
            Time::parse(t).map(Some).ok_or_else(|| {
                Error::at(
                    &self.path,
                    line,
                    format!(
                        "{}: {what} time: expected µs such as 1298365588610860 or 12.345, got '{}'",
                        String::from_utf8_lossy(name),
                        String::from_utf8_lossy(t)
                    ),
                )
            })
        };
        let t_start = time(ts, is_init, "start")?;
        let t_end = time(te, name == b"MPI_Finalize", "end")?;
        let mut fields = Fields::new(text, &self.spans[2..last]);
        let call = parse_call(name, &mut fields, &mut rec.counts, &mut rec.rcounts)
            .map_err(|m| Error::at(&self.path, line, format!("{}: {m}", String::from_utf8_lossy(name))))?;
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
        let text = "#@ latitude-trace 1\n#@ comm 5 seq=0 world=0-1\n\nMPI_Init:-:1:2:10.000\nMPI_Waitall:11.000:2:3:0:12.000\n#@ done 4,5\nMPI_Finalize:13.000:-\n#@ end finalize\n";
        let mut r = RankReader::new(text.as_bytes(), "t").unwrap();
        assert_eq!(r.header.latitude, Some(1));
        assert_eq!(r.header.comms.len(), 1);
        r.next_record().unwrap();
        let w = r.next_record().unwrap().unwrap();
        assert_eq!(w.ext.done, Some(vec![4, 5]));
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

    #[test]
    fn errors_name_the_line() {
        for (text, want) in [
            ("MPI_Init:-:1:2:3\nMPI_Send:4:1:2:10,8,8:1:0:5,0,2:x\n", "t:2: MPI_Send: end time: expected µs"),
            ("MPI_Init:-:1:2:3\nhello world\n", "t:2: expected a call record"),
            ("MPI_Init:-:1:2:3\nMPI_Send:4:1:2:10,8,8:1:0:5\n", "t:2: MPI_Send: missing field 6 (comm)"),
            ("#@ done 1\nMPI_Init:-:1:2:3\n", "t:1: '#@ done' before the first call record"),
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
