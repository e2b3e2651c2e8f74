"""LogGPS parameters and model options: defaults, units, machine files.

A ``Params`` is one point θ = (L, o, g, G, O) in ns (G, O per byte) plus the structural
options (eager limit S, rendezvous protocol, NIC serialization). Values accept units
everywhere: ``Params(L="3us", G="50GB/s", S="64KiB")``.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field

from latitude.errors import InputError
from latitude.units import fmt_size, fmt_time, parse_gap, parse_size, parse_time

PARAM_NAMES = ("L", "o", "g", "G", "O")
PROTOCOLS = ("handshake", "loggopsim")

# Defaults: a current InfiniBand-class cluster.
DEFAULTS = {"L": 3000.0, "o": 1500.0, "g": 0.0, "G": 0.018, "O": 0.0, "S": 256 * 1024}

_PARSERS = {"L": parse_time, "o": parse_time, "g": parse_time, "G": parse_gap, "O": parse_gap}


@dataclass(frozen=True)
class Params:
    L: float = DEFAULTS["L"]
    o: float = DEFAULTS["o"]
    g: float = DEFAULTS["g"]
    G: float = DEFAULTS["G"]
    O: float = DEFAULTS["O"]
    S: int = DEFAULTS["S"]
    protocol: str = "handshake"
    nic_serialization: bool = False
    notes: tuple = field(default=(), compare=False)

    def __post_init__(self):
        for name in PARAM_NAMES:
            object.__setattr__(self, name, _PARSERS[name](getattr(self, name), f"-{name}"))
        object.__setattr__(self, "S", parse_size(self.S, "-S"))
        if self.protocol not in PROTOCOLS:
            raise InputError("--rendezvous", f"expected one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")

    @property
    def theta(self) -> list[float]:
        return [self.L, self.o, self.g, self.G, self.O]

    def replace(self, **kw) -> Params:
        return dataclasses.replace(self, **kw)

    def model_kwargs(self) -> dict:
        return {
            "protocol": self.protocol,
            "eager_limit": min(self.S, 2**64 - 1),
            "nic_serialization": self.nic_serialization,
        }

    def to_dict(self) -> dict:
        """JSON form (all times in ns)."""
        return {
            "L": self.L,
            "o": self.o,
            "g": self.g,
            "G": self.G,
            "O": self.O,
            "S": self.S,
            "protocol": self.protocol,
            "nic_serialization": self.nic_serialization,
        }

    def describe(self) -> str:
        s = "∞" if self.S >= 2**62 else fmt_size(self.S)
        text = f"L={fmt_time(self.L)} o={fmt_time(self.o)} G={self.G:g} ns/B S={s} ({self.protocol})"
        if self.g or self.nic_serialization:
            text += f" g={fmt_time(self.g)}"
        if self.O:
            text += f" O={self.O:g} ns/B"
        return text

    @classmethod
    def from_machine(cls, path: str) -> Params:
        """Read a machine file (TOML): L, o, g, G, O, S with units, protocol."""
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except FileNotFoundError:
            raise InputError(path, "no such machine file") from None
        except tomllib.TOMLDecodeError as err:
            raise InputError(path, f"not valid TOML: {err}") from None
        section = data.get("loggps", data)
        known = set(PARAM_NAMES) | {"S", "protocol", "nic_serialization"}
        kw = {}
        for key, value in section.items():
            if key in known:
                kw[key] = value
            elif not isinstance(value, dict) and key not in ("name", "description", "fit", "measured"):
                raise InputError(path, f"unknown machine parameter {key!r} (expected {', '.join(sorted(known))})")
        try:
            return cls(**kw)
        except InputError as err:
            raise InputError(path, f"{err.where}: {err.what}") from None
