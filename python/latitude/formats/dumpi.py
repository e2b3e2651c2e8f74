"""DUMPI traces (SST's sst-dumpi: ``PREFIX.meta`` plus one ``PREFIX-NNNN.bin`` per rank)
converted into Latitude's trace format, one rank file at a time, each streamed record by
record (the byte layout is in :mod:`latitude.formats.dumpi_format`). DUMPI records every
call with its arguments, so each record becomes the record our own tracer writes for the
same call and the graph follows the same rules:

| DUMPI record                                    | record written                                     |
|-------------------------------------------------|----------------------------------------------------|
| Send, Bsend, Ssend, Rsend, Recv, Sendrecv       | the same call; a wildcard receive gets the source and tag of its status |
| Isend, Ibsend, Issend, Irsend, Irecv            | the same call; a request (a wildcard Irecv waits for its completion's status) |
| Wait, Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome | the same call; `#@ done` lists the requests it completed |
| Barrier, Bcast, Reduce, Allreduce, Scan, Exscan, Allgather, Alltoall, Gather, Scatter, Allgatherv, Alltoallv, Reduce_scatter, Gatherv, Scatterv | the collective on its communicator |
| Init, Finalize                                  | the same call                                      |
| Comm_split, Comm_dup, Comm_free                 | the communicator a handle stands for (members from every rank's records, dumpi_comms) |
| Comm_rank, Comm_size, Get_count, Wtime, Wtick, Dims_create, Type_contiguous, Type_vector, Type_commit, Type_free, Request_free, function entry/exit | nothing: their time is computation |

Computation is the time between calls (wall clock, else the CPU clock), as for every trace.
Refused with one line naming the file, record and byte offset: any other call (DUMPI
records carry no length, so a record whose layout is not known cannot be skipped — among
them Comm_create and the Cart/Graph/group calls, persistent
requests, probes, one-sided and file I/O calls), a communicator no record read made, calls
from a second thread, and files that are truncated or not DUMPI.
"""

from __future__ import annotations

import struct
from collections import Counter

from latitude.formats import dumpi_format as F
from latitude.formats.dumpi_comms import WORLD, Comms
from latitude.formats.dumpi_file import RankDumpi, Stream, Truncated, signed
from latitude.formats.trace_writer import (
    COMPLETIONS,
    Coll,
    RankFile,
    Rec,
    collective_fields,
    p2p_fields,
    sendrecv_fields,
)

COLLECTIVES = {
    *("Allgatherv", "Alltoallv", "Reduce_scatter", "Gatherv", "Scatterv"),
    "Barrier",
    "Bcast",
    "Reduce",
    "Allreduce",
    "Scan",
    "Exscan",
    "Allgather",
    "Alltoall",
    "Gather",
    "Scatter",
}
LOCAL = {
    *("Comm_size", "Comm_rank", "Get_count", "Wtime", "Wtick"),
    *("Dims_create", "Type_contiguous", "Type_vector", "Type_commit", "Type_free"),
}
SENDS = {"Send", "Bsend", "Ssend", "Rsend"}
ISENDS = {"Isend", "Ibsend", "Issend", "Irsend"}
_TIMES = struct.Struct(">HIHI")
_STATUS, _STATUS_OLD = struct.Struct(">IIBBI"), struct.Struct(">IIBB")  # bytes source cancelled error [tag]


# -- records -> Latitude records -------------------------------------------------------------


class RankCalls:
    """One rank file's records turned into records of our trace format."""

    def __init__(self, dumpi: RankDumpi, rank: int, comms: Comms, out: RankFile | None, notes: Counter):
        self.d, self.rank, self.ranks, self.out, self.notes = dumpi, rank, comms.ranks, out, notes
        self.comms = comms
        self.handles = {F.COMM_WORLD: WORLD, F.COMM_SELF: ("self", rank)}  # DUMPI handle -> communicator
        self.made: Counter = Counter()  # communicators created from each parent so far
        self.reqs: dict[int, Rec] = {}
        self.pending: dict[int, tuple] = {}  # wildcard Irecv request -> (rec, nbytes, comm arg)
        self.clock = 0  # which clock: TIME_WALL or TIME_CPU, from the first record
        self.last = [0, 0]  # per-clock last second (u16 wrap-around)
        self.wraps = [0, 0]
        self.init = self.final = False
        self.calls = 0

    # -- reading one record --------------------------------------------------------------

    def fail(self, what: str):
        self.d.fail(self.at, f"record {self.calls} ({self.name}): {what}")

    def times(self, s: Stream, mask: int) -> tuple[int, int]:
        if not self.clock:
            self.clock = F.TIME_WALL if mask & F.TIME_WALL else F.TIME_CPU if mask & F.TIME_CPU else -1
        got = None
        for bit, k in ((F.TIME_CPU, 0), (F.TIME_WALL, 1)):
            if mask & bit:
                a, b, c, d = _TIMES.unpack(s.take(12))  # start sec, nsec, stop sec, nsec
                if bit == self.clock:
                    got = self.ns(k, a, b), self.ns(k, c, d)
        if got is None:
            self.fail("no timestamps (the trace was written without the wall and CPU clocks)")
        return got[0], max(got)

    def ns(self, k: int, sec: int, nsec: int) -> int:
        if sec + 32768 < self.last[k]:  # the 16-bit seconds wrapped around
            self.wraps[k] += 1
        self.last[k] = sec
        if nsec >= 1_000_000_000:
            self.fail(f"a timestamp with {nsec} nanoseconds")
        return (sec + 65536 * self.wraps[k]) * 1_000_000_000 + nsec

    def statuses(self, s: Stream, mask: int) -> list[tuple[int, int, int]]:
        """(bytes, source, tag) of each status (iodefs.h get_statuses)."""
        if not mask & F.STATUSES:
            return []
        n = s.u32()
        if n > 1 << 24:
            raise Truncated
        if self.d.has_version(0, 6, 3):
            return [(b, signed(src), signed(tag)) for b, src, _, _, tag in _STATUS.iter_unpack(s.take(14 * n))]
        return [(b, signed(src), F.ANY_TAG) for b, src, _, _ in _STATUS_OLD.iter_unpack(s.take(10 * n))]

    def args(self, s: Stream, layout: str, mask: int) -> list:
        out: list = []
        for code in layout.split():
            if code in "ir":
                out.append(signed(s.u32()))
            elif code in "dc":
                out.append(s.u16())
            elif code == "o":
                out.append(s.u8())
            elif code in "aR":
                out.append(s.array())
            else:  # s, S
                out.append(self.statuses(s, mask))
        return out

    def run(self, advance=None) -> int:
        s = self.d.stream()
        s.u32(), s.u32()  # the clocks' second offsets: times are kept relative to them
        n = 0
        while True:
            self.at, self.name = s.offset(), "record"
            try:
                label = s.u16()
                if label == F.END_OF_STREAM:
                    break
                self.name = F.function_name(label)
                self.record(s, label)
            except Truncated:
                self.d.fail(self.at, f"truncated: record {self.calls} ({self.name}) ends past the end of the trace")
            self.calls += 1
            n += 1
            if advance and n % 4096 == 0:
                advance(s.offset())
        self.close()
        return n

    def record(self, s: Stream, label: int) -> None:
        mask = s.u8()
        thread = s.u16() if mask & F.THREADID else 0
        t0, t1 = self.times(s, mask)
        if mask & F.PERFINFO:
            s.take(16 * s.u8())
        if thread != 0:
            self.fail(f"a call from thread {thread}; MPI calls from several threads of a rank are not supported")
        if label in (F.FUNCTION_ENTER, F.FUNCTION_EXIT):
            s.u64()
            return
        name = F.FUNCTIONS[label] if label < len(F.FUNCTIONS) else None
        if name == F.INIT:
            argc = s.u32()
            if not self.d.has_version(0, 6, 2):
                s.u32()
            for _ in range(argc):
                s.take(s.u32())
            self.start(t1)
            return
        if name in F.ROOTED_V:
            before, root, at_root, after = F.ROOTED_V[name]
            a = self.args(s, before, mask)
            a += self.args(s, at_root, mask) if a[0] == a[root] else [[], []]
            self.call(name, a + self.args(s, after, mask), t0, t1)
            return
        layout = F.record_layout(name) if name else None
        if layout is None:
            self.fail("not supported: DUMPI records carry no length, so a call Latitude does not map cannot be skipped")
        a = self.args(s, layout, mask)
        if name in ("Gather", "Scatter") and a[0] == a[3]:
            a += self.args(s, F.ROOTED_EXTRA[name], mask)
        self.call(name, a, t0, t1)

    # -- calls -----------------------------------------------------------------------------

    def origin(self) -> str:
        return f"{self.calls} {self.at} {self.name}"

    def add(self, name: str, t0: int | None, t1: int | None, fields: str | None) -> Rec:
        if not self.init and name != "MPI_Init":
            self.start(t0)
        return self.out.add(
            Rec(name, None if t0 is None else t0 * 1000, None if t1 is None else t1 * 1000, fields, self.origin())
        )

    def start(self, t: int) -> None:
        if self.init:
            self.notes["a second MPI_Init record ignored"] += 1
            return
        self.init = True
        self.out.add(Rec("MPI_Init", None, t * 1000, "0:0", self.origin()))

    def comm(self, c: int) -> tuple[str, int]:
        """The call-line communicator (handle,rank,size) and its size."""
        gid = self.handles.get(c)
        if gid is None:
            self.fail(
                f"communicator {c} is not MPI_COMM_WORLD, MPI_COMM_SELF or one made by a Comm_split or Comm_dup record"
            )
        members = self.comms.members(gid)
        return f"{self.comms.handle(gid)},{members.index(self.rank)},{len(members)}", len(members)

    def comm_event(self, name: str, a: list) -> None:
        """Comm_split / Comm_dup / Comm_free: the communicator a handle stands for from now on
        (the k-th creation from a parent is the same call on every member, dumpi_comms)."""
        if name == "Comm_free":
            self.handles.pop(a[0], None)
            return
        parent = self.handles.get(a[0])
        if parent is None:
            self.fail(f"communicator {a[0]} is not one Latitude knows (made by a record it does not read?)")
        k = self.made[parent]
        self.made[parent] += 1
        color, key = (a[1], a[2]) if name == "Comm_split" else (0, 0)
        if a[-1] != F.COMM_NULL:  # MPI_UNDEFINED colour: no new communicator on this rank
            gid = (parent, k, color)
            self.handles[a[-1]] = gid
            self.created(gid, parent, key)

    def created(self, gid: tuple, parent: tuple, key: int) -> None:
        """Conversion: the first pass (`dumpi_run`) collected every communicator already."""

    def nbytes(self, count: int, dtype: int) -> int:
        if count < 0:
            self.fail(f"a negative count {count}")
        sizes = self.d.sizes
        if dtype >= len(sizes):
            self.fail(f"datatype {dtype} has no size in the file's datatype size table ({len(sizes)} entries)")
        return count * sizes[dtype]

    def peer(self, p: int, size: int, what: str, wildcard: bool = False) -> int:
        if (wildcard and p == F.ANY_SOURCE) or p == -2 or 0 <= p < size:
            return p
        self.fail(f"{what} {p} in a communicator of {size} ranks")

    def call(self, name: str, a: list, t0: int, t1: int) -> None:
        if self.final:
            self.notes["calls after MPI_Finalize ignored"] += 1
            return
        if name in ("Comm_split", "Comm_dup", "Comm_free"):
            self.comm_event(name, a)
            return
        if name in LOCAL or name == "Request_free":
            if name == "Request_free":
                self.reqs.pop(a[0], None)  # the request stays in the graph (as a freed request)
            return
        if name == "Finalize":
            self.add("MPI_Finalize", t0, None, "")
            self.final = True
            return
        mpi = "MPI_" + name
        if name in SENDS or name in ISENDS:
            comm, size = self.comm(a[4])
            fields = p2p_fields(self.nbytes(a[0], a[1]), self.peer(a[2], size, "destination"), a[3], comm)
            rec = self.add(mpi, t0, t1, fields if name in SENDS else fields + ":0")
            if name in ISENDS:
                self.request(a[5], rec)
        elif name == "Recv":
            comm, size = self.comm(a[4])
            src, tag, n = self.status(a[5], a[2], a[3], self.nbytes(a[0], a[1]), size)
            self.add(mpi, t0, t1, p2p_fields(n, src, tag, comm) + ":0")
        elif name == "Irecv":
            comm, size = self.comm(a[4])
            n, src = self.nbytes(a[0], a[1]), self.peer(a[2], size, "source", wildcard=True)
            wild = src == F.ANY_SOURCE or a[3] == F.ANY_TAG
            rec = self.add(mpi, t0, t1, None if wild else p2p_fields(n, src, a[3], comm) + ":0")
            self.request(a[5], rec)
            if wild:
                self.pending[id(rec)] = (n, src, a[3], comm)
        elif name == "Sendrecv":
            comm, size = self.comm(a[8])
            src, rtag, rn = self.status(a[9], a[6], a[7], self.nbytes(a[4], a[5]), size)
            dest = self.peer(a[2], size, "destination")
            self.add(mpi, t0, t1, sendrecv_fields(self.nbytes(a[0], a[1]), dest, a[3], rn, src, rtag, comm))
        elif name in COMPLETIONS_OF:
            self.completion(name, a, t0, t1)
        elif name in COLLECTIVES:
            self.collective(name, a, t0, t1)

    def status(self, statuses, src: int, tag: int, n: int, size: int) -> tuple[int, int, int]:
        """Source, tag and bytes of a receive: its status where the call named a wildcard."""
        src = self.peer(src, size, "source", wildcard=True)
        if (src == F.ANY_SOURCE or tag == F.ANY_TAG) and statuses:
            nbytes, ssrc, stag = statuses[0]
            src = self.peer(ssrc, size, "status source") if src == F.ANY_SOURCE else src
            tag = stag if tag == F.ANY_TAG and stag != F.ANY_TAG else tag
            return src, tag, min(n, nbytes)
        if src == F.ANY_SOURCE:
            self.notes["wildcard receives without a status (traced without statuses): left as wildcards"] += 1
        return src, tag, n

    def request(self, req: int, rec: Rec) -> None:
        if req in (0, F.REQUEST_NULL):
            return
        if req in self.reqs:
            self.notes["requests reused before they completed (the earlier one is treated as freed)"] += 1
        self.reqs[req] = rec

    def complete(self, req: int, st) -> Rec | None:
        rec = self.reqs.pop(req, None)
        if rec is None:
            return None
        wild = self.pending.pop(id(rec), None)
        if wild is not None:
            n, src, tag, comm = wild
            size = int(comm.split(",")[2])
            if st is not None:
                src = self.peer(st[1], size, "status source") if src == F.ANY_SOURCE else src
                tag = st[2] if tag == F.ANY_TAG and st[2] != F.ANY_TAG else tag
                n = min(n, st[0])
            rec.fields = p2p_fields(n, src, tag, comm) + ":0"
            self.out.flush()
        return rec

    def completion(self, name: str, a: list, t0: int, t1: int) -> None:
        reqs, sts, flag = COMPLETIONS_OF[name](a)
        done = []
        for k, req in enumerate(reqs):
            rec = self.complete(req, sts[k] if k < len(sts) else None) if flag else None
            if rec is not None:
                done.append(rec)
        count = len(a[1]) if isinstance(a[1], list) else 1  # the *all/any/some calls' request count
        rec = Rec("MPI_" + name, t0 * 1000, t1 * 1000, COMPLETIONS["MPI_" + name](count), self.origin())
        rec.done = done
        self.out.add(rec)

    def collective(self, name: str, a: list, t0: int, t1: int) -> None:
        mpi = "MPI_" + name
        if name == "Barrier":
            comm, _ = self.comm(a[0])
            self.add(mpi, t0, t1, collective_fields(mpi, Coll(), comm, False))
            return
        if name in ("Gather", "Scatter"):
            comm, size = self.comm(a[4])
            root = self.peer(a[3], size, "root")
            args = Coll(self.nbytes(a[1], a[2]), root)
        elif name in ("Allgather", "Alltoall"):
            comm, size = self.comm(a[4])
            args = Coll(self.nbytes(a[0], a[1]))
        elif name in ("Allgatherv", "Alltoallv", "Reduce_scatter"):
            comm, size, args = self.vector(name, a)
        elif name in ("Gatherv", "Scatterv"):
            comm, size, args = self.rooted_vector(name, a)
        elif name == "Bcast":
            comm, size = self.comm(a[3])
            args = Coll(self.nbytes(a[0], a[1]), self.peer(a[2], size, "root"))
        elif name == "Reduce":
            comm, size = self.comm(a[4])
            args = Coll(self.nbytes(a[0], a[1]), self.peer(a[3], size, "root"))
        else:  # Allreduce, Scan, Exscan
            comm, size = self.comm(a[3])
            args = Coll(self.nbytes(a[0], a[1]))
        self.add(mpi, t0, t1, collective_fields(mpi, args, comm, False))

    def vector(self, name: str, a: list) -> tuple[str, int, Coll]:
        """The v-collectives: per-rank byte counts from the count arrays."""
        comm, size = self.comm(a[-1])
        arrays = {"Allgatherv": (a[3],), "Alltoallv": (a[1], a[4]), "Reduce_scatter": (a[1],)}[name]
        if any(len(x) != size for x in arrays):
            self.fail(f"count arrays of {[len(x) for x in arrays]} entries in a communicator of {size} ranks")
        if name == "Allgatherv":
            return comm, size, Coll(self.nbytes(a[1], a[2]), counts=[self.nbytes(c, a[5]) for c in a[3]])
        if name == "Alltoallv":
            sent = [self.nbytes(c, a[3]) for c in a[1]]
            return comm, size, Coll(counts=sent, rcounts=[self.nbytes(c, a[6]) for c in a[4]])
        return comm, size, Coll(counts=[self.nbytes(c, a[2]) for c in a[1]])

    def rooted_vector(self, name: str, a: list) -> tuple[str, int, Coll]:
        """Gatherv / Scatterv: this rank's block, and the per-rank counts at the root (zeros
        elsewhere, as our tracer writes them)."""
        comm, size = self.comm(a[5] if name == "Gatherv" else a[6])
        root = self.peer(a[4] if name == "Gatherv" else a[5], size, "root")
        counts = a[-3] if name == "Gatherv" else a[-2]
        if a[0] == root and len(counts) != size:
            self.fail(f"count arrays of {len(counts)} entries in a communicator of {size} ranks")
        if name == "Gatherv":
            mine, dtype = self.nbytes(a[2], a[3]), a[-1]
        else:
            mine, dtype = self.nbytes(a[3], a[4]), a[2]
        per_rank = [self.nbytes(c, dtype) for c in counts] if a[0] == root else [0] * size
        return comm, size, Coll(mine, root, counts=per_rank)

    def close(self) -> None:
        for rec in list(self.reqs.values()):
            if rec.fields is None:
                rec.dropped = True
                self.notes["wildcard receive requests never completed (left out)"] += 1
        self.reqs.clear()
        if not self.final:
            self.notes["no MPI_Finalize record: the rank ends at its last call"] += 1
        self.out.close("finalize" if self.final else None)


# name -> (requests, statuses per request, flag): which requests a completion completed.
COMPLETIONS_OF = {
    "Wait": lambda a: ([a[0]], a[1], True),
    "Test": lambda a: ([a[0]], a[2], a[1] != 0),
    "Waitall": lambda a: (a[1], a[2], True),
    "Testall": lambda a: (a[1], a[3], a[2] != 0),
    "Waitany": lambda a: ([a[1][a[2]]] if 0 <= a[2] < len(a[1]) else [], a[3], True),
    "Testany": lambda a: ([a[1][a[2]]] if 0 <= a[2] < len(a[1]) else [], a[4], a[3] != 0),
    "Waitsome": lambda a: ([a[1][i] for i in a[3] if 0 <= i < len(a[1])], a[4], True),
    "Testsome": lambda a: ([a[1][i] for i in a[3] if 0 <= i < len(a[1])], a[4], True),
}
