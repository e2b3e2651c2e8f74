"""Simulation from Python: options, one run, Monte Carlo samples and their statistics.

    import latitude
    g = latitude.load("app.goal")
    sim = g.simulate(L="3us", noise=["calc:gaussian:sigma=5%"], seed=1)
    sim.runtime_ns, sim.rank_end_ns
    mc = g.simulate_samples(100, L="3us", noise=["os:period=1ms,duration=20us"])
    mc.stats()             # p50/p90/p99/max/mean/std in ns

The work happens in the Rust core (latitude_core::sim) with the GIL released; samples use
all cores. Results are deterministic for a seed and independent of the thread count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from latitude import _core, coll_noise
from latitude._core import available_memory
from latitude.errors import InputError
from latitude.noise import parse_all
from latitude.outputs import open_atomic
from latitude.params import OPTIONAL, PARAM_NAMES, Params

SEMANTICS = ("design", "loggopsim")


@dataclass(frozen=True)
class SimOptions:
    """How to simulate. `semantics`: "design" (docs/model.md with CPU/NIC contention) or
    "loggopsim" (LogGOPSim v1, quirks included). `noise`: --noise spec strings."""

    semantics: str = "design"
    cpu_serialization: bool = True
    noise: tuple = ()
    noise_cosched: bool = False
    seed: int = 0

    def __post_init__(self):
        if self.semantics not in SEMANTICS:
            raise InputError("--semantics", f"expected design or loggopsim, got {self.semantics!r}")
        if not 0 <= int(self.seed) < 2**64:
            raise InputError("--seed", f"expected an integer in [0, 2^64), got {self.seed}")

    def noise_dicts(self) -> list[dict]:
        return parse_all(list(self.noise), self.noise_cosched)

    def core_kwargs(self, params: Params) -> dict:
        return {
            "cfg": params.to_core(),
            "semantics": self.semantics,
            "cpu_serialization": self.cpu_serialization,
            "noise": self.noise_dicts(),
            "seed": int(self.seed),
        }


@dataclass
class Simulation:
    """One simulated run. Times in ns."""

    raw: dict = field(repr=False)
    params: Params
    options: SimOptions
    notes: list = field(default_factory=list)

    @property
    def runtime_ns(self) -> float:
        return self.raw["runtime_ns"]

    @property
    def rank_end_ns(self) -> np.ndarray:
        return self.raw["rank_end_ns"]

    @property
    def timeline(self) -> dict | None:
        return self.raw.get("timeline")

    @property
    def events(self) -> int:
        return int(self.raw["events"])

    @property
    def integer_ns(self) -> bool:
        """Times are whole ns (the LogGOPSim semantics)."""
        return self.options.semantics == "loggopsim"

    def rank_end_exact(self) -> list:
        """Per-rank end times; integers (ns) under the LogGOPSim semantics."""
        if self.integer_ns:
            return [int(x) for x in self.raw["rank_end_units"]]
        return [float(x) for x in self.rank_end_ns]

    def to_dict(self) -> dict:
        """The `latitude simulate --json` contract (docs/json.md)."""
        return {
            "runtime_ns": int(self.runtime_ns) if self.integer_ns else self.runtime_ns,
            "rank_end_ns": self.rank_end_exact(),
            "semantics": self.options.semantics,
            "cpu_serialization": self.options.cpu_serialization if self.options.semantics == "design" else None,
            "events": self.events,
            "static_mismatches": int(self.raw["static_mismatches"]),
            "unfinished_ops": int(self.raw["unfinished"]),
            "time_resolution_ns": int(self.raw["unit_ticks"]) / 1e9,
            "exact_parameters": bool(self.raw["exact"]),
            "seed": int(self.options.seed),
            "noise": list(self.options.noise),
            "params": self.params_dict(),
            "notes": list(self.notes),
        }

    def params_dict(self) -> dict:
        """Parameters as simulated (LogGOPSim has its own rendezvous and always uses g)."""
        d = self.params.to_dict()
        if self.options.semantics == "loggopsim":
            d.update(protocol="loggopsim", nic_serialization=True)
        return d

    def describe_params(self) -> str:
        if self.options.semantics != "loggopsim":
            return self.params.describe()
        from latitude.units import fmt_size

        p = self.params
        return f"L={p.L:g} o={p.o:g} g={p.g:g} G={p.G:g} O={p.O:g} ns S={fmt_size(p.S)}"


@dataclass
class Samples:
    """Monte Carlo runtimes (ns) of samples first..first+n."""

    runtime_ns: np.ndarray
    slowest_rank: np.ndarray
    seed: int
    first: int = 0
    events: int = 0
    elapsed_s: float = 0.0

    PERCENTILES = (50, 90, 99)

    def stats(self) -> dict:
        x = np.asarray(self.runtime_ns, dtype=float)
        p = np.percentile(x, self.PERCENTILES) if len(x) else [float("nan")] * 3
        return {
            "n": int(len(x)),
            "p50_ns": float(p[0]),
            "p90_ns": float(p[1]),
            "p99_ns": float(p[2]),
            "max_ns": float(x.max()) if len(x) else None,
            "min_ns": float(x.min()) if len(x) else None,
            "mean_ns": float(x.mean()) if len(x) else None,
            "std_ns": float(x.std(ddof=1)) if len(x) > 1 else 0.0,
        }

    def write_csv(self, path: str) -> None:
        """One row per sample: sample, seed, runtime_us, slowest_rank."""
        import csv

        with open_atomic(path, "CSV", newline="") as f:
            w = csv.writer(f)
            w.writerow(["sample", "seed", "runtime_us", "slowest_rank"])
            for k, (t, r) in enumerate(zip(self.runtime_ns.tolist(), self.slowest_rank.tolist())):
                w.writerow([self.first + k, self.seed, f"{t / 1e3:.6f}", r])


def split_kwargs(params: Params | None, options: SimOptions | None, kw: dict) -> tuple[Params, SimOptions]:
    """Keyword arguments of Graph.simulate*: option fields go to SimOptions, the rest to Params."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(SimOptions)}
    okw = {k: kw.pop(k) for k in list(kw) if k in names}
    if isinstance(okw.get("noise"), str):
        okw["noise"] = (okw["noise"],)
    if "noise" in okw:
        okw["noise"] = tuple(okw["noise"])
    p = params or Params()
    p = p.replace(**kw) if kw else p
    o = options or SimOptions()
    o = dataclasses.replace(o, **okw) if okw else o
    return p, o


def default_threads() -> int:
    """The core's thread count: LATITUDE_THREADS, else the available cores."""
    return _core.threads()


def loggopsim_params(params: Params) -> tuple[Params, list[str]]:
    """LogGOPSim's parameters are C ints in ns: each one rounded to the nearest whole ns, with
    a note for every value that changes (a calibrated machine has sub-ns G and O: below
    0.5 ns per byte they become 0, so the simulation has no per-byte term)."""
    kw, changed = {}, []
    # C prices the local copies, K the collective calls' ends
    names = PARAM_NAMES + tuple(n for n in OPTIONAL if getattr(params, n) is not None)
    for name in names:
        v = float(getattr(params, name))
        r = float(math.floor(v + 0.5))
        if r != v:
            kw[name] = r
            unit = "ns/B" if name in ("G", "O", "C") else "ns"
            changed.append(f"{name} {v:.4g} → {r:g} {unit}")
    if not kw:
        return params, []
    gone = [n for n in ("G", "O", "C") if n in kw and kw[n] == 0 and getattr(params, n) > 0]
    note = "--loggopsim-compat: LogGOPSim takes whole ns, parameters rounded: " + ", ".join(changed)
    if gone:
        note += f" ({' and '.join(gone)} below 0.5 ns per byte: no per-byte cost in this simulation)"
    return params.replace(**kw), [note]


def core_kwargs(handle, params: Params, options: SimOptions) -> tuple[dict, list[str]]:
    """The core's simulation arguments for graph `handle`, with a `coll:SAMPLES` noise spec
    turned into the graph's delay tables (latitude.coll_noise), and notes on them."""
    kw = options.core_kwargs(params)
    notes: list[str] = []
    semantics = {"semantics": options.semantics, "cpu_serialization": options.cpu_serialization}
    for i, d in enumerate(kw["noise"]):
        if d["target"] == "coll":
            kw["noise"][i], notes = coll_noise.tables(handle, d, params, semantics)
    return kw, notes


def simulate(handle, params: Params, options: SimOptions, record: bool = False) -> Simulation:
    notes = []
    if options.semantics == "loggopsim":
        params, notes = loggopsim_params(params)
    kw, coll_notes = core_kwargs(handle, params, options)
    raw = handle.simulate(record=record, **kw)
    return Simulation(raw, params, options, notes + coll_notes)


def simulate_samples(
    handle, n: int, params: Params, options: SimOptions, threads: int | None = None, progress=None
) -> Samples:
    """`n` samples (0..n), on `threads` threads. With `progress(done, total)` the samples run
    in chunks, reporting between them (each call re-reads a noise trace file, so traces get
    at most 10 chunks); without, in one call."""
    if n < 1:
        raise InputError("--samples", f"expected at least 1 sample, got {n}")
    check_samples_fit(n)
    threads = threads or default_threads()
    if options.semantics == "loggopsim":
        params, _ = loggopsim_params(params)
    kw, _ = core_kwargs(handle, params, options)
    chunks = 1 if progress is None else (10 if any(d["target"] == "trace" for d in kw["noise"]) else 100)
    chunk = min(max(threads, -(-n // chunks)), _MAX_CHUNK)
    runtime, slowest = np.empty(n, dtype=float), np.empty(n, dtype=np.int64)
    events, elapsed = 0, 0.0
    for first in range(0, n, chunk):
        count = min(chunk, n - first)
        raw = handle.simulate_samples(first=first, count=count, threads=threads, **kw)
        runtime[first : first + count] = raw["runtime_ns"]
        slowest[first : first + count] = raw["slowest_rank"]
        events += int(raw["events"])
        elapsed += float(raw["elapsed_s"])
        if progress:
            progress(first + count, n)
    return Samples(runtime, slowest, int(options.seed), 0, events, elapsed)


# Memory per kept sample (runtime and slowest rank, 8 bytes each) and per sample of the chunk
# in flight (the core's records and their arrays).
_BYTES_PER_SAMPLE = 16
_BYTES_PER_CHUNK_SAMPLE = 48
_MAX_CHUNK = 1 << 20


def check_samples_fit(n: int) -> None:
    """Refuse `n` samples whose runtimes would take more than half the memory available now
    (the rest is the graph's, the simulation's and other programs')."""
    need = n * _BYTES_PER_SAMPLE + min(n, _MAX_CHUNK) * _BYTES_PER_CHUNK_SAMPLE
    avail = available_memory()
    if avail is not None and need > avail // 2:
        fit = max(1, (avail // 2 - _MAX_CHUNK * _BYTES_PER_CHUNK_SAMPLE) // _BYTES_PER_SAMPLE)
        raise InputError(
            "--samples",
            f"{n:,} samples would keep {need / 2**30:.1f} GiB of runtimes, more than half the "
            f"{avail / 2**30:.1f} GiB this machine has available (at most about {fit:,} samples)",
        )
