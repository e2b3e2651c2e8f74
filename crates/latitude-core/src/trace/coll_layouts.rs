//! Field layouts of the collective calls (docs/reference/liballprof.md §6): which fields give
//! the message sizes, the root and the per-rank count lists, on the root and elsewhere.

use super::fields::{CommArg, FieldResult, Fields};
use crate::collectives::CollKind;

/// A collective call. Per-rank count lists live in `Record::counts` / `Record::rcounts`.
#[derive(Clone, Copy, Debug)]
pub struct CollCall {
    pub kind: CollKind,
    pub nonblocking: bool,
    pub root: i64,
    /// See `collectives::RankCall::bytes`.
    pub bytes: u64,
    pub comm: CommArg,
    /// Request address (nonblocking).
    pub req: u64,
    /// `counts` holds per-rank blocks (`RankCall::blocks`), `rcounts` the receive side of
    /// alltoallv.
    pub has_counts: bool,
    pub has_rcounts: bool,
    /// MPI_Alltoallw: sizes come from the `#@ typesizes` line.
    pub alltoallw: bool,
}

/// Field layouts of the collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Barrier,
    Bcast,
    Reduce,
    /// Allreduce, Scan, Exscan, Reduce_scatter_block: sbuf, rbuf, count, dt, op, comm
    Allreduce,
    ReduceScatter,
    /// Gather / Scatter: sbuf, scount, stype, rbuf, rcount, rtype, root, comm
    Rooted,
    /// Allgather / Alltoall
    All,
    Gatherv,
    Scatterv,
    Allgatherv,
    Alltoallv,
    Alltoallw,
}

/// Multiply a count list by a type size in place.
fn scale(v: &mut [u64], size: u64) {
    for x in v {
        *x = x.saturating_mul(size);
    }
}

pub fn coll(kind: CollKind, layout: Layout, nb: bool, f: &mut Fields, counts: &mut Vec<u64>, rcounts: &mut Vec<u64>) -> FieldResult<CollCall> {
    let mut c =
        CollCall { kind, nonblocking: nb, root: 0, bytes: 0, comm: CommArg::default(), req: 0, has_counts: false, has_rcounts: false, alltoallw: false };
    match layout {
        Layout::Barrier => {}
        Layout::Bcast => {
            f.addr("buffer")?;
            let n = f.count_arg("count")?;
            c.bytes = n.saturating_mul(f.dtype("datatype")?.size);
            c.root = f.int("root")?;
        }
        Layout::Reduce | Layout::Allreduce => {
            f.addr("sendbuf")?;
            f.addr("recvbuf")?;
            let n = f.count_arg("count")?;
            c.bytes = n.saturating_mul(f.dtype("datatype")?.size);
            f.addr("op")?;
            if layout == Layout::Reduce {
                c.root = f.int("root")?;
            }
        }
        Layout::ReduceScatter => {
            f.addr("sendbuf")?;
            f.addr("recvbuf")?;
            f.list("recvcounts", counts)?;
            scale(counts, f.dtype("datatype")?.size);
            f.addr("op")?;
            c.has_counts = true;
        }
        Layout::Rooted | Layout::All => {
            f.addr("sendbuf")?;
            let sc = f.count_arg("sendcount")?;
            let st = f.dtype("sendtype")?;
            f.addr("recvbuf")?;
            let rc = f.count_arg("recvcount")?;
            let rt = f.dtype("recvtype")?;
            let (send, recv) = (sc.saturating_mul(st.size), rc.saturating_mul(rt.size));
            if layout == Layout::Rooted {
                // Which side counts depends on being the root: resolved after the comm field.
                c.root = f.int("root")?;
                counts.clear();
                counts.extend([send, recv]);
            } else {
                // Allgather/alltoall: the receive side is valid on every rank (the send side
                // may be MPI_IN_PLACE).
                c.bytes = recv;
            }
        }
        Layout::Gatherv => {
            f.addr("sendbuf")?;
            let sc = f.count_arg("sendcount")?;
            let st = f.dtype("sendtype")?;
            f.addr("recvbuf")?;
            f.list("recvcounts", counts)?;
            f.list("displs", rcounts)?;
            scale(counts, f.dtype("recvtype")?.size);
            c.root = f.int("root")?;
            c.bytes = sc.saturating_mul(st.size);
            c.has_counts = true;
        }
        Layout::Scatterv => {
            f.addr("sendbuf")?;
            f.list("sendcounts", counts)?;
            f.list("displs", rcounts)?;
            scale(counts, f.dtype("sendtype")?.size);
            f.addr("recvbuf")?;
            let rc = f.count_arg("recvcount")?;
            c.bytes = rc.saturating_mul(f.dtype("recvtype")?.size);
            c.root = f.int("root")?;
            c.has_counts = true;
        }
        Layout::Allgatherv => {
            f.addr("sendbuf")?;
            f.count_arg("sendcount")?;
            f.dtype("sendtype")?;
            f.addr("recvbuf")?;
            f.list("recvcounts", counts)?;
            f.list("displs", rcounts)?;
            scale(counts, f.dtype("recvtype")?.size);
            c.has_counts = true;
        }
        Layout::Alltoallv | Layout::Alltoallw => {
            f.addr("sendbuf")?;
            f.list("sendcounts", counts)?;
            let mut displs = Vec::new();
            f.list("sdispls", &mut displs)?;
            let st = if layout == Layout::Alltoallv { f.dtype("sendtype")?.size } else { f.addr("sendtypes").map(|_| 1)? };
            f.addr("recvbuf")?;
            f.list("recvcounts", rcounts)?;
            f.list("rdispls", &mut displs)?;
            let rt = if layout == Layout::Alltoallv { f.dtype("recvtype")?.size } else { f.addr("recvtypes").map(|_| 1)? };
            if layout == Layout::Alltoallv {
                // An unused send type ("handle,0,0": MPI_IN_PLACE) means the send side mirrors
                // the receive side.
                if st == 0 {
                    counts.clone_from(rcounts);
                    scale(counts, rt);
                } else {
                    scale(counts, st);
                }
                scale(rcounts, rt);
            }
            c.has_counts = true;
            c.has_rcounts = true;
            c.alltoallw = layout == Layout::Alltoallw;
        }
    }
    c.comm = f.comm("comm")?;
    if matches!(layout, Layout::Rooted) {
        // counts = [send, recv]; the root uses its receive side for gather and its send side
        // for scatter, everybody else the other side.
        let (send, recv) = (counts[0], counts[1]);
        let at_root = c.comm.rank == c.root;
        c.bytes = match (kind, at_root) {
            (CollKind::Gather, true) => recv,
            (CollKind::Gather, false) => send,
            (_, true) => send,
            (_, false) => recv,
        };
        counts.clear();
    }
    if nb {
        c.req = f.addr("request")?;
    }
    Ok(c)
}
