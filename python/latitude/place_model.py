"""What every placement method works on: the allocation, the per-pair costs, the volumes.

A **placement problem** is a graph, a machine (parameters at one point θ) and an
**allocation**: the nodes the job may use, each with ``ranks_per_node`` slots — the nodes of
the initial placement, as a batch system hands them out. Every method returns a map from
ranks to those nodes with at most ``ranks_per_node`` ranks per node, and every map is priced
the same way: one engine pass on the same graph with the machine re-bound to the map
(``Params.with_placement``), so predictions of different methods are exactly comparable.

**Pair costs.** The latency L_ij(π) and gap G_ij(π) of a pair of ranks under a placement π
follow the machine's rules (docs/network.md): between nodes A ≠ B, L + Σ_c n_c(A, B)·l_c (or
the pair's matrix entry plus L), on one node the intra-node L and G (or the matrix entry, or
L and G). :class:`PairCosts` evaluates them at θ for any hypothetical π; the sensitivity
method uses them to price a swap before the engine does (a test checks them against the
core's costs of the pairs on the critical path).

**Volumes.** W_ij = bytes sent between ranks i and j in either direction (the trace's
rank-to-rank byte matrix), what volume-based mappers (greedy, Scotch) minimise
Σ W_ij·d(π(i), π(j)) with.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from latitude.errors import InputError
from latitude.params import Params


class PairCosts:
    """L_ij and G_ij (ns, ns per byte) at the parameter point of `params`, for ranks i, j
    placed on any nodes a, b."""

    def __init__(self, params: Params):
        m = params.machine
        vals = dict(zip(params.names, params.theta))
        self.machine = m
        self.L, self.G = params.L, params.G
        self.class_vals = [vals[c] for c in m.class_params]
        self.intra = (vals["intra.L"], vals["intra.G"]) if m.intra else None
        self.lat_m = self._matrix(m.lat_matrix, vals)
        self.gap_m = self._matrix(m.gap_matrix, vals)
        self._routes: dict = {}

    @staticmethod
    def _matrix(mx, vals):
        if mx is None:
            return None
        entries = [c + sum(k * vals[n] for n, k in terms) for c, terms in mx.entries]
        return mx.by_node, mx.n, mx.ids, entries

    @staticmethod
    def _entry(mx, i, j, a, b):
        if mx is None:
            return None
        by_node, n, ids, entries = mx
        x, y = (a, b) if by_node else (i, j)
        k = ids[x * n + y]
        return None if k < 0 else entries[k]

    def route_ns(self, a: int, b: int) -> float:
        """Σ_c n_c(a, b)·l_c between distinct nodes (cached per node pair)."""
        key = (min(a, b), max(a, b))
        r = self._routes.get(key)
        if r is None:
            counts = self.machine.node_route(*key) if self.class_vals else {}
            r = sum(k * v for k, v in zip(counts.values(), self.class_vals))
            self._routes[key] = r
        return r

    def latency(self, i: int, j: int, a: int, b: int) -> float:
        e = self._entry(self.lat_m, i, j, a, b)
        if a != b:
            return self.L + (e if e is not None else self.route_ns(a, b))
        if e is not None:
            return e
        return self.intra[0] if self.intra else self.L

    def gap(self, i: int, j: int, a: int, b: int) -> float:
        e = self._entry(self.gap_m, i, j, a, b)
        if e is not None:
            return e
        return self.intra[1] if self.intra and a == b else self.G


def volumes(graph) -> dict:
    """W: bytes exchanged per pair of ranks {(i, j): bytes} with i < j (both directions)."""
    arr = graph.arrays(edges=False)
    send = arr["kind"] == 1
    a, b, v = arr["rank"][send].astype(np.int64), arr["peer"][send].astype(np.int64), arr["val"][send]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    out: dict = {}
    for i, j, w in zip(lo[keep].tolist(), hi[keep].tolist(), v[keep].tolist()):
        out[(i, j)] = out.get((i, j), 0) + int(w)
    return out


@dataclass
class Problem:
    """A graph, a machine at one point, and the allocation (nodes, slots per node)."""

    graph: object
    params: Params
    nodes: tuple  # the allocation, ascending
    per_node: int
    evaluations: int = 0
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, graph, params: Params, init) -> Problem:
        if params.machine is None:
            raise InputError(
                "--machine", "placement needs a machine file with [nodes] (ranks per node, a network): docs/network.md"
            )
        if len(init) != graph.num_ranks:
            raise InputError(None, f"an initial map of {len(init)} ranks for a graph of {graph.num_ranks}")
        return cls(graph, params, tuple(sorted(set(int(n) for n in init))), params.machine.ranks_per_node)

    @property
    def ranks(self) -> int:
        return self.graph.num_ranks

    def costs(self) -> PairCosts:
        return PairCosts(self.params)

    def predict(self, nodes):
        """The engine's prediction with ranks on `nodes` (cached per map)."""
        key = tuple(int(n) for n in nodes)
        pred = self._cache.get(key)
        if pred is None:
            self.evaluations += 1
            pred = self.graph.predict(self.params.with_placement(key))
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = pred
        return pred

    def runtime(self, nodes) -> float:
        return self.predict(nodes).runtime_ns

    def pairs(self, nodes):
        """Pairwise sensitivities on the critical path with ranks on `nodes` (an engine pass)."""
        self.evaluations += 1
        return self.graph.pairs(self.params.with_placement(tuple(int(n) for n in nodes)))

    def free(self, nodes) -> dict:
        """Free slots per node of the allocation under `nodes`."""
        load = dict.fromkeys(self.nodes, 0)
        for n in nodes:
            load[n] += 1
        return {n: self.per_node - k for n, k in load.items() if k < self.per_node}

    def slots(self) -> list:
        """One entry per slot of the allocation: its node."""
        return [n for n in self.nodes for _ in range(self.per_node)]


class Budget:
    """Wall-clock budget of a search (None: none) and an optional cap on engine passes."""

    def __init__(self, seconds: float | None, evaluations: int | None = None):
        self.start = time.perf_counter()
        self.seconds = seconds
        self.evaluations = evaluations

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def fraction(self, evals: int) -> float:
        parts = []
        if self.seconds:
            parts.append(self.elapsed() / self.seconds)
        if self.evaluations:
            parts.append(evals / self.evaluations)
        return min(1.0, max(parts, default=0.0))

    def spent(self, evals: int) -> bool:
        return (self.seconds is not None and self.elapsed() >= self.seconds) or (
            self.evaluations is not None and evals >= self.evaluations
        )
