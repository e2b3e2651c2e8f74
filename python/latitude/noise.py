"""`--noise` specifications for the simulator, parsed into the dicts the Rust core takes.

    calc:gaussian:sigma=5%        per-calc jitter, N(0, σ²) with σ relative to the calc
    calc:gaussian:sigma=200ns     ... or absolute
    calc:lognormal:sigma=0.2      multiply by exp(σZ − σ²/2) (mean-preserving)
    calc:uniform:0:2us            add U(lo, hi)
    latency:gaussian:sigma=200ns  the same distributions on every network traversal (L)
    os:period=1ms,duration=20us   periodic OS detours (random phase per rank; ",sync" = same phase)
    trace:FILE                    LogGOPSim noise trace (`<start>\\t<duration>` ns per line)
    coll:SAMPLES                  collective calls delayed by draws from `measure-coll` samples
                                  (CSV/Parquet) minus the model's own time (latitude.coll_noise)

Semantics are documented in docs/simulator.md and crates/latitude-core/src/sim/noise.rs.
"""

from __future__ import annotations

from latitude.errors import InputError
from latitude.units import parse_time

WHERE = "--noise"
DISTS = ("gaussian", "lognormal", "uniform")


def _fail(spec: str, what: str):
    raise InputError(WHERE, f"{spec!r}: {what}")


def _keyvals(spec: str, text: str, allowed: tuple[str, ...], flags: tuple[str, ...] = ()) -> dict:
    out: dict = {}
    for part in filter(None, text.split(",")):
        if part in flags:
            out[part] = True
            continue
        key, eq, value = part.partition("=")
        if not eq or key not in allowed:
            expected = ", ".join([f"{k}=VALUE" for k in allowed] + list(flags))
            _fail(spec, f"expected {expected}, got {part!r}")
        if key in out:
            _fail(spec, f"{key} given twice")
        out[key] = value
    return out


def _dist(spec: str, target: str, rest: list[str]) -> dict:
    if not rest or rest[0] not in DISTS:
        _fail(spec, f"expected {target}:gaussian|lognormal|uniform:..., e.g. {target}:gaussian:sigma=5%")
    dist, args = rest[0], rest[1:]
    if dist == "uniform":
        if len(args) != 2:
            _fail(spec, f"expected {target}:uniform:LO:HI with times, e.g. {target}:uniform:0:2us")
        lo, hi = (parse_time(a, WHERE) for a in args)
        if hi < lo:
            _fail(spec, "uniform needs LO ≤ HI")
        return {"target": target, "dist": dist, "lo": lo, "hi": hi}
    kv = _keyvals(spec, ":".join(args), ("sigma",))
    if "sigma" not in kv:
        _fail(spec, f"expected sigma=VALUE, e.g. {target}:{dist}:sigma=" + ("0.2" if dist == "lognormal" else "5%"))
    sigma = kv["sigma"].strip()
    if dist == "lognormal":
        try:
            value = float(sigma)
        except ValueError:
            _fail(spec, f"lognormal sigma is a plain number (the σ of log(factor)), got {sigma!r}")
        if not value >= 0 or value != value or value == float("inf"):
            _fail(spec, "sigma must be a finite number ≥ 0")
        return {"target": target, "dist": dist, "sigma": value}
    if sigma.endswith("%"):
        try:
            value = float(sigma[:-1]) / 100.0
        except ValueError:
            _fail(spec, f"expected a percentage such as 5%, got {sigma!r}")
        if not 0 <= value < float("inf"):
            _fail(spec, "sigma must be ≥ 0")
        return {"target": target, "dist": dist, "sigma": value, "relative": True}
    return {"target": target, "dist": dist, "sigma": parse_time(sigma, WHERE), "relative": False}


def parse_noise(spec: str, cosched: bool = False) -> dict:
    """One `--noise` spec → dict for the core. `cosched`: one noise phase for all ranks."""
    text = spec.strip()
    target, _, rest = text.partition(":")
    if target in ("calc", "latency"):
        return _dist(spec, target, rest.split(":"))
    if target == "os":
        kv = _keyvals(spec, rest, ("period", "duration"), flags=("sync",))
        if "period" not in kv or "duration" not in kv:
            _fail(spec, "expected os:period=TIME,duration=TIME[,sync], e.g. os:period=1ms,duration=20us")
        period, duration = parse_time(kv["period"], WHERE), parse_time(kv["duration"], WHERE)
        if period < 1 or not duration < period:
            _fail(spec, "need period ≥ 1ns and duration < period")
        return {"target": "os", "period": period, "duration": duration, "synchronized": bool(kv.get("sync")) or cosched}
    if target == "trace":
        if not rest:
            _fail(spec, "expected trace:FILE (LogGOPSim noise trace)")
        return {"target": "trace", "path": rest, "cosched": cosched}
    if target == "coll":
        if not rest:
            _fail(spec, "expected coll:SAMPLES (the CSV or Parquet of latitude measure-coll)")
        return {"target": "coll", "path": rest}
    _fail(spec, "expected calc:..., latency:..., os:period=...,duration=..., trace:FILE or coll:SAMPLES")


def parse_all(specs: list[str] | None, cosched: bool = False) -> list[dict]:
    """All specs; at most one jitter each for calc and latency."""
    out = [parse_noise(s, cosched) for s in specs or []]
    for target in ("calc", "latency", "coll"):
        if sum(d["target"] == target for d in out) > 1:
            raise InputError(WHERE, f"at most one {target}:... spec (got several)")
    return out


def describe(d: dict) -> str:
    """Short human-readable form of a parsed spec."""
    from latitude.units import fmt_time

    if d["target"] in ("calc", "latency"):
        if d["dist"] == "uniform":
            return f"{d['target']} + U({fmt_time(d['lo'])}, {fmt_time(d['hi'])})"
        if d["dist"] == "lognormal":
            return f"{d['target']} × lognormal(σ={d['sigma']:g})"
        sigma = f"{100 * d['sigma']:g}%" if d["relative"] else fmt_time(d["sigma"])
        return f"{d['target']} + N(0, σ={sigma})"
    if d["target"] == "os":
        phase = "same phase" if d["synchronized"] else "random phase per rank"
        return f"OS noise {fmt_time(d['duration'])} every {fmt_time(d['period'])} ({phase})"
    if d["target"] == "coll":
        return f"collective delays measured in {d['path']}"
    return f"noise trace {d['path']}" + (" (co-scheduled)" if d["cosched"] else "")
