"""Writing Latitude's trace format (liballprof v1 call lines + ``#@`` extension lines) for
traces converted from other formats.

A converter hands a :class:`RankFile` one :class:`Rec` per MPI call, in call order. Some
records cannot be written when they are made: an OTF2 receive request learns its source,
tag and size only when it completes, a nonblocking collective its communicator and sizes.
Records therefore wait in a queue and are written as soon as every record before them is
complete, so a rank's file is streamed and only the calls still waiting for their
completion are in memory. Requests are named by call index (``#@ done``), which a record
gets when it is written; a record can be dropped before that (a cancelled request), and
completions that named it forget it.

Every value goes into the fields the Rust reader parses (docs/trace-format.md): sizes as
counts of a one-byte datatype (``1,1,1``), peers and roots as ranks of the call's
communicator, communicators as ``handle,rank,size`` with a ``#@ comm`` header line giving
their members as world ranks. Each call line is preceded by a ``#~`` comment naming where it
came from in the original trace, so an error the scheduler reports at a line of the
converted file can be traced back (:func:`origin_of_line`).
"""

from __future__ import annotations

import os
from collections import deque

BYTE = "1,1,1"  # a datatype of code 1, size 1, extent 1: every count is a byte count
ORIGIN = "#~ "


def fmt_ps(ps: int) -> str:
    """Picoseconds as the trace's microseconds with six decimals (exact)."""
    if ps < 0:
        raise ValueError("negative time")
    return f"{ps // 1_000_000}.{ps % 1_000_000:06d}"


def ranks_text(ranks) -> str:
    """``0-3,7`` (runs of consecutive ranks as lo-hi), as `#@ comm` lines write them."""
    out, i, r = [], 0, list(ranks)
    while i < len(r):
        j = i
        while j + 1 < len(r) and r[j + 1] == r[j] + 1:
            j += 1
        out.append(f"{r[i]}-{r[j]}" if j > i else str(r[i]))
        i = j + 1
    return ",".join(out) if out else "-"


def _lst(values) -> str:
    """A count list: two fields, an address (0) and the comma-separated counts."""
    return "0:" + ",".join(str(int(v)) for v in values)


def p2p_fields(nbytes: int, peer: int, tag: int, comm: str) -> str:
    """buf:count:datatype:peer:tag:comm (MPI_Send; Recv/Isend/Irecv append one field)."""
    return f"0:{nbytes}:{BYTE}:{peer}:{tag}:{comm}"


def sendrecv_fields(sbytes: int, dest: int, stag: int, rbytes: int, src: int, rtag: int, comm: str) -> str:
    return f"0:{sbytes}:{BYTE}:{dest}:{stag}:0:{rbytes}:{BYTE}:{src}:{rtag}:{comm}:0"


def probe_fields(src: int, tag: int, comm: str) -> str:
    return f"{src}:{tag}:{comm}:0"


COMPLETIONS = {
    "MPI_Wait": lambda n: "0:0",
    "MPI_Test": lambda n: "0:0:0",
    "MPI_Waitall": lambda n: f"{n}:0:0",
    "MPI_Testall": lambda n: f"{n}:0:0:0",
    "MPI_Waitany": lambda n: f"{n}:0:0:0",
    "MPI_Testany": lambda n: f"{n}:0:0:0:0",
    "MPI_Waitsome": lambda n: f"{n}:0:0:0:0",
    "MPI_Testsome": lambda n: f"{n}:0:0:0:0",
}


class Coll:
    """One rank's view of a collective: bytes of its block (the call's size as the
    collective library reads it), root (rank in the communicator), per-rank counts for the
    v-variants (`counts`; alltoallv's receive side `rcounts`)."""

    __slots__ = ("nbytes", "root", "counts", "rcounts")

    def __init__(self, nbytes: int = 0, root: int = 0, counts=None, rcounts=None):
        self.nbytes, self.root, self.counts, self.rcounts = nbytes, root, counts, rcounts


def _z(a: Coll) -> str:
    return _lst([0] * len(a.counts or a.rcounts or [0]))


# Field layouts of the blocking collectives (the nonblocking ones append a request field).
COLLECTIVES = {
    "MPI_Barrier": lambda a, c: c,
    "MPI_Bcast": lambda a, c: f"0:{a.nbytes}:{BYTE}:{a.root}:{c}",
    "MPI_Reduce": lambda a, c: f"0:0:{a.nbytes}:{BYTE}:0:{a.root}:{c}",
    "MPI_Allreduce": lambda a, c: f"0:0:{a.nbytes}:{BYTE}:0:{c}",
    "MPI_Scan": lambda a, c: f"0:0:{a.nbytes}:{BYTE}:0:{c}",
    "MPI_Exscan": lambda a, c: f"0:0:{a.nbytes}:{BYTE}:0:{c}",
    "MPI_Reduce_scatter_block": lambda a, c: f"0:0:{a.nbytes}:{BYTE}:0:{c}",
    "MPI_Reduce_scatter": lambda a, c: f"0:0:{_lst(a.counts)}:{BYTE}:0:{c}",
    "MPI_Gather": lambda a, c: f"0:{a.nbytes}:{BYTE}:0:{a.nbytes}:{BYTE}:{a.root}:{c}",
    "MPI_Scatter": lambda a, c: f"0:{a.nbytes}:{BYTE}:0:{a.nbytes}:{BYTE}:{a.root}:{c}",
    "MPI_Allgather": lambda a, c: f"0:{a.nbytes}:{BYTE}:0:{a.nbytes}:{BYTE}:{c}",
    "MPI_Alltoall": lambda a, c: f"0:{a.nbytes}:{BYTE}:0:{a.nbytes}:{BYTE}:{c}",
    "MPI_Gatherv": lambda a, c: f"0:{a.nbytes}:{BYTE}:0:{_lst(a.counts)}:{_z(a)}:{BYTE}:{a.root}:{c}",
    "MPI_Scatterv": lambda a, c: f"0:{_lst(a.counts)}:{_z(a)}:{BYTE}:0:{a.nbytes}:{BYTE}:{a.root}:{c}",
    "MPI_Allgatherv": lambda a, c: f"0:{a.nbytes}:{BYTE}:0:{_lst(a.counts)}:{_z(a)}:{BYTE}:{c}",
    "MPI_Alltoallv": lambda a, c: f"0:{_lst(a.counts)}:{_z(a)}:{BYTE}:0:{_lst(a.rcounts)}:{_z(a)}:{BYTE}:{c}",
}


def collective_fields(name: str, args: Coll, comm: str, nonblocking: bool) -> str:
    """Fields of collective `name` (its blocking name, e.g. MPI_Allreduce)."""
    fields = COLLECTIVES[name](args, comm)
    return fields + ":0" if nonblocking else fields


def nonblocking_name(name: str) -> str:
    """MPI_Allreduce -> MPI_Iallreduce."""
    return "MPI_I" + name[4].lower() + name[5:]


class Rec:
    """One call line to be. `fields` None: still waiting for its completion (pending).
    `done`: the records whose requests this call completed; `statuses`: (creator, world
    source, tag, bytes) of wildcard receives completed here; `start`: the persistent
    requests (their *_init records) an MPI_Start(all) started."""

    __slots__ = ("name", "t0", "t1", "fields", "ext", "done", "statuses", "start", "index", "dropped", "origin")

    def __init__(self, name: str, t0: int | None, t1: int | None, fields: str | None = "", origin: str = ""):
        self.name, self.t0, self.t1, self.fields, self.origin = name, t0, t1, fields, origin
        self.ext: list[str] = []
        self.done: list[Rec] | None = None
        self.statuses: list[tuple] = []
        self.start: list[Rec] | None = None
        self.index: int | None = None
        self.dropped = False

    @property
    def ready(self) -> bool:
        return self.dropped or self.fields is not None

    def line(self) -> str:
        t0 = "-" if self.t0 is None else fmt_ps(self.t0)
        t1 = "-" if self.t1 is None else fmt_ps(self.t1)
        mid = f"{self.fields}:" if self.fields else ""
        return f"{self.name}:{t0}:{mid}{t1}\n"


class RankFile:
    """One rank's converted trace file, written in order as its records become complete."""

    def __init__(self, path: str, rank: int, size: int, comms, origin: str):
        """`comms`: (handle, seq, world ranks, remote ranks or None) of every communicator
        this rank belongs to; `origin`: what was converted (for the header comment)."""
        self.path = path
        self.f = open(path, "w", buffering=1 << 20)  # noqa: SIM115 - closed by close()
        self.queue: deque[Rec] = deque()
        self.calls = 0
        self.f.write(f"# converted by Latitude from {origin}\n#@ latitude-trace 1\n#@ mpi {origin}\n")
        self.f.write(f"#@ world rank={rank} size={size}\n#@ const any_source=-1 any_tag=-1 proc_null=-2\n")
        for handle, seq, world, remote in comms:
            extra = f" remote={ranks_text(remote)}" if remote is not None else ""
            self.f.write(f"#@ comm {handle} seq={seq} world={ranks_text(world)}{extra}\n")
        self.f.write("\n")

    def add(self, rec: Rec) -> Rec:
        self.queue.append(rec)
        if rec.ready and len(self.queue) == 1:
            self.flush()
        return rec

    def flush(self) -> None:
        q, f = self.queue, self.f
        while q and q[0].ready:
            rec = q.popleft()
            if rec.dropped:
                continue
            rec.index = self.calls
            self.calls += 1
            if rec.origin:
                f.write(ORIGIN + rec.origin + "\n")
            f.write(rec.line())
            for e in rec.ext:
                f.write(e + "\n")
            if rec.start is not None:
                f.write("#@ start " + (",".join(str(d.index) for d in rec.start if d.index is not None) or "-") + "\n")
            if rec.done is not None:
                ids = [str(d.index) for d in rec.done if not d.dropped and d.index is not None]
                f.write("#@ done " + (",".join(ids) or "-") + "\n")
                for creator, src, tag, nbytes in rec.statuses:
                    if not creator.dropped and creator.index is not None:
                        f.write(f"#@ status call={creator.index} src={src} tag={tag} bytes={nbytes}\n")

    def pending(self) -> int:
        return len(self.queue)

    def close(self, end: str | None) -> None:
        """Write what is complete (records still pending are dropped by the caller first)."""
        self.flush()
        if end:
            self.f.write(f"#@ end {end}\n")
        self.f.close()


class Conversion:
    """What a conversion did: ranks, events read, notes (one line each), what was read
    (`source`, for the files' `#@ mpi` line) and where errors point: `place(origin, rank)`
    gives (where, message prefix) for the `#~` origin comment of a converted call."""

    def __init__(self, source: str, origin_file: str, place=None):
        self.ranks = 0
        self.events = 0
        self.notes: list[str] = []
        self.source = source
        self.origin_file = origin_file
        self.place = place or (lambda origin, rank: (origin, None))


def origin_of_line(path: str, line: int) -> str | None:
    """The ``#~`` origin comment of the call at or before `line` of a converted file."""
    found = None
    try:
        with open(path, errors="replace") as f:
            for n, text in enumerate(f, 1):
                if n > line:
                    break
                if text.startswith(ORIGIN):
                    found = text[len(ORIGIN) :].strip()
    except OSError:
        return None
    return found


def rank_path(directory: str, rank: int) -> str:
    return os.path.join(directory, f"pmpi-trace-rank-{rank}.txt")
