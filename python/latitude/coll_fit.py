"""Fitting the collective models (latitude.coll_model) to a samples table of
`latitude measure-coll` and comparing them with the measurements.

Every model input is one statistic of a configuration's calls: the median by default (the
distributions have tails that a mean would follow; see latitude.variability), or a low
percentile (p25, p10) on a loaded machine, where preemption reaches past the median. Inputs: the `p2p` rows (rank 0's half
round trip with each peer) give α_c, β_c per channel; the `fanout` rows (rank 0's fan-out to
k peers) give γ(k, m); the bcast/reduce rows of the tree algorithms are what is predicted.

The library's `default` choice is compared, size by size, with the composed predictions of
the trees: the tree whose prediction is nearest (in log time) is the one the library most
likely runs at that size, and the result is written as a `--coll` rule
(`bcast=binomial<=16KiB,chain`), so schedules can use what the library really does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from latitude import coll_model as cm
from latitude import variability
from latitude.coll_names import STATS
from latitude.errors import InputError


@dataclass
class Model:
    channels: dict = field(default_factory=dict)  # name -> Hockney
    gamma: cm.Gamma = field(default_factory=cm.Gamma)
    regression: dict = field(default_factory=dict)  # "coll/alg" -> coefficients
    rows: list = field(default_factory=list)  # per (coll, alg, P, bytes): measured and predicted
    summary: list = field(default_factory=list)  # per (coll, alg): R², RRMSE, winner
    detected: dict = field(default_factory=dict)  # coll -> [(bytes, alg)] for `default`

    def t_of(self, hosts: list[str]):
        def t(i: int, j: int, m: float) -> float:
            return self.channel(hosts, i, j)(m)

        return t

    def channel(self, hosts: list[str], i: int, j: int) -> cm.Hockney:
        name = channel_name(hosts, i, j)
        if name not in self.channels:
            have = ", ".join(self.channels) or "none"
            raise InputError("samples", f"no p2p measurement over the {name} channel (measured: {have})")
        return self.channels[name]

    def compose(self, coll: str, alg: str, hosts: list[str], m: float) -> float:
        return cm.compose(alg, len(hosts), m, self.t_of(hosts), self.gamma)

    def to_dict(self) -> dict:
        return {
            "channels": {k: {"alpha_us": h.alpha, "beta_us_per_byte": h.beta} for k, h in self.channels.items()},
            "gamma": {
                str(k): {str(m): g for m, g in sorted(row.items())} for k, row in sorted(self.gamma.table.items())
            },
            "regression": self.regression,
            "regression_features": ["1", "m", "P-1", "(P-1)*m", "I_node", "I_node*m"],
            "rows": self.rows,
            "summary": self.summary,
            "detected": {c: [{"bytes": b, "algorithm": a} for b, a in v] for c, v in self.detected.items()},
            "coll_rule": coll_rule(self.detected),
        }

    @classmethod
    def from_dict(cls, d: dict, where: str) -> Model:
        try:
            m = cls(
                channels={k: cm.Hockney(v["alpha_us"], v["beta_us_per_byte"]) for k, v in d["channels"].items()},
                gamma=cm.Gamma({int(k): {int(s): float(g) for s, g in row.items()} for k, row in d["gamma"].items()}),
                regression={k: [float(x) for x in v] for k, v in d["regression"].items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(where, "expected a model written by `latitude coll-model fit`") from None
        return m


EMULATED = "emulated:"  # prefix of an emulated node in a placement


def channel_name(hosts: list[str], i: int, j: int) -> str:
    """shm within a host (or an emulated node), network between hosts, emulated between the
    injector's emulated nodes (measure-coll --placement)."""
    if hosts[i] == hosts[j]:
        return "shm"
    return "emulated" if hosts[i].startswith(EMULATED) else "network"


def _medians(cols: dict, stat: str = "median") -> dict[tuple, tuple[float, list[str]]]:
    """(coll, alg, P, bytes) -> (the statistic of its calls in µs, the placement of the run:
    each rank's emulated node when the run emulated nodes, else its host)."""
    q = STATS[stat]
    out = {}
    nodes = cols.get("nodes") or [""] * len(cols["hosts"])
    for key, idx in variability.groups(cols).items():
        if nodes[idx[0]]:
            hosts = [EMULATED + n for n in nodes[idx[0]].split(";")]
        else:
            hosts = cols["hosts"][idx[0]].split(";") if cols["hosts"][idx[0]] else []
        if len(hosts) != key[2]:
            hosts = ["host"] * key[2]  # no placement recorded: one host
        out[key] = (float(np.percentile(cols["time_us"][idx], q)), hosts)
    return out


def fit(cols: dict, params=None, stat: str = "median") -> Model:
    """The models fitted to the samples; `params` (latitude.params.Params, e.g. from a
    calibrated machine file) price Latitude's graphs, else the Hockney fit does."""
    med = _medians(cols, stat)
    model = Model()
    per_channel: dict[str, list[tuple[int, float]]] = {}
    fan: dict[tuple[int, int], float] = {}
    for (coll, alg, _, size), (t, hosts) in med.items():
        if coll == "p2p":
            peer = _number(alg, "peer=")
            per_channel.setdefault(channel_name(hosts, 0, peer), []).append((size, t))
        elif coll == "fanout":
            fan[(_number(alg, "k="), size)] = t
    if not per_channel:
        raise InputError("samples", "no p2p rows: measure them with `latitude measure-coll --colls p2p,fanout,...`")
    for name, pts in sorted(per_channel.items()):
        model.channels[name] = cm.fit_hockney(*zip(*pts))
    for (k, size), t in fan.items():
        if k > 1 and (1, size) in fan and fan[(1, size)] > 0:
            model.gamma.table.setdefault(k, {})[size] = t / fan[(1, size)]
    _compare(model, med, params or loggps_from(model))
    model.detected = detect(model, med)
    return model


def _number(label: str, prefix: str) -> int:
    if not label.startswith(prefix) or not label[len(prefix) :].isdigit():
        raise InputError("samples", f"expected an algorithm label {prefix}N in the p2p/fanout rows, got {label!r}")
    return int(label[len(prefix) :])


def _compare(model: Model, med: dict, params) -> None:
    by_alg: dict[tuple[str, str], list] = {}
    for (coll, alg, p, size), (t, hosts) in sorted(med.items()):
        if coll not in ("p2p", "fanout") and alg != "default" and p >= 2:
            by_alg.setdefault((coll, alg), []).append((size, p, hosts, t))
    for (coll, alg), pts in by_alg.items():
        spans = [len(set(h)) > 1 for _, _, h, _ in pts]
        coef = cm.fit_regression([(m, p, s, t) for (m, p, _, t), s in zip(pts, spans)])
        model.regression[f"{coll}/{alg}"] = coef
        composed = coll in cm.MODELLED and alg in cm.TREES
        preds: dict[str, list] = {"composition": [], "regression": [], "graph": []}
        y = []
        for (m, p, hosts, t), s in zip(pts, spans):
            row = {
                "coll": coll,
                "algorithm": alg,
                "procs": p,
                "bytes": m,
                "measured_us": t,
                "composition_us": model.compose(coll, alg, hosts, m) if composed else None,
                "regression_us": cm.predict_regression(coef, m, p, s),
                "graph_us": graph_prediction(coll, alg, p, m, params),
            }
            model.rows.append(row)
            y.append(t)
            for k in preds:
                preds[k].append(row[f"{k}_us"])
        summary = {"coll": coll, "algorithm": alg, "points": len(y)}
        errors = {}
        for k, v in preds.items():
            r2, e = cm.r2_rrmse(y, v) if None not in v else (None, None)
            summary |= {f"{k}_r2": r2, f"{k}_rrmse": e}
            if e is not None:
                errors[k] = e
        summary["winner"] = min(errors, key=errors.get)
        model.summary.append(summary)


def graph_prediction(coll: str, alg: str, p: int, m: int, params) -> float:
    """Latitude's own prediction (µs): the algorithm of our collective library expanded into
    an execution graph of one call on p ranks and priced with LogGPS `params`. Open MPI's
    chain is unsegmented by default, so ours is given one segment of the whole message."""
    import os
    import tempfile

    from latitude import api

    name = f"chain:{max(m, 1)}" if alg == "chain" else alg
    job = f"[JOB] coll\n[RANKS] 0-{p - 1}\n[ITERATIONS] 1\n[MOTIF] {coll} bytes={m} alg={name}\n"
    fd, path = tempfile.mkstemp(suffix=".job", prefix="latitude-coll-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(job)
        return api.load(path, progress=False).predict(params).runtime_ns / 1e3
    finally:
        os.unlink(path)


def loggps_from(model: Model):
    """LogGPS parameters from the shared-memory (else network) Hockney fit when no machine
    file is given: L = α, G = β, o = g = O = 0, every message eager."""
    from latitude.params import Params

    h = model.channels.get("shm") or next(iter(model.channels.values()))
    return Params(L=h.alpha * 1e3, o=0, g=0, G=h.beta * 1e3, O=0, S=1 << 50)


def detect(model: Model, med: dict) -> dict:
    """Per collective, per size of the `default` runs: the tree whose composed latency is
    nearest in log time to the measured median (the largest P measured)."""
    out: dict[str, list] = {}
    for coll in cm.MODELLED:
        runs = {k: v for k, v in med.items() if k[0] == coll and k[1] == "default"}
        if not runs:
            continue
        p = max(k[2] for k in runs)
        for (_, _, pp, size), (t, hosts) in sorted(runs.items(), key=lambda kv: kv[0][3]):
            if pp != p or p < 2:
                continue
            best = min(
                cm.TREES, key=lambda a: abs(math.log(max(model.compose(coll, a, hosts, size), 1e-9) / max(t, 1e-9)))
            )
            out.setdefault(coll, []).append((size, best))
    return out


def coll_rule(detected: dict) -> str:
    """The detected choices as a `--coll` spec: one rule per size range, the last unbounded."""
    entries = []
    for coll, choices in detected.items():
        rules: list[list] = []
        for size, alg in choices:
            if rules and rules[-1][0] == alg:
                rules[-1][1] = size
            else:
                rules.append([alg, size])
        parts = [f"{a}<={s}" for a, s in rules[:-1]] + [rules[-1][0]]
        entries.append(f"{coll}={','.join(parts)}")
    return ";".join(entries)
