"""OTF2 archives (Score-P) converted into Latitude's trace format: one file per MPI rank,
each rank's master location streamed through the OTF2 library (otf2_events) into its
records (otf2_calls), so that ``latitude schedule ARCHIVE/traces.otf2`` builds the graph
our own tracer's records of the same calls would give.

Locations are independent, so large archives are converted by several processes (one
rank at a time each; at most one per core, ``LATITUDE_THREADS`` caps them): memory stays at
one location's reading buffer plus the records still waiting for a completion.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter

from latitude import _core
from latitude.errors import InputError
from latitude.formats import otf2_events
from latitude.formats.otf2_calls import RankCalls
from latitude.formats.otf2_defs import Definitions
from latitude.formats.trace_writer import Conversion, RankFile, rank_path, ranks_text

# Below this many events one process converts everything (starting workers costs more).
PARALLEL_EVENTS = 2_000_000


class _ThreadCheck:
    """A non-master location of a rank: MPI events there cannot be placed."""

    def __init__(self, where: str):
        self.where = where
        self.error = None

    def refuse(self, t, pos, *_):
        raise InputError(
            self.where,
            f"event {pos}: an MPI event on a second thread of the rank; MPI calls from several threads of a rank are not supported",
        )

    on_mpi_send = on_mpi_recv = on_mpi_isend = on_mpi_irecv_request = on_mpi_irecv = refuse
    on_mpi_isend_complete = on_mpi_collective_end = on_nonblocking_collective_request = refuse


def _definitions(anchor: str) -> Definitions:
    reader = otf2_events.open_reader(anchor)
    try:
        return Definitions(anchor, reader.definitions, otf2_events.creator(reader))
    finally:
        reader.close()


def _convert_ranks(defs: Definitions, ranks, outdir: str, source: str, advance) -> list[tuple[int, Counter]]:
    """Convert `ranks` (and check their other threads); returns each rank's notes."""
    kinds = _core.trace_calls()
    reader = otf2_events.open_reader(defs.anchor)
    try:
        otf2_events.open_event_files(reader)
        out = []
        for rank in ranks:
            notes: Counter = Counter()
            _, header = defs.comm_views(rank)
            calls = RankCalls(
                defs, rank, RankFile(rank_path(outdir, rank), rank, len(defs.ranks), header, source), kinds, notes
            )
            where = f"{defs.anchor}: {defs.location(rank)}"
            unmapped = otf2_events.read_location(reader, defs.ranks[rank], calls, where, advance)
            calls.close()
            for kind, n in sorted(unmapped.items()):
                what = "one-sided communication" if kind.startswith("Rma") else "threading"
                notes[f"{kind} events ({what}): not modelled, their time counts as computation"] += n
            for other in defs.siblings.get(rank, []):
                check = _ThreadCheck(
                    f"{defs.anchor}: location {other} '{defs.location_names.get(other, '?')}' of rank {rank}"
                )
                otf2_events.read_location(reader, other, check, where, advance)
                notes["other threads of the rank: their work is inside the master thread's computation"] += 1
            out.append((rank, notes))
        return out
    finally:
        reader.close()


# -- worker processes: `python -m latitude.formats.otf2_archive ANCHOR OUTDIR RANK...`, each
# converting its ranks and reporting on stdout ("progress N", then "done JSON" or "error JSON")


def _workers(ranks: int, events: int) -> int:
    limit = os.cpu_count() or 1
    env = os.environ.get("LATITUDE_THREADS", "")
    if env.isdigit() and int(env) > 0:
        limit = min(limit, int(env))
    return max(1, min(limit, ranks)) if events >= PARALLEL_EVENTS else 1


def _worker_main(argv: list[str]) -> int:
    anchor, outdir, ranks = argv[0], argv[1], [int(r) for r in argv[2:]]
    done = [0, 0.0]

    def advance(n: int) -> None:
        done[0] += n
        now = time.monotonic()
        if now - done[1] > 0.2:
            done[1] = now
            print(f"progress {done[0]}", flush=True)

    try:
        defs = _definitions(anchor)
        source = f"OTF2 archive {os.path.basename(anchor)} written by {defs.creator}"
        got = _convert_ranks(defs, ranks, outdir, source, advance)
    except InputError as err:
        print("error " + json.dumps([err.where, err.what]), flush=True)
        return 2
    print(f"progress {done[0]}", flush=True)
    print("done " + json.dumps([[rank, dict(notes)] for rank, notes in got]), flush=True)
    return 0


def _parallel(defs: Definitions, outdir: str, workers: int, total: int, progress):
    import subprocess
    import tempfile
    import threading

    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds latitude/
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    counts = [0] * workers
    answers: list = [None] * workers

    def follow(k: int, proc) -> None:
        for line in proc.stdout:
            key, _, value = line.rstrip("\n").partition(" ")
            if key == "progress":
                counts[k] = int(value)
            elif key in ("done", "error"):
                answers[k] = (key, json.loads(value))

    procs, readers = [], []
    for k in range(workers):
        ranks = [str(r) for r in range(k, len(defs.ranks), workers)]
        cmd = [sys.executable, "-m", "latitude.formats.otf2_archive", defs.anchor, outdir, *ranks]
        errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 - read after the worker ends
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, text=True, env=env)
        proc.stderr = errors
        procs.append(proc)
        readers.append(threading.Thread(target=follow, args=(k, proc), daemon=True))
        readers[-1].start()
    try:
        while any(p.poll() is None for p in procs):
            time.sleep(0.2)
            if progress is not None:
                progress(sum(counts), total)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        for t in readers:
            t.join(timeout=5)
    results = []
    for proc, answer in zip(procs, answers):
        if answer is None:
            proc.stderr.seek(0)
            err = proc.stderr.read().strip().splitlines()
            raise InputError(
                defs.anchor,
                f"converting ranks in a worker process failed: {err[-1] if err else f'exit status {proc.returncode}'}",
            )
        if answer[0] == "error":
            raise InputError(*answer[1])
        results.extend((rank, Counter(notes)) for rank, notes in answer[1])
    return results, sum(counts)


def convert(anchor: str, outdir: str, progress=None, workers: int | None = None) -> Conversion:
    """Write one trace file per MPI rank of the archive `anchor` into `outdir`, with
    `workers` processes (None: by size and cores)."""
    defs = _definitions(anchor)
    conv = Conversion(f"OTF2 archive {os.path.basename(anchor)} written by {defs.creator}", anchor, defs.place)
    conv.ranks = len(defs.ranks)
    total = sum(defs.events.values()) or 1
    workers = min(workers, conv.ranks) if workers else _workers(conv.ranks, total)
    if workers > 1:
        results, conv.events = _parallel(defs, outdir, workers, total, progress)
    else:
        state = {"done": 0, "shown": 0.0}

        def advance(n: int) -> None:
            state["done"] += n
            now = time.monotonic()
            if progress is not None and now - state["shown"] > 0.2:
                state["shown"] = now
                progress(state["done"], total)

        results = _convert_ranks(defs, range(conv.ranks), outdir, conv.source, advance)
        conv.events = state["done"]
    seen: dict[str, list] = {}  # note -> [ranks, occurrences]
    for rank, notes in sorted(results, key=lambda x: x[0]):
        for what, n in notes.items():
            entry = seen.setdefault(what, [[], 0])
            entry[0].append(rank)
            entry[1] += n
    for what, (ranks, n) in seen.items():
        conv.notes.append(f"OTF2: {what} (rank{'s' if len(ranks) > 1 else ''} {ranks_text(ranks)}, {n:,} in all)")
    return conv


if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv[1:]))
