//! Job files (docs/workloads.md), modelled on StressBench and SST/Ember job files:
//!
//! ```text
//! # a 3-D stencil next to an incast congestor
//! [JOB] cfd                 # also [JOB_NAME] / [JOB_ID] (StressBench, SST)
//! [RANKS] 0-63              # also [NID_LIST]; job rank i = i-th listed rank
//! [ITERATIONS] 100          # repeat the motif chain (default 1)
//! [MOTIF] compute time=50us dist=gaussian sd=2us
//! [MOTIF] halo3d x=32KiB y=32KiB z=16KiB
//! [MOTIF] allreduce bytes=8 every=10
//!
//! [JOB] io
//! [NID_LIST] 64-79
//! [MOTIF] incast bytes=1MiB iterations=4
//! ```
//!
//! `#` starts a comment anywhere; blank lines are ignored; tokens are separated by spaces or
//! tabs. Section tags are upper case, motif names any case, keys lower case. Inside a job,
//! `[RANKS]` comes before the first `[MOTIF]`; jobs use disjoint ranks and distinct names.
//! `[MOTIF] Init` / `Fini` (SST) are accepted and do nothing. The world is ranks
//! 0..=largest listed rank; ranks no job lists stay idle. Errors name the line.

use super::motif::{parse_motif, MotifSpec};
use super::value::{format_ranks, parse_count, parse_ranks, MAX_COUNT};
use crate::error::{Error, Result};

/// Largest job file read (they are written by hand; a device such as /dev/zero never ends).
pub const MAX_FILE: usize = 16 << 20;

#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub name: String,
    pub line: u64,
    /// World ranks; job rank i is `ranks[i]`.
    pub ranks: Vec<u32>,
    pub iterations: u64,
    pub motifs: Vec<MotifSpec>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobFile {
    /// File name used in messages.
    pub path: String,
    pub jobs: Vec<Job>,
    /// 1 + the largest rank any job lists.
    pub world: u32,
}

impl JobFile {
    /// Read and parse a job file.
    pub fn read(path: &str) -> Result<JobFile> {
        use std::io::Read;
        let f = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
        let mut bytes = Vec::new();
        f.take(MAX_FILE as u64 + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path, &e))?;
        if bytes.len() > MAX_FILE {
            return Err(Error::in_file(path, format!("larger than {}: not a job file", crate::text::size_text(MAX_FILE))));
        }
        let text = String::from_utf8(bytes).map_err(|_| Error::in_file(path, "not UTF-8 text; expected a job file"))?;
        JobFile::parse(&text, path)
    }

    /// Parse job-file text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<JobFile> {
        let mut p = Parser { path, jobs: Vec::new(), owner: Vec::new() };
        for (i, raw) in text.split('\n').enumerate() {
            let line = i as u64 + 1;
            p.statement(raw, line)?;
        }
        p.close_job()?;
        if p.jobs.is_empty() {
            return Err(Error::in_file(path, "no [JOB] in the file; expected [JOB] name, [RANKS] list and [MOTIF] lines"));
        }
        let world = p.owner.len() as u32;
        Ok(JobFile { path: path.to_string(), jobs: p.jobs, world })
    }

    /// The file as understood, one line per job and motif, every value resolved.
    pub fn canonical(&self) -> String {
        let mut out = format!("world {}\n", self.world);
        for j in &self.jobs {
            out += &format!("job {} {} ranks={} iterations={} list={}\n", j.line, j.name, j.ranks.len(), j.iterations, format_ranks(&j.ranks));
            for m in &j.motifs {
                out += &m.canonical();
                out.push('\n');
            }
        }
        out
    }
}

struct Parser<'a> {
    path: &'a str,
    jobs: Vec<Job>,
    /// Job index owning each world rank (u32::MAX: none).
    owner: Vec<u32>,
}

const SECTIONS: &str = "[JOB], [RANKS], [ITERATIONS] or [MOTIF]";

impl Parser<'_> {
    fn statement(&mut self, raw: &str, line: u64) -> Result<()> {
        let at = |m: String| Error::at(self.path, line, m);
        let text = raw.split('#').next().unwrap_or("");
        let mut tokens = text.split([' ', '\t', '\r']).filter(|t| !t.is_empty());
        let Some(first) = tokens.next() else { return Ok(()) };
        let (tag, rest_of_first) = match first.strip_prefix('[').and_then(|t| t.split_once(']')) {
            Some((tag, rest)) => (tag, rest),
            None => return Err(at(format!("expected a {SECTIONS} line, got '{first}'"))),
        };
        let mut args: Vec<&str> = Vec::new();
        if !rest_of_first.is_empty() {
            args.push(rest_of_first);
        }
        args.extend(tokens);
        let done = match tag {
            "JOB" | "JOB_NAME" | "JOB_ID" => {
                self.close_job()?; // the previous job is complete
                self.job(tag, &args, line)
            }
            "RANKS" | "NID_LIST" => self.ranks(tag, &args),
            "ITERATIONS" => self.iterations(&args),
            "MOTIF" => self.motif(&args, line),
            _ => Err(format!("unknown section '[{tag}]' (expected {SECTIONS})")),
        };
        done.map_err(|m| Error::at(self.path, line, m))
    }

    fn current(&mut self, tag: &str) -> std::result::Result<&mut Job, String> {
        self.jobs.last_mut().ok_or_else(|| format!("[{tag}] before the first [JOB]"))
    }

    fn one_arg<'t>(tag: &str, args: &[&'t str], what: &str) -> std::result::Result<&'t str, String> {
        match args {
            [a] => Ok(a),
            [] => Err(format!("expected {what} after [{tag}]")),
            _ => Err(format!("expected only {what} after [{tag}], got {} words", args.len())),
        }
    }

    fn job(&mut self, tag: &str, args: &[&str], line: u64) -> std::result::Result<(), String> {
        let name = Self::one_arg(tag, args, "a job name")?;
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-') {
            return Err(format!("a job name is letters, digits, '_', '.' and '-', got '{name}'"));
        }
        if let Some(j) = self.jobs.iter().find(|j| j.name == name) {
            return Err(format!("job '{name}' is already defined on line {}", j.line));
        }
        self.jobs.push(Job { name: name.to_string(), line, ranks: Vec::new(), iterations: 0, motifs: Vec::new() });
        Ok(())
    }

    /// Checks at the end of a job: it has ranks and motifs.
    fn close_job(&mut self) -> Result<()> {
        let Some(j) = self.jobs.last_mut() else { return Ok(()) };
        let at = |m: String| Error::at(self.path, j.line, m);
        if j.ranks.is_empty() {
            return Err(at(format!("job '{}' has no [RANKS] line", j.name)));
        }
        if j.motifs.is_empty() {
            return Err(at(format!("job '{}' has no [MOTIF] lines", j.name)));
        }
        if j.iterations == 0 {
            j.iterations = 1;
        }
        Ok(())
    }

    fn ranks(&mut self, tag: &str, args: &[&str]) -> std::result::Result<(), String> {
        let index = self.jobs.len().wrapping_sub(1) as u32;
        let job = self.current(tag)?;
        if !job.ranks.is_empty() {
            return Err(format!("job '{}' already has a rank list", job.name));
        }
        let list = Self::one_arg(tag, args, "a rank list such as 0-15,32-47")?;
        let ranks = parse_ranks(list)?;
        let top = *ranks.iter().max().expect("a rank list is not empty") as usize;
        if self.owner.len() <= top {
            self.owner.resize(top + 1, u32::MAX);
        }
        for &r in &ranks {
            let o = self.owner[r as usize];
            if o != u32::MAX {
                let other = &self.jobs[o as usize];
                return Err(format!("rank {r} is already in job '{}' (line {}); jobs use disjoint ranks", other.name, other.line));
            }
        }
        for &r in &ranks {
            self.owner[r as usize] = index;
        }
        self.jobs.last_mut().expect("current job").ranks = ranks;
        Ok(())
    }

    fn iterations(&mut self, args: &[&str]) -> std::result::Result<(), String> {
        let job = self.current("ITERATIONS")?;
        if job.iterations != 0 {
            return Err(format!("job '{}' already has [ITERATIONS]", job.name));
        }
        let text = Self::one_arg("ITERATIONS", args, "a count")?;
        let n = parse_count(text, MAX_COUNT).map_err(|e| format!("[ITERATIONS]: {e}"))?;
        if n == 0 {
            return Err(format!("[ITERATIONS]: must be at least 1, got '{text}'"));
        }
        job.iterations = n;
        Ok(())
    }

    fn motif(&mut self, args: &[&str], line: u64) -> std::result::Result<(), String> {
        let job = self.current("MOTIF")?;
        if job.ranks.is_empty() {
            return Err(format!("[MOTIF] before the [RANKS] line of job '{}'", job.name));
        }
        let Some((name, params)) = args.split_first() else {
            return Err("expected a motif name after [MOTIF]".into());
        };
        let name = name.to_ascii_lowercase();
        if name == "init" || name == "fini" {
            return Ok(()); // SST/Ember job files: start and end markers
        }
        let spec = parse_motif(&name, params, job.ranks.len() as u32, line)?;
        job.motifs.push(spec);
        Ok(())
    }
}
