//! MPI calls as typed records: the name table (what Latitude models, what is local, what is
//! known but not modelled) and the field layout of every modelled call
//! (docs/reference/liballprof.md §6; our tracer writes the same layouts). Message sizes are
//! count × datatype size, in bytes.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

pub use super::coll_layouts::CollCall;
use super::coll_layouts::{coll, Layout};
use super::fields::{CommArg, FieldResult, Fields};
use crate::collectives::CollKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    Sync,
    Buffered,
    Ready,
}

/// One side of a point-to-point operation.
#[derive(Clone, Copy, Debug, Default)]
pub struct P2p {
    pub bytes: u64,
    /// Destination or source, as a rank of `comm` (constants such as ANY_SOURCE as traced).
    pub peer: i64,
    pub tag: i64,
    pub comm: CommArg,
}

/// What a call line means to the converter.
#[derive(Clone, Copy, Debug, Default)]
pub enum Call {
    Init,
    Finalize,
    Send {
        mode: SendMode,
        p: P2p,
    },
    Recv {
        p: P2p,
    },
    Isend {
        mode: SendMode,
        p: P2p,
        req: u64,
    },
    Irecv {
        p: P2p,
        req: u64,
    },
    SendInit {
        mode: SendMode,
        p: P2p,
        req: u64,
    },
    RecvInit {
        p: P2p,
        req: u64,
    },
    Start {
        req: u64,
    },
    Startall {
        count: u64,
        reqs: u64,
    },
    RequestFree {
        req: u64,
    },
    Cancel {
        req: u64,
    },
    /// Wait/Test families: `count` requests at `reqs` (`count` = 1 for Wait/Test).
    Complete {
        what: Completion,
        count: u64,
        reqs: u64,
    },
    Probe {
        peer: i64,
        tag: i64,
        comm: CommArg,
    },
    Sendrecv {
        send: P2p,
        recv: P2p,
    },
    Coll(CollCall),
    /// Creates a communicator (a `#@ comm` line follows in our traces).
    CommCreate,
    /// Local bookkeeping (rank/size queries, datatypes, timers, …): its time is computation.
    Local,
    /// A poll that completes nothing (MPI_Iprobe, MPI_Request_get_status): its time is MPI
    /// time (waiting the model re-creates), not computation.
    Poll,
    /// Known but not modelled (RMA, Abort, neighbourhood collectives, …).
    NotModelled,
    /// MPI-IO: file time is the rank's own (kept as computation); reported.
    Io,
    /// Not an MPI function Latitude knows.
    #[default]
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    Wait,
    Waitall,
    Waitany,
    Waitsome,
    Test,
    Testall,
    Testany,
    Testsome,
}

impl Completion {
    pub fn is_test(self) -> bool {
        matches!(self, Completion::Test | Completion::Testall | Completion::Testany | Completion::Testsome)
    }
}

/// How a name is parsed.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Init,
    InitThread,
    Finalize,
    Send(SendMode),
    Recv,
    Isend(SendMode),
    Irecv,
    SendInit(SendMode),
    RecvInit,
    Start,
    Startall,
    RequestFree,
    Cancel,
    Complete(Completion),
    Probe,
    Sendrecv,
    SendrecvReplace,
    Coll(CollKind, Layout, bool),
    CommCreate,
    Local,
    Poll,
    NotModelled,
    Io,
}

const LOCAL: &[&str] = &[
    "MPI_Comm_rank",
    "MPI_Comm_size",
    "MPI_Wtime",
    "MPI_Wtick",
    "MPI_Initialized",
    "MPI_Finalized",
    "MPI_Query_thread",
    "MPI_Is_thread_main",
    "MPI_Get_processor_name",
    "MPI_Get_version",
    "MPI_Get_library_version",
    "MPI_Pcontrol",
    "MPI_Error_string",
    "MPI_Error_class",
    "MPI_Alloc_mem",
    "MPI_Free_mem",
    "MPI_Get_address",
    "MPI_Address",
    "MPI_Get_count",
    "MPI_Get_elements",
    "MPI_Buffer_attach",
    "MPI_Buffer_detach",
    "MPI_Test_cancelled",
    "MPI_Reduce_local",
    "MPI_Comm_free",
    "MPI_Comm_group",
    "MPI_Comm_remote_group",
    "MPI_Comm_remote_size",
    "MPI_Comm_test_inter",
    "MPI_Cartdim_get",
    "MPI_Topo_test",
    "MPI_Comm_get_errhandler",
    "MPI_Comm_compare",
    "MPI_Comm_set_errhandler",
    "MPI_Comm_set_name",
    "MPI_Comm_get_name",
    "MPI_Comm_c2f",
    "MPI_Comm_f2c",
    "MPI_Cart_get",
    "MPI_Cart_rank",
    "MPI_Cart_coords",
    "MPI_Cart_shift",
    "MPI_Dims_create",
    "MPI_Group_size",
    "MPI_Group_rank",
    "MPI_Group_incl",
    "MPI_Group_excl",
    "MPI_Group_range_incl",
    "MPI_Group_range_excl",
    "MPI_Group_union",
    "MPI_Group_intersection",
    "MPI_Group_difference",
    "MPI_Group_compare",
    "MPI_Group_translate_ranks",
    "MPI_Group_free",
    "MPI_Type_contiguous",
    "MPI_Type_vector",
    "MPI_Type_hvector",
    "MPI_Type_create_hvector",
    "MPI_Type_indexed",
    "MPI_Type_hindexed",
    "MPI_Type_create_indexed_block",
    "MPI_Type_create_hindexed",
    "MPI_Type_struct",
    "MPI_Type_create_struct",
    "MPI_Type_create_resized",
    "MPI_Type_create_subarray",
    "MPI_Type_dup",
    "MPI_Type_commit",
    "MPI_Type_free",
    "MPI_Type_size",
    "MPI_Type_extent",
    "MPI_Type_get_extent",
    "MPI_Type_lb",
    "MPI_Type_ub",
    "MPI_Pack",
    "MPI_Unpack",
    "MPI_Pack_size",
    "MPI_Op_create",
    "MPI_Op_free",
    "MPI_Attr_get",
    "MPI_Attr_put",
    "MPI_Comm_get_attr",
    "MPI_Comm_set_attr",
    "MPI_Keyval_create",
    "MPI_Keyval_free",
    "MPI_Comm_create_keyval",
    "MPI_Comm_free_keyval",
    "MPI_Info_create",
    "MPI_Info_set",
    "MPI_Info_get",
    "MPI_Info_free",
    "MPI_Info_dup",
    "MPI_Errhandler_create",
    "MPI_Errhandler_set",
    "MPI_Errhandler_get",
    "MPI_Errhandler_free",
    "MPI_Graph_get",
    "MPI_Graphdims_get",
    "MPI_Graph_neighbors",
    "MPI_Graph_neighbors_count",
    "MPI_Status_set_elements",
    "MPI_Status_set_cancelled",
    "MPI_Get_elements_x",
    "MPI_Type_size_x",
];

const COMM_CREATE: &[&str] = &[
    "MPI_Comm_dup",
    "MPI_Comm_dup_with_info",
    "MPI_Comm_idup",
    "MPI_Comm_split",
    "MPI_Comm_split_type",
    "MPI_Comm_create",
    "MPI_Comm_create_group",
    "MPI_Intercomm_create",
    "MPI_Intercomm_merge",
    "MPI_Cart_create",
    "MPI_Cart_sub",
    "MPI_Graph_create",
    "MPI_Dist_graph_create_adjacent",
    "MPI_Dist_graph_create",
];

type Table = FxHashMap<&'static [u8], Kind>;

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        use CollKind as C;
        use Completion as W;
        use SendMode::*;
        let mut t = Table::default();
        let mut add = |n: &'static str, k: Kind| {
            t.insert(n.as_bytes(), k);
        };
        add("MPI_Init", Kind::Init);
        add("MPI_Init_thread", Kind::InitThread);
        add("MPI_Finalize", Kind::Finalize);
        for (n, m) in [("MPI_Send", Standard), ("MPI_Ssend", Sync), ("MPI_Bsend", Buffered), ("MPI_Rsend", Ready)] {
            add(n, Kind::Send(m));
        }
        for (n, m) in [("MPI_Isend", Standard), ("MPI_Issend", Sync), ("MPI_Ibsend", Buffered), ("MPI_Irsend", Ready)] {
            add(n, Kind::Isend(m));
        }
        for (n, m) in [("MPI_Send_init", Standard), ("MPI_Ssend_init", Sync), ("MPI_Bsend_init", Buffered), ("MPI_Rsend_init", Ready)] {
            add(n, Kind::SendInit(m));
        }
        add("MPI_Recv", Kind::Recv);
        add("MPI_Irecv", Kind::Irecv);
        add("MPI_Recv_init", Kind::RecvInit);
        add("MPI_Start", Kind::Start);
        add("MPI_Startall", Kind::Startall);
        add("MPI_Request_free", Kind::RequestFree);
        add("MPI_Cancel", Kind::Cancel);
        for (n, w) in [
            ("MPI_Wait", W::Wait),
            ("MPI_Waitall", W::Waitall),
            ("MPI_Waitany", W::Waitany),
            ("MPI_Waitsome", W::Waitsome),
            ("MPI_Test", W::Test),
            ("MPI_Testall", W::Testall),
            ("MPI_Testany", W::Testany),
            ("MPI_Testsome", W::Testsome),
        ] {
            add(n, Kind::Complete(w));
        }
        add("MPI_Probe", Kind::Probe);
        add("MPI_Sendrecv", Kind::Sendrecv);
        add("MPI_Sendrecv_replace", Kind::SendrecvReplace);
        let colls: [(&'static str, &'static str, C, Layout); 17] = [
            ("MPI_Barrier", "MPI_Ibarrier", C::Barrier, Layout::Barrier),
            ("MPI_Bcast", "MPI_Ibcast", C::Bcast, Layout::Bcast),
            ("MPI_Reduce", "MPI_Ireduce", C::Reduce, Layout::Reduce),
            ("MPI_Allreduce", "MPI_Iallreduce", C::Allreduce, Layout::Allreduce),
            ("MPI_Scan", "MPI_Iscan", C::Scan, Layout::Allreduce),
            ("MPI_Exscan", "MPI_Iexscan", C::Exscan, Layout::Allreduce),
            ("MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", C::ReduceScatter, Layout::Allreduce),
            ("MPI_Reduce_scatter", "MPI_Ireduce_scatter", C::ReduceScatter, Layout::ReduceScatter),
            ("MPI_Gather", "MPI_Igather", C::Gather, Layout::Rooted),
            ("MPI_Scatter", "MPI_Iscatter", C::Scatter, Layout::Rooted),
            ("MPI_Allgather", "MPI_Iallgather", C::Allgather, Layout::All),
            ("MPI_Alltoall", "MPI_Ialltoall", C::Alltoall, Layout::All),
            ("MPI_Gatherv", "MPI_Igatherv", C::Gatherv, Layout::Gatherv),
            ("MPI_Scatterv", "MPI_Iscatterv", C::Scatterv, Layout::Scatterv),
            ("MPI_Allgatherv", "MPI_Iallgatherv", C::Allgatherv, Layout::Allgatherv),
            ("MPI_Alltoallv", "MPI_Ialltoallv", C::Alltoallv, Layout::Alltoallv),
            ("MPI_Alltoallw", "MPI_Ialltoallw", C::Alltoallv, Layout::Alltoallw),
        ];
        for (b, nb, k, l) in colls {
            add(b, Kind::Coll(k, l, false));
            add(nb, Kind::Coll(k, l, true));
        }
        for n in LOCAL {
            add(n, Kind::Local);
        }
        for n in ["MPI_Iprobe", "MPI_Request_get_status"] {
            add(n, Kind::Poll);
        }
        for n in COMM_CREATE {
            add(n, Kind::CommCreate);
        }
        for n in [
            "MPI_Abort",
            "MPI_Mprobe",
            "MPI_Improbe",
            "MPI_Mrecv",
            "MPI_Imrecv",
            "MPI_Win_create",
            "MPI_Win_allocate",
            "MPI_Win_free",
            "MPI_Win_fence",
            "MPI_Win_lock",
            "MPI_Win_unlock",
            "MPI_Win_lock_all",
            "MPI_Win_unlock_all",
            "MPI_Win_flush",
            "MPI_Win_post",
            "MPI_Win_start",
            "MPI_Win_complete",
            "MPI_Win_wait",
            "MPI_Put",
            "MPI_Get",
            "MPI_Accumulate",
            "MPI_Get_accumulate",
            "MPI_Fetch_and_op",
            "MPI_Compare_and_swap",
            "MPI_Neighbor_allgather",
            "MPI_Neighbor_allgatherv",
            "MPI_Neighbor_alltoall",
            "MPI_Neighbor_alltoallv",
            "MPI_Neighbor_alltoallw",
            "MPI_Comm_spawn",
            "MPI_Comm_accept",
            "MPI_Comm_connect",
            "MPI_Comm_disconnect",
        ] {
            add(n, Kind::NotModelled);
        }
        for n in [
            "MPI_File_open",
            "MPI_File_close",
            "MPI_File_delete",
            "MPI_File_get_size",
            "MPI_File_set_size",
            "MPI_File_sync",
            "MPI_File_seek",
            "MPI_File_set_view",
            "MPI_File_read",
            "MPI_File_read_all",
            "MPI_File_read_at",
            "MPI_File_read_at_all",
            "MPI_File_write",
            "MPI_File_write_all",
            "MPI_File_write_at",
            "MPI_File_write_at_all",
            "MPI_File_iread",
            "MPI_File_iwrite",
            "MPI_File_iread_at",
            "MPI_File_iwrite_at",
        ] {
            add(n, Kind::Io);
        }
        t
    })
}

/// The signature shown in errors, e.g. `buf:count:datatype:dest:tag:comm`.
fn signature(k: Kind) -> String {
    let s = match k {
        Kind::Init => "argc:argv",
        Kind::InitThread => "argc:argv:required:provided",
        Kind::Finalize => "no arguments",
        Kind::Send(_) => "buf:count:datatype:dest:tag:comm",
        Kind::Recv => "buf:count:datatype:source:tag:comm:status",
        Kind::Isend(_) | Kind::SendInit(_) => "buf:count:datatype:dest:tag:comm:request",
        Kind::Irecv | Kind::RecvInit => "buf:count:datatype:source:tag:comm:request",
        Kind::Start | Kind::RequestFree | Kind::Cancel => "request",
        Kind::Startall => "count:requests",
        Kind::Complete(w) => match w {
            Completion::Wait => "request:status",
            Completion::Test => "request:flag:status",
            Completion::Waitall => "count:requests:statuses",
            Completion::Testall => "count:requests:flag:statuses",
            Completion::Waitany => "count:requests:index:status",
            Completion::Testany => "count:requests:index:flag:status",
            Completion::Waitsome | Completion::Testsome => "incount:requests:outcount:indices:statuses",
        },
        Kind::Probe => "source:tag:comm:status",
        Kind::Sendrecv => "sendbuf:sendcount:sendtype:dest:sendtag:recvbuf:recvcount:recvtype:source:recvtag:comm:status",
        Kind::SendrecvReplace => "buf:count:datatype:dest:sendtag:source:recvtag:comm:status",
        Kind::Coll(_, l, nb) => {
            let s = match l {
                Layout::Barrier => "comm",
                Layout::Bcast => "buffer:count:datatype:root:comm",
                Layout::Reduce => "sendbuf:recvbuf:count:datatype:op:root:comm",
                Layout::Allreduce => "sendbuf:recvbuf:count:datatype:op:comm",
                Layout::ReduceScatter => "sendbuf:recvbuf:recvcounts(2):datatype:op:comm",
                Layout::Rooted => "sendbuf:sendcount:sendtype:recvbuf:recvcount:recvtype:root:comm",
                Layout::All => "sendbuf:sendcount:sendtype:recvbuf:recvcount:recvtype:comm",
                Layout::Gatherv => "sendbuf:sendcount:sendtype:recvbuf:recvcounts(2):displs(2):recvtype:root:comm",
                Layout::Scatterv => "sendbuf:sendcounts(2):displs(2):sendtype:recvbuf:recvcount:recvtype:root:comm",
                Layout::Allgatherv => "sendbuf:sendcount:sendtype:recvbuf:recvcounts(2):displs(2):recvtype:comm",
                Layout::Alltoallv => "sendbuf:sendcounts(2):sdispls(2):sendtype:recvbuf:recvcounts(2):rdispls(2):recvtype:comm",
                Layout::Alltoallw => "sendbuf:sendcounts(2):sdispls(2):sendtypes:recvbuf:recvcounts(2):rdispls(2):recvtypes:comm",
            };
            return if nb { format!("{s}:request") } else { s.to_string() };
        }
        Kind::CommCreate | Kind::Local | Kind::Poll | Kind::NotModelled | Kind::Io => "",
    };
    s.to_string()
}

/// How the reader treats each MPI function name it knows: `"fields"` (parsed and modelled
/// from its arguments), `"local"` (bookkeeping: its time is computation), `"comm_create"`,
/// `"not_modelled"` or `"io"` (no argument fields read; reported). Converters from other
/// trace formats use it to know which calls they must write with arguments.
pub fn known_calls() -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<(&'static str, &'static str)> = table()
        .iter()
        .map(|(name, kind)| {
            let class = match kind {
                Kind::Local => "local",
                Kind::CommCreate => "comm_create",
                Kind::NotModelled => "not_modelled",
                Kind::Io => "io",
                _ => "fields",
            };
            (std::str::from_utf8(name).unwrap_or("?"), class)
        })
        .collect();
    v.sort_unstable();
    v
}

/// Is this an MPI function name at all (for lines that are not)?
pub fn plausible_name(name: &[u8]) -> bool {
    !name.is_empty() && name.len() < 64 && name[0].is_ascii_alphabetic() && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

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
