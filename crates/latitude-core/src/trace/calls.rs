//! MPI calls as typed records: the field layout of every modelled call
//! (docs/reference/liballprof.md §6; our tracer writes the same layouts), parsed into the
//! types of call_types.rs with the name table of names.rs. Message sizes are
//! count × datatype size, in bytes.

pub use super::call_types::{Call, CollCall, Completion, P2p, SendMode};
use super::coll_layouts::coll;
use super::fields::{FieldResult, Fields};
pub use super::names::{known_calls, plausible_name};
use super::names::{signature, table, Kind};

/// Parse the argument fields of call `name` into a typed call. Count lists go to `counts`
/// and `rcounts`.
pub fn parse_call(name: &[u8], f: &mut Fields, counts: &mut Vec<u64>, rcounts: &mut Vec<u64>) -> FieldResult<Call> {
    let Some(&kind) = table().get(name) else { return Ok(Call::Unknown) };
    let call = match kind {
        Kind::Local => return Ok(Call::Local),
        Kind::Poll => return Ok(Call::Poll),
        Kind::NotModelled => return Ok(Call::NotModelled),
        Kind::Io => return Ok(Call::Io),
        Kind::CommCreate => return Ok(Call::CommCreate),
        _ => parse_fields(kind, f, counts, rcounts)?,
    };
    if !f.finished() {
        f.end(std::str::from_utf8(name).unwrap_or("call"), &signature(kind))?;
    }
    Ok(call)
}

fn p2p(f: &mut Fields, peer: &str) -> FieldResult<P2p> {
    f.addr("buf")?;
    let count = f.count_arg("count")?;
    let dt = f.dtype("datatype")?;
    let peer = f.int(peer)?;
    let tag = f.int("tag")?;
    let comm = f.comm("comm")?;
    Ok(P2p { bytes: count.saturating_mul(dt.size), peer, tag, comm })
}

fn parse_fields(kind: Kind, f: &mut Fields, counts: &mut Vec<u64>, rcounts: &mut Vec<u64>) -> FieldResult<Call> {
    Ok(match kind {
        Kind::Init => {
            f.skip(2, "argc/argv")?;
            Call::Init
        }
        Kind::InitThread => {
            f.skip(2, "argc/argv")?;
            f.int("required")?;
            f.addr("provided")?;
            Call::Init
        }
        Kind::Finalize => Call::Finalize,
        Kind::Send(mode) => Call::Send { mode, p: p2p(f, "dest")? },
        Kind::Recv => {
            let p = p2p(f, "source")?;
            f.addr("status")?;
            Call::Recv { p }
        }
        Kind::Isend(mode) => Call::Isend { mode, p: p2p(f, "dest")?, req: f.addr("request")? },
        Kind::Irecv => Call::Irecv { p: p2p(f, "source")?, req: f.addr("request")? },
        Kind::SendInit(mode) => Call::SendInit { mode, p: p2p(f, "dest")?, req: f.addr("request")? },
        Kind::RecvInit => Call::RecvInit { p: p2p(f, "source")?, req: f.addr("request")? },
        Kind::Start => Call::Start { req: f.addr("request")? },
        Kind::Startall => Call::Startall { count: f.count_arg("count")?, reqs: f.addr("requests")? },
        Kind::RequestFree => Call::RequestFree { req: f.addr("request")? },
        Kind::Cancel => Call::Cancel { req: f.addr("request")? },
        Kind::Complete(what) => {
            let (count, reqs) = match what {
                Completion::Wait | Completion::Test => (1, f.addr("request")?),
                _ => (f.count_arg("count")?, f.addr("requests")?),
            };
            let rest = match what {
                Completion::Wait | Completion::Waitall => 1,
                Completion::Test | Completion::Testall | Completion::Waitany => 2,
                Completion::Testany | Completion::Waitsome | Completion::Testsome => 3,
            };
            f.skip(rest, "status/flag/index")?;
            Call::Complete { what, count, reqs }
        }
        Kind::Probe => {
            let peer = f.int("source")?;
            let tag = f.int("tag")?;
            let comm = f.comm("comm")?;
            f.addr("status")?;
            Call::Probe { peer, tag, comm }
        }
        Kind::Sendrecv => {
            f.addr("sendbuf")?;
            let sc = f.count_arg("sendcount")?;
            let st = f.dtype("sendtype")?;
            let dest = f.int("dest")?;
            let stag = f.int("sendtag")?;
            let mut recv = p2p(f, "source")?;
            f.addr("status")?;
            let send = P2p { bytes: sc.saturating_mul(st.size), peer: dest, tag: stag, comm: recv.comm };
            recv.comm = send.comm;
            Call::Sendrecv { send, recv }
        }
        Kind::SendrecvReplace => {
            f.addr("buf")?;
            let count = f.count_arg("count")?;
            let dt = f.dtype("datatype")?;
            let dest = f.int("dest")?;
            let stag = f.int("sendtag")?;
            let src = f.int("source")?;
            let rtag = f.int("recvtag")?;
            let comm = f.comm("comm")?;
            f.addr("status")?;
            let bytes = count.saturating_mul(dt.size);
            Call::Sendrecv { send: P2p { bytes, peer: dest, tag: stag, comm }, recv: P2p { bytes, peer: src, tag: rtag, comm } }
        }
        Kind::Coll(kind, layout, nb) => Call::Coll(coll(kind, layout, nb, f, counts, rcounts)?),
        Kind::CommCreate | Kind::Local | Kind::Poll | Kind::NotModelled | Kind::Io => unreachable!("handled by parse_call"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::CollKind;

    fn spans(line: &[u8]) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        let mut start = 0;
        for (i, &c) in line.iter().enumerate() {
            if c == b':' {
                v.push((start as u32, i as u32));
                start = i + 1;
            }
        }
        v.push((start as u32, line.len() as u32));
        v
    }

    fn parse(name: &str, args: &str) -> FieldResult<(Call, Vec<u64>, Vec<u64>)> {
        let s = spans(args.as_bytes());
        let mut f = Fields::new(args.as_bytes(), &s);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let c = parse_call(name.as_bytes(), &mut f, &mut a, &mut b)?;
        Ok((c, a, b))
    }

    #[test]
    fn point_to_point_layouts() {
        let (c, _, _) = parse("MPI_Isend", "140735000539176:3:1,4,4:1:7:6575616,0,4:140735000539136").unwrap();
        match c {
            Call::Isend { mode: SendMode::Standard, p, req } => {
                assert_eq!((p.bytes, p.peer, p.tag, p.comm.size, req), (12, 1, 7, 4, 140735000539136));
            }
            other => panic!("{other:?}"),
        }
        let (c, _, _) = parse("MPI_Sendrecv", "1:2:10,8,8:3:5:2:4:1,4,4:-1:6:9,2,4:0").unwrap();
        match c {
            Call::Sendrecv { send, recv } => {
                assert_eq!((send.bytes, send.peer, send.tag), (16, 3, 5));
                assert_eq!((recv.bytes, recv.peer, recv.tag, recv.comm.rank), (16, -1, 6, 2));
            }
            other => panic!("{other:?}"),
        }
        let err = parse("MPI_Send", "1:2:10,8,8:3:5").unwrap_err();
        assert!(err.contains("missing field 6 (comm)"), "{err}");
        let err = parse("MPI_Send", "1:2:10,8,8:3:5:9,0,4:77").unwrap_err();
        assert!(err.contains("MPI_Send has 7 argument fields, expected 6 (buf:count:datatype:dest:tag:comm)"), "{err}");
    }

    #[test]
    fn collective_layouts() {
        let (c, _, _) = parse("MPI_Bcast", "5648928:12:13,1,1:0:5641280,0,4").unwrap();
        let Call::Coll(c) = c else { panic!() };
        assert_eq!((c.kind, c.bytes, c.root, c.comm.size), (CollKind::Bcast, 12, 0, 4));
        // Gather off the root: the send side; at the root: the receive side.
        let (c, _, _) = parse("MPI_Gather", "1:3:1,4,4:2:0:77,0,0:0:9,1,4").unwrap();
        let Call::Coll(g) = c else { panic!() };
        assert_eq!(g.bytes, 12);
        let (c, _, _) = parse("MPI_Gather", "1:3:1,4,4:2:3:1,4,4:0:9,0,4").unwrap();
        let Call::Coll(g) = c else { panic!() };
        assert_eq!(g.bytes, 12);
        let (c, counts, rcounts) = parse("MPI_Ialltoallv", "1:2:1,2,3:4:5,6,7:10,8,8:3:9:3,2,1:4:0,3,5:10,8,8:9,1,3:555").unwrap();
        let Call::Coll(a) = c else { panic!() };
        assert!(a.nonblocking && a.has_rcounts);
        assert_eq!(a.req, 555);
        assert_eq!(counts, vec![8, 16, 24]);
        assert_eq!(rcounts, vec![24, 16, 8]);
        let (c, counts, _) = parse("MPI_Reduce_scatter", "1:2:3:4,4,4:1,4,4:3:9,0,3").unwrap();
        assert!(matches!(c, Call::Coll(CollCall { kind: CollKind::ReduceScatter, .. })));
        assert_eq!(counts, vec![16, 16, 16]);
        assert!(matches!(parse("MPI_Win_fence", "x").unwrap().0, Call::NotModelled));
        assert!(matches!(parse("MPI_Comm_rank", "1,0,4:2").unwrap().0, Call::Local));
        assert!(matches!(parse("MPI_Foo", "").unwrap().0, Call::Unknown));
    }
}
