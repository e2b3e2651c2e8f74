"""Emulated nodes: a run on one host made to see a machine's per-pair latencies.

The latency injector delays every message by ΔL beyond its natural one-way time
(latitude.inject). Given a machine file and a placement π, each pair of ranks gets its own
extra delay: the machine's latency for the pair's nodes minus what the host already costs,

    extra_ij = L_ij(π) − L_ij(one node) ≥ 0,

where L_ij(one node) is the machine's latency between two ranks of one node (intra.L, else L:
the host the run is on *is* one node, and its natural one-way time is that node's latency).
So ranks on one emulated node get no extra delay and ranks on emulated nodes A ≠ B get the
network's L_AB (route hops included) minus the intra-node latency. Rendezvous messages pay
the pair's extra 3 times (4 to the sender), as with a uniform ΔL. The injector reads the
matrix from a file, one row per world rank (``LATITUDE_INJECT_PAIR_DELTA``).

**Self-check** (:func:`self_check`): per class of pairs (each distinct extra delay), two
ranks of the host run latitude-calib's ping-pong with pre-posted receives under the
injector with that pair's extra delay, and the fastest half round trip is compared with the
same run at no extra delay: the growth must be the intended delay within max(0.5 µs, 3 %).
The fastest of many round trips is what the injector controls (a loaded host only ever adds
to a round trip); a class that misses is measured again (up to 3 times) before it counts.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections import Counter

from latitude import inject
from latitude import placement as maps
from latitude.errors import InputError, ToolError
from latitude.outputs import write_text
from latitude.place_model import PairCosts

TOLERANCE_NS = 500.0
TOLERANCE_REL = 0.03


def emulated_nodes(params, placement: str, pair_file: str, opts: inject.InjectOptions):
    """`opts` extended to emulate the nodes of `params`' machine (read once by the caller) as
    `placement` puts the ranks on them (the pair-delay matrix written to `pair_file`); also
    each rank's node and the matrix."""
    if params.machine is None:
        raise InputError("--machine", "emulating nodes needs a machine file with [nodes] (docs/network.md)")
    m = maps.read_map(placement)
    nodes = maps.check(m, len(m.nodes), params.machine.ranks_per_node, params.machine.nodes())
    matrix = pair_delta(params, nodes)
    write_matrix(pair_file, matrix)
    return (
        dataclasses.replace(opts, pair_delta=pair_file, one_way=host_one_way(params)),
        [int(n) for n in nodes],
        matrix,
    )


def pair_delta(params, nodes) -> list:
    """extra_ij (ns) for every pair of ranks placed on `nodes` (a node per rank)."""
    costs = PairCosts(params)
    n = len(nodes)
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            a, b = int(nodes[i]), int(nodes[j])
            extra = max(0.0, costs.latency(i, j, a, b) - costs.latency(i, j, a, a))
            out[i][j] = out[j][i] = extra
    return out


def host_one_way(params) -> tuple:
    """The injector's first estimate of a message's natural one-way time on the host, a + b·s
    ns: the machine's one-node latency plus 2o, and gap per byte plus O (the machine's L is
    the emulated network's, not the host's)."""
    costs = PairCosts(params)
    return (costs.latency(0, 1, 0, 0) + 2 * params.o, costs.gap(0, 1, 0, 0) + params.O)


def classes(matrix) -> list:
    """Distinct extra delays with the number of rank pairs (i < j) that get each, smallest first."""
    count: Counter = Counter()
    for i, row in enumerate(matrix):
        for v in row[i + 1 :]:
            count[round(v, 3)] += 1
    return [{"extra_ns": v, "pairs": k} for v, k in sorted(count.items())]


def write_matrix(path: str, matrix) -> None:
    """The matrix as the injector reads it: one line per rank, values in ns."""
    write_text(path, "".join(" ".join(f"{v:.3f}" for v in row) + "\n" for row in matrix), "pair-delay matrix")


def _fastest_half_rtt(launch, prog, extra_ns: float, tmp: str, timeout: float) -> float:
    """Fastest half round trip (ns) of 8-byte messages between two ranks whose pair gets
    `extra_ns` on top of what the host costs."""
    path = os.path.join(tmp, "pair.txt")
    write_matrix(path, [[0.0, extra_ns], [extra_ns, 0.0]])
    argv = list(launch.argv) + [str(prog), "--what", "selfcheck", "--sizes", "8", "--deltas", "0"]
    argv += ["--batches", "7", "--iters", "20", "--preposted", "1"]
    out = inject.run_injected(launch, inject.InjectOptions(pair_delta=path), argv=argv, timeout=timeout).stdout
    rows = [ln.split(",") for ln in (out or "").splitlines() if ln.startswith("selfcheck,")]
    if not rows:
        raise ToolError("latitude-calib printed no selfcheck rows under the injector")
    return min(float(r[5]) for r in rows) * 1e3


def self_check(launch, matrix, timeout: float = 300.0, tries: int = 3) -> list:
    """Measure every class of pairs of `matrix` on two ranks of `launch` (a launcher for 2
    ranks, e.g. ``mpirun -np 2``). One row per class: intended and measured extra delay (ns),
    a representative pair, and whether it is within max(0.5 µs, 3 %)."""
    prog = launch.build(inject.CALIB_PROGRAM)
    reps: dict = {}
    for i, row in enumerate(matrix):
        for j in range(i + 1, len(row)):
            reps.setdefault(round(row[j], 3), (i, j))
    out = []
    with tempfile.TemporaryDirectory(prefix="latitude-selfcheck-") as tmp:
        for extra, pair in sorted(reps.items()):
            tol = max(TOLERANCE_NS, TOLERANCE_REL * extra)
            if not extra:  # pairs on one emulated node: nothing added, nothing to measure
                out.append({"extra_ns": 0.0, "measured_ns": None, "pair": list(pair), "tolerance_ns": tol, "ok": True})
                continue
            for _ in range(tries):
                base = _fastest_half_rtt(launch, prog, 0.0, tmp, timeout)
                got = _fastest_half_rtt(launch, prog, extra, tmp, timeout) - base
                if abs(got - extra) <= tol:
                    break
            out.append(
                {
                    "extra_ns": extra,
                    "measured_ns": got,
                    "pair": list(pair),
                    "tolerance_ns": tol,
                    "ok": abs(got - extra) <= tol,
                }
            )
    return out
