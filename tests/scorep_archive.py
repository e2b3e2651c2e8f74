"""Writing OTF2 archives the way Score-P's MPI adapter does, through the OTF2 writer API
(the `otf2` package), for the OTF2 reader's tests.

The event sequences follow Score-P's wrappers (SCOREP_Mpi_P2p.c, SCOREP_Mpi_Coll.c,
scorep_mpi_request.c): every MPI call is an Enter/Leave of a region of paradigm MPI named
after the function; a send records MpiSend (MpiIsend with a request id for nonblocking
sends) right after Enter; a blocking receive records MpiRecv with the actual source, tag
and size right before Leave; MPI_Irecv records MpiIrecvRequest, and the Wait/Test call that
completes it records MpiIrecv with the actual source; completed sends record
MpiIsendComplete; tests that complete nothing record MpiRequestTest per active request; a
cancelled request records MpiRequestCancelled where it completes; a blocking collective
records MpiCollectiveBegin after Enter and MpiCollectiveEnd (operation, communicator, root,
bytes sent, bytes received) before Leave; a nonblocking collective records
NonBlockingCollectiveRequest, and its completion NonBlockingCollectiveComplete. Calls on
MPI_PROC_NULL record no communication event. Request ids count up per process from 1.
Ranks are processes with one "Master thread" location each, listed in rank order by the
COMM_LOCATIONS group; communicators are COMM_GROUP groups of world ranks.
"""

from __future__ import annotations

import otf2
from otf2.enums import CollectiveOp, GroupType, LocationType, Paradigm, RegionRole

UNDEFINED = 0xFFFFFFFF  # OTF2_UNDEFINED_UINT32: no root

ROLE = {
    "MPI_Barrier": RegionRole.BARRIER,
    "MPI_Bcast": RegionRole.COLL_ONE2ALL,
    "MPI_Reduce": RegionRole.COLL_ALL2ONE,
    "MPI_Allreduce": RegionRole.COLL_ALL2ALL,
}


class Archive:
    """An archive of `ranks` MPI processes; `threads` extra locations per process."""

    def __init__(self, path: str, ranks: int, resolution: int = 10**9, threads: int = 0):
        self.tr = otf2.writer.Writer(str(path), timer_resolution=resolution)
        d = self.tr.definitions
        node = d.system_tree_node("node")
        self.locs, self.extra = [], []
        for r in range(ranks):
            group = d.location_group(f"MPI Rank {r}", system_tree_parent=node)
            self.locs.append(d.location("Master thread", type=LocationType.CPU_THREAD, group=group))
            self.extra.append(
                [d.location(f"OMP thread {k + 1}", type=LocationType.CPU_THREAD, group=group) for k in range(threads)]
            )
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=self.locs)
        self.world = self.comm("MPI_COMM_WORLD", range(ranks))
        self_group = d.group("", group_type=GroupType.COMM_SELF, paradigm=Paradigm.MPI, members=[])
        self.self_comm = d.comm("MPI_COMM_SELF", group=self_group)
        self._regions: dict[str, object] = {}
        self._ranks = [Rank(self, r) for r in range(ranks)]

    def comm(self, name: str, ranks) -> object:
        d = self.tr.definitions
        group = d.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=list(ranks))
        return d.comm(name, group=group)

    def region(self, name: str, mpi: bool = True):
        if name not in self._regions:
            d = self.tr.definitions
            if mpi:
                role = ROLE.get(
                    name,
                    RegionRole.POINT2POINT if "send" in name.lower() or "recv" in name.lower() else RegionRole.FUNCTION,
                )
                self._regions[name] = d.region(name, paradigm=Paradigm.MPI, region_role=role)
            else:
                self._regions[name] = d.region(name, paradigm=Paradigm.USER, region_role=RegionRole.FUNCTION)
        return self._regions[name]

    def rank(self, r: int) -> Rank:
        return self._ranks[r]

    def close(self) -> None:
        self.tr.close()


class Rank:
    """One process's event stream, written call by call as Score-P's wrappers would."""

    def __init__(self, arch: Archive, r: int):
        self.a, self.r = arch, r
        self.w = arch.tr.event_writer_from_location(arch.locs[r])
        self.req = 0

    def new_request(self) -> int:
        self.req += 1
        return self.req

    def region(self, name: str, t0: int, t1: int, inside=()):
        """Enter `name` at t0, write `inside` (callables taking the writer), Leave at t1."""
        reg = self.a.region(name)
        self.w.enter(t0, reg)
        for ev in inside:
            ev(self.w)
        self.w.leave(t1, reg)

    def user(self, name: str, t0: int, t1: int):
        reg = self.a.region(name, mpi=False)
        self.w.enter(t0, reg)
        self.w.leave(t1, reg)

    def init(self, t0: int, t1: int, name: str = "MPI_Init"):
        self.region(name, t0, t1)

    def finalize(self, t0: int, t1: int):
        self.region("MPI_Finalize", t0, t1)

    def send(self, t0, t1, dest, tag, n, comm=None, name="MPI_Send"):
        c = comm or self.a.world
        self.region(name, t0, t1, [lambda w: w.mpi_send(t0, dest, c, tag, n)])

    def recv(self, t0, t1, src, tag, n, comm=None):
        c = comm or self.a.world
        self.region("MPI_Recv", t0, t1, [lambda w: w.mpi_recv(t1, src, c, tag, n)])

    def sendrecv(self, t0, t1, dest, stag, sn, src, rtag, rn, comm=None):
        c = comm or self.a.world
        self.region(
            "MPI_Sendrecv",
            t0,
            t1,
            [lambda w: w.mpi_send(t0, dest, c, stag, sn), lambda w: w.mpi_recv(t1, src, c, rtag, rn)],
        )

    def isend(self, t0, t1, dest, tag, n, comm=None, name="MPI_Isend") -> int:
        c = comm or self.a.world
        req = self.new_request()
        self.region(name, t0, t1, [lambda w: w.mpi_isend(t0, dest, c, tag, n, req)])
        return req

    def irecv(self, t0, t1) -> int:
        req = self.new_request()
        self.region("MPI_Irecv", t0, t1, [lambda w: w.mpi_irecv_request(t1, req)])
        return req

    def complete(self, t0, t1, done, name="MPI_Waitall", tested=()):
        """`done`: (req, how) with how = "send" | "cancelled" | ("recv", src, tag, n[, comm]) |
        ("coll", op, root, sent, recvd[, comm]); `tested`: requests tested but still active."""
        evs = []
        for req, how in done:
            if how == "send":
                evs.append(lambda w, q=req: w.mpi_isend_complete(t1, q))
            elif how == "cancelled":
                evs.append(lambda w, q=req: w.mpi_request_cancelled(t1, q))
            elif how[0] == "recv":
                c = how[4] if len(how) > 4 else self.a.world
                evs.append(lambda w, q=req, h=how, c=c: w.mpi_irecv(t1, h[1], c, h[2], h[3], q))
            else:
                c = how[5] if len(how) > 5 else self.a.world
                evs.append(
                    lambda w, q=req, h=how, c=c: w.non_blocking_collective_complete(t1, h[1], c, h[2], h[3], h[4], q)
                )
        for req in tested:
            evs.append(lambda w, q=req: w.mpi_request_test(t1, q))
        self.region(name, t0, t1, evs)

    def collective(self, t0, t1, name, op, sent, recvd, root=UNDEFINED, comm=None):
        c = comm or self.a.world
        self.region(
            name,
            t0,
            t1,
            [lambda w: w.mpi_collective_begin(t0), lambda w: w.mpi_collective_end(t1, op, c, root, sent, recvd)],
        )

    def icollective(self, t0, t1, name) -> int:
        req = self.new_request()
        self.region(name, t0, t1, [lambda w: w.non_blocking_collective_request(t1, req)])
        return req


def allreduce(p: int, n: int):
    """(sent, received) Score-P records for an allreduce of n bytes on p ranks."""
    return p * n, p * n


OPS = CollectiveOp
