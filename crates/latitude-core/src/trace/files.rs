//! Finding the per-rank files of a trace (docs/reference/liballprof.md §1, docs/reference/schedgen.md §1).
//!
//! A trace is one file per world rank whose names differ only in the rank number:
//! `pmpi-trace-rank-0.txt` … (unpadded, Schedgen's and our tracer's default),
//! `pmpi-trace-rank-00.txt` … (liballprof pads to the digits of the world size),
//! `trace_bcast-0.dat` … (any prefix and suffix). Given the rank-0 file, the rank number is
//! the last all-zero digit run of its name (preferring one right after `-`, as Schedgen
//! does); ranks 1, 2, … are probed with the same width until a file is missing. Given a
//! directory, the one such family whose files look like traces is used. Rank files may be
//! gzip-compressed (`pmpi-trace-rank-0.txt.gz`, `latitude trace --compress`): [`open_text`]
//! reads both.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use crate::error::{Error, Result};

#[derive(Clone, Debug)]
pub struct TraceSet {
    /// Index = world rank.
    pub files: Vec<PathBuf>,
    /// The naming pattern, e.g. `pmpi-trace-rank-<r>.txt`.
    pub pattern: String,
}

/// A file-name pattern: prefix + rank (zero-padded to `width`) + suffix.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Pattern {
    prefix: String,
    suffix: String,
    width: usize,
}

impl Pattern {
    fn name(&self, rank: usize) -> String {
        format!("{}{:0w$}{}", self.prefix, rank, self.suffix, w = self.width)
    }
    fn show(&self) -> String {
        let r = if self.width > 1 { format!("<r:0{}>", self.width) } else { "<r>".to_string() };
        format!("{}{r}{}", self.prefix, self.suffix)
    }
}

/// Candidate patterns for a rank-0 file name, most plausible first.
fn patterns(name: &str) -> Vec<Pattern> {
    let b = name.as_bytes();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if b[s..i].iter().all(|&c| c == b'0') {
                runs.push((s, i));
            }
        } else {
            i += 1;
        }
    }
    // Last run after '-' first (Schedgen's `-0` rule), then the others from the end.
    runs.sort_by_key(|&(s, _)| (s == 0 || b[s - 1] != b'-', std::cmp::Reverse(s)));
    runs.into_iter().map(|(s, e)| Pattern { prefix: name[..s].to_string(), suffix: name[e..].to_string(), width: e - s }).collect()
}

fn is_lap2(name: &str) -> bool {
    name.starts_with("lap2-trace-rank-") && name.contains("-of-")
}

fn reject_unsupported(path: &Path, name: &str) -> Result<()> {
    let p = path.display().to_string();
    if is_lap2(name) {
        return Err(Error::in_file(&p, "a liballprof2 trace (lap2-trace-rank-R-of-N.txt): only liballprof v1 traces are supported"));
    }
    if name.ends_with(".bz2") || name.ends_with(".xz") {
        return Err(Error::in_file(&p, "a bzip2/xz-compressed trace: decompress it first (or recompress it with gzip), then pass the rank-0 file"));
    }
    Ok(())
}

/// The text of a rank file, gzip-compressed or not (told by its first two bytes, not its
/// name). A compressed file that stops short (a rank killed outright: the tracer flushes its
/// stream in whole blocks) ends where its data ends, as a plain file ends at its zero bytes.
pub enum TraceText {
    Plain(File),
    Gz(Box<MultiGzDecoder<File>>),
}

pub fn open_text(path: &Path) -> io::Result<TraceText> {
    let mut f = File::open(path)?;
    let mut magic = [0u8; 2];
    let n = f.read(&mut magic)?;
    f.seek(SeekFrom::Start(0))?;
    Ok(if n == 2 && magic == [0x1f, 0x8b] { TraceText::Gz(Box::new(MultiGzDecoder::new(f))) } else { TraceText::Plain(f) })
}

impl Read for TraceText {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            TraceText::Plain(f) => f.read(buf),
            TraceText::Gz(d) => match d.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                r => r,
            },
        }
    }
}

/// First meaningful line looks like a liballprof trace (a comment or an MPI call).
fn looks_like_trace(path: &Path) -> bool {
    let Ok(f) = open_text(path) else { return false };
    for line in BufReader::new(f).split(b'\n').take(50) {
        let Ok(line) = line else { return false };
        let t = line.trim_ascii();
        if t.is_empty() {
            continue;
        }
        return t.starts_with(b"#") || (t.starts_with(b"MPI_") && t.contains(&b':'));
    }
    false
}

/// Files of ranks 0, 1, … under `pat` in `dir` until one is missing; `exists` answers.
fn family(dir: &Path, pat: &Pattern, exists: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    loop {
        let name = pat.name(out.len());
        if pat.width > 1 && name.len() != pat.prefix.len() + pat.width + pat.suffix.len() {
            break; // rank needs more digits than the padding allows
        }
        let p = dir.join(&name);
        if !exists(&p) {
            break;
        }
        out.push(p);
    }
    out
}

/// A rank missing in the middle is an error, not the end of the trace.
fn check_gap(dir: &Path, pat: &Pattern, n: usize, exists: &dyn Fn(&Path) -> bool) -> Result<()> {
    for later in n + 1..n + 4 {
        let p = dir.join(pat.name(later));
        if exists(&p) {
            return Err(Error::in_file(
                &dir.join(pat.name(n)).display().to_string(),
                format!("missing: the trace has files for ranks 0-{} and {} but not for rank {n}", n - 1, later),
            ));
        }
    }
    Ok(())
}

/// The trace set of a directory or of a rank-0 file.
pub fn discover(path: &str) -> Result<TraceSet> {
    let p = Path::new(path);
    let meta = fs::metadata(p).map_err(|e| Error::io(path, &e))?;
    if meta.is_dir() {
        from_dir(p)
    } else {
        from_file(p)
    }
}

fn from_file(p: &Path) -> Result<TraceSet> {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    reject_unsupported(p, &name)?;
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let exists = |q: &Path| q.is_file();
    for pat in patterns(&name) {
        let files = family(dir, &pat, &exists);
        if files.len() > 1 {
            check_gap(dir, &pat, files.len(), &exists)?;
            return Ok(TraceSet { files, pattern: pat.show() });
        }
    }
    // One rank only (or a name without a rank number).
    Ok(TraceSet { files: vec![p.to_path_buf()], pattern: name })
}

fn from_dir(d: &Path) -> Result<TraceSet> {
    let dpath = d.display().to_string();
    let mut names = HashSet::new();
    for e in fs::read_dir(d).map_err(|e| Error::io(&dpath, &e))? {
        let e = e.map_err(|e| Error::io(&dpath, &e))?;
        // Symlinked rank files count (a trace assembled from links); follow them.
        let file = match e.file_type() {
            Ok(t) if t.is_symlink() => fs::metadata(e.path()).is_ok_and(|m| m.is_file()),
            Ok(t) => t.is_file(),
            Err(_) => false,
        };
        if file {
            names.insert(e.file_name().to_string_lossy().into_owned());
        }
    }
    let exists = |q: &Path| q.file_name().is_some_and(|n| names.contains(n.to_string_lossy().as_ref()));
    let mut sorted: Vec<&String> = names.iter().collect();
    sorted.sort();
    let mut found: Vec<(Pattern, Vec<PathBuf>)> = Vec::new();
    for name in sorted {
        if is_lap2(name) {
            continue;
        }
        for pat in patterns(name) {
            if found.iter().any(|(q, _)| *q == pat) {
                continue;
            }
            let files = family(d, &pat, &exists);
            if !files.is_empty() && looks_like_trace(&files[0]) {
                found.push((pat, files));
                break;
            }
        }
    }
    if found.is_empty() {
        if let Some(n) = names.iter().find(|n| is_lap2(n) || n.ends_with(".bz2") || n.ends_with(".xz")) {
            reject_unsupported(&d.join(n), n)?;
        }
        return Err(Error::in_file(
            &dpath,
            "is a directory without liballprof trace files (expected NAME-0.txt, NAME-1.txt, … or pmpi-trace-rank-00.txt, …; graphs are GOAL files)",
        ));
    }
    // Prefer the largest family; several of the same size are ambiguous.
    found.sort_by_key(|(_, f)| std::cmp::Reverse(f.len()));
    if found.len() > 1 && found[0].1.len() == found[1].1.len() {
        let list: Vec<String> = found.iter().take(3).map(|(p, f)| format!("{} ({} ranks)", p.show(), f.len())).collect();
        return Err(Error::in_file(&dpath, format!("several traces in this directory: {}; pass the rank-0 file instead", list.join(", "))));
    }
    let (pat, files) = found.swap_remove(0);
    check_gap(d, &pat, files.len(), &exists)?;
    Ok(TraceSet { files, pattern: pat.show() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_patterns() {
        let p = patterns("pmpi-trace-rank-00.txt");
        assert_eq!(p[0], Pattern { prefix: "pmpi-trace-rank-".into(), suffix: ".txt".into(), width: 2 });
        assert_eq!(p[0].name(7), "pmpi-trace-rank-07.txt");
        let p = patterns("run0-trace-0.dat");
        assert_eq!(p[0].prefix, "run0-trace-");
        assert_eq!(p[1].prefix, "run");
        let p = patterns("trace0.txt");
        assert_eq!(p[0].name(12), "trace12.txt");
        assert!(patterns("trace.txt").is_empty());
    }

    #[test]
    fn discovers_padded_unpadded_and_gaps() {
        let dir = std::env::temp_dir().join(format!("latitude-files-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for r in 0..12 {
            fs::write(dir.join(format!("app-{r:02}.txt")), "# header\nMPI_Init:-:1:2:3.0\n").unwrap();
        }
        fs::write(dir.join("app.goal"), "num_ranks 12\n").unwrap();
        let s = discover(dir.to_str().unwrap()).unwrap();
        assert_eq!(s.files.len(), 12);
        assert_eq!(s.pattern, "app-<r:02>.txt");
        let s = discover(dir.join("app-00.txt").to_str().unwrap()).unwrap();
        assert_eq!(s.files.len(), 12);
        // A trace made of symlinks (to files elsewhere) is the same trace.
        let links = dir.join("links");
        fs::create_dir_all(&links).unwrap();
        for r in 0..12 {
            std::os::unix::fs::symlink(dir.join(format!("app-{r:02}.txt")), links.join(format!("app-{r}.txt"))).unwrap();
        }
        let s = discover(links.to_str().unwrap()).unwrap();
        assert_eq!((s.files.len(), s.pattern.as_str()), (12, "app-<r>.txt"));
        fs::remove_file(dir.join("app-05.txt")).unwrap();
        let e = discover(dir.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("app-05.txt: missing"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_compressed_rank_files_and_their_truncated_streams() {
        use flate2::{write::GzEncoder, Compression};
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("latitude-gz-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let text = b"#@ latitude-trace 1\n\nMPI_Init:-:1:2:3.000\nMPI_Finalize:4.000:-\n#@ end finalize\n";
        for r in 0..2 {
            let mut e = GzEncoder::new(Vec::new(), Compression::fast());
            e.write_all(text).unwrap();
            fs::write(dir.join(format!("pmpi-trace-rank-{r}.txt.gz")), e.finish().unwrap()).unwrap();
        }
        let s = discover(dir.to_str().unwrap()).unwrap();
        assert_eq!((s.files.len(), s.pattern.as_str()), (2, "pmpi-trace-rank-<r>.txt.gz"));
        let mut got = Vec::new();
        open_text(&s.files[1]).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got, text);
        // A killed rank: the stream stops after a sync flush, without the gzip trailer.
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(&text[..40]).unwrap();
        e.flush().unwrap();
        let cut = dir.join("cut.txt.gz");
        fs::write(&cut, e.get_ref()).unwrap();
        got.clear();
        open_text(&cut).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got, &text[..40]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
