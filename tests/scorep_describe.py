"""Describe a run traced by `latitude trace` as the OTF2 archive Score-P would have written
for it (tests/scorep_archive.py), for the equivalence test: the same calls, the same
times (ns ticks), the events Score-P's wrappers record for each call.

The records come from tests/tracecheck.py's parser. Communicators are identified as our
trace format does (members as world ranks, seq); each becomes one OTF2 communicator. Peers
and roots stay communicator ranks; wildcard receives get their actual source and tag from
`#@ status`; requests get Score-P's per-process ids (persistent requests one id at init,
used at every start); collectives record the bytes Score-P's wrappers compute.
"""

from __future__ import annotations

import re

import tracecheck
from latitude import _core
from scorep_archive import OPS, UNDEFINED, Archive

KINDS = _core.trace_calls()
SENDS = {"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend"}
ISENDS = {"MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend"}
SEND_INITS = {"MPI_Send_init", "MPI_Ssend_init", "MPI_Bsend_init", "MPI_Rsend_init"}
COMPLETIONS = tracecheck.COMPLETES
# name -> (op, index of the count field, index of the datatype field, index of the root or None)
COLLS = {
    "MPI_Barrier": (OPS.BARRIER, None, None, None),
    "MPI_Bcast": (OPS.BCAST, 1, 2, 3),
    "MPI_Reduce": (OPS.REDUCE, 2, 3, 5),
    "MPI_Allreduce": (OPS.ALLREDUCE, 2, 3, None),
    "MPI_Scan": (OPS.SCAN, 2, 3, None),
    "MPI_Exscan": (OPS.EXSCAN, 2, 3, None),
    "MPI_Allgather": (OPS.ALLGATHER, 4, 5, None),
    "MPI_Alltoall": (OPS.ALLTOALL, 4, 5, None),
    "MPI_Gather": (OPS.GATHER, None, None, 6),
    "MPI_Scatter": (OPS.SCATTER, None, None, 6),
}


def ns(t: float) -> int:
    return round(t * 1000)


def _size(dtype: str) -> int:
    return int(dtype.split(",")[1])


def _comm_key(spec: str):
    h, seq, world, remote = re.match(r"(\d+) seq=(\d+) world=(\S+)(?: remote=(\S+))?$", spec).groups()
    if remote:
        raise NotImplementedError("inter-communicators")
    return int(h), (tracecheck._ranks(world), int(seq))


def scorep_bytes(name: str, me: int, p: int, root: int | None, n: int) -> tuple[int, int]:
    """(sent, received) Score-P's wrappers record for one rank's block of n bytes."""
    if name == "MPI_Barrier":
        return 0, 0
    if name == "MPI_Bcast":
        return (p * n if me == root else 0), n
    if name in ("MPI_Reduce", "MPI_Gather"):
        return n, (p * n if me == root else 0)
    if name == "MPI_Scatter":
        return (p * n if me == root else 0), n
    if name == "MPI_Scan":
        return (p - me) * n, (me + 1) * n
    if name == "MPI_Exscan":
        return (p - me - 1) * n, me * n
    return p * n, p * n


def describe(trace_dir, archive_dir) -> None:
    traces = [tracecheck.parse(p) for p in tracecheck.rank_files([str(trace_dir)])]
    arch = Archive(archive_dir, len(traces))
    otf2_comms: dict = {}

    def comm(key):
        if key not in otf2_comms:
            otf2_comms[key] = arch.comm(f"comm {len(otf2_comms)}", key[0])
        return otf2_comms[key]

    for r, tr in enumerate(traces):
        _Rank(arch, r, tr, comm).write()
    arch.close()


class _Rank:
    def __init__(self, arch, r, tr, comm):
        self.a, self.k, self.tr, self.comm = arch, arch.rank(r), tr, comm
        self.handles = {}
        for spec in tr.header.get("_comms", []):
            h, key = _comm_key(spec)
            self.handles[h] = key
        self.reqs = {}  # creating call index -> (kind, details, request id)
        self.null = tr.consts.get("proc_null")  # Score-P records no event for MPI_PROC_NULL peers

    def c(self, field: str):
        key = self.handles[int(field.split(",")[0])]
        return key, self.comm(key), int(field.split(",")[1])

    def write(self):
        for index, rec in enumerate(self.tr.records):
            self.call(index, rec)
            for key, value in rec.ext:
                if key == "comm":
                    h, k = _comm_key(value)
                    self.handles[h] = k

    def call(self, index, rec):
        k, f, name = self.k, rec.fields, rec.name
        t0 = ns(rec.tstart) if rec.tstart is not None else ns(rec.tend)
        t1 = ns(rec.tend) if rec.tend is not None else t0
        ext = dict(rec.ext) if rec.ext else {}
        if name in SENDS | ISENDS | {"MPI_Recv", "MPI_Irecv"} and int(f[3]) == self.null:
            k.region(name, t0, t1)
        elif name in SENDS:
            _, c, _ = self.c(f[5])
            k.send(t0, t1, int(f[3]), int(f[4]), int(f[1]) * _size(f[2]), comm=c, name=name)
        elif name == "MPI_Recv":
            key, c, _ = self.c(f[5])
            src, tag, n = self.status(key, ext.get("status"), int(f[3]), int(f[4]), int(f[1]) * _size(f[2]))
            k.recv(t0, t1, src, tag, n, comm=c)
        elif name == "MPI_Sendrecv":
            key, c, _ = self.c(f[10])
            src, tag, n = self.status(key, ext.get("status"), int(f[8]), int(f[9]), int(f[6]) * _size(f[7]))
            k.sendrecv(t0, t1, int(f[3]), int(f[4]), int(f[1]) * _size(f[2]), src, tag, n, comm=c)
        elif name in ISENDS:
            _, c, _ = self.c(f[5])
            self.reqs[index] = (
                "send",
                None,
                k.isend(t0, t1, int(f[3]), int(f[4]), int(f[1]) * _size(f[2]), comm=c, name=name),
            )
        elif name == "MPI_Irecv":
            key, c, _ = self.c(f[5])
            self.reqs[index] = ("recv", (key, c, int(f[3]), int(f[4]), int(f[1]) * _size(f[2])), k.irecv(t0, t1))
        elif name in SEND_INITS or name == "MPI_Recv_init":
            key, c, _ = self.c(f[5])
            what = (
                ("send", (c, int(f[3]), int(f[4]), int(f[1]) * _size(f[2])))
                if name in SEND_INITS
                else ("recv", (key, c, int(f[3]), int(f[4]), int(f[1]) * _size(f[2])))
            )
            self.reqs[index] = (*what, k.new_request())
            k.region(name, t0, t1)
        elif name in ("MPI_Start", "MPI_Startall"):
            evs = []
            for i in tracecheck._ids(ext["start"]):
                kind, d, req = self.reqs[i]
                if kind == "send":
                    evs.append(lambda w, d=d, q=req: w.mpi_isend(t0, d[1], d[0], d[2], d[3], q))
                else:
                    evs.append(lambda w, q=req: w.mpi_irecv_request(t0, q))
            k.region(name, t0, t1, evs)
        elif name in COMPLETIONS:
            done = []
            statuses = {
                int(m.group(1)): m
                for m in (
                    re.match(r"call=(\d+) src=(-?\d+) tag=(-?\d+) bytes=(\d+)", v)
                    for key, v in rec.ext
                    if key == "status"
                )
                if m
            }
            for i in tracecheck._ids(ext.get("done", "-")):
                if i not in self.reqs:
                    continue  # an MPI_PROC_NULL request: no event
                kind, d, req = self.reqs[i]
                if kind == "send":
                    done.append((req, "send"))
                else:
                    key, c, src, tag, n = d
                    st = statuses.get(i)
                    if st is not None:
                        src, tag, n = key[0].index(int(st.group(2))), int(st.group(3)), int(st.group(4))
                    done.append((req, ("recv", src, tag, n, c)))
            k.complete(t0, t1, done, name=name)
        elif name in COLLS:
            op, ci, di, ri = COLLS[name]
            _, c, me = self.c(f[-1])
            p = int(f[-1].split(",")[2])
            root = int(f[ri]) if ri is not None else None
            if name in ("MPI_Gather", "MPI_Scatter"):
                side = 4 if (name == "MPI_Gather") == (me == root) else 1
                n = int(f[side]) * _size(f[side + 1])
            else:
                n = int(f[ci]) * _size(f[di]) if ci is not None else 0
            sent, recvd = scorep_bytes(name, me, p, root, n)
            k.collective(t0, t1, name, op, sent, recvd, UNDEFINED if root is None else root, comm=c)
        elif name in ("MPI_Init", "MPI_Init_thread", "MPI_Finalize"):
            k.region(name, t0, t1)
        elif KINDS.get(name) != "fields" or name in ("MPI_Request_free", "MPI_Probe"):
            k.region(name, t0, t1)  # bookkeeping, communicator creation, ...: no events
        else:
            raise NotImplementedError(f"{name} is not described")

    def status(self, key, status: str | None, src: int, tag: int, n: int):
        """Source (communicator rank), tag, bytes actually received (Score-P's MpiRecv)."""
        if status is None:
            return src, tag, n
        m = re.match(r"src=(-?\d+) tag=(-?\d+) bytes=(\d+)", status)
        return key[0].index(int(m.group(1))), int(m.group(2)), int(m.group(3))
