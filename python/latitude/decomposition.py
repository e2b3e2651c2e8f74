"""Where MPI time goes (`latitude decompose`): every rank's predicted time split into
computation, network (latency and bandwidth terms), MPI software stack (o, O and the
protocol's set-up overheads) and synchronization (waiting for the partner), summed per rank,
per MPI function and overall.

The core (engine/decompose.rs, docs/analysis.md "Decomposition") prices the graph once,
cuts each message op's interval [S, E] into ordered segments by the cost rules and walks
every gap between a rank's computations back along the pass's winners, so each rank's parts
sum exactly to its finish time T_r, and on the rank that finishes last to T. This module
names the segments' MPI calls and aggregates them:

* a graph read from a trace keeps each vertex's trace line, so a segment belongs to the call
  the rank is in when the time passes: the op's own call if it was issued in that gap, else
  the call that starts the gap (an `MPI_Wait` waiting for an `MPI_Irecv` posted before the
  computation); a collective's algorithm ops carry their call's line;
* a GOAL or job graph has no calls: segments are named by their op (`send`, `recv`).

Given a trace, the measured time of each MPI function (sum of its calls' durations, all
ranks) stands beside the model's split, and each rank has its traced span (its MPI_Init end
to its MPI_Finalize start) and the time inside its MPI calls in that span. The model's
computation is the trace's (the time between the calls), so a rank's measured MPI time less
the model's is its span less T_r, the rank's share of the ΔL = 0 prediction error, up to the
tracer's own work between calls; a larger MPI gap is not a second error.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

import numpy as np

from latitude.outputs import open_atomic

NONE = 2**32 - 1
PARTS = ("compute", "latency", "bandwidth", "stack", "sync")
# What a segment's op is named without a trace: the only calcs with MPI time are copies.
KIND_NAMES = ("copy", "send", "recv")


@dataclass
class Decomposition:
    runtime_ns: float
    per_rank: list[dict]
    per_call: list[dict]
    total: dict
    params: dict

    def to_dict(self) -> dict:
        """The `--json` document (docs/json.md)."""
        return {
            "runtime_ns": self.runtime_ns,
            "params": self.params,
            "total": self.total,
            "per_rank": self.per_rank,
            "per_call": self.per_call,
        }


def _split(parts_ns: np.ndarray) -> dict:
    """compute, network (= latency + bandwidth), stack, sync from the core's five parts."""
    return {
        "compute_ns": float(parts_ns[0]),
        "network_ns": float(parts_ns[1] + parts_ns[2]),
        "stack_ns": float(parts_ns[3]),
        "sync_ns": float(parts_ns[4]),
    }


def decompose(core_graph, params, calls: list[dict] | None = None) -> Decomposition:
    """The decomposition of `core_graph` (a `_core.Graph`) at `params`; `calls`: the trace's
    measured calls per rank (`_core.trace_times`) when the graph came from a trace with lines."""
    raw = core_graph.decompose(params.to_core())
    arrays = core_graph.arrays(edges=False)  # after decompose: planning may re-order vertices
    rank_parts = raw["rank_parts_ns"]
    per_rank = [{"rank": r, **_split(rank_parts[r])} for r in range(rank_parts.shape[0])]
    if calls is not None:
        from latitude import _core

        kinds = _core.trace_calls()
        for row, rank in zip(per_rank, calls):
            row.update(_rank_measured(rank, kinds))
    total = _split(rank_parts.sum(axis=0)) if len(per_rank) else _split(np.zeros(5))
    codes, names, counts, measured = _labels(raw, arrays, calls)
    per_call = _per_call(raw, codes, names, counts, measured)
    return Decomposition(float(raw["runtime_ns"]), per_rank, per_call, total, params.to_dict())


def _labels(raw: dict, arrays: dict, calls: list[dict] | None):
    """Each segment's call as a code into a list of names (integers: graphs reach 10⁸ ops),
    the names, the count of each name and the measured time per name (None without a trace)."""
    vertex = raw["seg_vertex"].astype(np.int64)
    kind = arrays["kind"].astype(np.int64)
    if calls is None or "line" not in arrays:
        n = np.bincount(kind, minlength=3)
        n[0] = int(np.count_nonzero(arrays["copy"]))
        return kind[vertex], list(KIND_NAMES), {KIND_NAMES[k]: int(n[k]) for k in (0, 1, 2) if n[k]}, None
    rank, line = arrays["rank"].astype(np.int64), arrays["line"].astype(np.int64)
    frm = raw["seg_from"].astype(np.int64)
    own = line[vertex]
    gap_start = np.where(frm == NONE, -1, line[np.where(frm == NONE, 0, frm)])
    # Issued in this gap: its own call; issued before the computation: the call that waits.
    at_line = np.where(own >= gap_start, own, gap_start)
    keys, codes, names, counts, measured = _call_table(calls)
    seg_keys = rank[vertex] * 2**32 + at_line
    if len(keys) == 0:
        return kind[vertex], list(KIND_NAMES), counts, measured
    i = np.clip(np.searchsorted(keys, seg_keys), 0, len(keys) - 1)
    # A segment whose line is no measured call (cannot happen for our traces) keeps its op kind.
    fallback = np.array([_code(names, k) for k in KIND_NAMES])
    return np.where(keys[i] == seg_keys, codes[i], fallback[kind[vertex]]), names, counts, measured


# Calls whose time the schedule keeps as computation (trace::known_calls' "local" and "io").
_COMPUTE_KINDS = ("local", "io")
_ENDS = ("MPI_Init", "MPI_Init_thread", "MPI_Finalize")


def _rank_measured(rank: dict, kinds: dict) -> dict:
    """One rank's traced span, MPI_Init end (time 0) to MPI_Finalize start (else its last
    call's end), and the time inside its MPI calls within it, the calls the schedule keeps as
    computation (`kinds`: _core.trace_calls()) left out."""
    names = rank["names"]
    start, end, name = rank["start_ns"], rank["end_ns"], rank["name"]
    fin = [i for i, n in enumerate(names) if n == "MPI_Finalize"]
    at_fin = np.isin(name, fin) if fin else np.zeros(len(name), dtype=bool)
    span = float(start[at_fin].min()) if at_fin.any() else float(end.max(initial=0))
    skip = [i for i, n in enumerate(names) if n in _ENDS or kinds.get(n) in _COMPUTE_KINDS]
    inside = (start >= 0) & (end <= span) & ~np.isin(name, skip)
    return {"measured_span_ns": span, "measured_mpi_ns": float((end - start)[inside].sum())}


def _call_table(calls: list[dict]):
    """Sorted (rank, line) keys of every measured call, their name codes, the names, and the
    count and measured time per name."""
    names: list[str] = []
    keys, codes = [], []
    counts: dict[str, int] = {}
    measured: dict[str, float] = {}
    for r, rank in enumerate(calls):
        local = np.array([_code(names, n) for n in rank["names"]] or [0], dtype=np.int64)
        code = local[rank["name"]] if len(rank["name"]) else np.array([], dtype=np.int64)
        keys.append(r * 2**32 + rank["line"].astype(np.int64))
        codes.append(code)
        n = np.bincount(code, minlength=len(names))
        t = np.bincount(code, weights=rank["end_ns"] - rank["start_ns"], minlength=len(names))
        for c in np.nonzero(n)[0].tolist():
            counts[names[c]] = counts.get(names[c], 0) + int(n[c])
            measured[names[c]] = measured.get(names[c], 0.0) + float(t[c])
    k = np.concatenate(keys) if keys else np.array([], dtype=np.int64)
    c = np.concatenate(codes) if codes else np.array([], dtype=np.int64)
    order = np.argsort(k, kind="stable")
    return k[order], c[order], names, counts, measured


def _code(names: list[str], name: str) -> int:
    if name not in names:
        names.append(name)
    return names.index(name)


def _per_call(raw: dict, codes: np.ndarray, names: list[str], counts: dict, measured: dict | None) -> list[dict]:
    part, ns = raw["seg_part"], raw["seg_ns"]
    rows: dict[str, dict] = {}
    for name in sorted(set(counts) | {names[c] for c in np.unique(codes).tolist()}):
        row = {"call": name, "count": counts.get(name, 0), "network_ns": 0.0, "stack_ns": 0.0, "sync_ns": 0.0}
        if measured is not None:
            row["measured_ns"] = measured.get(name, 0.0)
        rows[name] = row
    for k, key in ((1, "network_ns"), (2, "network_ns"), (3, "stack_ns"), (4, "sync_ns")):
        sums = np.bincount(codes, weights=np.where(part == k, ns, 0.0), minlength=len(names))
        for c in np.nonzero(sums)[0].tolist():
            rows[names[c]][key] += float(sums[c])
    return [r for r in rows.values() if r["count"] or r["network_ns"] or r["stack_ns"] or r["sync_ns"]]


def write_csv(d: Decomposition, path: str) -> None:
    """One table: a row per rank, per MPI function and the total (column `scope`)."""
    cols = ["scope", "rank", "call", "count", "compute_ns", "network_ns", "stack_ns", "sync_ns", "measured_ns"]
    cols += ["measured_span_ns", "measured_mpi_ns"]
    with open_atomic(path, "CSV file", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, restval="")
        w.writeheader()
        w.writerow({"scope": "total", **d.total})
        for r in d.per_rank:
            w.writerow({"scope": "rank", **r})
        for c in d.per_call:
            w.writerow({"scope": "call", **c})


def plot(d: Decomposition, path: str, title: str | None = None) -> list[str]:
    """Stacked bars per rank: computation, network, stack, synchronization (the SST-macro
    study's Fig. 8 layout)."""
    from latitude.plots import _mpl, _save, _time_scale

    plt = _mpl()
    ranks = np.array([r["rank"] for r in d.per_rank])
    keys = (("compute_ns", "computation", "#7f7f7f"), ("network_ns", "network", "#1f77b4"))
    keys += (("stack_ns", "MPI stack", "#ff7f0e"), ("sync_ns", "synchronization", "#d62728"))
    f, unit = _time_scale(max((sum(r[k] for k, _, _ in keys) for r in d.per_rank), default=1.0))
    fig, ax = plt.subplots(figsize=(max(6.0, min(0.25 * len(ranks) + 3, 24.0)), 4.5))
    bottom = np.zeros(len(ranks))
    for key, label, color in keys:
        vals = np.array([r[key] for r in d.per_rank]) / f
        ax.bar(ranks, vals, bottom=bottom, label=label, color=color, width=0.8)
        bottom += vals
    ax.set_xlabel("rank")
    ax.set_ylabel(f"time ({unit})")
    ax.set_title(title or "Where each rank's time goes (predicted)")
    ax.legend(loc="lower right", framealpha=0.9)
    ax.grid(axis="x", visible=False)
    return _save(fig, path)
