"""DUMPI rank files and runs (SST's sst-dumpi): the ``.meta`` file naming a run's rank
files, and one rank file's layout (index, version, datatype sizes, footer call counts) and
big-endian stream of records (latitude.formats.dumpi_format has the byte layout; the
records are read by latitude.formats.dumpi)."""

from __future__ import annotations

import os
import re
import struct

from latitude.errors import InputError
from latitude.formats import dumpi_format as F

_U16, _U32, _U64 = struct.Struct(">H"), struct.Struct(">I"), struct.Struct(">Q")
CHUNK = 1 << 20


def signed(v: int) -> int:
    return v - (1 << 32) if v & 0x80000000 else v


# -- the run: the .meta file and its rank files ----------------------------------------------


def read_meta(path: str) -> tuple[int, list[str]]:
    """(ranks, rank files) of the run described by a ``.meta`` file."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 16).decode("utf-8", "replace")
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror}") from None
    keys = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    procs = keys.get("numprocs", "").strip()
    if not procs.isdigit() or int(procs) < 1:
        raise InputError(path, "expected a DUMPI .meta file with numprocs=N (N >= 1)")
    prefix = keys.get("fileprefix", "").strip() or os.path.basename(path)[: -len(".meta")]
    base = os.path.join(os.path.dirname(path), os.path.basename(prefix))
    n = int(procs)
    last = f"{base}-{n - 1:04d}.bin"
    if not os.path.isfile(last):  # before listing numprocs names: a wrong count is one line
        raise InputError(path, f"rank {n - 1}'s trace file {os.path.basename(last)} is missing (numprocs={n})")
    return n, [f"{base}-{r:04d}.bin" for r in range(n)]


def meta_for(path: str) -> str | None:
    """The ``.meta`` file of a DUMPI run given as the meta file, one rank's ``.bin`` file or
    the directory holding one run."""
    if os.path.isdir(path):
        try:
            metas = sorted(e.path for e in os.scandir(path) if e.name.endswith(".meta") and e.is_file())
        except OSError:
            return None
        return metas[0] if len(metas) == 1 else None
    if path.endswith(".meta") and os.path.isfile(path):
        return path
    m = re.match(r"(.*)-\d{4,}\.bin$", path)
    if m and os.path.isfile(m.group(1) + ".meta") and _is_dumpi(path):
        return m.group(1) + ".meta"
    return None


def _is_dumpi(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return len(head) == 8 and _U64.unpack(head)[0] == F.HEAD_MAGIC


# -- one rank file ----------------------------------------------------------------------------


class Truncated(Exception):
    pass


class Stream:
    """Big-endian reads from a rank file, buffered, with the offset for messages."""

    def __init__(self, f, start: int, end: int):
        self.f, self.end = f, end
        f.seek(start)
        self.buf, self.pos, self.base = b"", 0, start

    def offset(self) -> int:
        return self.base + self.pos

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.buf):
            rest = self.buf[self.pos :]
            self.base += self.pos
            want = max(CHUNK, n) - len(rest)
            want = min(want, self.end - self.base - len(rest))
            self.buf, self.pos = rest + (self.f.read(want) if want > 0 else b""), 0
            if n > len(self.buf):
                raise Truncated
        b = self.buf[self.pos : self.pos + n]
        self.pos += n
        return b

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return _U16.unpack(self.take(2))[0]

    def u32(self) -> int:
        return _U32.unpack(self.take(4))[0]

    def u64(self) -> int:
        return _U64.unpack(self.take(8))[0]

    def array(self, limit: int = 1 << 24) -> list[int]:
        n = self.u32()
        if n > limit or 4 * n > self.end - self.offset():
            raise Truncated
        return [signed(v) for v in struct.unpack(f">{n}I", self.take(4 * n))]


class RankDumpi:
    """Layout of one rank file: version, datatype sizes and where the body starts."""

    def __init__(self, path: str):
        self.path = path
        try:
            self.f = open(path, "rb")  # noqa: SIM115 - closed by close()
            size = os.fstat(self.f.fileno()).st_size
        except OSError as err:
            raise InputError(path, f"cannot read: {err.strerror}") from None
        self.size = size
        if not _is_dumpi(path):
            self.fail(0, "not a DUMPI trace file (it does not start with DUMPI's magic number)")
        if size < 8 + 8 + 64:
            self.fail(size, "truncated: too short for a DUMPI trace and its index")
        index = self._index()
        self.header, self.body = index["header"], index["body"]
        self.version = self._version()
        self.sizes = self._sizes(index.get("sizes", 0))
        self.counts = self._counts(index.get("footer", 0))

    def fail(self, offset: int, what: str):
        self.close()
        raise InputError(self.path, f"byte {offset}: {what}")

    def close(self):
        try:
            self.f.close()
        except OSError:
            pass

    def _at(self, offset: int, n: int) -> bytes:
        self.f.seek(offset)
        b = self.f.read(n)
        if len(b) < n:
            self.fail(offset, "truncated: a section the index points to ends past the end of the file")
        return b

    def _index(self) -> dict:
        """The index at the end (io.c dumpi_open_input_file): the magic, then up to three
        offsets older files lack, then header, body, footer, keyval."""
        words = struct.unpack(">8Q", self._at(self.size - 64, 64))
        for lead in range(4):
            if words[lead] == F.HEAD_MAGIC:
                extra = words[lead + 1 : 4]  # sizelbl, addrlbl, perflbl (newest first)
                header, body = words[4], words[5]
                out = {"header": header, "body": body}
                if words[6]:
                    out["footer"] = words[6]
                if len(extra) == 3:
                    out["sizes"] = extra[0]
                for name, off in out.items():
                    if off >= self.size:
                        self.fail(
                            self.size - 64,
                            f"truncated or damaged: the index gives the {name} at byte {off}, past the end",
                        )
                return out
        self.fail(
            self.size - 64, "truncated: the index at the end of the file does not start with DUMPI's magic number"
        )

    def _version(self) -> tuple[int, int, int]:
        if not self.header:
            return (0, 0, 0)
        return tuple(self._at(self.header, 3))

    def _sizes(self, offset: int) -> list[int]:
        """Datatype sizes (io.c dumpi_write_datatype_sizes: u32 n, n × u32)."""
        if not offset:
            return []
        (n,) = _U32.unpack(self._at(offset, 4))
        if 4 * n > self.size - offset:
            self.fail(offset, f"truncated: the datatype size table claims {n} entries")
        return list(struct.unpack(f">{n}I", self._at(offset + 4, 4 * n)))

    def _counts(self, offset: int) -> list[int] | None:
        """Calls per function label from the footer (io.c dumpi_write_footer: foot magic,
        then a u32 count per label up to ALL_FUNCTIONS), or None without one."""
        n = F.ALL_FUNCTIONS + 1
        if not offset or offset + 8 + 4 * n > self.size:
            return None
        raw = self._at(offset, 8 + 4 * n)
        if struct.unpack(">Q", raw[:8])[0] != F.FOOT_MAGIC:
            return None
        return list(struct.unpack(f">{n}I", raw[8:]))

    def makes_comms(self) -> bool:
        """Whether the file may hold communicator creations (True without a footer)."""
        c = self.counts
        return c is None or c[F.LABEL["Comm_split"]] + c[F.LABEL["Comm_dup"]] > 0

    def has_version(self, a: int, b: int, c: int) -> bool:
        return self.version >= (a, b, c)

    def stream(self) -> Stream:
        # The stream's END_OF_STREAM label comes just before the header (dumpi_write_header).
        return Stream(self.f, self.body, self.header if self.header > self.body else self.size - 64)
