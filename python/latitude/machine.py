"""Machine files: the network behind the parameters (the format is in docs/network.md).

A machine file holds the global LogGPS parameters (top level or ``[loggps]``) and, beyond
one flat network, ``[nodes]`` (ranks per node, placement), ``[intra]`` (L and G between
ranks on one node), ``[topology]`` with ``[topology.latency]`` (one latency per link class),
``[params]`` (more named latencies) and ``[matrix]`` (per-pair latency and gap, App. I of
the LLAMP paper). This module reads and checks all of it — every error is one line naming
the file and the key (or the file and line of a file the machine file points to) — and
hands the Rust core a :class:`Machine` whose routes the core computes.

The named parameters of a machine follow the five globals: the link classes of its
topology, then ``intra.L`` and ``intra.G``, then ``[params]``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from latitude import placement as maps
from latitude import tomlfile
from latitude.errors import InputError
from latitude.units import in_model_range, parse_gap, parse_time

GLOBALS = ("L", "o", "g", "G", "O")
COPY = "C"  # the per-byte cost of a local copy (optional, in [loggps]; docs/model.md §1)
CALL = "K"  # the cost of one collective call on a rank beyond its messages (optional, in [loggps])
OPTIONAL = (COPY, CALL)  # the optional named parameters any point may set
GAP_PARAMS = ("G", "O", "intra.G", COPY)
TABLES = ("loggps", "protocols", "nodes", "intra", "topology", "matrix", "params", "fit", "measured")
INFO_KEYS = ("name", "description", "fit", "measured")  # descriptive (calibrate writes them)
TOPOLOGY_KEYS = {
    "fat_tree": ("k", "levels"),
    "dragonfly": ("g", "a", "p", "h"),
    "torus": ("dims",),
    "graph": ("file",),
}
FAT_TREE_CLASSES = ("wire", "switch")
DRAGONFLY_CLASSES = ("terminal", "local", "global", "switch")
TORUS_DIMS = ("x", "y", "z", "a", "b", "c")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_PARAMS = 32
MAX_COUNT = 1_000_000


@dataclass(frozen=True, eq=False)
class Matrix:
    """Per-pair entries: ``ids[i*n + j]`` indexes ``entries`` (-1: none); an entry is
    (constant ns, ((parameter name, count), ...))."""

    path: str
    by_node: bool
    n: int
    ids: list = field(repr=False)
    entries: tuple = ()

    def core_spec(self, index: dict) -> dict:
        return {
            "by_node": self.by_node,
            "n": self.n,
            "ids": self.ids,
            "entries": [(c, [(index[k], n) for k, n in terms]) for c, terms in self.entries],
        }


@dataclass(frozen=True, eq=False)
class Machine:
    """Everything of a machine but its parameter values (those are in ``Params``)."""

    source: str
    kind: str = "flat"
    shape: dict = field(default_factory=dict)
    classes: tuple = ()
    # The parameter each class's latency is (its own name, or a [params] name it shares).
    class_params: tuple = ()
    ranks_per_node: int = 1
    placement: object = "block"  # "block" | "round-robin" | tuple of node ids
    intra: bool = False
    extra: tuple = ()
    lat_matrix: Matrix | None = None
    gap_matrix: Matrix | None = None
    graph: dict | None = field(default=None, repr=False)

    @property
    def param_names(self) -> tuple:
        """The machine's named parameters, after the five globals: the classes with a
        latency of their own, intra.L and intra.G, then [params]."""
        own = tuple(c for c, p in zip(self.classes, self.class_params) if c == p)
        return own + (("intra.L", "intra.G") if self.intra else ()) + self.extra

    @property
    def has_network(self) -> bool:
        """Whether L is an extra end-to-end latency (a topology or an L matrix) rather
        than the whole network latency."""
        return self.kind != "flat" or self.lat_matrix is not None

    def core(self, names: tuple):
        """The Rust core's machine for a configuration with these parameter names (cached)."""
        cache = self.__dict__.setdefault("_core", {})
        if names not in cache:
            from latitude import _core

            cache[names] = _core.Machine(self.core_spec(names))
        return cache[names]

    def core_spec(self, names: tuple) -> dict:
        index = {n: i for i, n in enumerate(names)}
        topo = {"kind": self.kind, **self.shape}
        if self.kind == "graph":
            topo.update(self.graph)
        return {
            "source": self.source,
            "nparams": len(names),
            "topology": topo,
            "class_param": [index[c] for c in self.class_params],
            "ranks_per_node": self.ranks_per_node,
            "placement": self.placement if isinstance(self.placement, str) else list(self.placement),
            "intra": (index["intra.L"], index["intra.G"]) if self.intra else None,
            "lat_matrix": self.lat_matrix.core_spec(index) if self.lat_matrix else None,
            "gap_matrix": self.gap_matrix.core_spec(index) if self.gap_matrix else None,
        }

    def nodes(self) -> int | None:
        """Nodes of the network (None: any number)."""
        return self.core(GLOBALS + self.param_names).nodes()

    def node_route(self, a: int, b: int) -> dict:
        """Links (and switches) of each class between nodes a ≠ b."""
        counts = self.core(GLOBALS + self.param_names).node_route(a, b)
        return dict(zip(self.classes, counts))

    def describe(self, short: bool = False) -> str:
        shape = ", ".join(f"{k}={v}" if short else f"{k} = {v}" for k, v in self.shape.items())
        net = {"flat": "flat network", "graph": f"network graph {self.shape.get('file', '')}"}.get(
            self.kind, f"{self.kind.replace('_', ' ')} ({shape})"
        )
        if short:
            return net + (f", {self.ranks_per_node}/node" if self.ranks_per_node > 1 else "")
        place = self.placement if isinstance(self.placement, str) else "explicit map"
        text = f"{net}, {self.ranks_per_node} rank(s) per node, {place} placement"
        if self.lat_matrix or self.gap_matrix:
            text += ", per-pair " + " and ".join(n for n, m in (("L", self.lat_matrix), ("G", self.gap_matrix)) if m)
        return text

    def to_dict(self) -> dict:
        return {
            "file": self.source,
            "topology": {"kind": self.kind, **{k: v for k, v in self.shape.items()}},
            "classes": list(self.classes),
            "ranks_per_node": self.ranks_per_node,
            "placement": self.placement if isinstance(self.placement, str) else "file",
            "intra": self.intra,
            "params": list(self.extra),
            "matrix": {n: m.path for n, m in (("L", self.lat_matrix), ("G", self.gap_matrix)) if m},
        }


def kind_of(name: str) -> str:
    """'gap' for per-byte parameters (ns per byte), 'time' for the others."""
    return "gap" if name in GAP_PARAMS else "time"


def parse_value(name: str, value, where: str) -> float:
    """A parameter value with units; booleans are refused (TOML's true is not 1 ns)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(where, f"expected a {'per-byte gap' if kind_of(name) == 'gap' else 'time'}, got {value!r}")
    return in_model_range((parse_gap if kind_of(name) == "gap" else parse_time)(value, where), where)


class _Reader:
    """Reads one machine file; `err(key, what)` is its one-line error, at the key's line."""

    def __init__(self, path: str, text: str = ""):
        self.path = path
        self.text = text
        self.dir = os.path.dirname(os.path.abspath(path))

    def at(self, key: str) -> str:
        """`path:line` of a dotted key (`topology.k`) or table (`nodes`), else `path`."""
        table, _, leaf = key.rpartition(".")
        n = tomlfile.line_of(self.text, leaf, table or None) or tomlfile.table_line(self.text, key)
        return f"{self.path}:{n}" if n else self.path

    def err(self, key: str, what: str) -> InputError:
        return InputError(self.at(key), f"{key}: {what}")

    def table(self, data: dict, name: str, keys) -> dict:
        t = data.get(name, {})
        if not isinstance(t, dict):
            raise self.err(name, "expected a table")
        for k in t:
            if k not in keys:
                raise self.err(f"{name}.{k}", f"unknown key (expected {', '.join(keys)})")
        return t

    def integer(self, t: dict, table: str, key: str, lo: int = 1, default=None) -> int:
        v = t.get(key, default)
        if v is None:
            raise self.err(f"{table}.{key}", "missing")
        if isinstance(v, bool) or not isinstance(v, int) or v < lo or v >= 2**32:
            raise self.err(f"{table}.{key}", f"expected an integer ≥ {lo}, got {v!r}")
        return v

    def file(self, value, key: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.err(key, f"expected a file name, got {value!r}")
        p = value if os.path.isabs(value) else os.path.join(self.dir, value)
        if not os.path.isfile(p):
            raise self.err(key, f"no such file {value!r}")
        return p


def read(path: str):
    """Read a machine file: (the global values and options as written, the machine or None
    when it is a flat network with one rank per node, values of the machine's named
    parameters, and `where(key)`: the `path:line` of a global key, for errors in its value)."""
    data, text = tomlfile.read(path)
    tomlfile.check_tables(data, path, text, TABLES)
    r = _Reader(path, text)
    table = "loggps" if isinstance(data.get("loggps"), dict) else None
    if table:
        tomlfile.check_tables(data[table], path, text, ())
        for key, value in data.items():
            if not isinstance(value, dict) and key not in INFO_KEYS:
                at = tomlfile.where(path, text, key)
                raise InputError(at, f"{key!r} outside [loggps]: machine parameters belong in the [loggps] table")
    section = data[table] if table else {k: v for k, v in data.items() if not isinstance(v, dict)}
    glob = {}
    for key, value in section.items():
        at = tomlfile.where(path, text, key, table)
        if key in GLOBALS or key == "S" or key in OPTIONAL:
            glob[key] = tomlfile.number(value, at, f"a number or a quantity such as '3us' for {key}")
        elif key == "protocol":
            glob[key] = tomlfile.string(value, at, "one of handshake, loggopsim")
        elif key == "nic_serialization":
            glob[key] = tomlfile.boolean(value, at, "true or false")
        elif key not in INFO_KEYS:
            known = ", ".join((*GLOBALS, "S", *OPTIONAL, "protocol", "nic_serialization"))
            raise InputError(at, f"unknown machine parameter {key!r} (expected {known})")

    glob.update(_protocols(path, text, data.get("protocols")))

    def where(key: str) -> str:
        if key in ("S1", "small-limit"):
            return tomlfile.where(path, text, "S1", "protocols")
        if key.startswith("set "):  # a class parameter: small.o -> [protocols] small
            return tomlfile.where(path, text, key[4:].split(".")[0], "protocols")
        return tomlfile.where(path, text, key, table)

    if not any(t in data for t in ("nodes", "intra", "topology", "matrix", "params")):
        return glob, None, {}, where
    return (glob, *_machine(r, data), where)


PROTOCOL_CLASSES = ("small", "medium", "large")


def _protocols(path: str, text: str, t) -> dict:
    """``[protocols]``: the small limit S1 and each class's o and L (docs/model.md §1), as
    Params keywords (``S1``, ``classes`` in small.o, small.L, medium.o, … order)."""
    if t is None:
        return {}
    at = lambda key: tomlfile.where(path, text, key, "protocols")  # noqa: E731
    for key in t:
        if key != "S1" and key not in PROTOCOL_CLASSES:
            raise InputError(at(key), f"unknown key {key!r} in [protocols] (expected S1, small, medium, large)")
    if "S1" not in t:
        raise InputError(
            f"{path}:{tomlfile.table_line(text, 'protocols')}", "[protocols] needs S1, the small-message limit"
        )
    values = []
    for c in PROTOCOL_CLASSES:
        cls = t.get(c, {})
        if not isinstance(cls, dict) or set(cls) - {"o", "L"}:
            raise InputError(at(c), "expected a table { o = TIME, L = TIME } (the class's extra overhead and latency)")
        values += [tomlfile.number(cls.get(k, 0), at(c), f"a time such as '200ns' for {c}.{k}") for k in ("o", "L")]
    return {"S1": tomlfile.number(t["S1"], at("S1"), "a size such as '1KiB' for S1"), "classes": tuple(values)}


def _machine(r: _Reader, data: dict) -> tuple[Machine, dict]:
    values: dict = {}
    nodes = r.table(data, "nodes", ("ranks_per_node", "placement", "placement_file"))
    rpn = r.integer(nodes, "nodes", "ranks_per_node", default=1)
    placement = _placement(r, nodes)
    intra_t = r.table(data, "intra", ("L", "G"))
    if intra_t and set(intra_t) != {"L", "G"}:
        raise r.err("intra", "expected both L and G (the latency and gap between ranks on one node)")
    for k, v in intra_t.items():
        values[f"intra.{k}"] = parse_value(f"intra.{k}", v, f"{r.at(f'intra.{k}')}: intra.{k}")
    extra, params = [], {}
    for k, v in r.table(data, "params", list(data.get("params", {}))).items():
        if not NAME.match(k) or k in GLOBALS or k in OPTIONAL:
            raise r.err(f"params.{k}", "expected a new parameter name (letters, digits, _)")
        params[k] = parse_value(k, v, f"{r.at(f'params.{k}')}: params.{k}")
        extra.append(k)
    kind, shape, classes, aliases, graph = _topology(r, data, values, params)
    for k in extra:
        if k in values:
            raise r.err(f"params.{k}", "is also a link class of the topology (give its latency in one place)")
    values.update(params)
    own = tuple(c for c in classes if aliases[c] == c)
    names = GLOBALS + own + (("intra.L", "intra.G") if intra_t else ()) + tuple(extra)
    if len(names) > MAX_PARAMS:
        raise r.err("params", f"{len(names)} named parameters; at most {MAX_PARAMS} are supported")
    mt = r.table(data, "matrix", ("L", "G", "index"))
    index = mt.get("index", "rank")
    if index not in ("rank", "node"):
        raise r.err("matrix.index", f"expected 'rank' or 'node', got {index!r}")
    latency = [n for n in names if kind_of(n) == "time" and n not in ("L", "o", "g")]
    gaps = [n for n in names if kind_of(n) == "gap" and n != "O"]
    lat = _matrix(r, mt, "L", index == "node", latency, complete=kind == "flat") if "L" in mt else None
    gap = _matrix(r, mt, "G", index == "node", gaps, complete=False) if "G" in mt else None
    m = Machine(
        r.path,
        kind,
        shape,
        tuple(classes),
        tuple(aliases[c] for c in classes),
        rpn,
        placement,
        bool(intra_t),
        tuple(extra),
        lat,
        gap,
        graph,
    )
    return m, values


def _placement(r: _Reader, nodes: dict):
    how = nodes.get("placement", "block")
    if how in ("block", "round-robin"):
        if "placement_file" in nodes:
            raise r.err("nodes.placement_file", "only with placement = 'file'")
        return how
    if how != "file":
        raise r.err("nodes.placement", f"expected 'block', 'round-robin' or 'file', got {how!r}")
    path = r.file(nodes.get("placement_file"), "nodes.placement_file")
    return maps.read_map(path, "list").nodes


def _lines(path: str):
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, 1):
            if len(line) > 1 << 20:
                raise InputError(f"{path}:{no}", "line too long")
            line = line.split("#", 1)[0].strip()
            if line:
                yield no, line


def _topology(r: _Reader, data: dict, values: dict, params: dict):
    """Kind, shape, link classes, the parameter of each class (its own name, or a [params]
    name several classes share, as in `terminal = "wire"`), and a graph file's network."""
    t = data.get("topology")
    if t is None:
        return "flat", {}, [], {}, None
    if not isinstance(t, dict):
        raise r.err("topology", "expected a table")
    kind = t.get("kind")
    if kind not in TOPOLOGY_KEYS:
        raise r.err("topology.kind", f"expected one of {', '.join(TOPOLOGY_KEYS)}, got {kind!r}")
    allowed = ("kind", "latency") + TOPOLOGY_KEYS[kind]
    r.table(data, "topology", allowed)
    shape, graph = {}, None
    if kind == "fat_tree":
        k = r.integer(t, "topology", "k", lo=2)
        if k % 2:
            raise r.err("topology.k", f"expected an even switch radix k (k/2 ports down, k/2 up), got {k}")
        levels = r.integer(t, "topology", "levels")
        if 2 * (k // 2) ** levels >= 2**32:
            raise r.err("topology.levels", f"a fat tree with k = {k} and {levels} levels has more than 2^32 nodes")
        shape, classes = {"k": k, "levels": levels}, list(FAT_TREE_CLASSES)
    elif kind == "dragonfly":
        g, a, p = (r.integer(t, "topology", x) for x in ("g", "a", "p"))
        h = r.integer(t, "topology", "h", default=max(1, -(-(g - 1) // a)))
        if a * h < g - 1:
            raise r.err("topology.h", f"{a} routers × {h} global links each cannot reach the other {g - 1} groups")
        if g * a * p >= 2**32:
            raise r.err("topology", "more than 2^32 nodes")
        shape, classes = {"g": g, "a": a, "p": p, "h": h}, list(DRAGONFLY_CLASSES)
    elif kind == "torus":
        dims = t.get("dims")
        if (
            not isinstance(dims, list)
            or not 1 <= len(dims) <= len(TORUS_DIMS)
            or any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in dims)
        ):
            raise r.err(
                "topology.dims", f"expected 1 to {len(TORUS_DIMS)} positive integers such as [8, 8, 8], got {dims!r}"
            )
        shape, classes = {"dims": dims}, list(TORUS_DIMS[: len(dims)]) + ["switch"]
    else:
        path = r.file(t.get("file"), "topology.file")
        graph = read_network(path)
        shape, classes = {"file": t.get("file")}, graph["classes"] + ["switch"]
    lat = t.get("latency")
    if not isinstance(lat, dict):
        raise r.err("topology.latency", f"missing: one latency per link class ({', '.join(classes)})")
    for c in lat:
        if c not in classes:
            raise r.err(
                f"topology.latency.{c}", f"unknown link class of the {kind} (its classes: {', '.join(classes)})"
            )
    aliases = {}
    for c in classes:
        if c not in lat:
            raise r.err(
                "topology.latency", f"no latency for the link class {c!r} (the {kind}'s classes: {', '.join(classes)})"
            )
        v = lat[c]
        if isinstance(v, str) and NAME.match(v.strip()):
            if v.strip() not in params:
                raise r.err(f"topology.latency.{c}", f"{v!r} is neither a time nor a parameter of [params]")
            aliases[c] = v.strip()
        else:
            aliases[c] = c
            values[c] = parse_value(c, v, f"{r.at(f'topology.latency.{c}')}: topology.latency.{c}")
    return kind, shape, classes, aliases, graph


def read_network(path: str) -> dict:
    """A network graph file: ``nodes N``, ``switches S`` and one link per line, ``A B CLASS``
    with A, B as ``n<i>`` (node) or ``s<j>`` (switch); ``#`` starts a comment."""
    counts = {"nodes": None, "switches": None}
    links, classes = [], []
    for no, line in _lines(path):
        where = f"{path}:{no}"
        tok = line.split()
        if tok[0] in counts and len(tok) == 2:
            if not tok[1].isdigit() or counts[tok[0]] is not None:
                raise InputError(where, f"expected '{tok[0]} N' once, with N an integer")
            counts[tok[0]] = int(tok[1])
            continue
        if len(tok) != 3:
            raise InputError(
                where, f"expected a link 'A B CLASS' (e.g. n0 s1 wire), 'nodes N' or 'switches S', got {line!r}"
            )
        if counts["nodes"] is None:
            raise InputError(where, "links come after 'nodes N' (and 'switches S')")
        ends = [_vertex(t, counts, where) for t in tok[:2]]
        if not NAME.match(tok[2]) or tok[2] == "switch" or tok[2] in OPTIONAL:
            raise InputError(
                where, f"expected a link class name (letters, digits, _; not 'switch', 'C' or 'K'), got {tok[2]!r}"
            )
        if tok[2] not in classes:
            classes.append(tok[2])
        if ends[0] == ends[1] or any({ends[0], ends[1]} == {a, b} for a, b, _ in links):
            raise InputError(where, f"a second link between {tok[0]} and {tok[1]} (or a link to itself)")
        links.append((ends[0], ends[1], classes.index(tok[2])))
    if not counts["nodes"]:
        raise InputError(path, "expected 'nodes N' with N ≥ 1")
    if len(classes) > 6:
        raise InputError(path, f"{len(classes)} link classes; at most 6 are supported")
    return {"nodes": counts["nodes"], "switches": counts["switches"] or 0, "classes": classes, "links": links}


def _vertex(tok: str, counts: dict, where: str) -> int:
    m = re.match(r"^([ns])(\d+)$", tok)
    n, s = counts["nodes"], counts["switches"] or 0
    if not m:
        raise InputError(where, f"expected a node n<i> or a switch s<j>, got {tok!r}")
    i = int(m.group(2))
    if m.group(1) == "n":
        if i >= n:
            raise InputError(where, f"node {tok} beyond the {n} nodes declared")
        return i
    if i >= s:
        raise InputError(where, f"switch {tok} beyond the {s} switches declared")
    return n + i


def _matrix(r: _Reader, mt: dict, which: str, by_node: bool, names: list, complete: bool) -> Matrix:
    """A CSV matrix of pair latencies (which = 'L') or gaps ('G'): n×n, symmetric, each cell
    empty (no entry), a constant with units, a parameter name, or a sum such as
    ``2*wire + switch + 100ns``."""
    path = r.file(mt[which], f"matrix.{which}")
    rows = []
    for no, line in _lines(path):
        rows.append((no, [c.strip() for c in line.split(",")]))
    n = len(rows)
    if n == 0:
        raise InputError(path, "an empty matrix")
    interned, ids = {}, []
    for i, (no, cells) in enumerate(rows):
        if len(cells) != n:
            raise InputError(f"{path}:{no}", f"expected {n} cells (a {n}×{n} matrix), got {len(cells)}")
        for j, cell in enumerate(cells):
            where = f"{path}:{no}"
            if not cell:
                if complete and i != j:
                    raise InputError(
                        where,
                        f"column {j + 1} is empty: without [topology] every pair needs its {which} "
                        "(there is no route to fall back on)",
                    )
                ids.append(-1)
                continue
            entry = _entry(cell, which, names, f"{where}: column {j + 1}")
            ids.append(interned.setdefault(entry, len(interned)))
    for i in range(n):
        for j in range(i):
            if ids[i * n + j] != ids[j * n + i]:
                raise InputError(
                    f"{path}:{rows[i][0]}",
                    f"column {j + 1} differs from row {j + 1} column {i + 1} (the matrix must be symmetric)",
                )
    return Matrix(path, by_node, n, ids, tuple(interned))


def _entry(cell: str, which: str, names: list, where: str) -> tuple:
    const = 0.0
    terms: dict = {}
    for part in cell.split("+"):
        part = part.strip()
        m = re.match(r"^(?:(\d+)\s*\*\s*)?([A-Za-z_][A-Za-z0-9_.]*)(?:\s*\*\s*(\d+))?$", part)
        if m:
            name = m.group(2)
            if name not in names:
                what = "latency" if which == "L" else "per-byte gap"
                hint = " (L is added to every message between nodes: leave it out)" if name == "L" else ""
                raise InputError(
                    where,
                    f"unknown {what} parameter or class {name!r}{hint}; the machine's: {', '.join(names) or 'none'}",
                )
            count = int(m.group(1) or 1) * int(m.group(3) or 1)
            terms[name] = terms.get(name, 0) + count
            if terms[name] > MAX_COUNT:
                raise InputError(
                    where, f"{name} counted {terms[name]} times (at most {MAX_COUNT:,} links of a class on one route)"
                )
        else:
            const += (parse_time if which == "L" else parse_gap)(part, where)
    in_model_range(const, where)
    if len(terms) > (6 if which == "L" else 1):
        raise InputError(where, f"too many parameters in one entry ({len(terms)})")
    return (const, tuple(sorted(terms.items())))
