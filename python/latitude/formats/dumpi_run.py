"""Converting a DUMPI run (latitude.formats.dumpi): a first pass over the rank files
collects the communicators (latitude.formats.dumpi_comms), then each rank file is
converted into a rank file of our trace format."""

from __future__ import annotations

import os
from collections import Counter

from latitude.errors import InputError
from latitude.formats.dumpi import RankCalls
from latitude.formats.dumpi_comms import Comms
from latitude.formats.dumpi_file import RankDumpi, read_meta
from latitude.formats.trace_writer import Conversion, RankFile, rank_path


class ScanCalls(RankCalls):
    """The first pass: only communicator creations are looked at (every record is still
    parsed: DUMPI records carry no length)."""

    def call(self, name: str, a: list, t0: int, t1: int) -> None:
        if name in ("Comm_split", "Comm_dup", "Comm_free"):
            self.comm_event(name, a)

    def created(self, gid: tuple, parent: tuple, key: int) -> None:
        self.comms.created(self.rank, gid, parent, key)

    def start(self, t: int) -> None:
        pass

    def close(self) -> None:
        pass


def convert(meta: str, outdir: str, progress=None) -> Conversion:
    """Convert the DUMPI run described by `meta` into rank files in `outdir`."""
    ranks, files = read_meta(meta)
    conv = Conversion(f"DUMPI trace {os.path.basename(meta)}", meta, lambda origin, rank: _place(files, origin, rank))
    conv.ranks = ranks
    notes: Counter = Counter()
    comms = Comms(ranks, meta)
    start, total = [], 0
    for p in files:
        start.append(total)
        total += os.path.getsize(p) if os.path.isfile(p) else 0
    for rank, path in enumerate(files):  # first pass: the communicators (scanned, not converted)
        if not os.path.isfile(path):
            raise InputError(meta, f"rank {rank}'s trace file {os.path.basename(path)} is missing")
        d = RankDumpi(path)
        try:
            if not d.makes_comms():  # the footer's call counts: no Comm_split / Comm_dup here
                continue
            advance = (lambda off, b=start[rank]: progress((b + off) // 2, total)) if progress else None
            ScanCalls(d, rank, comms, None, Counter()).run(advance)
        finally:
            d.close()
    for rank, path in enumerate(files):
        d = RankDumpi(path)
        try:
            out = RankFile(rank_path(outdir, rank), rank, ranks, comms.header(rank), conv.source)
            advance = (lambda off, b=start[rank]: progress((total + b + off) // 2, total)) if progress else None
            conv.events += RankCalls(d, rank, comms, out, notes).run(advance)
        finally:
            d.close()
    conv.notes = [f"{what} ({n}x)" if n > 1 else what for what, n in sorted(notes.items())]
    return conv


def _place(files: list[str], origin: str, rank: int) -> tuple[str, str]:
    call, offset, name = origin.split(" ", 2)
    path = files[rank] if 0 <= rank < len(files) else files[0]
    return path, f"byte {offset}: record {call} ({name})"
