#!/usr/bin/env python3
"""Where a trace's bytes go: per record kind and per field kind, and per message.

Reads a trace directory written by `latitude trace` (compressed, the default, or `--plain`)
and splits every byte of its text into one bucket:
call lines by field kind (the name, the two timestamps, addresses, integers, handles,
datatype triples `code,size,extent`, communicator triples `handle,rank,size`, ops, count
lists, the ':' separators and newline), extension lines by key (`#@ done`, `#@ status`,
`#@ polls`, ...), and header/comment lines. Field kinds come from the tracer's own wrapper
table (wrappers.tbl), so the split follows the format, not a guess. With the graph's message
count (`latitude schedule --json`) every bucket is also shown in bytes per real message.

    python3 bench/trace_bytes.py TRACEDIR [--json out.json] [--messages N]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python" / "latitude" / "_tracer"))
sys.path.insert(0, str(ROOT / "python"))
import lt_gen  # noqa: E402  (the wrapper table's parser)
from latitude import tracer  # noqa: E402


def field_kinds() -> dict[str, tuple[list[str], list[str]]]:
    """MPI name -> (field kinds of the C record, of the Fortran record)."""
    funcs = lt_gen.parse_table((ROOT / "python/latitude/_tracer/wrappers.tbl").read_text())
    out = {}
    for f in funcs:
        c = [p.how for p in f.params if p.how != "skip"]
        fort = [p.how for p in f.params if p.how != "skip" and not p.c_only]
        out[f.name] = (c, fort)
    return out


def split_fields(body: str, kinds: list[str]) -> list[str] | None:
    """The call line's argument fields (without name and times), a count list taking two
    ':'-separated parts; None when the line does not have the fields `kinds` says."""
    parts = body.split(":") if body else []
    out, i = [], 0
    for k in kinds:
        take = 2 if k == "list" else 1
        if i + take > len(parts):
            return None
        out.append(":".join(parts[i : i + take]))
        i += take
    return out if i == len(parts) else None


def account(line: str, kinds: dict, b: collections.Counter, calls: collections.Counter) -> None:
    n = len(line) + 1  # the newline
    if line.startswith("#@ "):
        key = line[3:].split(" ", 1)[0]
        b[f"ext #@ {key}"] += n
        return
    if line.startswith("#") or not line:
        b["header/comment"] += n
        return
    name, rest = line.split(":", 1)
    calls[name] += 1
    tstart, rest = rest.split(":", 1) if ":" in rest else (rest, "")
    body, _, tend = rest.rpartition(":")
    b["call name"] += len(name)
    b["call timestamps"] += len(tstart) + len(tend)
    ck, fk = kinds.get(name, ([], []))
    fields = split_fields(body, ck)
    if fields is None:
        fields, ck = split_fields(body, fk), fk
    if fields is None:
        b["call other fields"] += len(body)
        b["call separators"] += n - len(name) - len(tstart) - len(tend) - len(body)
        return
    for k, v in zip(ck, fields):
        b[f"call field {k}"] += len(v)
    b["call separators"] += n - len(name) - len(tstart) - len(tend) - sum(map(len, fields))


def breakdown(tracedir: Path) -> tuple[collections.Counter, collections.Counter]:
    kinds = field_kinds()
    b, calls = collections.Counter(), collections.Counter()
    for f in tracer.trace_files(tracedir):  # the bytes of the text, compressed (the default) or plain
        with tracer.open_trace(f) as fh:
            for raw in fh:
                account(raw.decode("utf-8", errors="replace").rstrip("\n"), kinds, b, calls)
    return b, calls


def messages(tracedir: Path) -> int:
    """Messages of the graph the trace schedules into (point-to-point and inside collectives)."""
    out = subprocess.run(
        [sys.executable, "-m", "latitude", "schedule", str(tracedir), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "python")},
    )
    return json.loads(out.stdout)["graph"]["messages"] if out.returncode == 0 else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tracedir", type=Path)
    ap.add_argument("--messages", type=int, help="real messages (default: from latitude schedule)")
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    b, calls = breakdown(a.tracedir)
    total = sum(b.values())
    nmsg = a.messages if a.messages is not None else messages(a.tracedir)
    print(f"{a.tracedir}: {total:,} bytes, {sum(calls.values()):,} call lines, {nmsg:,} messages")
    print(f"{'bucket':28} {'bytes':>12} {'share':>7} {'B/msg':>8}")
    for k, v in b.most_common():
        print(f"{k:28} {v:12,} {100 * v / total:6.1f}% {v / nmsg if nmsg else 0:8.1f}")
    print(f"{'total':28} {total:12,} {100.0:6.1f}% {total / nmsg if nmsg else 0:8.1f}")
    print("call lines per name: " + ", ".join(f"{k} {v:,}" for k, v in calls.most_common(8)))
    if a.json:
        Path(a.json).write_text(json.dumps({"bytes": dict(b), "calls": dict(calls), "messages": nmsg}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
