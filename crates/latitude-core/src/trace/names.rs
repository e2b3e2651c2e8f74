//! The MPI function names a trace may hold and how each is read: modelled from its argument
//! fields (with the signature errors show), local bookkeeping (computation), a communicator
//! constructor, known but not modelled, or MPI-IO.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::call_types::{Completion, SendMode};
use super::coll_layouts::Layout;
use crate::collectives::CollKind;

/// How a name is parsed.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kind {
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

pub(super) type Table = FxHashMap<&'static [u8], Kind>;

pub(super) fn table() -> &'static Table {
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
pub(super) fn signature(k: Kind) -> String {
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
