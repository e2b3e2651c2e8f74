"""Pairwise sensitivities (the LLAMP paper's App. I, eq. 7) as tables and heat maps.

λ_L^{ij} = ∂T/∂L_ij is the number of latency terms the critical path's messages between
ranks i and j pay, λ_G^{ij} = ∂T/∂G_ij their bytes (L_ij, G_ij: the pair's end-to-end latency
and gap on the machine, symmetric). Both come from the prediction's critical path, in the same
pass (latitude_core::engine::pairs, which documents the tie rule); only pairs on the path are
listed, so 10⁴ ranks never need a P² matrix. Aggregated by node pair they are the
sensitivities to the latency and gap between two nodes.

    p = graph.pairs(params)
    p.to_frame()          # rank_a, rank_b, node_a, node_b, lambda_L, lambda_G, ...
    p.node_frame()        # the same summed per node pair
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

RANK_COLUMNS = (
    "rank_a",
    "rank_b",
    "node_a",
    "node_b",
    "lambda_L",
    "lambda_G",
    "latency_ns",
    "gap_ns_per_byte",
    "time_ns",
    "path_steps",
)
NODE_COLUMNS = ("node_a", "node_b", "lambda_L", "lambda_G", "time_ns", "rank_pairs")


@dataclass
class Pairs:
    """The pairwise sensitivities of one prediction."""

    prediction: object
    raw: dict = field(repr=False)
    nodes: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.raw["a"])

    def rows(self) -> list[dict]:
        """One row per pair of ranks a < b (a = b: messages to oneself) on the critical path;
        time_ns = λ_L·L_ab + λ_G·G_ab, the pair's network time on the path."""
        r, nodes = self.raw, self.nodes
        out = []
        for i in range(len(self)):
            a, b = int(r["a"][i]), int(r["b"][i])
            na, nb = sorted((int(nodes[a]), int(nodes[b])))
            lat, gap = float(r["latency_ns"][i]), float(r["gap_ns_per_byte"][i])
            ll, lg = int(r["lambda_L"][i]), int(r["lambda_G"][i])
            out.append(
                {
                    "rank_a": a,
                    "rank_b": b,
                    "node_a": na,
                    "node_b": nb,
                    "lambda_L": ll,
                    "lambda_G": lg,
                    "latency_ns": lat,
                    "gap_ns_per_byte": gap,
                    "time_ns": ll * lat + lg * gap,
                    "path_steps": int(r["steps"][i]),
                }
            )
        return out

    def node_rows(self) -> list[dict]:
        """The rank pairs summed per node pair (node_a ≤ node_b)."""
        acc: dict = {}
        for row in self.rows():
            key = (row["node_a"], row["node_b"])
            a = acc.setdefault(
                key, {"node_a": key[0], "node_b": key[1], "lambda_L": 0, "lambda_G": 0, "time_ns": 0.0, "rank_pairs": 0}
            )
            a["lambda_L"] += row["lambda_L"]
            a["lambda_G"] += row["lambda_G"]
            a["time_ns"] += row["time_ns"]
            a["rank_pairs"] += 1
        return [acc[k] for k in sorted(acc)]

    @property
    def lambda_L_total(self) -> int:
        """Σ λ_L^{ij}: the critical path's message-latency terms."""
        return int(np.sum(self.raw["lambda_L"]))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=list(RANK_COLUMNS))

    def node_frame(self):
        import pandas as pd

        return pd.DataFrame(self.node_rows(), columns=list(NODE_COLUMNS))

    def to_dict(self, limit: int | None = None) -> dict:
        rows = sorted(self.rows(), key=lambda r: (-r["time_ns"], r["rank_a"], r["rank_b"]))
        nodes = sorted(self.node_rows(), key=lambda r: (-r["time_ns"], r["node_a"], r["node_b"]))
        pred = self.prediction
        return {
            "runtime_ns": pred.runtime_ns,
            "latency_terms": pred.latency_terms,
            "lambda": pred.to_dict()["lambda"],
            "pairs": len(rows),
            "node_pairs": len(nodes),
            "rank_pairs": rows[:limit] if limit else rows,
            "node_pair_rows": nodes[:limit] if limit else nodes,
            "params": pred.params.to_dict(),
        }

    def write_csv(self, path: str, nodes: bool = False) -> None:
        from latitude.report import write_csv_rows

        cols = NODE_COLUMNS if nodes else RANK_COLUMNS
        write_csv_rows(path, cols, self.node_rows() if nodes else self.rows())

    def dense(self, nodes: bool = False, what: str = "lambda_L", bins: int = 512) -> tuple[np.ndarray, int]:
        """A symmetric matrix of `what` over ranks (or nodes) for plotting, binned to at most
        `bins` × `bins` cells (returns it and the ranks/nodes per cell)."""
        rows = self.node_rows() if nodes else self.rows()
        ka, kb = ("node_a", "node_b") if nodes else ("rank_a", "rank_b")
        n = (int(self.nodes.max()) + 1 if len(self.nodes) else 1) if nodes else len(self.nodes)
        per = max(1, -(-n // bins))
        size = -(-n // per)
        m = np.zeros((size, size))
        for r in rows:
            i, j = r[ka] // per, r[kb] // per
            m[i, j] += r[what]
            if i != j:
                m[j, i] += r[what]
        return m, per
