//! Latitude's `#@` extension lines (docs/trace-format.md of the tracer): what plain
//! liballprof v1 loses. After a call line they describe that call; before the first call
//! they form the header.
//!
//! ```text
//! #@ latitude-trace 1                  header: format version
//! #@ world rank=R size=N ...           header: world rank and size
//! #@ request_size 8                    header: sizeof(MPI_Request)
//! #@ const any_source=-1 any_tag=-1 proc_null=-2 ...
//! #@ comm H seq=K world=0-3,7 [remote=...]   a communicator's members as world ranks
//! #@ done 12,15                        requests completed, named by the index of the call
//!                                      record that created them (0 = the first record)
//! #@ start 4,5 / #@ free 4 / #@ cancel 9    persistent starts, frees, cancels
//! #@ cancelled 9                       after a done: request 9's cancellation succeeded
//! #@ status [call=I] src=S tag=T bytes=B    a wildcard receive's actual source (world rank)
//! #@ polls n=N busy=US [calls=...]     the call line stands for N unsuccessful polls (the
//!                                      first's fields, the last's end), US µs inside them
//! #@ typesizes send=.. recv=..         per-peer type sizes of MPI_Alltoallw
//! #@ end finalize                      trailer
//! ```
//! Unknown keys are ignored so that newer traces still read.

use super::fields::{parse_i64, parse_u64, Time};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommDef {
    pub handle: u64,
    pub seq: u64,
    /// World rank of each member (None if a member is outside MPI_COMM_WORLD).
    pub world: Option<Vec<u32>>,
    pub remote: Option<Vec<u32>>,
    pub intercomm: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// Creating call of a nonblocking receive (None: the blocking call itself).
    pub call: Option<u64>,
    pub src: i64,
    pub tag: i64,
    pub bytes: u64,
}

/// `#@ polls`: a record that stands for `n` unsuccessful polls (MPI_Test*, MPI_Iprobe) made
/// between its start and end time, `busy` of which inside the calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Polls {
    pub n: u64,
    pub busy: Time,
}

/// Extension lines attached to one call record (buffers reused between records).
#[derive(Clone, Debug, Default)]
pub struct Ext {
    pub done: Option<Vec<u64>>,
    pub start: Option<Vec<u64>>,
    pub free: Option<Vec<u64>>,
    pub cancel: Option<Vec<u64>>,
    /// Requests of `done` whose cancellation succeeded (one `#@ cancelled` line each).
    pub cancelled: Vec<u64>,
    pub polls: Option<Polls>,
    pub statuses: Vec<Status>,
    pub comms: Vec<CommDef>,
    pub typesizes: Option<(Vec<u64>, Vec<u64>)>,
}

impl Ext {
    pub fn clear(&mut self) {
        for v in [&mut self.done, &mut self.start, &mut self.free, &mut self.cancel] {
            if let Some(v) = v {
                v.clear();
            }
            *v = None;
        }
        self.statuses.clear();
        self.comms.clear();
        self.typesizes = None;
        self.cancelled.clear();
        self.polls = None;
    }

    pub fn is_empty(&self) -> bool {
        self.done.is_none()
            && self.start.is_none()
            && self.free.is_none()
            && self.cancel.is_none()
            && self.statuses.is_empty()
            && self.comms.is_empty()
            && self.typesizes.is_none()
            && self.cancelled.is_empty()
            && self.polls.is_none()
    }
}

/// Header facts.
#[derive(Clone, Debug, Default)]
pub struct Header {
    /// `#@ latitude-trace V` was present.
    pub latitude: Option<u32>,
    /// `#@ mpi TEXT`: the MPI library's version line.
    pub mpi: Option<String>,
    pub world_rank: Option<u32>,
    pub world_size: Option<u32>,
    pub request_size: Option<u32>,
    pub any_source: Option<i64>,
    pub any_tag: Option<i64>,
    pub proc_null: Option<i64>,
    pub comms: Vec<CommDef>,
    /// `#@ end REASON`
    pub end: Option<String>,
    /// Set at the end of the file: non-persistent requests never completed nor freed
    /// (how many, line of the first one's creating call).
    pub unfinished_requests: Option<(usize, u64)>,
}

/// One parsed extension line.
pub enum Line {
    Header,
    Attached,
    End,
    Ignored,
}

fn ids(rest: &[u8], out: &mut Vec<u64>) -> Result<(), String> {
    out.clear();
    if rest == b"-" {
        return Ok(());
    }
    for t in rest.split(|&c| c == b',') {
        out.push(parse_u64(t).ok_or_else(|| format!("expected comma-separated call indices or '-', got '{}'", crate::text::shown(rest)))?);
    }
    Ok(())
}

fn kv<'a>(tok: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let k = key.as_bytes();
    (tok.len() > k.len() && tok.starts_with(k) && tok[k.len()] == b'=').then(|| &tok[k.len() + 1..])
}

/// Most ranks a communicator may list (the largest world a GOAL file may have, 2^24): a
/// line of ranges such as `0-67108863,0-67108863,…` must not claim unbounded memory.
const MAX_RANKS: u64 = 1 << 24;

/// `0-3,5,-32766` → ranks (None if any is negative: a process outside the world).
fn rank_list(text: &[u8]) -> Result<Option<Vec<u32>>, String> {
    let bad = || format!("expected a rank list such as 0-3,5, got '{}'", crate::text::shown(text));
    let mut out = Vec::new();
    let mut outside = false;
    for item in text.split(|&c| c == b',') {
        if item.first() == Some(&b'-') {
            parse_i64(item).ok_or_else(bad)?;
            outside = true;
            continue;
        }
        match item.iter().position(|&c| c == b'-') {
            Some(d) => {
                let (a, b) = (parse_u64(&item[..d]).ok_or_else(bad)?, parse_u64(&item[d + 1..]).ok_or_else(bad)?);
                if b < a || b - a > 1 << 26 || b > u32::MAX as u64 || out.len() as u64 + (b - a) > MAX_RANKS {
                    return Err(bad());
                }
                out.extend(a as u32..=b as u32);
            }
            None => out.push(u32::try_from(parse_u64(item).ok_or_else(bad)?).map_err(|_| bad())?),
        }
    }
    Ok((!outside).then_some(out))
}

fn comm_def(rest: &[u8]) -> Result<CommDef, String> {
    let bad = |why: &str| format!("'#@ comm': {why} (expected 'HANDLE seq=K world=RANKS [remote=RANKS]')");
    let mut toks = rest.split(|&c| c == b' ').filter(|t| !t.is_empty());
    let handle = toks.next().and_then(parse_u64).ok_or_else(|| bad("no handle"))?;
    let (mut seq, mut world, mut remote, mut intercomm) = (None, None, None, false);
    for t in toks {
        if let Some(v) = kv(t, "seq") {
            seq = Some(parse_u64(v).ok_or_else(|| bad("bad seq"))?);
        } else if let Some(v) = kv(t, "world") {
            world = Some(rank_list(v)?);
        } else if let Some(v) = kv(t, "remote") {
            remote = rank_list(v)?;
            intercomm = true;
        }
    }
    let world = world.ok_or_else(|| bad("no world= list"))?;
    Ok(CommDef { handle, seq: seq.ok_or_else(|| bad("no seq="))?, world, remote, intercomm })
}

fn status(rest: &[u8]) -> Result<Status, String> {
    let bad = || format!("expected '[call=I] src=S tag=T bytes=B', got '{}'", crate::text::shown(rest));
    let (mut call, mut src, mut tag, mut bytes) = (None, None, None, None);
    for t in rest.split(|&c| c == b' ').filter(|t| !t.is_empty()) {
        if let Some(v) = kv(t, "call") {
            call = Some(parse_u64(v).ok_or_else(bad)?);
        } else if let Some(v) = kv(t, "src") {
            src = Some(parse_i64(v).ok_or_else(bad)?);
        } else if let Some(v) = kv(t, "tag") {
            tag = Some(parse_i64(v).ok_or_else(bad)?);
        } else if let Some(v) = kv(t, "bytes") {
            bytes = Some(parse_u64(v).ok_or_else(bad)?);
        }
    }
    match (src, tag, bytes) {
        (Some(src), Some(tag), Some(bytes)) => Ok(Status { call, src, tag, bytes }),
        _ => Err(bad()),
    }
}

fn polls(rest: &[u8]) -> Result<Polls, String> {
    let bad = || format!("'#@ polls': expected 'n=N busy=US', got '{}'", String::from_utf8_lossy(rest));
    let (mut n, mut busy) = (None, None);
    for t in rest.split(|&c| c == b' ').filter(|t| !t.is_empty()) {
        if let Some(v) = kv(t, "n") {
            n = Some(parse_u64(v).filter(|&n| n >= 1).ok_or_else(bad)?);
        } else if let Some(v) = kv(t, "busy") {
            busy = Some(Time::parse(v).ok_or_else(bad)?);
        }
    }
    match (n, busy) {
        (Some(n), Some(busy)) => Ok(Polls { n, busy }),
        _ => Err(bad()),
    }
}

fn u64_list(v: &[u8]) -> Option<Vec<u64>> {
    v.split(|&c| c == b',').map(parse_u64).collect()
}

/// Parse `#@ ...` (the text after `#@ `) into the header (before the first call) or the
/// record's `ext`.
pub fn parse_line(text: &[u8], in_header: bool, header: &mut Header, ext: &mut Ext) -> Result<Line, String> {
    let sp = text.iter().position(|&c| c == b' ').unwrap_or(text.len());
    let (key, rest) = (&text[..sp], if sp < text.len() { &text[sp + 1..] } else { &b""[..] });
    let rest = rest.trim_ascii_end();
    let list = |slot: &mut Option<Vec<u64>>| -> Result<Line, String> {
        let mut v = slot.take().unwrap_or_default();
        ids(rest, &mut v)?;
        *slot = Some(v);
        Ok(Line::Attached)
    };
    match key {
        b"latitude-trace" => {
            header.latitude = Some(parse_u64(rest).ok_or("'#@ latitude-trace': expected a version number")? as u32);
            Ok(Line::Header)
        }
        b"mpi" => {
            header.mpi = Some(crate::text::shown(rest).chars().take(80).collect());
            Ok(Line::Header)
        }
        b"world" => {
            for t in rest.split(|&c| c == b' ') {
                if let Some(v) = kv(t, "rank") {
                    header.world_rank = parse_u64(v).map(|x| x as u32);
                } else if let Some(v) = kv(t, "size") {
                    header.world_size = parse_u64(v).map(|x| x as u32);
                }
            }
            Ok(Line::Header)
        }
        b"request_size" => {
            header.request_size = Some(parse_u64(rest).filter(|&s| s == 4 || s == 8).ok_or("'#@ request_size': expected 4 or 8")? as u32);
            Ok(Line::Header)
        }
        b"const" => {
            for t in rest.split(|&c| c == b' ') {
                if let Some(v) = kv(t, "any_source") {
                    header.any_source = parse_i64(v);
                } else if let Some(v) = kv(t, "any_tag") {
                    header.any_tag = parse_i64(v);
                } else if let Some(v) = kv(t, "proc_null") {
                    header.proc_null = parse_i64(v);
                }
            }
            Ok(Line::Header)
        }
        b"comm" => {
            let def = comm_def(rest)?;
            if in_header {
                header.comms.push(def);
                Ok(Line::Header)
            } else {
                ext.comms.push(def);
                Ok(Line::Attached)
            }
        }
        b"done" => list(&mut ext.done),
        b"start" => list(&mut ext.start),
        b"free" => list(&mut ext.free),
        b"cancel" => list(&mut ext.cancel),
        b"status" => {
            ext.statuses.push(status(rest)?);
            Ok(Line::Attached)
        }
        b"cancelled" => {
            ext.cancelled.push(parse_u64(rest).ok_or("'#@ cancelled': expected one call index")?);
            Ok(Line::Attached)
        }
        b"polls" => {
            ext.polls = Some(polls(rest)?);
            Ok(Line::Attached)
        }
        b"typesizes" => {
            let mut it = rest.split(|&c| c == b' ');
            let s = it.next().and_then(|t| kv(t, "send")).and_then(u64_list);
            let r = it.next().and_then(|t| kv(t, "recv")).and_then(u64_list);
            match (s, r) {
                (Some(s), Some(r)) => {
                    ext.typesizes = Some((s, r));
                    Ok(Line::Attached)
                }
                _ => Err("'#@ typesizes': expected 'send=S0,S1,... recv=R0,R1,...'".into()),
            }
        }
        b"end" => {
            header.end = Some(crate::text::shown(rest));
            Ok(Line::End)
        }
        _ => Ok(Line::Ignored),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_extension_lines() {
        let (mut h, mut e) = (Header::default(), Ext::default());
        parse_line(b"comm 6575616 seq=0 world=0-3,7", true, &mut h, &mut e).unwrap();
        assert_eq!(h.comms[0].world, Some(vec![0, 1, 2, 3, 7]));
        parse_line(b"done 12,15", false, &mut h, &mut e).unwrap();
        assert_eq!(e.done, Some(vec![12, 15]));
        parse_line(b"start -", false, &mut h, &mut e).unwrap();
        assert_eq!(e.start, Some(vec![]));
        parse_line(b"status call=4 src=3 tag=-7 bytes=80", false, &mut h, &mut e).unwrap();
        assert_eq!(e.statuses[0], Status { call: Some(4), src: 3, tag: -7, bytes: 80 });
        parse_line(b"const any_source=-2 any_tag=-1 proc_null=-1 root=-4", true, &mut h, &mut e).unwrap();
        assert_eq!((h.any_source, h.proc_null), (Some(-2), Some(-1)));
        parse_line(b"comm 5 seq=1 world=0,-32766", false, &mut h, &mut e).unwrap();
        assert_eq!(e.comms[0].world, None);
        assert!(matches!(parse_line(b"future-thing 1 2 3", false, &mut h, &mut e).unwrap(), Line::Ignored));
        parse_line(b"cancelled 9", false, &mut h, &mut e).unwrap();
        parse_line(b"cancelled 11", false, &mut h, &mut e).unwrap();
        assert_eq!(e.cancelled, vec![9, 11]);
        parse_line(b"polls n=3092 busy=230.512 calls=MPI_Testany:2000,MPI_Test:1092", false, &mut h, &mut e).unwrap();
        assert_eq!(e.polls.map(|p| (p.n, p.busy.0)), Some((3092, Time::parse(b"230.512").unwrap().0)));
        for bad in [
            &b"done 1,x"[..],
            b"status src=1",
            b"comm x seq=0 world=0",
            b"comm 5 seq=0 world=3-1",
            b"request_size 5",
            b"polls n=0 busy=1.0",
            b"polls busy=1.0",
            b"cancelled x",
        ] {
            assert!(parse_line(bad, false, &mut h, &mut e).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
