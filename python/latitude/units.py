"""Quantities with units, as the CLI and machine files accept them.

Times are returned in nanoseconds (float), sizes in bytes (int). A per-byte gap such as
``-G 0.018ns`` is a time (ns per byte); bandwidths may be given instead (``-G 50GB/s``,
``-G 400Gbit/s``) and are converted to ns per byte. Bare numbers mean ns or bytes.
"""

from __future__ import annotations

import math
import re

from latitude.errors import InputError

_TIME = {"": 1.0, "ns": 1.0, "ps": 1e-3, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}
_SIZE = {
    "": 1,
    "b": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "kB": 10**3,
    "K": 1024,
    "M": 1024**2,
    "G": 1024**3,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "TiB": 1024**4,
}
_RATE = {
    "B/s": 1.0,
    "KB/s": 1e3,
    "MB/s": 1e6,
    "GB/s": 1e9,
    "TB/s": 1e12,
    "bit/s": 1 / 8,
    "Kbit/s": 1e3 / 8,
    "Mbit/s": 1e6 / 8,
    "Gbit/s": 1e9 / 8,
    "Tbit/s": 1e12 / 8,
    "Gb/s": 1e9 / 8,
    "Mb/s": 1e6 / 8,
}
# One way to split the digits (\d+ then an optional fraction): with \d+\.?\d* a long digit run
# that fails to match could be cut in n ways, and a 65,000-digit --noise sigma took minutes.
_NUM = re.compile(r"^\s*([+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([^\s\d].*?)?\s*$")


def _split(text: str, where: str, what: str) -> tuple[float, str]:
    m = _NUM.match(str(text))
    if not m:
        raise InputError(where, f"expected {what}, got {text!r}")
    return float(m.group(1)), (m.group(2) or "")


def parse_time(text: str | float, where: str = "value") -> float:
    """'3us' -> 3000.0 (ns). Negative times are rejected."""
    if isinstance(text, (int, float)):
        return _nonneg(_float(text, where), where)
    value, unit = _split(text, where, "a time such as 3us, 1.5µs, 500ns")
    if unit not in _TIME:
        raise InputError(where, f"unknown time unit {unit!r} in {text!r} (use ns, us, µs, ms, s)")
    return _finite(value * _TIME[unit], text, where)


def parse_seconds(text: str, where: str = "--timeout") -> float | None:
    """A time limit in seconds: '90' (s), '90s', '10min', '2h', '500ms'; '0' or 'none': no limit."""
    t = str(text).strip()
    if t.lower() in ("0", "none", "inf"):
        return None
    m = _NUM.match(t)
    if m and (m.group(2) or "") in ("", "min", "h"):
        value = float(m.group(1)) * {"": 1, "min": 60, "h": 3600}[m.group(2) or ""]
    else:
        value = parse_time(t, where) / 1e9
    if not 0 < value < 1e9:
        raise InputError(where, f"expected a time limit such as 90s, 10min or 2h (0 or none: no limit), got {text!r}")
    return value


def parse_gap(text: str | float, where: str = "value") -> float:
    """Per-byte gap in ns/byte: '0.018ns' or a bandwidth such as '50GB/s'."""
    if isinstance(text, (int, float)):
        return _nonneg(_float(text, where), where)
    value, unit = _split(text, where, "a per-byte gap such as 0.018ns or a bandwidth such as 50GB/s")
    if unit.endswith("/B"):
        unit = unit[:-2]
    if unit in _TIME:
        return _finite(value * _TIME[unit], text, where)
    if unit in _RATE:
        if value <= 0:
            raise InputError(where, f"bandwidth must be positive, got {text!r}")
        return _finite(1e9 / (value * _RATE[unit]), text, where)
    raise InputError(where, f"unknown unit {unit!r} in {text!r} (use ns per byte or GB/s, Gbit/s)")


def parse_size(text: str | int, where: str = "value") -> int:
    """'256KiB' -> 262144 (bytes). 'inf' means no limit (returns 2**63-1)."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise InputError(where, f"expected a size >= 0 bytes, got {text}")
        return min(text, 2**63 - 1)
    if str(text).strip().lower() in ("inf", "infinity", "none"):
        return 2**63 - 1
    value, unit = _split(text, where, "a size such as 256KiB, 64KB, 4096")
    if unit not in _SIZE:
        raise InputError(where, f"unknown size unit {unit!r} in {text!r} (use B, KiB, MiB, KB, MB)")
    out = value * _SIZE[unit]
    if not math.isfinite(out):
        raise InputError(where, f"size {text!r} is too large (use 'inf' for no limit)")
    if out != int(out):
        raise InputError(where, f"size {text!r} is not a whole number of bytes")
    return min(int(out), 2**63 - 1)


def parse_range(text: str, where: str, parse=parse_time) -> tuple[float, float]:
    """'0:100us' or '0us:100us' -> (lo, hi); a unit on the upper bound applies to both."""
    parts = str(text).split(":")
    if len(parts) != 2:
        raise InputError(where, f"expected a range LO:HI such as 0:100us, got {text!r}")
    lo_txt, hi_txt = parts
    _, hi_unit = _split(hi_txt, where, "a range LO:HI such as 0:100us")
    _, lo_unit = _split(lo_txt, where, "a range LO:HI such as 0:100us")
    if not lo_unit and hi_unit:
        lo_txt = lo_txt + hi_unit
    lo, hi = parse(lo_txt, where), parse(hi_txt, where)
    if hi < lo:
        raise InputError(where, f"range {text!r} is empty (upper bound below lower bound)")
    return lo, hi


def _float(x: float, where: str) -> float:
    if isinstance(x, bool):
        raise InputError(where, f"expected a number, got {str(x).lower()}")
    try:
        return float(x)
    except OverflowError:
        raise InputError(where, "expected a finite value, got one too large to represent") from None


def _finite(v: float, text, where: str) -> float:
    if not math.isfinite(v):
        raise InputError(where, f"{text!r} is too large (expected a finite value)")
    return v


def _nonneg(v: float, where: str) -> float:
    if v < 0 or v != v:
        raise InputError(where, f"expected a non-negative value, got {v}")
    if v == math.inf:
        raise InputError(where, "expected a finite value, got one too large to represent")
    return v


# The largest parameter value the core's exact arithmetic accepts (ns, or ns per byte):
# about 11.6 days, far beyond any network, and small enough that sums over 10^8 vertices stay exact.
MAX_PARAM_NS = 1e15


def in_model_range(v: float, where: str) -> float:
    """A parsed parameter value, refused in one line when the core could not represent it."""
    if v > MAX_PARAM_NS:
        raise InputError(where, f"{v:g} ns is beyond the model's range (at most {MAX_PARAM_NS:g} ns, about 11.6 days)")
    return v


def fmt_time(ns: float | None) -> str:
    """Human-readable time: 1234.5 -> '1.2345 µs'."""
    if ns is None:
        return "unbounded"
    a = abs(ns)
    if a >= 1e9:
        return f"{ns / 1e9:.6g} s"
    if a >= 1e6:
        return f"{ns / 1e6:.6g} ms"
    if a >= 1e3:
        return f"{ns / 1e3:.6g} µs"
    return f"{ns:.6g} ns"


def fmt_size(b: int) -> str:
    for unit, f in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if b >= f and b % f == 0:
            return f"{b // f} {unit}"
    return f"{b} B"
