"""Collective delays drawn from measurements: `simulate --noise coll:SAMPLES`.

A graph scheduled from a trace marks, for every collective call, the join that ends each
rank's part of it (the zero-length op every later op of the rank waits for; the core's
graph/colls.rs), with the call's collective, algorithm, communicator size P and bytes m.
`SAMPLES` is the samples table of `latitude measure-coll` (CSV or Parquet: one row per timed
call, `time_us` the slowest rank's time of that call).

**Which measurements.** For a call of collective c with algorithm A on P ranks and m bytes:
the rows of c measured with A (our algorithm names, as measure-coll writes them), else those
of `default` (what the library chose); among them the nearest P (in log P), then the nearest
size (in log m). A substitute configuration is named in a note; a collective without any
rows (a barrier, say) gets no delay, also in a note, and neither does a call on a one-rank
communicator (it sends nothing).

**The excess.** The simulator already charges the call the model's own time, so drawing the
measured time itself would count the mean twice. With t_1..t_n the measured times of the
chosen configuration (P', m') and T = the model's noiseless time of one call of A on P' ranks
and m' bytes at the simulation's parameters (a one-call graph simulated without noise, same
semantics), the delays are

    d_k = max(t_k − T, 0)

One d_k is drawn uniformly per call (seeded: the same for every member of the call and
every rerun with that seed) and lengthens each member's join by it. When the model predicts
more than was measured, the clamp at 0 leaves those samples without delay: the share of
clamped samples is reported in a note, since then the model's own time already exceeds them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from latitude import _core
from latitude.errors import InputError
from latitude.variability import read_samples

# measure-coll's point-to-point rows are inputs of coll-model, not collectives
_NOT_COLLECTIVES = ("p2p", "fanout")


@dataclass(frozen=True)
class Config:
    """One collective configuration of the graph: what its marked calls share."""

    coll: str
    algorithm: str
    procs: int
    bytes: int


def graph_configs(graph) -> dict[Config, int]:
    """The collective configurations of a graph (a latitude.Graph or its core handle: both
    have `coll_calls`) and how many rank-parts of calls each has."""
    c = graph.coll_calls()
    out: dict[Config, int] = {}
    for kind, procs, size in zip(c["kind"].tolist(), c["procs"].tolist(), c["bytes"].tolist()):
        coll, alg = c["kinds"][kind]
        key = Config(coll, alg, int(procs), int(size))
        out[key] = out.get(key, 0) + 1
    return out


def _nearest(values, target: float) -> int:
    """The value nearest to `target` in log scale (ties: the smaller)."""
    return min(sorted(set(values)), key=lambda v: abs(math.log2(v + 1) - math.log2(target + 1)))


def choose(cols: dict, cfg: Config) -> tuple[str, int, int] | None:
    """(algorithm, P, bytes) of the measured configuration that stands for `cfg`, or None
    when the samples have no row of that collective."""
    coll = np.asarray(cols["coll"], dtype=object)
    alg = np.asarray(cols["algorithm"], dtype=object)
    rows = coll == cfg.coll
    if not rows.any():
        return None
    base = cfg.algorithm.split(":")[0]  # chain:64KiB was measured as chain
    for want in (cfg.algorithm, base, "default"):
        sel = rows & (alg == want)
        if sel.any():
            break
    else:
        have = ", ".join(sorted(set(alg[rows].tolist())))
        raise InputError(
            "--noise",
            f"coll: the samples measure {cfg.coll} with {have}, not with {cfg.algorithm} (the graph's "
            "algorithm) nor default; measure it (measure-coll --algorithms) or schedule with --coll",
        )
    procs = np.asarray(cols["procs"])[sel]
    p = _nearest(procs.tolist(), cfg.procs)
    sizes = np.asarray(cols["bytes"])[sel][procs == p]
    return str(want), int(p), int(_nearest(sizes.tolist(), cfg.bytes))


def model_time_ns(cfg: Config, procs: int, size: int, params, semantics: dict) -> float:
    """The model's noiseless time of one call of cfg's algorithm on `procs` ranks and `size`
    bytes: a one-call graph simulated at `params` (the same semantics as the simulation)."""
    job = f"[JOB] coll-noise\n[RANKS] 0-{procs - 1}\n[ITERATIONS] 1\n"
    job += f"[MOTIF] {cfg.coll} bytes={size} alg={cfg.algorithm}\n"
    handle, _ = _core.generate_job("<coll-noise>", text=job, seed=1, coll="default")
    return float(handle.simulate(cfg=params.to_core(), noise=[], seed=0, **semantics)["runtime_ns"])


def tables(core_graph, spec: dict, params, semantics: dict) -> tuple[dict, list[str]]:
    """The core's `coll` noise dict (one delay table per configuration of the graph) for a
    parsed `coll:SAMPLES` spec, and notes on substitutions, missing rows and clamping."""
    path = spec["path"]
    configs = graph_configs(core_graph)
    if not configs:
        raise InputError(
            "--noise",
            "coll: the graph has no collective calls marked (only a graph scheduled from a trace "
            "has them, and the .lgraph written from one: give the trace)",
        )
    cols = read_samples(path)
    keep = [i for i, c in enumerate(cols["coll"]) if c not in _NOT_COLLECTIVES]
    cols = {k: [v[i] for i in keep] if isinstance(v, list) else v[keep] for k, v in cols.items()}
    out, notes, missing = [], [], {}
    for cfg, count in sorted(configs.items(), key=lambda kv: (kv[0].coll, kv[0].procs, kv[0].bytes)):
        if cfg.procs < 2:  # a call on a one-rank communicator sends nothing: nothing to delay
            continue
        pick = choose(cols, cfg)
        if pick is None:
            missing[cfg.coll] = missing.get(cfg.coll, 0) + count
            continue
        alg, p, m = pick
        times = np.asarray(cols["time_us"], dtype=float)[_rows(cols, cfg.coll, alg, p, m)] * 1e3
        t_model = model_time_ns(cfg, p, m, params, semantics)
        delays = np.maximum(times - t_model, 0.0)
        what = f"{cfg.coll} {cfg.algorithm} on {cfg.procs} ranks, {cfg.bytes} B"
        if (alg, p, m) != (cfg.algorithm, cfg.procs, cfg.bytes):
            notes.append(f"--noise coll: {what} draws from the measured {alg} on {p} ranks, {m} B")
        clamped = float(np.mean(times < t_model))
        if clamped > 0:
            notes.append(
                f"--noise coll: {what}: the model's {t_model / 1e3:.3g} µs exceeds {100 * clamped:.0f} % of "
                f"the {len(times)} measured times (those draw no delay)"
            )
        out.append({"coll": cfg.coll, "procs": cfg.procs, "bytes": cfg.bytes, "delays_ns": delays.tolist()})
    for coll, n in sorted(missing.items()):
        notes.append(f"--noise coll: {path} has no {coll} measurements: its {n} rank-calls get no delay")
    return {"target": "coll", "tables": out}, notes


def _rows(cols: dict, coll: str, alg: str, p: int, m: int) -> np.ndarray:
    c = np.asarray(cols["coll"], dtype=object)
    a = np.asarray(cols["algorithm"], dtype=object)
    return (c == coll) & (a == alg) & (np.asarray(cols["procs"]) == p) & (np.asarray(cols["bytes"]) == m)
