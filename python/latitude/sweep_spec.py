"""Sweep specifications (docs/sweep.md): a TOML file naming the dimensions of a design-space
sweep, read and checked here, and the cartesian product of those dimensions as points.

    input = ["app.goal", "traces/", "stencil.job"]   # graphs
    seed = [1, 2]                                    # job files only
    coll = ["default", "allreduce=ring"]             # traces and job files only
    machine = ["ib.toml", "slow.toml"]               # machine files (default: built-in values)
    placement = ["block", "round-robin", "best.map"] # rank placements on each machine file
    [params]                                         # one value, a list, or a range per parameter
    L = "1us:10us:10"
    G = ["0.018ns", "50GB/s"]
    [analysis]
    pct = [1, 2, 5]
    tolerance = ["L"]

A point is one graph (input × seed × coll) priced at one parameter point (machine ×
placement × params); a placement is "block", "round-robin" or a map file (latitude.placement:
a rank→node list, Open MPI rankfile or Slurm host list), and needs machine files with [nodes]. Dimensions that cannot change an input's graph collapse for it (a GOAL file has no
seed and no collective choice), so no two points compute the same thing. Every dimension is
a column of the output and a point's key is the tuple of those columns, which is how
`--resume` recognises points already done.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import os
import re
import sys
from dataclasses import dataclass, field

from latitude.api import sniff
from latitude.errors import InputError
from latitude.machine import parse_value
from latitude.params import PARAM_NAMES, Params
from latitude.placement import read_map
from latitude.units import parse_gap, parse_size, parse_time

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TOP_KEYS = ("input", "seed", "coll", "machine", "placement", "params", "analysis")
PLACEMENT_KINDS = ("block", "round-robin")
ANALYSIS_KEYS = ("pct", "tolerance")
# Parameters a [params] table may sweep besides the five LogGPS values, and their parsers.
OPTION_PARSERS = {
    "S": lambda v, where: parse_size(v, where),
    "protocol": lambda v, where: _choice(v, where, ("handshake", "loggopsim")),
    "nic_serialization": lambda v, where: _boolean(v, where),
}
# The LogGPS values, the copy cost C and the call cost K (any point may set them; docs/model.md §1).
VALUE_PARSERS = {
    "L": parse_time,
    "o": parse_time,
    "g": parse_time,
    "G": parse_gap,
    "O": parse_gap,
    "C": parse_gap,
    "K": parse_time,
}
# Input kinds whose graph depends on a seed / on the collective algorithms.
SEEDED = ("job",)
COLL_KINDS = ("job", "trace")


@dataclass(frozen=True)
class GraphSource:
    """One graph of the sweep: an input file or directory, with the seed (job files) and the
    collective choice (traces, job files) it is built with; None where they do not apply."""

    input: str
    kind: str
    seed: int | None = None
    coll: str | None = None

    def key(self) -> tuple:
        return (self.input, self.seed, self.coll)


@dataclass(frozen=True)
class Point:
    """One point: a graph and the parameter values it is priced at (machine file, then the
    [params] values over it)."""

    source: GraphSource
    machine: str | None
    values: tuple  # ((name, value), ...) in the order of Spec.param_names
    placement: str | None = None  # "block", "round-robin" or a map file; None: the machine file's

    def key(self) -> tuple:
        return self.source.key() + (self.machine, self.placement) + tuple(v for _, v in self.values)

    def params(self) -> Params:
        """The Params of this point: defaults, the machine file, its placement, then the swept
        values (a placement is a new binding of the same graph: no reload)."""
        base = placed(machine_params(self.machine), self.placement)
        fixed = {k: v for k, v in self.values if k in PARAM_NAMES or k in OPTION_PARSERS}
        named = {k: v for k, v in self.values if k not in fixed}  # the machine's own: wire, intra.L, ...
        out = base.replace(**fixed)
        return out.with_values(named) if named else out


@dataclass
class Spec:
    """A checked sweep specification."""

    path: str
    sources: list
    machines: list  # machine file paths, or [None] for the built-in values
    grid: dict  # parameter name -> list of values (parsed: ns, bytes, str, bool)
    pcts: list = field(default_factory=lambda: ["1", "2", "5"])
    tolerance: list = field(default_factory=lambda: ["L"])
    placements: list = field(default_factory=lambda: [None])  # see Point.placement

    @property
    def param_names(self) -> list:
        """Every parameter column, swept or not (so each row says its whole point): the
        LogGPS values and options, then the machine files' own parameters that are swept."""
        fixed = list(PARAM_NAMES) + list(OPTION_PARSERS)
        return fixed + [n for n in self.grid if n not in fixed]

    def points(self) -> list:
        """The cartesian product, graph by graph (points of one graph are contiguous)."""
        names = self.param_names
        out = []
        for source in self.sources:
            for machine in self.machines:
                base = machine_params(machine).to_dict()
                axes = [self.grid.get(n, [base[n]]) for n in names]
                for placement in self.placements:
                    for combo in itertools.product(*axes):
                        out.append(Point(source, machine, tuple(zip(names, combo)), placement))
        return out

    def swept(self) -> list:
        """The dimensions with more than one value (columns worth a heat map)."""
        dims = []
        for name, values in (
            ("input", {s.input for s in self.sources}),
            ("seed", {s.seed for s in self.sources}),
            ("coll", {s.coll for s in self.sources}),
            ("machine", set(self.machines)),
            ("placement", set(self.placements)),
        ):
            if len(values - {None}) > 1 or name == "input" and len(values) > 1:
                dims.append(name)
        dims += [n for n, v in self.grid.items() if len(v) > 1]
        return dims


def placed(params: Params, placement: str | None) -> Params:
    """`params` with its machine's ranks placed as `placement` says (None: as the file says)."""
    if placement is None:
        return params
    if placement in PLACEMENT_KINDS:
        return params.replace(machine=dataclasses.replace(params.machine, placement=placement))
    return params.with_placement(map_nodes(placement))


@functools.lru_cache(maxsize=64)
def map_nodes(path: str) -> tuple:
    """The node of every rank in a map file (read once per process)."""
    return tuple(read_map(path).nodes)


@functools.lru_cache(maxsize=64)
def machine_params(path: str | None) -> Params:
    """The parameters of a machine file (read once per process), or the built-in values."""
    return Params.from_machine(path) if path else Params()


def read(path: str) -> Spec:
    """Read and check a sweep spec; every problem is one InputError naming file and line."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise InputError(path, "no such sweep spec") from None
    except OSError as err:
        raise InputError(path, f"cannot read the sweep spec: {err.strerror}") from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise InputError(path, "a sweep spec is TOML text (UTF-8)") from None
    except tomllib.TOMLDecodeError as err:
        raise InputError(path, f"not valid TOML: {err}") from None
    return _Reader(path, text).spec(data)


class _Reader:
    """Checks one spec's data, reporting errors at the line of the offending key."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.lines = text.splitlines()
        self.base = os.path.dirname(os.path.abspath(path))

    def where(self, key: str, table: str | None = None) -> str:
        """`path:line` of `key = ...` (inside [table] when given), or the path alone."""
        pattern = re.compile(rf"^\s*(\"{re.escape(key)}\"|{re.escape(key)})\s*=")
        in_table = table is None
        for i, line in enumerate(self.lines, start=1):
            head = line.strip()
            if head.startswith("["):
                in_table = table is not None and head.strip("[] ") == table
                if table is None:
                    break
                continue
            if in_table and pattern.match(line):
                return f"{self.path}:{i}"
        return self.path

    def fail(self, key: str, what: str, table: str | None = None):
        raise InputError(self.where(key, table), what)

    def spec(self, data: dict) -> Spec:
        for key in data:
            if key not in TOP_KEYS:
                self.fail(key, f"unknown key {key!r} (expected one of {', '.join(TOP_KEYS)})")
        inputs = [self.path_of("input", p) for p in self.strings(data, "input", required=True)]
        seeds = [self.seed(s) for s in self.values(data, "seed", [1])]
        colls = self.strings(data, "coll") or ["default"]
        machines = [self.machine(p) for p in self.strings(data, "machine")] or [None]
        placements = [self.placement(p, machines) for p in self.strings(data, "placement")] or [None]
        sources = []
        for path in inputs:
            kind = sniff(path).name
            for seed in seeds if kind in SEEDED else [None]:
                for coll in colls if kind in COLL_KINDS else [None]:
                    sources.append(GraphSource(path, kind, seed, coll))
        grid = self.grid(data.get("params", {}), machines)
        analysis = data.get("analysis", {})
        if not isinstance(analysis, dict):
            self.fail("analysis", "expected an [analysis] table")
        for key in analysis:
            if key not in ANALYSIS_KEYS:
                self.fail(key, f"unknown key {key!r} (expected {', '.join(ANALYSIS_KEYS)})", "analysis")
        pcts = [self.pct(p) for p in self.values(analysis, "pct", [1, 2, 5], "analysis")]
        tol = self.strings(analysis, "tolerance", "analysis") if "tolerance" in analysis else ["L"]
        for name in tol:
            if name not in ("L", "G"):
                self.fail("tolerance", f"expected L or G, got {name!r}", "analysis")
        return Spec(
            self.path, _unique(sources), _unique(machines), grid, _unique(pcts), _unique(tol), _unique(placements)
        )

    # -- values ---------------------------------------------------------------------------

    def values(self, data: dict, key: str, default=None, table: str | None = None) -> list:
        if key not in data:
            return list(default or [])
        value = data[key]
        values = value if isinstance(value, list) else [value]
        if not values:
            self.fail(key, f"{key} is empty: give at least one value", table)
        return values

    def strings(self, data: dict, key: str, table: str | None = None, required: bool = False) -> list:
        if required and key not in data:
            raise InputError(self.path, f"expected {key} = [...]: the graphs to sweep")
        values = self.values(data, key, None, table)
        for v in values:
            if not isinstance(v, str) or not v:
                self.fail(key, f"expected strings, got {v!r}", table)
        return values

    def path_of(self, key: str, p: str) -> str:
        full = os.path.normpath(os.path.join(self.base, os.path.expanduser(p)))
        if not os.path.exists(full):
            self.fail(key, f"no such file or directory: {p}")
        return full

    def machine(self, p: str) -> str:
        full = self.path_of("machine", p)
        machine_params(full)  # checked now, not once per point
        return full

    def placement(self, p: str, machines: list) -> str:
        """block, round-robin or a map file (checked now); every machine needs [nodes]."""
        for m in machines:
            if m is None or not machine_params(m).machine:
                self.fail("placement", "placements need machine files with [nodes] (machine = [...]; docs/network.md)")
        if p in PLACEMENT_KINDS:
            return p
        full = self.path_of("placement", p)
        map_nodes(full)  # a bad map file is one line now, not once per point
        return full

    def seed(self, s) -> int:
        if not isinstance(s, int) or isinstance(s, bool) or not 0 <= s < 2**64:
            self.fail("seed", f"expected seeds in 0..2^64-1, got {s!r}")
        return s

    def pct(self, p) -> str:
        from latitude.analysis import ratio

        text = str(p)
        try:
            ratio(text)
        except InputError as err:
            self.fail("pct", err.what, "analysis")
        return text

    def grid(self, table, machines: list) -> dict:
        if not isinstance(table, dict):
            self.fail("params", "expected a [params] table")
        grid = {}
        for name, value in table.items():
            parse = VALUE_PARSERS.get(name) or OPTION_PARSERS.get(name) or self.named_parser(name, machines)
            try:
                values = self.axis(name, value, parse)
            except InputError as err:
                self.fail(name, err.what, "params")
            grid[name] = _unique(values)
        return grid

    def named_parser(self, name: str, machines: list):
        """A machine file's own parameter (a link class such as `wire`, `intra.L`, a [params]
        latency): every machine of the spec must have it."""
        have = [set(machine_params(m).names) if m else set() for m in machines]
        if all(name in h for h in have):
            return lambda v, where: parse_value(name, v, where)
        known = ", ".join(
            list(VALUE_PARSERS) + list(OPTION_PARSERS) + sorted(set.intersection(*have) - set(PARAM_NAMES))
        )
        self.fail(
            name,
            f"unknown parameter {name!r} (expected one of {known}; a link class must be in every machine file)",
            "params",
        )

    def axis(self, name: str, value, parse) -> list:
        """One parameter's values: a scalar, a list, 'A:B:N' or {from, to, points, scale}."""
        if isinstance(value, dict):
            return _range(name, value, parse)
        if isinstance(value, str) and value.count(":") == 2 and name not in OPTION_PARSERS:
            lo, hi, n = value.split(":")
            return _range(name, {"from": lo, "to": hi, "points": n}, parse)
        values = value if isinstance(value, list) else [value]
        if not values:
            raise InputError(name, "empty list: give at least one value")
        return [parse(v, name) for v in values]


def _range(name: str, table: dict, parse) -> list:
    """N values from `from` to `to` inclusive, evenly spaced (scale = "linear", default) or
    geometrically (scale = "log")."""
    unknown = set(table) - {"from", "to", "points", "scale"}
    if unknown or not {"from", "to", "points"} <= set(table) or name in OPTION_PARSERS:
        raise InputError(name, 'expected a range "FROM:TO:POINTS" or {from, to, points, scale = "linear" | "log"}')
    lo, hi = parse(table["from"], name), parse(table["to"], name)
    try:
        n = int(str(table["points"]))
    except ValueError:
        n = 0
    if n < 1:
        raise InputError(name, f"expected a positive number of points, got {table['points']!r}")
    if hi < lo:
        raise InputError(name, "empty range: to is below from")
    scale = table.get("scale", "linear")
    if scale not in ("linear", "log"):
        raise InputError(name, f"scale is linear or log, got {scale!r}")
    if n == 1:
        return [lo]
    if scale == "log":
        if lo <= 0:
            raise InputError(name, "a log range starts above 0")
        step = math.log(hi / lo) / (n - 1)
        return [lo * math.exp(step * i) for i in range(n - 1)] + [hi]
    return [lo + (hi - lo) * i / (n - 1) for i in range(n - 1)] + [hi]


def _choice(v, where: str, choices: tuple) -> str:
    if v not in choices:
        raise InputError(where, f"expected one of {', '.join(choices)}, got {v!r}")
    return v


def _boolean(v, where: str) -> bool:
    if not isinstance(v, bool):
        raise InputError(where, f"expected true or false, got {v!r}")
    return v


def _unique(values: list) -> list:
    """The values in order, without repeats (a repeated value would repeat points)."""
    return list(dict.fromkeys(values))
