"""Format checker for Latitude traces (liballprof v1 lines + "#@" extension lines).

Validates every line of every rank file against the grammar in docs/trace-format.md: call
lines field by field (per-call signatures below, written independently of the C tracer so
that the two check each other), timestamps (µs with three decimals, monotonic per rank), and
the extension lines, including their cross-references: every completed request was created
or started before, and every completed wildcard receive is resolved by a "#@ status" line.
It stands in for the Rust reader until that exists.

    python3 tests/tracecheck.py TRACE_DIR_OR_FILES... [--counts]
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from trace_calls import (  # noqa: F401 (re-exported: other test helpers read them here)
    COMPLETES,
    CREATES_COMM,
    CREATES_REQUEST,
    NONBLOCKING_COLLS,
    PERSISTENT_INIT,
    SIGNATURES,
    WILDCARD_FIELDS,
)

_TIME = r"\d+\.\d{3}"
_UINT = re.compile(r"\d+$")
_INT = re.compile(r"-?\d+$")
_IDS = re.compile(r"(-|\d+(,\d+)*)$")
_RANKS = r"-?\d+(-\d+)?(,-?\d+(-\d+)?)*"
_EXT = {
    "done": _IDS,
    "start": _IDS,
    "free": _IDS,
    "cancel": _IDS,
    "cancelled": re.compile(r"\d+$"),
    "polls": re.compile(r"n=\d+ busy=\d+\.\d{3}( calls=MPI_\w+:\d+(,MPI_\w+:\d+)*)?$"),
    "status": re.compile(r"(call=\d+ )?src=-?\d+ tag=-?\d+ bytes=\d+$"),
    "comm": re.compile(rf"\d+ seq=\d+ world={_RANKS}( remote={_RANKS})?$"),
    "typesizes": re.compile(r"send=\d+(,\d+)* recv=\d+(,\d+)*$"),
    "thread": re.compile(r"provided=\d+$"),
    "probe_end": re.compile(r"half_rt_ns=\d+(\.\d+)? bytes=8 rounds=\d+$"),  # after MPI_Finalize, rank 0
    "end": re.compile(r"(finalize|abort -?\d+|signal \d+|exit-without-finalize|killed)$"),
}
_HEADER_EXT = {"latitude-trace", "mpi", "world", "clock", "request_size", "const", "comm", "probe"}
_PROBE = re.compile(r"half_rt_ns=\d+(\.\d+)? bytes=8 rounds=\d+$")


@dataclass
class Record:
    line: int
    name: str
    tstart: float | None
    tend: float | None
    fields: list[str]  # one entry per logical field
    ext: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class RankTrace:
    path: Path
    header: dict[str, str] = field(default_factory=dict)
    consts: dict[str, int] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)
    end: str | None = None
    errors: list[str] = field(default_factory=list)

    def counts(self) -> Counter:
        """Calls per name; a folded poll record ("#@ polls") counts every poll it stands for."""
        out = Counter()
        for r in self.records:
            polls = next((v for k, v in r.ext if k == "polls"), None)
            if polls is None:
                out[r.name] += 1
            elif " calls=" in polls:
                for item in polls.split(" calls=")[1].split(","):
                    name, k = item.rsplit(":", 1)
                    out[name] += int(k)
            else:
                out[r.name] += int(polls.split()[0][2:])
        return out


def _split_fields(sig: str, parts: list[str], where: str, errors: list[str]) -> list[str] | None:
    """Group the ':'-separated parts of a call line into logical fields by signature."""
    out, i = [], 0
    for code in sig:
        take = 2 if code == "L" else 1
        if i + take > len(parts):
            errors.append(f"{where}: expected {len(sig)} fields ({sig}), line is too short")
            return None
        value = ":".join(parts[i : i + take])
        i += take
        if not _field_ok(code, value):
            errors.append(f"{where}: field {len(out) + 1} ({code}) malformed: {value!r}")
        out.append(value)
    if i != len(parts):
        errors.append(f"{where}: {len(parts) - i} fields more than the signature {sig}")
        return None
    return out


def _field_ok(code: str, value: str) -> bool:
    if code in "AH":
        return bool(_UINT.match(value))
    if code == "I":
        return bool(_INT.match(value))
    if code == "O":
        return bool(_UINT.match(value))
    if code in "DC":
        sub = value.split(",")
        return len(sub) == 3 and bool(_UINT.match(sub[0])) and all(_INT.match(s) for s in sub[1:])
    if code == "L":
        addr, _, lst = value.partition(":")
        return bool(_UINT.match(addr)) and all(_INT.match(s) for s in lst.split(","))
    return False


def parse(path: Path) -> RankTrace:
    """Parse and check one rank file."""
    tr = RankTrace(Path(path))
    in_header, last_end, prev = True, None, None
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":  # a compressed trace (latitude trace --compress): a whole gzip file
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, gzip.BadGzipFile) as err:
            tr.errors.append(f"{path}: not a complete gzip file ({err})")
            return tr
    text = data.decode(errors="replace")
    if text and not text.endswith("\n"):
        tr.errors.append(f"{path}: last line is not terminated")
    if "\0" in text:
        tr.errors.append(f"{path}: zero bytes (a killed rank's file that was not repaired)")
    for no, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{no}"
        if tr.end is not None:
            tr.errors.append(f"{where}: line after '#@ end'")
        if line.startswith("#@ "):
            key, _, rest = line[3:].partition(" ")
            if in_header and key == "comm":
                tr.header.setdefault("_comms", []).append(rest)
            if in_header and key == "probe" and not _PROBE.match(rest):
                tr.errors.append(f"{where}: malformed extension line {line!r}")
            if in_header and key in _HEADER_EXT and key != "comm":
                tr.header[key] = rest
                if key == "const":
                    tr.consts = {k: int(v) for k, v in (kv.split("=") for kv in rest.split())}
                continue
            if key not in _EXT or not _EXT[key].match(rest):
                tr.errors.append(f"{where}: malformed extension line {line!r}")
                continue
            if key == "end":
                tr.end = rest
            elif prev is not None:
                prev.ext.append((key, rest))
            elif key != "comm":
                tr.errors.append(f"{where}: '#@ {key}' before any call")
            continue
        if line.startswith("#") or not line.strip():
            if not in_header and line.strip():
                tr.errors.append(f"{where}: comment line inside the call records")
            continue
        in_header = False
        rec = _parse_call(line, where, tr.errors)
        if rec is None:
            continue
        rec.line = no
        for t in (rec.tstart, rec.tend):
            if t is not None and last_end is not None and t < last_end:
                tr.errors.append(f"{where}: time {t:.3f} goes back (previous {last_end:.3f})")
            if t is not None:
                last_end = t
        tr.records.append(rec)
        prev = rec
    if "latitude-trace" not in tr.header:
        tr.errors.append(f"{path}: no '#@ latitude-trace' header line")
    if tr.end is None:
        tr.errors.append(f"{path}: no '#@ end' line (file incomplete)")
    _check_extensions(tr)
    return tr


def _parse_call(line: str, where: str, errors: list[str]) -> Record | None:
    parts = line.split(":")
    name = parts[0]
    if name not in SIGNATURES:
        errors.append(f"{where}: unknown call {name!r}")
        return None
    if len(parts) < 3:
        errors.append(f"{where}: call line without start and end time")
        return None
    ts, te = parts[1], parts[-1]
    start = None if ts == "-" and name in ("MPI_Init", "MPI_Init_thread") else ts
    end = None if te == "-" and name == "MPI_Finalize" else te
    for t, what in ((start, "start"), (end, "end")):
        if t is not None and not re.fullmatch(_TIME, t):
            errors.append(f"{where}: {what} time {t!r} is not µs with three decimals")
            return None
    fields = _split_fields(SIGNATURES[name], parts[2:-1], where, errors)
    if fields is None:
        return None
    return Record(0, name, None if start is None else float(start), None if end is None else float(end), fields)


def _ids(text: str) -> list[int]:
    return [] if text == "-" else [int(x) for x in text.split(",")]


def _check_extensions(tr: RankTrace) -> None:
    """Required extension lines and their cross-references (request life cycles).

    Requests are named by the index of the call record that created them."""
    any_source, any_tag = tr.consts.get("any_source"), tr.consts.get("any_tag")
    active: dict[int, dict] = {}  # creating call index -> {"persistent", "wild", "idup"}
    for index, rec in enumerate(tr.records):
        where = f"{tr.path}:{rec.line}"
        ext: dict[str, list[str]] = {}
        for k, v in rec.ext:
            ext.setdefault(k, []).append(v)
        name = rec.name

        def need(key, n=1):
            got = len(ext.get(key, []))
            if got != n:
                tr.errors.append(f"{where}: {name} needs {n} '#@ {key}' line(s), has {got}")
                return False
            return True

        if name in CREATES_REQUEST:
            wild = False
            if name in ("MPI_Irecv", "MPI_Recv_init"):
                wild = int(rec.fields[3]) == any_source or int(rec.fields[4]) == any_tag
            active[index] = {"persistent": name in PERSISTENT_INIT, "wild": wild, "idup": name == "MPI_Comm_idup"}
        if name in ("MPI_Start", "MPI_Startall") and need("start"):
            started = _ids(ext["start"][0])
            for call in started:
                if not active.get(call, {}).get("persistent"):
                    tr.errors.append(f"{where}: {name} of call {call}, not a persistent request")
            if name == "MPI_Startall" and len(started) != int(rec.fields[0]):
                tr.errors.append(f"{where}: MPI_Startall names {len(started)} requests, count is {rec.fields[0]}")
        if name == "MPI_Request_free" and need("free"):
            for call in _ids(ext["free"][0]):
                if active.pop(call, None) is None:
                    tr.errors.append(f"{where}: frees call {call}, not an active request")
        if name == "MPI_Cancel":
            need("cancel")
        if name in COMPLETES and need("done"):
            _check_done(tr, where, rec, ext, active)
        if name in CREATES_COMM and len(ext.get("comm", [])) > 1:
            tr.errors.append(f"{where}: {name} has more than one '#@ comm' line")
        if name in ("MPI_Alltoallw", "MPI_Ialltoallw"):
            need("typesizes")
        if "polls" in ext and name not in ("MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe"):
            tr.errors.append(f"{where}: '#@ polls' after {name}, which is not a poll")
        if name == "MPI_Init_thread":
            need("thread")
        if name in WILDCARD_FIELDS:
            si, ti = WILDCARD_FIELDS[name]
            if int(rec.fields[si]) == any_source or int(rec.fields[ti]) == any_tag:
                need("status")
            else:
                need("status", 0)


def _check_done(tr, where, rec, ext, active):
    done = _ids(ext["done"][0])
    statuses = {int(m.group(1)) for s in ext.get("status", []) if (m := re.match(r"call=(\d+) ", s))}
    cancelled = {int(c) for c in ext.get("cancelled", [])}
    if not cancelled <= set(done):
        tr.errors.append(
            f"{where}: '#@ cancelled {sorted(cancelled - set(done))}' names requests this call did not complete"
        )
    if cancelled & statuses:
        tr.errors.append(f"{where}: cancelled requests {sorted(cancelled & statuses)} also have a '#@ status'")
    if "polls" in ext and done:
        tr.errors.append(f"{where}: '#@ polls' after a call that completed requests {done}")
    idups = 0
    if len(set(done)) != len(done):
        tr.errors.append(f"{where}: {rec.name} completes a request twice: {done}")
    for call in done:
        info = active.get(call)
        if info is None:
            tr.errors.append(f"{where}: {rec.name} completes call {call}, not an active request")
            continue
        if info["wild"] and call not in statuses and call not in cancelled:
            tr.errors.append(f"{where}: wildcard receive {call} completed without '#@ status'")
        idups += info["idup"]
        if not info["persistent"]:
            del active[call]
    if len(ext.get("comm", [])) != idups:
        tr.errors.append(f"{where}: {idups} MPI_Comm_idup completed but {len(ext.get('comm', []))} '#@ comm' lines")
    if rec.name in ("MPI_Wait", "MPI_Waitany", "MPI_Test", "MPI_Testany") and len(done) > 1:
        tr.errors.append(f"{where}: {rec.name} completes more than one request")


# ---- message matching: the extension lines must make every message resolvable ----
SENDS = {"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend"}
SEND_INITS = {"MPI_Send_init", "MPI_Ssend_init", "MPI_Bsend_init", "MPI_Rsend_init"}


def _ranks(text: str) -> tuple[int, ...]:
    out = []
    for item in text.split(","):
        lo, sep, hi = item.partition("-") if not item.startswith("-") else (item, "", "")
        out.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    return tuple(out)


def messages(tr: RankTrace) -> tuple[Counter, Counter, list[str]]:
    """(sends, receives, errors) of one rank as Counters of (communicator, src, dst, tag):
    the communicator as (world ranks, seq), src/dst as world ranks. Wildcard receives count
    where their "#@ status" line resolves them; persistent requests count at every start."""
    sends, recvs, errors = Counter(), Counter(), []
    me = int(re.search(r"rank=(\d+)", tr.header.get("world", "rank=0")).group(1))
    proc_null = tr.consts.get("proc_null")
    wild = (tr.consts.get("any_source"), tr.consts.get("any_tag"))
    comms = {}
    persistent = {}  # init call index -> ("send"|"recv", comm, peer world, tag)
    created = {}  # Isend/Irecv call index -> ("send"|"recv", item): a cancellation takes it back

    def note(spec):
        h, seq, world, remote = re.match(r"(\d+) seq=(\d+) world=(\S+)(?: remote=(\S+))?$", spec).groups()
        comms[int(h)] = ((_ranks(world), int(seq)), _ranks(remote) if remote else None)

    for spec in tr.header.get("_comms", []):
        note(spec)
    for index, rec in enumerate(tr.records):
        f = rec.fields

        def comm_of(field):
            c = comms.get(int(field.split(",")[0]))
            if c is None:
                errors.append(f"{tr.path}:{rec.line}: communicator {field} never described")
            return c

        def world(c, r):
            ranks = c[1] or c[0][0]
            return ranks[r] if 0 <= r < len(ranks) else None

        def add(counter, c, src, dst, tag):
            if c is not None and proc_null not in (src, dst):
                counter[(c[0], src, dst, tag)] += 1

        name = rec.name
        if name in SENDS or name in SEND_INITS:
            c, dest, tag = comm_of(f[5]), int(f[3]), int(f[4])
            if c and dest != proc_null:
                item = (c, me, world(c, dest), tag)
                if name in SEND_INITS:
                    persistent[index] = ("send", *item)
                else:
                    add(sends, *item)
                    created[index] = ("send", item)
        elif name in ("MPI_Recv", "MPI_Irecv", "MPI_Recv_init"):
            c, src, tag = comm_of(f[5]), int(f[3]), int(f[4])
            if c and src != proc_null and src not in wild[:1] and tag != wild[1]:
                item = (c, world(c, src), me, tag)
                if name == "MPI_Recv_init":
                    persistent[index] = ("recv", *item)
                else:
                    add(recvs, *item)
                    created[index] = ("recv", item)
            elif c and name == "MPI_Recv_init":
                persistent[index] = ("wild", c, None, me, None)
            elif c and name == "MPI_Irecv":
                persistent[index] = ("wild-once", c, None, me, None)
        elif name in ("MPI_Sendrecv", "MPI_Sendrecv_replace"):
            # fields: ... dest 3, sendtag 4, then source/recvtag/comm at 8/9/10 or 5/6/7
            s_, t_, c_ = (8, 9, 10) if name == "MPI_Sendrecv" else (5, 6, 7)
            c = comm_of(f[c_])
            if c:
                if int(f[3]) != proc_null:
                    add(sends, c, me, world(c, int(f[3])), int(f[4]))
                src, tag = int(f[s_]), int(f[t_])
                if src != proc_null and src != wild[0] and tag != wild[1]:
                    add(recvs, c, world(c, src), me, tag)
        for key, value in rec.ext:
            if key == "comm":
                note(value)
            elif key == "start":
                for k in _ids(value):
                    kind, *item = persistent.get(k, ("?",))
                    if kind in ("send", "recv"):
                        add(sends if kind == "send" else recvs, *item)
                        created[k] = (kind, tuple(item))
            elif key == "cancelled":
                kind, item = created.pop(int(value), ("?", None))
                if kind in ("send", "recv"):
                    (sends if kind == "send" else recvs)[(item[0][0], *item[1:])] -= 1
            elif key == "status":
                m = re.match(r"(?:call=(\d+) )?src=(-?\d+) tag=(-?\d+)", value)
                if m.group(1) is None and name in ("MPI_Probe", "MPI_Iprobe"):
                    continue
                if m.group(1) is None:  # blocking wildcard receive on this call's comm
                    cf = {"MPI_Recv": 5, "MPI_Sendrecv": 10, "MPI_Sendrecv_replace": 7}[name]
                    c = comm_of(f[cf])
                else:
                    c = persistent.get(int(m.group(1)), ("?", None))[1]
                if c is not None:
                    add(recvs, c, int(m.group(2)), me, int(m.group(3)))
    return sends, recvs, errors


def check_matching(traces: list[RankTrace]) -> list[str]:
    """Every message sent is received exactly once, by the rank, communicator and tag the
    traces say (only for runs where every rank reached MPI_Finalize)."""
    if not traces or any(t.end != "finalize" for t in traces):
        return []
    sends, recvs, errors = Counter(), Counter(), []
    for t in traces:
        s, r, e = messages(t)
        sends += s
        recvs += r
        errors += e
    for key in sorted(set(sends) | set(recvs), key=str):
        if sends[key] != recvs[key]:
            (world, seq), src, dst, tag = key
            errors.append(
                f"messages {src}->{dst} tag {tag} on communicator world={world} "
                f"seq={seq}: {sends[key]} sent, {recvs[key]} received"
            )
    return errors[:50]


def rank_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(sorted([*p.glob("*.txt"), *p.glob("*.txt.gz")]) if p.is_dir() else [p])
    return out


def check(paths: list[str]) -> tuple[list[RankTrace], list[str]]:
    """Parse every rank file; also check that world sizes agree and every rank is present."""
    traces = [parse(f) for f in rank_files(paths)]
    errors = [e for t in traces for e in t.errors]
    ranks = sorted(int(re.search(r"rank=(\d+)", t.header.get("world", "rank=-1")).group(1)) for t in traces)
    if traces:
        size = int(re.search(r"size=(\d+)", traces[0].header.get("world", "size=0")).group(1))
        if ranks != list(range(size)):
            errors.append(f"ranks present {ranks}, world size {size}")
    if not traces:
        errors.append("no trace files")
    if not errors:
        errors += check_matching(traces)
    return traces, errors


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    traces, errors = check(args)
    for e in errors:
        print(e)
    if "--counts" in argv:
        print(json.dumps({str(t.path): dict(t.counts()) for t in traces}, indent=1))
    print(f"{len(traces)} files, {sum(len(t.records) for t in traces)} calls, {len(errors)} errors", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
