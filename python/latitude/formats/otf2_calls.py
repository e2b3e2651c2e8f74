"""One rank of an OTF2 archive (Score-P conventions), its events turned into Latitude trace
records: the graph then is exactly what our own tracer's records of the same calls give.

An MPI call is the span of an MPI region (Enter .. Leave); the events inside it say what
it communicated. Computation is the time between MPI calls, as for every trace: user
regions, OpenMP parallel regions and everything else between two MPI calls.

| events inside an MPI region                    | record written                                 |
|------------------------------------------------|------------------------------------------------|
| MpiSend                                         | MPI_Send (Ssend/Bsend/Rsend after the region) |
| MpiRecv                                         | MPI_Recv from the actual source               |
| one MpiSend + one MpiRecv                       | MPI_Sendrecv                                  |
| MpiIsend                                        | MPI_Isend; a request                          |
| MpiIsend / MpiIrecvRequest in MPI_Start(all)    | MPI_Start(all) of persistent requests: their MPI_Send_init / MPI_Recv_init at the first start (Score-P reuses the request id at every start) |
| MpiIrecvRequest (completed by MpiIrecv)         | MPI_Irecv with the source, tag and size the completion reports |
| MpiIsendComplete / MpiIrecv / MpiRequestCancelled / NonBlockingCollectiveComplete | one completion record (MPI_Wait*, MPI_Test* after the region, else MPI_Waitall) whose `#@ done` lists the completed requests |
| MpiRequestTest only                             | an unsuccessful MPI_Test* (`#@ done -`)       |
| MpiCollectiveBegin/End                          | the collective named by the End's operation, on its communicator and root |
| NonBlockingCollectiveRequest (completed by NonBlockingCollectiveComplete) | MPI_I<collective>; a request |
| none                                            | the region's name alone: local calls are computation, communicator creation, I/O and unknown calls are reported |

A request that was cancelled (MpiRequestCancelled) is left out with its completion, as if
never posted. Receive requests and nonblocking collectives never completed in the archive
are left out (their source or size is unknown), sends never completed stay (like a freed
request). Collective sizes: OTF2 records the bytes a rank sent and received in total;
Score-P's conventions give one rank's block (``scorep_mpi_coll_bytes_*``: e.g. an allreduce
of n bytes records n·p both ways, a bcast n received everywhere and n·p sent at the root).
The v-variants record only totals, so their per-rank counts are spread evenly (noted).

Refused with one line naming the event and location: MPI calls on a second thread of a
rank, matched-probe receives (MpiMrecv), events naming an unknown communicator or a peer
outside its communicator. Reported and left as computation: one-sided communication (Rma*
events) and thread/OpenMP events (the threads' work is inside the master thread's
computation).
"""

from __future__ import annotations

from collections import Counter

from latitude.errors import InputError
from latitude.formats.otf2_defs import Definitions
from latitude.formats.trace_writer import (
    COMPLETIONS,
    Coll,
    RankFile,
    Rec,
    collective_fields,
    nonblocking_name,
    p2p_fields,
    probe_fields,
    sendrecv_fields,
)

SEND, RECV, ISEND, IRECV_REQ, ISEND_DONE, IRECV_DONE, TEST, CANCELLED, COLL, NBC_REQ, NBC_DONE = range(11)
DONE_KINDS = (ISEND_DONE, IRECV_DONE, CANCELLED, NBC_DONE)
SEND_MODES = ("MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend")
ISEND_MODES = ("MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend")
# OTF2_CollectiveOp -> the blocking MPI function (None: communicator/window management).
COLL_OPS = {
    0: "MPI_Barrier",
    1: "MPI_Bcast",
    2: "MPI_Gather",
    3: "MPI_Gatherv",
    4: "MPI_Scatter",
    5: "MPI_Scatterv",
    6: "MPI_Allgather",
    7: "MPI_Allgatherv",
    8: "MPI_Alltoall",
    9: "MPI_Alltoallv",
    10: "MPI_Alltoallv",  # Alltoallw: only total bytes are recorded, as for Alltoallv
    11: "MPI_Allreduce",
    12: "MPI_Reduce",
    13: "MPI_Reduce_scatter",
    14: "MPI_Scan",
    15: "MPI_Exscan",
    16: "MPI_Reduce_scatter_block",
}
ROOTED = ("MPI_Bcast", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Reduce")
SPREAD = ("MPI_Gatherv", "MPI_Scatterv", "MPI_Allgatherv", "MPI_Alltoallv", "MPI_Reduce_scatter")
OUTSIDE = {SEND: "MPI_Send", RECV: "MPI_Recv", ISEND: "MPI_Isend", IRECV_REQ: "MPI_Irecv", TEST: "MPI_Test"}


def _block(total: int, p: int) -> int:
    """One block of a total recorded as p blocks (or p − 1: Score-P's in-place calls)."""
    if p <= 1 or total % p == 0:
        return total // max(p, 1)
    if total % (p - 1) == 0:
        return total // (p - 1)
    return -(-total // p)


def _spread(total: int, p: int) -> list[int]:
    base, extra = divmod(total, p)
    return [base + (1 if i < extra else 0) for i in range(p)]


def coll_args(name: str, me: int, p: int, root: int, sent: int, recvd: int) -> Coll:
    """This rank's block (and v-counts) from the bytes Score-P recorded (scorep_mpi_coll.c)."""
    a = Coll(root=root if name in ROOTED else 0)
    if name == "MPI_Bcast":
        a.nbytes = recvd or _block(sent, p)
    elif name in ("MPI_Reduce", "MPI_Gather"):
        a.nbytes = sent or _block(recvd, p)  # the root in place records 0 sent, (p-1) blocks received
    elif name == "MPI_Scatter":
        a.nbytes = recvd or _block(sent, p)
    elif name in ("MPI_Allreduce", "MPI_Allgather", "MPI_Alltoall", "MPI_Reduce_scatter_block"):
        a.nbytes = _block(sent or recvd, p)
    elif name == "MPI_Scan":  # (p-me)·n sent, (me+1)·n received; in place one block less each
        both = sent + recvd
        a.nbytes = both // (p + 1) if both % (p + 1) == 0 else both // max(p - 1, 1)
    elif name == "MPI_Exscan":  # (p-me-1)·n sent, me·n received
        a.nbytes = (sent + recvd) // max(p - 1, 1)
    elif name == "MPI_Reduce_scatter":
        a.counts = _spread(sent, p)
    elif name == "MPI_Gatherv":
        a.nbytes, a.counts = sent, _spread(recvd if me == root else 0, p)
    elif name == "MPI_Scatterv":
        a.nbytes, a.counts = recvd, _spread(sent if me == root else 0, p)
    elif name == "MPI_Allgatherv":
        a.nbytes, a.counts = _block(sent, p), _spread(recvd, p)
    elif name == "MPI_Alltoallv":
        a.counts, a.rcounts = _spread(sent, p), _spread(recvd, p)
    return a


class RankCalls:
    """One rank's master location: events -> records."""

    def __init__(self, defs: Definitions, rank: int, out: RankFile, kinds: dict, notes: Counter):
        self.defs, self.rank, self.out, self.kinds, self.notes = defs, rank, out, kinds, notes
        self.views, _ = defs.comm_views(rank)
        self.world = next((v for v in self.views.values() if v.peers == tuple(range(len(defs.ranks)))), None)
        self.res, self.off = defs.resolution, defs.offset
        self.mult = 1_000_000_000_000 // self.res if 1_000_000_000_000 % self.res == 0 else 0  # ticks -> ps
        self.names = defs.regions
        self.depth = 0
        self.call: list | None = None  # [name, t_enter, events]
        self.reqs: dict[int, Rec] = {}
        self.persistent: dict[int, Rec] = {}
        self.init = self.final = False
        self.first: int | None = None
        self.last = 0
        self.error = None

    # -- helpers ---------------------------------------------------------------------------

    def ps(self, t: int) -> int:
        d = t - self.off
        if d < 0:
            self.notes["events before the clock's global offset, taken as time 0"] += 1
            return 0
        if self.mult:
            return d * self.mult
        return (d * 1_000_000_000_000 + self.res // 2) // self.res

    def fail(self, t: int, pos: int, what: str):
        secs = (t - self.off) / self.res
        raise InputError(self.defs.anchor, f"{self.defs.location(self.rank)}, event {pos} ({secs:.9f} s): {what}")

    def view(self, t: int, pos: int, comm: int, what: str):
        v = self.views.get(comm)
        if v is None:
            self.fail(
                t,
                pos,
                f"{what} names communicator {comm}, which the definitions do not give as an MPI communicator of this rank",
            )
        return v

    def peer(self, t, pos, v, peer: int, what: str) -> int:
        if not 0 <= peer < v.size:
            self.fail(t, pos, f"{what} names rank {peer} of a communicator of {v.size} ranks")
        return peer

    def touch(self, t: int) -> None:
        if self.first is None:
            self.first = t
        self.last = t

    # -- event callbacks -------------------------------------------------------------------

    def on_enter(self, t, pos, region):
        if self.first is None:
            self.first = t
        self.last = t
        name = self.names[region] if region < len(self.names) else None
        if name is not None:
            if self.depth == 0:
                self.call = [name, t, [], pos]
            self.depth += 1

    def on_leave(self, t, pos, region):
        self.last = t
        names = self.names
        if region < len(names) and names[region] is not None and self.depth > 0:
            self.depth -= 1
            if self.depth == 0:
                name, t0, evs, at = self.call
                self.call = None
                self.finish(name, t0, t, evs, at)

    def event(self, ev: tuple) -> None:
        self.touch(ev[1])
        if self.depth > 0:
            self.call[2].append(ev)
        else:  # an event outside any MPI region: a call of its own, without duration
            kind = ev[0]
            name = OUTSIDE.get(kind) or (COLL_OPS.get(ev[3]) if kind == COLL else "MPI_Waitall")
            self.finish(name or "MPI_Barrier", ev[1], ev[1], [ev], ev[2])

    def on_mpi_send(self, t, pos, peer, comm, tag, n):
        self.event((SEND, t, pos, peer, comm, tag, n))

    def on_mpi_recv(self, t, pos, peer, comm, tag, n):
        self.event((RECV, t, pos, peer, comm, tag, n))

    def on_mpi_isend(self, t, pos, peer, comm, tag, n, req):
        self.event((ISEND, t, pos, peer, comm, tag, n, req))

    def on_mpi_irecv_request(self, t, pos, req):
        self.event((IRECV_REQ, t, pos, req))

    def on_mpi_isend_complete(self, t, pos, req):
        self.event((ISEND_DONE, t, pos, req))

    def on_mpi_irecv(self, t, pos, peer, comm, tag, n, req):
        self.event((IRECV_DONE, t, pos, req, peer, comm, tag, n))

    def on_mpi_request_test(self, t, pos, req):
        self.event((TEST, t, pos, req))

    def on_mpi_request_cancelled(self, t, pos, req):
        self.event((CANCELLED, t, pos, req))

    def on_mpi_collective_end(self, t, pos, op, comm, root, sent, recvd):
        self.event((COLL, t, pos, int(getattr(op, "value", op)), comm, root, sent, recvd))

    def on_nonblocking_collective_request(self, t, pos, req):
        self.event((NBC_REQ, t, pos, req))

    def on_nonblocking_collective_complete(self, t, pos, op, comm, root, sent, recvd, req):
        self.event((NBC_DONE, t, pos, req, int(getattr(op, "value", op)), comm, root, sent, recvd))

    def on_measurement_on_off(self, t, pos, mode):
        if int(getattr(mode, "value", mode)) == 0:  # OTF2_MEASUREMENT_OFF
            self.notes["measurement switched off (events missing; that time counts as computation)"] += 1

    def matched_probe(self, t, pos, *_):
        self.fail(t, pos, "a matched-probe receive (MpiMrecv/MpiImrecv): matched probes are not supported")

    on_mpi_mrecv = on_mpi_imrecv_request = on_mpi_imrecv = matched_probe

    # -- calls -> records --------------------------------------------------------------------

    def finish(self, name: str, t0: int, t1: int, evs: list, at: int | None = None) -> None:
        origin = self.origin(name, t0, at)
        if name in ("MPI_Init", "MPI_Init_thread"):
            self.start(name, t1, origin)
            return
        if self.final:
            self.notes["MPI calls after MPI_Finalize ignored"] += 1
            return
        if name == "MPI_Finalize":
            self.ensure_init()
            self.out.add(Rec("MPI_Finalize", self.ps(t0), None, "", origin))
            self.final = True
            return
        if not evs:
            self.eventless(name, t0, t1, origin)
            return
        self.ensure_init()
        recs = self.records(name, evs)
        for i, rec in enumerate(recs):
            rec.t0 = self.ps(t0)
            rec.t1 = self.ps(t1) if i == len(recs) - 1 else rec.t0
            rec.origin = origin
            self.out.add(rec)
        self.out.flush()

    @staticmethod
    def origin(name: str, t: int, pos: int | None) -> str:
        """Where a call comes from, compactly (`Definitions.place` spells it out): its name,
        Enter event (or -) and time in ticks."""
        return f"{name} {'-' if pos is None else pos} {t}"

    def start(self, name: str, t1: int, origin: str) -> None:
        if self.init:
            self.notes["a second MPI_Init region ignored"] += 1
            return
        self.init = True
        fields = "0:0:0:0" if name == "MPI_Init_thread" else "0:0"
        self.out.add(Rec(name, None, self.ps(t1), fields, origin))

    def ensure_init(self) -> None:
        if not self.init:
            self.notes["no MPI_Init region: computation counted from the rank's first event"] += 1
            t = self.first if self.first is not None else self.off
            self.start("MPI_Init", t, self.origin("MPI_Init", t, None))

    def eventless(self, name: str, t0: int, t1: int, origin: str) -> None:
        kind = self.kinds.get(name)
        if not self.init:
            return  # bookkeeping before MPI_Init
        if kind != "fields":
            self.out.add(Rec(name, self.ps(t0), self.ps(t1), "", origin))
        elif name == "MPI_Probe" and self.world is not None:
            # A blocking probe's wait belongs to the receive that follows (not computation).
            self.out.add(Rec(name, self.ps(t0), self.ps(t1), probe_fields(-1, -1, self.world.arg), origin))
        elif name in COMPLETIONS or name.startswith(("MPI_Start", "MPI_Request_free", "MPI_Cancel", "MPI_Probe")):
            pass  # completed nothing traced (a null or MPI_PROC_NULL request): computation
        elif name.endswith("_init") or name in SEND_MODES or name in ISEND_MODES or name in ("MPI_Recv", "MPI_Irecv"):
            pass  # MPI_PROC_NULL peers record no event: nothing to model
        else:
            self.notes[f"{name} without communication events (not modelled; its time counts as computation)"] += 1

    def records(self, name: str, evs: list) -> list[Rec]:
        if len(evs) == 1:  # the usual case: one event, one record
            k = evs[0][0]
            if k == SEND:
                return [self.send(name, evs[0])]
            if k == ISEND and name not in ("MPI_Start", "MPI_Startall"):
                return [self.isend(name, evs[0])]
            if k == IRECV_REQ and name not in ("MPI_Start", "MPI_Startall"):
                return [self.request(evs[0], Rec("MPI_Irecv", 0, 0, None))]
            if k == COLL:
                rec = self.collective(evs[0])
                return [rec] if rec is not None else []
        recs: list[Rec] = []
        sends = [e for e in evs if e[0] == SEND]
        recvs = [e for e in evs if e[0] == RECV]
        pair = len(sends) == 1 and len(recvs) == 1
        if pair:
            recs.append(self.sendrecv(sends[0], recvs[0]))
        done: list[Rec] = []
        statuses: list[tuple] = []
        started: list[Rec] = []
        starts = name in ("MPI_Start", "MPI_Startall")
        tested = completed = False
        for ev in evs:
            k = ev[0]
            if starts and k in (ISEND, IRECV_REQ):
                init = self.persistent_start(ev)
                if init.index is None and init not in recs:
                    recs.append(init)
                started.append(init)
            elif k == SEND and not pair:
                recs.append(self.send(name, ev))
            elif k == RECV and not pair:
                recs.append(self.recv(ev))
            elif k == ISEND:
                recs.append(self.isend(name, ev))
            elif k == IRECV_REQ:
                recs.append(self.request(ev, Rec("MPI_Irecv", 0, 0, None)))
            elif k == NBC_REQ:
                recs.append(self.request(ev, Rec(name if name.startswith("MPI_I") else "MPI_Iallreduce", 0, 0, None)))
            elif k == COLL:
                rec = self.collective(ev)
                if rec is not None:
                    recs.append(rec)
            elif k in DONE_KINDS:
                completed = True
                creator, status = self.complete(ev)
                if creator is not None:
                    done.append(creator)
                if status is not None:
                    statuses.append(status)
            elif k == TEST:
                tested = True
        if started:
            rec = Rec(name, 0, 0, "0" if name == "MPI_Start" else f"{len(started)}:0")
            rec.start = started
            recs.append(rec)
        if completed or (tested and name.startswith("MPI_Test")):
            rec = Rec(name if name in COMPLETIONS else "MPI_Waitall", 0, 0, "")
            rec.fields = COMPLETIONS[rec.name](len(done))
            rec.done, rec.statuses = done, statuses
            recs.append(rec)
        return recs

    def persistent_start(self, ev) -> Rec:
        """MPI_Start(all): Score-P records MpiIsend / MpiIrecvRequest with the persistent
        request's id (given at its *_init) at every start. The first start writes the
        *_init record (a receive's waits for its first completion to learn the
        communicator; its source and tag are resolved at every completion, `#@ status`)."""
        req = ev[-1] if ev[0] == ISEND else ev[3]
        init = self.persistent.get(req)
        if init is None:
            if ev[0] == ISEND:
                _, t, pos, peer, comm, tag, n, _ = ev
                v = self.view(t, pos, comm, "MpiIsend")
                init = Rec(
                    "MPI_Send_init", 0, 0, p2p_fields(n, self.peer(t, pos, v, peer, "MpiIsend"), tag, v.arg) + ":0"
                )
            else:
                init = Rec("MPI_Recv_init", 0, 0, None)
            self.persistent[req] = init
        if req in self.reqs:
            self.fail(ev[1], ev[2], f"persistent request {req} started again before it completed")
        self.reqs[req] = init
        return init

    def send(self, name: str, ev) -> Rec:
        _, t, pos, peer, comm, tag, n = ev
        v = self.view(t, pos, comm, "MpiSend")
        fields = p2p_fields(n, self.peer(t, pos, v, peer, "MpiSend"), tag, v.arg)
        return Rec(name if name in SEND_MODES else "MPI_Send", 0, 0, fields)

    def recv(self, ev) -> Rec:
        _, t, pos, peer, comm, tag, n = ev
        v = self.view(t, pos, comm, "MpiRecv")
        return Rec("MPI_Recv", 0, 0, p2p_fields(n, self.peer(t, pos, v, peer, "MpiRecv"), tag, v.arg) + ":0")

    def sendrecv(self, s, r) -> Rec:
        _, t, pos, dest, comm, stag, sn = s
        _, t2, pos2, src, comm2, rtag, rn = r
        v = self.view(t, pos, comm, "MpiSend")
        if comm2 != comm:
            return self.send("MPI_Send", s)  # not one Sendrecv call after all
        dest = self.peer(t, pos, v, dest, "MpiSend")
        src = self.peer(t2, pos2, v, src, "MpiRecv")
        return Rec("MPI_Sendrecv", 0, 0, sendrecv_fields(sn, dest, stag, rn, src, rtag, v.arg))

    def isend(self, name: str, ev) -> Rec:
        _, t, pos, peer, comm, tag, n, req = ev
        v = self.view(t, pos, comm, "MpiIsend")
        fields = p2p_fields(n, self.peer(t, pos, v, peer, "MpiIsend"), tag, v.arg) + ":0"
        return self.request(ev, Rec(name if name in ISEND_MODES else "MPI_Isend", 0, 0, fields))

    def request(self, ev, rec: Rec) -> Rec:
        req = ev[-1] if ev[0] == ISEND else ev[3]
        if req in self.reqs:
            self.fail(ev[1], ev[2], f"request {req} issued again before it completed")
        self.reqs[req] = rec
        return rec

    def collective(self, ev) -> Rec | None:
        _, t, pos, op, comm, root, sent, recvd = ev
        name = COLL_OPS.get(op)
        if name is None:
            return None  # communicator or window management: the region's name says what
        v = self.view(t, pos, comm, "MpiCollectiveEnd")
        return Rec(name, 0, 0, self.coll_fields(name, v, t, pos, root, sent, recvd, False))

    def coll_fields(self, name, v, t, pos, root, sent, recvd, nonblocking: bool) -> str:
        me, p = v.me, v.size
        if name in ROOTED and not v.inter and not 0 <= root < p:
            self.fail(t, pos, f"{name} with root {root} in a communicator of {p} ranks")
        if name in SPREAD:
            self.notes[f"{name}: OTF2 records only each rank's total bytes; the per-rank counts are spread evenly"] += 1
        return collective_fields(name, coll_args(name, me, p, root, sent, recvd), v.arg, nonblocking)

    def complete(self, ev) -> tuple[Rec | None, tuple | None]:
        """The request a completion event completes, and the `#@ status` of a persistent
        receive (its actual source as a world rank, tag, bytes)."""
        k, t, pos, req = ev[0], ev[1], ev[2], ev[3]
        creator = self.reqs.pop(req, None)
        if creator is None:
            self.notes["completions of requests issued before the trace starts (ignored)"] += 1
            return None, None
        if k == CANCELLED:
            creator.dropped = True
            self.notes["cancelled requests left out of the graph"] += 1
            return None, None
        if k == IRECV_DONE:
            _, _, _, _, peer, comm, tag, n = ev
            v = self.view(t, pos, comm, "MpiIrecv")
            peer = self.peer(t, pos, v, peer, "MpiIrecv")
            if creator.name == "MPI_Recv_init":
                if creator.fields is None:
                    creator.fields = p2p_fields(n, -1, -1, v.arg) + ":0"
                return creator, (creator, v.peers[peer], tag, n)
            creator.fields = p2p_fields(n, peer, tag, v.arg) + ":0"
        elif k == NBC_DONE:
            _, _, _, _, op, comm, root, sent, recvd = ev
            name = COLL_OPS.get(op)
            if name is None:
                creator.dropped = True
                return None, None
            v = self.view(t, pos, comm, "NonBlockingCollectiveComplete")
            creator.name = nonblocking_name(name)
            creator.fields = self.coll_fields(name, v, t, pos, root, sent, recvd, True)
        return creator, None

    def close(self) -> None:
        for rec in list(self.reqs.values()) + list(self.persistent.values()):
            if rec.fields is None and not rec.dropped:
                rec.dropped = True
                self.notes["receive requests or nonblocking collectives never completed (left out)"] += 1
        self.reqs.clear()
        if self.call is not None:  # the trace ends inside an MPI call
            name, t0, evs, at = self.call
            self.call = None
            self.finish(name, t0, self.last, evs, at)
        if not self.final:
            self.ensure_init()
            self.notes["no MPI_Finalize region: the rank ends at its last event"] += 1
            self.out.add(
                Rec("MPI_Finalize", self.ps(self.last), None, "", self.origin("MPI_Finalize", self.last, None))
            )
            self.final = True
        self.out.close("finalize")
