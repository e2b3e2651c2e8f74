"""A DUMPI trace writer written to the format's definition (SST's sst-dumpi; no package or
wheel of it exists here), for test fixtures: `Writer` writes one rank's ``.bin`` file,
`describe` turns a run traced by `latitude trace` into the DUMPI run libdumpi would have
written for the same calls at the same times. Each field names the sst-dumpi file and
function that defines it; the constants are latitude.formats.dumpi_format's (from
dumpi/common/funclabels.h, constants.h, settings.h)."""

from __future__ import annotations

import re
import struct

import tracecheck
from latitude.formats import dumpi_format as F

# Written as version 0.6.7: statuses carry tags (0.6.3), Init writes argc once (0.6.2), the
# index has the datatype size table (0.6.6), requests are 32-bit (0.6.7).
VERSION = (0, 6, 7)
MASK = F.STATUSES | F.TIME_CPU | F.TIME_WALL | F.THREADID  # iodefs.h put_config_mask
# Built-in datatype sizes by DUMPI index (constants.h dumpi_native_datatypes; 0 for ERROR,
# NULL, LB, UB); a size not here becomes a user datatype from FIRST_USER_DATATYPE = 28 on.
BUILTIN = [0, 0, 1, 1, 1, 1, 4, 2, 2, 4, 4, 8, 8, 4, 8, 16, 8, 8, 8, 1, 0, 0, 8, 12, 12, 6, 8, 20]
BY_SIZE = {1: 5, 2: 7, 4: 9, 8: 14}  # BYTE, SHORT, INT, DOUBLE


def u8(v):
    return struct.pack(">B", v & 0xFF)  # iodefs.h put8


def u16(v):
    return struct.pack(">H", v & 0xFFFF)  # iodefs.h put16 (htons)


def u32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)  # iodefs.h put32 (htonl); PUT_INT casts to uint32_t


def u64(v):
    return struct.pack(">Q", v)  # iodefs.h put64: high then low 32 bits, each htonl


def arr(values):
    return u32(len(values)) + b"".join(u32(v) for v in values)  # iodefs.h put32arr


def statuses(sts):
    # iodefs.h put_statuses: count, then bytes, source, cancelled (u8), error (u8), tag
    return u32(len(sts)) + b"".join(u32(n) + u32(src) + u8(0) + u8(0) + u32(tag) for n, src, tag in sts)


class Writer:
    """One rank's .bin file (io.c: dumpi_alloc_output_profile, dumpi_start_stream_write,
    dumpi_write_header, dumpi_write_footer, dumpi_write_datatype_sizes, dumpi_write_index)."""

    def __init__(self, path):
        self.path = path
        self.sizes = list(BUILTIN)
        self.counts = [0] * (F.ALL_FUNCTIONS + 1)
        # io.c dumpi_alloc_output_profile: head magic; dumpi_start_stream_write: the CPU and
        # wall clocks' second offsets (u32 each); times are written relative to them.
        self.buf = bytearray(u64(F.HEAD_MAGIC) + u32(0) + u32(0))
        self.body = 8

    def dtype(self, size: int) -> int:
        if size in BY_SIZE:
            return BY_SIZE[size]
        if size not in self.sizes[28:]:
            self.sizes.append(size)
        return 28 + self.sizes[28:].index(size)

    def record(self, name: str, t0_ns: int, t1_ns: int, args: bytes = b"", thread: int = 0) -> None:
        """iodefs.h STARTWRITE: label (u16), config mask (u8), thread (u16), CPU then wall
        times (put_times: start sec u16, nsec u32, stop sec u16, nsec u32), then the
        arguments (dumpiio.c dumpi_write_<name>). Both clocks get the wall time here."""
        label = F.LABEL[name] if name in F.LABEL else name
        times = b""
        for _ in (F.TIME_CPU, F.TIME_WALL):
            for t in (t0_ns, t1_ns):
                times += u16(t // 1_000_000_000) + u32(t % 1_000_000_000)
        self.buf += u16(label) + u8(MASK) + u16(thread) + times + args
        if isinstance(label, int) and label < len(self.counts):
            self.counts[label] += 1

    def close(self, rank: int) -> None:
        self.buf += u16(F.END_OF_STREAM)  # io.c dumpi_write_header: the stream's end label
        header = len(self.buf)
        # io.c dumpi_write_header: version (3 × u8), start time (u64), hostname and username
        # (put_string: u16 length, bytes), mesh coordinates and size (put32arr, empty)
        self.buf += bytes(VERSION) + u64(0) + u16(4) + b"host" + u16(4) + b"user" + arr([]) + arr([])
        footer = len(self.buf)
        # io.c dumpi_write_footer: foot magic, call counts, ignored counts (u32 per label)
        self.buf += u64(F.FOOT_MAGIC) + b"".join(u32(c) for c in self.counts) + u32(0) * len(self.counts)
        sizes = len(self.buf)
        self.buf += arr(self.sizes)  # io.c dumpi_write_datatype_sizes
        # io.c dumpi_write_index: magic, sizelbl, addrlbl, perflbl, header, body, footer, keyval
        self.buf += b"".join(u64(v) for v in (F.HEAD_MAGIC, sizes, 0, 0, header, self.body, footer, 0))
        with open(self.path, "wb") as f:
            f.write(self.buf)


def write_meta(prefix: str, ranks: int) -> str:
    """dumpi2dumpi.c d2d_write_metadata: key=value lines; rank files are PREFIX-NNNN.bin."""
    name = prefix.rsplit("/", 1)[-1]
    with open(prefix + ".meta", "w") as f:
        f.write(f"hostname=host\nnumprocs={ranks}\nusername=user\nstartime=0\nfileprefix={name}\n")
        f.write(f"version={VERSION[0]}\nsubversion={VERSION[1]}\nsubsubversion={VERSION[2]}\n")
    return prefix + ".meta"


# -- a traced run described as DUMPI --------------------------------------------------------

SENDS = {"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend"}
# name -> layout of our trace's fields used: (count, datatype, root) field indices
COLLS = {
    "MPI_Barrier": None,
    "MPI_Bcast": (1, 2, 3),
    "MPI_Reduce": (2, 3, 5),
    "MPI_Allreduce": (2, 3, None),
    "MPI_Scan": (2, 3, None),
    "MPI_Exscan": (2, 3, None),
    "MPI_Allgather": (1, 2, None),
    "MPI_Alltoall": (1, 2, None),
}


# dumpiio.c: dumpi_write_comm_rank / _comm_size: comm, int; _dims_create: nodes, ndim, two int
# arrays; _type_vector: count, blocklength, stride, oldtype, newtype; _type_commit / _free: type
LOCAL = {
    "MPI_Comm_rank": u16(F.COMM_WORLD) + u32(0),
    "MPI_Comm_size": u16(F.COMM_WORLD) + u32(0),
    "MPI_Dims_create": u32(0) + u32(0) + arr([]) + arr([]),
    "MPI_Type_vector": u32(0) * 3 + u16(F.FIRST_USER_DATATYPE) * 2,
    "MPI_Type_commit": u16(F.FIRST_USER_DATATYPE),
    "MPI_Type_free": u16(F.FIRST_USER_DATATYPE),
    "MPI_Wtime": b"",  # dumpi_write_wtime: no arguments
}


def _size(dtype: str) -> int:
    return int(dtype.split(",")[1])


def describe(trace_dir, out_dir) -> str:
    """Write the DUMPI run of a traced run (COMM_WORLD only); returns the .meta path."""
    paths = tracecheck.rank_files([str(trace_dir)])
    for r, p in enumerate(paths):
        _Rank(tracecheck.parse(p), str(out_dir / f"dumpi-{r:04d}.bin"), len(paths)).write()
    return write_meta(str(out_dir / "dumpi"), len(paths))


class _Rank:
    def __init__(self, tr, path, ranks):
        self.tr, self.w, self.ranks = tr, Writer(path), ranks
        self.world = {}
        for spec in tr.header.get("_comms", []):
            h, world = re.match(r"(\d+) seq=\d+ world=(\S+)", spec).groups()
            self.world[int(h)] = tracecheck._ranks(world)
        self.reqs = {}  # creating call index -> (DUMPI request id, receive (count, src, tag) or None)
        self.next_req = 2  # constants.h DUMPI_FIRST_USER_REQUEST

    def comm(self, field: str) -> int:
        h, _, size = (int(x) for x in field.split(","))
        if len(self.world.get(h, ())) == size == self.ranks:
            return F.COMM_WORLD
        if size == 1:
            return F.COMM_SELF
        raise NotImplementedError("only MPI_COMM_WORLD and MPI_COMM_SELF are described")

    def write(self):
        for index, rec in enumerate(self.tr.records):
            self.call(index, rec)
        self.w.close(0)

    def call(self, index, rec):
        f, name, w = rec.fields, rec.name, self.w
        t1 = round(rec.tend * 1000) if rec.tend is not None else round(rec.tstart * 1000)
        t0 = round(rec.tstart * 1000) if rec.tstart is not None else t1
        ext = dict(rec.ext) if rec.ext else {}
        short = name[4:]
        if name in ("MPI_Init", "MPI_Finalize"):
            # dumpiio.c dumpi_write_init: argc, then argc strings; dumpi_write_finalize: nothing
            w.record(short, t0, t1, u32(0) if name == "MPI_Init" else b"")
        elif name in SENDS:
            # dumpi_write_send: count, datatype (u16), dest, tag, comm (u16) [+ request, isend]
            args = u32(int(f[1])) + u16(w.dtype(_size(f[2]))) + u32(int(f[3])) + u32(int(f[4])) + u16(self.comm(f[5]))
            if short.startswith("I"):
                args += u32(self.request(index, None))
            w.record(short, t0, t1, args)
        elif name in ("MPI_Recv", "MPI_Irecv"):
            # dumpi_write_recv: count, datatype, source, tag, comm, status;
            # dumpi_write_irecv: count, datatype, source, tag, comm, request
            n, src, tag = int(f[1]) * _size(f[2]), int(f[3]), int(f[4])
            args = u32(int(f[1])) + u16(w.dtype(_size(f[2]))) + u32(src) + u32(tag) + u16(self.comm(f[5]))
            if name == "MPI_Recv":
                args += statuses([self.status(ext.get("status"), n, src, tag)])
            else:
                args += u32(self.request(index, (n, src, tag)))
            w.record(short, t0, t1, args)
        elif name == "MPI_Sendrecv":
            # dumpi_write_sendrecv: sendcount, sendtype, dest, sendtag, recvcount, recvtype,
            # source, recvtag, comm, status
            n, src, tag = int(f[6]) * _size(f[7]), int(f[8]), int(f[9])
            args = u32(int(f[1])) + u16(w.dtype(_size(f[2]))) + u32(int(f[3])) + u32(int(f[4]))
            args += u32(int(f[6])) + u16(w.dtype(_size(f[7]))) + u32(src) + u32(tag) + u16(self.comm(f[10]))
            w.record(short, t0, t1, args + statuses([self.status(ext.get("status"), n, src, tag)]))
        elif name in tracecheck.COMPLETES:
            self.completion(short, t0, t1, rec)
        elif name in COLLS:
            self.collective(short, t0, t1, f)
        elif name in ("MPI_Gather", "MPI_Scatter"):
            # dumpi_write_gather: commrank, sendcount, sendtype, root, comm, then at the root
            # recvcount, recvtype (dumpi_write_scatter: the receive side first, send at the root)
            me, root = int(f[-1].split(",")[1]), int(f[6])
            mine, other = ((1, 2), (4, 5)) if name == "MPI_Gather" else ((4, 5), (1, 2))
            args = u32(me) + u32(int(f[mine[0]])) + u16(w.dtype(_size(f[mine[1]]))) + u32(root) + u16(self.comm(f[-1]))
            if me == root:
                args += u32(int(f[other[0]])) + u16(w.dtype(_size(f[other[1]])))
            w.record(short, t0, t1, args)
        elif name in LOCAL:  # local calls: the reader only needs their layout to step over them
            w.record(short, t0, t1, LOCAL[name])
        elif name == "MPI_Request_free":
            pass  # not in our apps' equivalence runs
        else:
            raise NotImplementedError(f"{name} is not described")

    def request(self, index, recv) -> int:
        self.next_req += 1
        self.reqs[index] = (self.next_req, recv)
        return self.next_req

    @staticmethod
    def status(spec, n, src, tag):
        if spec is None:
            return n, src, tag
        m = re.match(r"src=(-?\d+) tag=(-?\d+) bytes=(\d+)", spec)
        return int(m.group(3)), int(m.group(1)), int(m.group(2))

    def completion(self, short, t0, t1, rec):
        stat = {}
        for key, v in rec.ext:
            m = re.match(r"call=(\d+) src=(-?\d+) tag=(-?\d+) bytes=(\d+)", v) if key == "status" else None
            if m:
                stat[int(m.group(1))] = (int(m.group(4)), int(m.group(2)), int(m.group(3)))
        done = [i for i in tracecheck._ids(dict(rec.ext).get("done", "-")) if i in self.reqs]
        reqs, sts = [], []
        for i in done:
            req, recv = self.reqs.pop(i)
            reqs.append(req)
            sts.append(stat.get(i) or (recv if recv is not None else (0, -1, -1)))
        flag = u32(1 if done else 0)
        k = len(reqs)
        # dumpiio.c dumpi_write_wait: request, status; _test: request, flag, status;
        # _waitall: count, requests, statuses; _testall: count, requests, flag, statuses;
        # _waitany: count, requests, index, status; _testany: ..., index, flag, status;
        # _waitsome / _testsome: count, requests, outcount, indices, statuses
        one = reqs[0] if reqs else F.REQUEST_NULL
        args = {
            "Wait": lambda: u32(one) + statuses(sts[:1]),
            "Test": lambda: u32(one) + flag + statuses(sts[:1]),
            "Waitall": lambda: u32(k) + arr(reqs) + statuses(sts),
            "Testall": lambda: u32(k) + arr(reqs) + flag + statuses(sts),
            "Waitany": lambda: u32(k) + arr(reqs) + u32(0 if k else -1) + statuses(sts[:1]),
            "Testany": lambda: u32(k) + arr(reqs) + u32(0 if k else -1) + flag + statuses(sts[:1]),
            "Waitsome": lambda: u32(k) + arr(reqs) + u32(k) + arr(list(range(k))) + statuses(sts),
            "Testsome": lambda: u32(k) + arr(reqs) + u32(k) + arr(list(range(k))) + statuses(sts),
        }[short]()
        self.w.record(short, t0, t1, args)

    def collective(self, short, t0, t1, f):
        w, spec = self.w, COLLS["MPI_" + short]
        comm = u16(self.comm(f[-1]))
        if spec is None:
            w.record(short, t0, t1, comm)  # dumpi_write_barrier: comm
            return
        ci, di, ri = spec
        count, dt = u32(int(f[ci])), u16(w.dtype(_size(f[di])))
        if short == "Bcast":  # dumpi_write_bcast: count, datatype, root, comm
            args = count + dt + u32(int(f[ri])) + comm
        elif short == "Reduce":  # dumpi_write_reduce: count, datatype, op (u8), root, comm
            args = count + dt + u8(3) + u32(int(f[ri])) + comm
        elif short in ("Allgather", "Alltoall"):  # sendcount, sendtype, recvcount, recvtype, comm
            args = count + dt + u32(int(f[4])) + u16(w.dtype(_size(f[5]))) + comm
        else:  # dumpi_write_allreduce / _scan / _exscan: count, datatype, op, comm
            args = count + dt + u8(3) + comm
        w.record(short, t0, t1, args)
