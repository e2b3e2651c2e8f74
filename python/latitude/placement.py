"""Rank placements (rank → node maps) and the files that carry them.

A placement gives the node of every rank. On a machine file with ``[nodes]`` it decides which
pairs of ranks share a node and how far apart the others are (docs/network.md), so it is an
input of the prediction like any parameter: ``params.with_placement(nodes)`` is the same
machine with another map, priced by the engine without reloading or re-planning the graph.

Three file formats, each one a user can launch with:

``list``
    one node id per rank in rank order (whitespace separated, ``#`` comments): the machine
    file's ``placement_file`` format.
``rankfile``
    an Open MPI rankfile, ``rank R=HOST slot=S`` per rank (``mpirun --rankfile FILE``).
``slurm``
    a Slurm host list for ``srun --distribution=arbitrary`` (``SLURM_HOSTFILE=FILE``): one
    host per line, line i = the host of rank i.

Hosts are named ``<prefix><node id>`` (prefix ``node``) unless a host list is given (node i =
the i-th host). Reading a rankfile or a Slurm list maps a host back through the same list, or
without one takes the number a host name ends with as its node id.

Every map is checked against the graph and the machine: one node per rank (no rank missing or
given twice), node ids inside the network, at most ``ranks_per_node`` ranks per node. A bad
map is one line ``<file>:<line>: <what was expected>``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass

from latitude.errors import InputError
from latitude.outputs import write_text

FORMATS = ("list", "rankfile", "slurm")
MAX_BYTES = 64 << 20
_RANKFILE = re.compile(r"^rank\s+([0-9]+)\s*=\s*(\S+)(?:\s+slot\s*=\s*(\S+))?\s*$")
_TRAILING = re.compile(r"([0-9]+)$")
_NUMBER = re.compile(r"[0-9]+")
MAX_NODE = 2**32 - 2  # node ids are 32-bit in the core


@dataclass(frozen=True)
class MapFile:
    """A map as read: node of each rank, and the line each rank was given on."""

    path: str
    nodes: tuple
    lines: tuple


def _read_lines(path: str):
    """(line number, text without comment) of the non-empty lines of `path`."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise InputError(path, "is a directory, expected a placement file")
    try:
        if os.path.getsize(path) > MAX_BYTES:
            raise InputError(path, f"larger than {MAX_BYTES >> 20} MiB; expected a placement file")
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as err:
        raise InputError(path, f"cannot read the placement file: {err.strerror or err}") from None
    text = data.decode("utf-8", errors="replace")
    for no, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            yield no, line


def _host_node(host: str, hosts: list | None, where: str) -> int:
    if hosts is not None:
        try:
            return hosts.index(host)
        except ValueError:
            raise InputError(where, f"host {host!r} is not in the host list") from None
    m = _TRAILING.search(host)
    if not m:
        raise InputError(where, f"host {host!r} does not end in a node number (give a host list)")
    return _node_id(m.group(1), where)


def _node_id(text: str, where: str) -> int:
    n = int(text)
    if n > MAX_NODE:
        raise InputError(where, f"node {text} is beyond the largest node id {MAX_NODE}")
    return n


def detect_format(path: str) -> str:
    """The format of a map file from its first line."""
    for _, line in _read_lines(path):
        if line.startswith("rank"):
            return "rankfile"
        return "list" if all(_NUMBER.fullmatch(t) for t in line.split()) else "slurm"
    raise InputError(path, "an empty placement file (expected one node per rank)")


def read_map(path: str, fmt: str = "auto", hosts: list | None = None) -> MapFile:
    """Read a map file in `fmt` (list, rankfile, slurm, or auto: by its first line); the
    ranks it covers are checked later (:func:`check`), against the graph and machine."""
    path = os.fspath(path)
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise InputError("--format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    nodes, lines = [], []
    if fmt == "rankfile":
        given: dict = {}
        for no, line in _read_lines(path):
            where = f"{path}:{no}"
            m = _RANKFILE.match(line)
            if not m:
                raise InputError(where, f"expected 'rank R=HOST slot=S' (an Open MPI rankfile line), got {line!r}")
            r = int(m.group(1))
            if r in given:
                raise InputError(where, f"rank {r} is placed twice (first on line {given[r][1]})")
            given[r] = (_host_node(m.group(2), hosts, where), no)
        missing = next((r for r in range(len(given)) if r not in given), None)
        if missing is not None:
            raise InputError(path, f"rank {missing} is not placed (ranks 0..{len(given) - 1} expected)")
        nodes = [given[r][0] for r in range(len(given))]
        lines = [given[r][1] for r in range(len(given))]
    else:
        for no, line in _read_lines(path):
            for tok in line.split():
                if fmt == "list":
                    if not _NUMBER.fullmatch(tok):
                        raise InputError(f"{path}:{no}", f"expected node ids (integers ≥ 0), one per rank, got {tok!r}")
                    nodes.append(_node_id(tok, f"{path}:{no}"))
                else:
                    nodes.append(_host_node(tok, hosts, f"{path}:{no}"))
                lines.append(no)
    if not nodes:
        raise InputError(path, "an empty placement file (expected one node per rank)")
    return MapFile(path, tuple(nodes), tuple(lines))


def check(m: MapFile, ranks: int, per_node: int, capacity: int | None) -> tuple:
    """The map's nodes if it fits: one node per rank of the graph, nodes below `capacity`
    (None: any), at most `per_node` ranks per node."""
    if len(m.nodes) != ranks:
        at = f"{m.path}:{m.lines[min(len(m.lines), ranks) - 1]}" if len(m.nodes) > ranks else m.path
        raise InputError(at, f"places {len(m.nodes)} ranks, the graph has {ranks}")
    load: Counter = Counter()
    for r, (n, no) in enumerate(zip(m.nodes, m.lines)):
        if capacity is not None and n >= capacity:
            raise InputError(f"{m.path}:{no}", f"rank {r} is placed on node {n}, but the network has {capacity} nodes")
        load[n] += 1
        if load[n] > per_node:
            raise InputError(f"{m.path}:{no}", f"node {n} gets more than ranks_per_node = {per_node} ranks")
    return m.nodes


def host_names(nodes, hosts: list | None = None, prefix: str = "node") -> list:
    if hosts is not None:
        top = max(nodes, default=0)
        if top >= len(hosts):
            raise InputError("--hosts", f"{len(hosts)} hosts, but the map uses node {top}")
        return [hosts[n] for n in nodes]
    return [f"{prefix}{n}" for n in nodes]


def render(nodes, fmt: str = "list", hosts: list | None = None, comment: str = "") -> str:
    """A map as text in `fmt`."""
    if fmt not in FORMATS:
        raise InputError("--format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    head = "".join(f"# {c}\n" for c in comment.splitlines()) if comment and fmt != "slurm" else ""
    names = host_names(nodes, hosts)
    if fmt == "list":
        return head + "".join(f"{n}\n" for n in nodes)
    if fmt == "slurm":
        return "".join(f"{h}\n" for h in names)
    slot: Counter = Counter()
    out = []
    for r, (n, h) in enumerate(zip(nodes, names)):
        out.append(f"rank {r}={h} slot={slot[n]}\n")
        slot[n] += 1
    return head + "".join(out)


def write_map(path: str, nodes, fmt: str = "list", hosts: list | None = None, comment: str = "") -> None:
    """Write a map atomically (a temporary file renamed onto `path`)."""
    write_text(path, render(nodes, fmt, hosts, comment), "placement")


def read_hosts(path: str) -> list:
    """A host list (one host name per line; node i = the i-th host)."""
    hosts = [line.split()[0] for _, line in _read_lines(path)]
    dup = next((h for h, c in Counter(hosts).items() if c > 1), None)
    if dup:
        raise InputError(path, f"host {dup!r} is listed twice")
    if not hosts:
        raise InputError(path, "an empty host list")
    return hosts


def block(ranks: int, per_node: int) -> tuple:
    return tuple(r // per_node for r in range(ranks))


def round_robin(ranks: int, per_node: int) -> tuple:
    used = max(1, -(-ranks // per_node))
    return tuple(r % used for r in range(ranks))
