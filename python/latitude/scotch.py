"""Static mapping with Scotch: the volume graph mapped onto the machine's nodes.

The method of Jeannot et al. (process placement in multicore clusters), which the LLAMP
paper compares against: the *source graph* has one vertex per rank and an edge of weight
W_ij (bytes exchanged) per pair that talks; the *target architecture* has one vertex per
node of the allocation, of weight ``ranks_per_node`` (its capacity), and the distance between
two nodes is the machine's latency between them (ns, ≥ 1). Scotch minimises Σ W_ij·d(π(i), π(j))
under balanced loads. Debian's ``scotch`` package provides the programs: ``amk_grf`` turns
the weighted complete graph of the nodes into a decomposition-defined target (distances are
its shortest paths, i.e. the route latencies), ``scotch_gmap`` (upstream ``gmap``) maps the
source graph onto it, deterministically (``-Cd``) and enforcing balance (``-cb``).

Scotch balances load up to a tolerance, so it may put a rank more on a node than it holds;
such ranks are moved, least-attached first, to the free slot whose node they exchange the
most bytes with (the result always fits the machine).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from latitude.errors import InputError, ToolError

GMAP = ("scotch_gmap", "gmap")
TIMEOUT = 600


def _tool(names) -> str:
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    raise ToolError(f"Scotch's {names[-1]} is not installed (Debian: apt-get install scotch; scripts/setup does)")


def source_graph(ranks: int, volumes: dict) -> str:
    """Scotch source graph (.grf): ranks as vertices, byte volumes as edge weights."""
    adj: list = [[] for _ in range(ranks)]
    for (i, j), w in volumes.items():
        if w > 0:
            w = min(int(w), 2**31 - 1)
            adj[i].append((j, w))
            adj[j].append((i, w))
    arcs = sum(len(a) for a in adj)
    lines = ["0", f"{ranks} {arcs}", "0 010"]
    for a in adj:
        lines.append(" ".join([str(len(a))] + [f"{w} {j}" for j, w in sorted(a)]))
    return "\n".join(lines) + "\n"


def target_graph(nodes: int, capacity: int, distance) -> str:
    """A weighted complete graph of the allocation's nodes (vertex weight = capacity, edge
    weight = distance(a, b) ≥ 1), for amk_grf."""
    lines = ["0", f"{nodes} {nodes * (nodes - 1)}", "0 011"]
    for a in range(nodes):
        nb = [f"{max(1, round(distance(a, b)))} {b}" for b in range(nodes) if b != a]
        lines.append(" ".join([str(capacity), str(nodes - 1)] + nb))
    return "\n".join(lines) + "\n"


def _run(cmd: list, cwd: str) -> None:
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{os.path.basename(cmd[0])} did not finish in {TIMEOUT} s") from None
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or [f"exit code {r.returncode}"]
        raise ToolError(f"{os.path.basename(cmd[0])} failed: {tail[0]}")


def map_ranks(ranks: int, volumes: dict, nodes: list, capacity: int, distance) -> list:
    """Node (from `nodes`) of each rank as Scotch maps the volume graph onto them.
    `distance(a, b)` is the cost between nodes a ≠ b (ns)."""
    if ranks > len(nodes) * capacity:
        raise InputError(None, f"{ranks} ranks do not fit {len(nodes)} nodes of {capacity}")
    if len(nodes) == 1:
        return [nodes[0]] * ranks
    amk, gmap = _tool(("amk_grf",)), _tool(GMAP)
    with tempfile.TemporaryDirectory(prefix="latitude-scotch-") as d:
        with open(os.path.join(d, "src.grf"), "w") as f:
            f.write(source_graph(ranks, volumes))
        with open(os.path.join(d, "arch.grf"), "w") as f:
            f.write(target_graph(len(nodes), capacity, lambda a, b: distance(nodes[a], nodes[b])))
        _run([amk, "arch.grf", "arch.tgt"], d)
        _run([gmap, "-Cd", "-cb", "src.grf", "arch.tgt", "map.txt"], d)
        with open(os.path.join(d, "map.txt")) as f:
            rows = f.read().split()
    count = int(rows[0]) if rows else -1
    part = {int(rows[k]): int(rows[k + 1]) for k in range(1, len(rows) - 1, 2)}
    if count != ranks or sorted(part) != list(range(ranks)) or any(not 0 <= p < len(nodes) for p in part.values()):
        raise ToolError("scotch_gmap wrote a mapping that does not cover every rank once")
    out = [nodes[part[r]] for r in range(ranks)]
    return fit(out, volumes, nodes, capacity)


def fit(placed: list, volumes: dict, nodes: list, capacity: int) -> list:
    """Move ranks off over-full nodes into free slots (least bytes lost first)."""
    out = list(placed)
    load = {n: 0 for n in nodes}
    for n in out:
        load[n] += 1
    if all(k <= capacity for k in load.values()):
        return out
    adj: dict = {}
    for (i, j), w in volumes.items():
        adj.setdefault(i, []).append((j, w))
        adj.setdefault(j, []).append((i, w))

    def bytes_to(r: int, node: int) -> int:
        return sum(w for o, w in adj.get(r, ()) if out[o] == node and o != r)

    for n in nodes:
        while load[n] > capacity:
            movers = [r for r in range(len(out)) if out[r] == n]
            r = min(movers, key=lambda r: (bytes_to(r, n), r))
            free = [m for m in nodes if load[m] < capacity]
            dest = max(free, key=lambda m: (bytes_to(r, m), -m))
            out[r] = dest
            load[n] -= 1
            load[dest] += 1
    return out
