"""Checks a Chrome trace-event JSON document against the format's rules (the subset
`latitude simulate --timeline` writes): required fields per phase, µs times, matched async
and flow pairs, flow binding to an enclosing slice, proper nesting of slices per thread."""

from __future__ import annotations

from collections import defaultdict

PHASES = {"X", "M", "b", "e", "s", "f"}
METADATA = {"process_name", "thread_name", "process_sort_index", "thread_sort_index"}


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x


def check_trace(doc) -> list[str]:
    """Return the list of violations (empty when the document follows the rules)."""
    errs: list[str] = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["top level must be an object with a traceEvents array"]
    slices = defaultdict(list)
    asyncs = defaultdict(list)
    flows = defaultdict(list)
    for n, e in enumerate(doc["traceEvents"]):
        where = f"event {n}"
        ph = e.get("ph")
        if ph not in PHASES:
            errs.append(f"{where}: unknown phase {ph!r}")
            continue
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            errs.append(f"{where}: pid and tid must be integers")
        if ph == "M":
            if e.get("name") not in METADATA or not isinstance(e.get("args"), dict):
                errs.append(f"{where}: metadata needs a known name and args")
            elif e["name"].endswith("_name") and not isinstance(e["args"].get("name"), str):
                errs.append(f"{where}: {e['name']} needs args.name")
            elif e["name"].endswith("sort_index") and not isinstance(e["args"].get("sort_index"), int):
                errs.append(f"{where}: {e['name']} needs args.sort_index")
            continue
        if not isinstance(e.get("name"), str) or not _num(e.get("ts")) or e["ts"] < 0:
            errs.append(f"{where}: needs a name and a time stamp ts ≥ 0 (µs)")
            continue
        if ph == "X":
            if not _num(e.get("dur")) or e["dur"] < 0:
                errs.append(f"{where}: complete event needs dur ≥ 0")
            else:
                slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], n))
        elif ph in "be":
            if "cat" not in e or "id" not in e:
                errs.append(f"{where}: async event needs cat and id")
            else:
                asyncs[(e["pid"], e["cat"], e["id"])].append((ph, e["ts"], n))
        else:
            if "cat" not in e or "id" not in e:
                errs.append(f"{where}: flow event needs cat and id")
                continue
            if ph == "f" and e.get("bp") != "e":
                errs.append(f'{where}: flow end must bind to its enclosing slice (bp: "e")')
            flows[e["id"]].append((ph, e["ts"], e["pid"], e["tid"], n))
    errs += _check_nesting(slices)
    for key, evs in asyncs.items():
        phases = [p for p, _, _ in evs]
        if sorted(phases) != ["b", "e"] or evs[0][0] != "b" or evs[1][1] < evs[0][1]:
            errs.append(f"async {key}: needs one b then one e with e.ts ≥ b.ts, got {evs}")
    for fid, evs in flows.items():
        if sorted(p for p, *_ in evs) != ["f", "s"]:
            errs.append(f"flow {fid}: needs exactly one s and one f")
            continue
        s = next(x for x in evs if x[0] == "s")
        f = next(x for x in evs if x[0] == "f")
        if f[1] < s[1]:
            errs.append(f"flow {fid}: ends before it starts")
        for ph, ts, pid, tid, n in (s, f):
            if not any(a - 1e-9 <= ts <= b + 1e-9 for a, b, _ in slices[(pid, tid)]):
                errs.append(f"event {n}: flow {ph} at {ts} µs is not inside a slice of pid {pid} tid {tid}")
    return errs


def _check_nesting(slices) -> list[str]:
    """Slices of one thread must be disjoint or nested."""
    errs = []
    for key, spans in slices.items():
        stack: list[tuple[float, float, int]] = []
        for a, b, n in sorted(spans, key=lambda x: (x[0], -x[1])):
            while stack and stack[-1][1] <= a + 1e-9:
                stack.pop()
            if stack and b > stack[-1][1] + 1e-9:
                errs.append(f"event {n}: slice [{a}, {b}] on {key} overlaps event {stack[-1][2]} without nesting")
            stack.append((a, b, n))
    return errs
