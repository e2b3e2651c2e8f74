"""Topology comparison (the LLAMP paper's §IV case study, Fig. 11): one workload on several
machines, each a machine file.

For every machine: T at its base values, λ of every named parameter, and the largest value
of one shared parameter (e.g. `wire`, the per-link latency) that keeps the slowdown within
x %, the others fixed — plus T as a function of that parameter over a range, exact (one
parametric pass per machine), for the plot.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from latitude.errors import InputError
from latitude.params import Params


@dataclass
class MachineResult:
    name: str
    params: object
    prediction: object
    tolerance: object
    sensitivity: object = field(repr=False, default=None)

    def row(self, param: str) -> dict:
        p = self.prediction
        out = {
            "machine": self.name,
            "file": self.params.machine.source if self.params.machine else None,
            "network": self.params.machine.describe() if self.params.machine else "flat network",
            "base_ns": self.params.value(param),
            "runtime_ns": p.runtime_ns,
            "lambda": p.to_dict()["lambda"],
            "latency_terms": p.latency_terms,
            "tolerance": [
                {"pct": r["pct"], "max_ns": r["max_ns"], "delta_ns": r["delta_ns"]}
                for r in self.tolerance.to_dict()["tolerance"]
            ],
        }
        return out


@dataclass
class Comparison:
    param: str
    range_ns: tuple
    pcts: list
    results: list

    def to_dict(self) -> dict:
        return {
            "param": self.param,
            "range_ns": list(self.range_ns) if self.range_ns else None,
            "pcts": [float(p) for p in self.pcts],
            "machines": [r.row(self.param) for r in self.results],
        }

    def csv_rows(self) -> list[dict]:
        rows = []
        for r in self.results:
            d = r.row(self.param)
            base = {k: d[k] for k in ("machine", "network", "base_ns", "runtime_ns", "latency_terms")}
            base["lambda_" + self.param] = d["lambda"].get(self.param)
            for t in d["tolerance"]:
                rows.append({**base, "pct": t["pct"], "max_ns": t["max_ns"]})
        return rows


def compare(graph, machines: list, param: str, pcts: list, value_range=None) -> Comparison:
    """`machines`: (name, Params) pairs; `value_range` (lo, hi) in ns for the curves."""
    results = []
    for name, params in machines:
        if param not in params.names:
            where = params.machine.source if params.machine else name
            raise InputError(where, f"no parameter {param!r} to compare (its parameters: {', '.join(params.names)})")
        pred = graph.predict(params)
        tol = graph.tolerance(pcts, param=param, params=params)
        sens = None
        if value_range is not None:
            lo, hi = value_range
            sens = graph.sensitivity(lo, hi, param=param, params=params)
        results.append(MachineResult(name, params, pred, tol, sens))
    return Comparison(param, value_range, pcts, results)


def comparison(graph, machines: list, param: str, pcts: list, value_range=None) -> Comparison:
    """`compare` with the curves' range: `value_range`, or by default from the lowest base value
    to a quarter past the largest tolerance (at least twice every base value)."""
    if value_range is None:
        first = compare(graph, machines, param, pcts)
        bases = [r.params.value(param) for r in first.results]
        tops = [
            t["max_ns"] for r in first.results for t in r.tolerance.to_dict()["tolerance"] if t["max_ns"] is not None
        ]
        lo = min(bases)
        hi = max(tops + [b * 2 for b in bases] + [lo + 1.0])
        value_range = (lo, lo + 1.25 * (hi - lo))
    return compare(graph, machines, param, pcts, value_range)


def load_machines(paths: list) -> list:
    """(name, Params) per machine file, names made unique with their paths when two files share one."""
    machines = [(machine_name(m), Params.from_machine(m)) for m in paths]
    names = [n for n, _ in machines]
    if len(set(names)) != len(names):
        machines = [(f"{n} ({m})", p) for (n, p), m in zip(machines, paths)]
    return machines


def machine_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def plot(cmp: Comparison, path: str, title: str | None = None) -> list[str]:
    """Runtime vs the compared parameter, one curve per machine (left), and the slowdown over
    each machine's own base runtime with the x % limits (right): the LLAMP paper's Fig. 11."""
    from latitude.plots import _mpl, _save, _time_scale

    plt = _mpl()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.8), layout="constrained")
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    tmax = max(max(row["T"] for row in r.sensitivity.curve(2)) for r in cmp.results)
    f, unit = _time_scale(tmax)
    time_param = cmp.results[0].params.kind(cmp.param) == "time"
    xs_scale = 1.0 if not time_param or cmp.range_ns[1] < 1e4 else 1e3
    xunit = ("ns" if xs_scale == 1.0 else "µs") if time_param else "ns/byte"
    for i, r in enumerate(cmp.results):
        c = colors[i % len(colors)]
        curve = r.sensitivity.curve(400)
        xs = [q["x"] / xs_scale for q in curve]
        t0 = r.prediction.runtime_ns
        label = f"{r.name}: {r.params.machine.describe(short=True) if r.params.machine else 'flat network'}"
        ax.plot(xs, [q["T"] / f for q in curve], color=c, lw=2, label=label)
        ax2.plot(xs, [100 * (q["T"] / t0 - 1) for q in curve], color=c, lw=2, label=label)
        base = r.params.value(cmp.param)
        ax.plot([base / xs_scale], [t0 / f], "o", color=c, ms=6)
        for t in r.tolerance.to_dict()["tolerance"]:
            m = t["max_ns"]
            if m is None or not cmp.range_ns[0] <= m <= cmp.range_ns[1]:
                continue
            ax2.plot([m / xs_scale], [t["pct"]], "o", color=c, ms=6)
            ax2.annotate(
                f"{t['pct']:g} % at {m / xs_scale:,.4g} {xunit}",
                (m / xs_scale, t["pct"]),
                textcoords="offset points",
                xytext=(6, -14 - 13 * i),
                fontsize=8,
                color=c,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
            )
    for p in sorted({float(p) for p in cmp.pcts}):
        ax2.axhline(p, color="#555555", lw=1, ls="--")
    for a in (ax, ax2):
        a.set_xlabel(f"{cmp.param} ({xunit})")
        a.set_xlim(cmp.range_ns[0] / xs_scale, cmp.range_ns[1] / xs_scale)
    ax.set_ylabel(f"predicted runtime ({unit})")
    ax2.set_ylabel("slowdown over the machine's base runtime (%)")
    ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    ax.set_title("Runtime")
    ax2.set_title("Slowdown, with the tolerance limits")
    fig.suptitle(title or f"One workload on {len(cmp.results)} machines: runtime vs {cmp.param}")
    return _save(fig, path)
