"""LogGPS parameters and model options: defaults, units, machine files.

A ``Params`` is one point θ = (L, o, g, G, O) in ns (G, O per byte) plus the structural
options (eager limit S, rendezvous protocol, NIC serialization). Values accept units
everywhere: ``Params(L="3us", G="50GB/s", S="64KiB")``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from latitude import tomlfile
from latitude.errors import InputError
from latitude.units import fmt_size, fmt_time, parse_gap, parse_size, parse_time

PARAM_NAMES = ("L", "o", "g", "G", "O")
PROTOCOLS = ("handshake", "loggopsim")

# Defaults: a current InfiniBand-class cluster.
DEFAULTS = {"L": 3000.0, "o": 1500.0, "g": 0.0, "G": 0.018, "O": 0.0, "S": 256 * 1024}

# Machine files may describe themselves (calibrate writes these); they are not parameters.
MACHINE_INFO = ("name", "description", "fit", "measured")
MACHINE_TABLES = ("loggps", "fit", "measured")

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
        """Read a machine file (TOML): L, o, g, G, O, S with units, protocol (in ``[loggps]`` or
        at the top level). Anything it does not understand is refused with one line."""
        data, text = tomlfile.read(path)
        table = "loggps" if isinstance(data.get("loggps"), dict) else None
        tomlfile.check_tables(data, path, text, MACHINE_TABLES)
        section = data[table] if table else data
        if table:
            tomlfile.check_tables(section, path, text, ())
            for key, value in data.items():
                if not isinstance(value, dict) and key not in MACHINE_INFO:
                    at = tomlfile.where(path, text, key)
                    raise InputError(at, f"{key!r} outside [loggps]: machine parameters belong in the [loggps] table")
        kw = {}
        for key, value in section.items():
            at = tomlfile.where(path, text, key, table)
            if key in PARAM_NAMES or key == "S":
                kw[key] = tomlfile.number(value, at, f"a number or a quantity such as '3us' for {key}")
            elif key == "protocol":
                kw[key] = tomlfile.string(value, at, f"one of {', '.join(PROTOCOLS)}")
            elif key == "nic_serialization":
                kw[key] = tomlfile.boolean(value, at, "true or false")
            elif key not in MACHINE_INFO:
                known = ", ".join((*PARAM_NAMES, "S", "protocol", "nic_serialization"))
                raise InputError(at, f"unknown machine parameter {key!r} (expected {known})")
        try:
            return cls(**kw)
        except InputError as err:
            key = err.where.lstrip("-") if err.where else ""
            at = tomlfile.where(path, text, "protocol" if key == "rendezvous" else key, table)
            raise InputError(at, err.what) from None
