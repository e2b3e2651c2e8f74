"""LogGPS parameters and model options: defaults, units, machine files.

A ``Params`` is one point θ of named parameters in ns (per-byte ones in ns per byte): the
globals (L, o, g, G, O) and, with a machine (``latitude.machine``: topology, placement,
intra-node parameters, per-pair matrices), the machine's own (one latency per link class,
``intra.L``, ``intra.G``, …), the protocol classes' terms and the copy cost C when set,
plus the structural options (eager limit S, rendezvous protocol, NIC serialization).
Values accept units everywhere: ``Params(L="3us",
G="50GB/s", S="64KiB")``; ``params.with_values(wire="300ns")`` sets any named parameter.
It crosses into the Rust core whole, as one typed object (``to_core``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from latitude import machine as machines
from latitude.errors import InputError
from latitude.units import fmt_size, fmt_time, in_model_range, parse_gap, parse_size, parse_time

PARAM_NAMES = ("L", "o", "g", "G", "O")
PROTOCOLS = ("handshake", "loggopsim")
# Protocol size classes (docs/model.md §1): small ("mailbox", s ≤ S1), medium (eager,
# S1 < s ≤ S), large (rendezvous): each adds its o_c to every o and its l_c to every L.
CLASSES = ("small", "medium", "large")
CLASS_PARAMS = tuple(f"{c}.{k}" for c in CLASSES for k in ("o", "L"))
# C: the per-byte cost of a local memory copy (a collective's own block; docs/model.md §1).
# Optional: unset (None), a copy pays O, the eager per-byte overhead, as before C existed.
COPY = machines.COPY
# K: the MPI library's own cost of one collective call on one rank, beyond its messages,
# paid where the rank's part of the call ends (docs/model.md §1). Optional: unset (None), a
# call costs its messages alone, as before K existed.
CALL = machines.CALL
# The optional named parameters any point may set, in θ's order after the classes'.
OPTIONAL = machines.OPTIONAL

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
    # The machine (None: a flat network, one rank per node) and the values of its named
    # parameters (``machine.param_names``, in order).
    machine: machines.Machine | None = None
    values: tuple = ()
    # Protocol classes: the small limit S1 (None: the two-protocol model) and the class
    # parameters' values in CLASS_PARAMS order (zeros when only S1 is given).
    S1: int | None = None
    classes: tuple = ()
    # The per-byte cost of a local copy, ns per byte (None: copies pay O).
    C: float | None = None
    # The cost of one collective call on a rank, ns (None: nothing beyond its messages).
    K: float | None = None

    def __post_init__(self):
        for name in PARAM_NAMES:
            where = f"-{name}"
            object.__setattr__(self, name, in_model_range(_PARSERS[name](getattr(self, name), where), where))
        object.__setattr__(self, "S", parse_size(self.S, "-S"))
        if self.protocol not in PROTOCOLS:
            raise InputError("--rendezvous", f"expected one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")
        extra = self.machine.param_names if self.machine else ()
        if len(self.values) != len(extra):
            raise InputError(None, f"{len(self.values)} values for the machine's parameters {', '.join(extra)}")
        vals = tuple(machines.parse_value(n, v, f"--set {n}") for n, v in zip(extra, self.values))
        object.__setattr__(self, "values", vals)
        self._check_classes()
        if self.C is not None:
            object.__setattr__(self, "C", in_model_range(parse_gap(self.C, "-C"), "-C"))
        if self.K is not None:
            object.__setattr__(self, "K", in_model_range(parse_time(self.K, "-K"), "-K"))

    def _check_classes(self):
        if self.S1 is None:
            if self.classes:
                raise InputError("--small-limit", "protocol class parameters need the small limit S1")
            return
        object.__setattr__(self, "S1", parse_size(self.S1, "--small-limit"))
        if self.S1 >= self.S:
            raise InputError("--small-limit", f"expected S1 below the eager limit S = {fmt_size(self.S)}")
        cls = tuple(self.classes) or (0.0,) * len(CLASS_PARAMS)
        if len(cls) != len(CLASS_PARAMS):
            raise InputError(None, f"{len(cls)} values for the protocol class parameters {', '.join(CLASS_PARAMS)}")
        object.__setattr__(self, "classes", tuple(parse_time(v, f"--set {n}") for n, v in zip(CLASS_PARAMS, cls)))

    @property
    def names(self) -> tuple:
        """Every named parameter: the globals, the machine's, the protocol classes', C and K."""
        own = self.machine.param_names if self.machine else ()
        optional = tuple(n for n, _ in self._optional())
        return PARAM_NAMES + own + (CLASS_PARAMS if self.S1 is not None else ()) + optional

    @property
    def theta(self) -> list[float]:
        optional = [v for _, v in self._optional()]
        return [self.L, self.o, self.g, self.G, self.O, *self.values, *self.classes, *optional]

    def _optional(self) -> list[tuple[str, float]]:
        """(name, value) of each optional parameter this point sets (C, K)."""
        return [(n, getattr(self, n)) for n in OPTIONAL if getattr(self, n) is not None]

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise InputError("--param", f"no parameter {name!r}; this machine's are {', '.join(self.names)}") from None

    def value(self, name: str) -> float:
        return self.theta[self.index(name)]

    def kind(self, name: str) -> str:
        """'time' (ns) or 'gap' (ns per byte)."""
        if name not in OPTIONAL:  # C and K can be set on any point (with_values): always known
            self.index(name)
        return machines.kind_of(name)

    def parse(self, name: str, text, where: str) -> float:
        """A value of parameter `name` with units (a time, or a per-byte gap)."""
        return (parse_gap if self.kind(name) == "gap" else parse_time)(text, where)

    def replace(self, **kw) -> Params:
        return dataclasses.replace(self, **kw)

    def with_values(self, values: dict | None = None, **kw) -> Params:
        """The same point with any named parameters changed (``{"intra.L": "0.2us"}``); C
        may be set on any point (it then prices the copies instead of O)."""
        changes = {**(values or {}), **kw}
        glob = {k: v for k, v in changes.items() if k in PARAM_NAMES or k in OPTIONAL}
        vals, cls = list(self.values), list(self.classes)
        for name, v in changes.items():
            if name in CLASS_PARAMS and self.S1 is not None:
                cls[CLASS_PARAMS.index(name)] = v
            elif name not in PARAM_NAMES and name not in OPTIONAL:
                vals[self.index(name) - len(PARAM_NAMES)] = v
        return dataclasses.replace(self, values=tuple(vals), classes=tuple(cls), **glob)

    def with_placement(self, nodes) -> Params:
        """The same point on the same machine with rank i on node ``nodes[i]`` (checked when
        the core binds it to a graph). A new binding of the same graph: no reload, no re-plan."""
        if self.machine is None:
            raise InputError(None, "a placement needs a machine file with [nodes] (docs/network.md)")
        m = dataclasses.replace(self.machine, placement=tuple(int(n) for n in nodes))
        return dataclasses.replace(self, machine=m)

    def model_kwargs(self) -> dict:
        return {
            "protocol": self.protocol,
            "eager_limit": min(self.S, 2**64 - 1),
            "nic_serialization": self.nic_serialization,
            "small_limit": self.S1,
        }

    def to_core(self):
        """The typed object the Rust core takes: names, values, model options, machine."""
        from latitude import _core

        m = self.machine.core(self.names) if self.machine else None
        return _core.Config(list(self.names), self.theta, machine=m, **self.model_kwargs())

    def to_dict(self) -> dict:
        """JSON form (all times in ns)."""
        out = {
            "L": self.L,
            "o": self.o,
            "g": self.g,
            "G": self.G,
            "O": self.O,
            "S": self.S,
            "protocol": self.protocol,
            "nic_serialization": self.nic_serialization,
        }
        if self.machine:
            out.update(zip(self.machine.param_names, self.values))
            out["machine"] = self.machine.to_dict()
        if self.S1 is not None:
            out["S1"] = self.S1
            out.update(zip(CLASS_PARAMS, self.classes))
        out.update(self._optional())
        return out

    def describe(self) -> str:
        s = "∞" if self.S >= 2**62 else fmt_size(self.S)
        text = f"L={fmt_time(self.L)} o={fmt_time(self.o)} G={self.G:g} ns/B S={s} ({self.protocol})"
        if self.g or self.nic_serialization:
            text += f" g={fmt_time(self.g)}"
        if self.O:
            text += f" O={self.O:g} ns/B"
        if self.machine:
            for n, v in zip(self.machine.param_names, self.values):
                text += f" {n}={v:g} ns/B" if machines.kind_of(n) == "gap" else f" {n}={fmt_time(v)}"
        if self.S1 is not None:
            text += f" S1={fmt_size(self.S1)} " + " ".join(
                f"{n}={fmt_time(v)}" for n, v in zip(CLASS_PARAMS, self.classes)
            )
        if self.C is not None:
            text += f" C={self.C:g} ns/B"
        if self.K is not None:
            text += f" K={fmt_time(self.K)}"
        return text

    @classmethod
    def from_machine(cls, path: str) -> Params:
        """Read a machine file (TOML, docs/network.md): the globals L, o, g, G, O, S (and the
        copy cost C when it has one) with units, protocol (in ``[loggps]`` or at the top
        level); a network, placement and
        per-pair costs when it has them. L is 0 unless set when the file has a topology or
        an L matrix (it is then the latency added to every message between nodes). Anything
        it does not understand is refused with one line."""
        glob, machine, values, where = machines.read(path)
        if machine and machine.has_network:
            glob.setdefault("L", 0.0)
        vals = tuple(values[n] for n in machine.param_names) if machine else ()
        try:
            return cls(**glob, machine=machine, values=vals)
        except InputError as err:
            key = err.where.lstrip("-") if err.where else ""
            raise InputError(where("protocol" if key == "rendezvous" else key), err.what) from None
