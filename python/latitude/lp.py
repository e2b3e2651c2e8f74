"""The LLAMP LP solved with HiGHS (highspy), and exported as MPS / LP files.

The matrix is assembled in Rust (latitude_core::lp); here we hand it to HiGHS. The LP's
optimum equals the engine's T. The reduced cost of column ``l`` is a subgradient of T in
L: it equals λ_L (= the engine's right and left derivative) at every L that is not a
critical latency; at a critical latency it lies in [λ_L(left), λ_L(right)] and which value
HiGHS returns depends on its optimal basis (with three or more critical paths meeting it
can be strictly between). The engine reports both one-sided derivatives exactly.
"""

from __future__ import annotations

import os

from latitude.errors import InputError, ToolError
from latitude.outputs import atomic
from latitude.silence import new_highs, stdout_silenced

_STATUS_OK = "Optimal"
_KIND_PREFIX = {0: "s", 1: "e", 2: "h", 3: "t"}


def build(core_graph, params, pairwise: bool = False) -> LinearProgram:
    """The LLAMP LP (Algorithm 1) of a core graph at `params` (a latitude.params.Params):
    one column per named parameter, or with `pairwise` per pair of ranks (App. I)."""
    return LinearProgram(core_graph.lp(params.to_core(), pairwise=pairwise), params, core_graph, pairwise)


class LinearProgram:
    """The LP's arrays as assembled by the core, and the params they were built at; `core_graph`
    (when given) names the columns by rank and operation as LLAMP does. A `pairwise` LP has
    one latency and one gap column per pair of ranks that talk."""

    def __init__(self, arrays: dict, params, core_graph=None, pairwise: bool = False):
        self.a = arrays
        self.params = params
        self.core_graph = core_graph
        self.pairwise = pairwise
        self._highs = None

    @property
    def num_cols(self) -> int:
        return int(self.a["num_col"])

    @property
    def num_rows(self) -> int:
        return int(self.a["num_row"])

    @property
    def num_nonzeros(self) -> int:
        return int(len(self.a["index"]))

    def highs(self, names: bool = False):
        """A highspy.Highs holding this LP (minimise t)."""
        # Imported here, not at the top: numpy and highspy cost ~0.3 s of start-up that
        # `predict` and every other command without an LP would pay for nothing.
        import highspy
        import numpy as np

        a = self.a
        h = new_highs()
        n, m = self.num_cols, self.num_rows
        inf = highspy.kHighsInf
        status = h.passModel(
            n,
            m,
            self.num_nonzeros,
            int(highspy.MatrixFormat.kRowwise),
            int(highspy.ObjSense.kMinimize),
            0.0,
            np.asarray(a["col_cost"], dtype=np.float64),
            np.asarray(a["col_lower"], dtype=np.float64),
            np.full(n, inf),
            np.asarray(a["row_lower"], dtype=np.float64),
            np.full(m, inf),
            np.asarray(a["start"][:-1], dtype=np.int32),
            np.asarray(a["index"], dtype=np.int32),
            np.asarray(a["value"], dtype=np.float64),
            np.zeros(n, dtype=np.int32),
        )
        if status != highspy.HighsStatus.kOk:
            raise ToolError(f"HiGHS rejected the LP ({status})")
        if names:
            for j, name in enumerate(self.column_names()):
                h.passColName(j, name)
        return h

    def column_names(self) -> list[str]:
        """l, o, gap, g, O, the machine's parameters (and, pairwise, l_i_j and g_i_j per
        pair), then s/e/h<rank>_<op> per y variable, then t (LLAMP's names)."""
        names = list(self.a["param_cols"])
        verts, kinds = self.a["var_vertex"], self.a["var_kind"]
        arr = self.core_graph.arrays() if self.core_graph is not None else None
        for v, k in zip(verts.tolist(), kinds.tolist()):
            if k == 3:
                names.append("t")
            elif arr is not None:
                names.append(f"{_KIND_PREFIX[k]}{int(arr['rank'][v])}_{int(arr['local'][v]) + 1}")
            else:
                names.append(f"{_KIND_PREFIX[k]}{v}")
        return names

    def solve(self) -> dict:
        """Solve; returns status, objective (= T in ns) and reduced costs of the parameters."""
        h = self.highs()
        with stdout_silenced():
            h.run()
        status = h.modelStatusToString(h.getModelStatus())
        out = {"status": status.lower(), "runtime_ns": None, "reduced_cost_l": None}
        if status != _STATUS_OK:
            return out
        sol = h.getSolution()
        duals = list(sol.col_dual)
        out["runtime_ns"] = float(h.getInfo().objective_function_value)
        out["reduced_cost_l"] = duals[0]
        cols = list(self.a["param_cols"])
        pairs = len(self.a["pairs"])
        named = len(cols) - 2 * pairs
        out["reduced_costs"] = dict(zip(cols[:named], duals[:named]))
        if self.pairwise:
            out["pair_reduced_costs"] = [
                {"a": a, "b": b, "l": duals[named + 2 * i], "g": duals[named + 2 * i + 1]}
                for i, (a, b) in enumerate(self.a["pairs"])
            ]
        out["columns"] = self.num_cols
        out["rows"] = self.num_rows
        out["nonzeros"] = self.num_nonzeros
        self._highs = h
        return out

    def export(self, path: str) -> None:
        """Write the LP as .mps or .lp (by extension), with LLAMP-style column names."""
        ext = os.path.splitext(path)[1].lower()
        if ext not in (".mps", ".lp"):
            raise InputError(path, "expected a file name ending in .mps or .lp")
        import highspy

        h = self.highs(names=True)
        with atomic(path, "LP") as tmp:
            with stdout_silenced():
                status = h.writeModel(tmp)
            if status == highspy.HighsStatus.kError or not os.path.getsize(tmp):
                raise ToolError(f"HiGHS could not write {path}")
