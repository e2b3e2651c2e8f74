"""Communicators of a DUMPI run. DUMPI records a communicator's creation on each member
(``Comm_split``: parent, color, key, new handle; ``Comm_dup``: parent, new handle;
dumpi/common/dumpiio.c) but not its members; they follow from every rank's records
together, so a first pass over the rank files collects the creations before any rank is
converted.

MPI creates communicators collectively, in the same order on every member of the parent,
so the k-th creation on a parent is the same call on every rank: its result is identified
by (parent, k, color) and its members are the ranks that recorded that identity, ordered by
(key, rank in the parent) as MPI_Comm_split orders them (a dup: the parent's order). Each
becomes a ``#@ comm`` line of the converted files; ``seq`` tells apart communicators with
the same members (in creation order).
"""

from __future__ import annotations

from collections import defaultdict

from latitude.errors import InputError
from latitude.formats import dumpi_format as F

WORLD = ("world",)


class Comms:
    def __init__(self, ranks: int, meta: str):
        self.ranks, self.meta = ranks, meta
        self.parent: dict[tuple, tuple] = {}
        self.entries: dict[tuple, list[tuple[int, int]]] = defaultdict(list)  # gid -> (key, world rank)
        self.number: dict[tuple, int] = {WORLD: F.COMM_WORLD}
        self._members: dict[tuple, tuple[int, ...]] = {WORLD: tuple(range(ranks))}

    def created(self, rank: int, gid: tuple, parent: tuple, key: int) -> None:
        """Rank `rank` is a member of `gid`, created from `parent` with `key`."""
        self.parent[gid] = parent
        self.entries[gid].append((key, rank))
        self.number.setdefault(gid, F.FIRST_USER_COMM + len(self.number) - 1)

    def members(self, gid: tuple) -> tuple[int, ...]:
        if gid in self._members:
            return self._members[gid]
        if gid[0] == "self":
            return (gid[1],)
        parent = self.members(self.parent[gid])
        where = {r: i for i, r in enumerate(parent)}
        strangers = [r for _, r in self.entries[gid] if r not in where]
        if strangers:
            raise InputError(self.meta, f"rank {strangers[0]} creates a communicator from one it is not a member of")
        out = tuple(r for _, r in sorted(self.entries[gid], key=lambda e: (e[0], where[e[1]])))
        self._members[gid] = out
        return out

    def header(self, rank: int) -> list[tuple]:
        """This rank's `#@ comm` lines: (handle, seq, world ranks, None)."""
        mine = [WORLD, ("self", rank)] + [g for g in self.number if g != WORLD and rank in self.members(g)]
        seen: dict[tuple, int] = defaultdict(int)
        out = []
        for gid in sorted(mine, key=self.handle):
            members = self.members(gid)
            out.append((self.handle(gid), seen[members], list(members), None))
            seen[members] += 1
        return out

    def handle(self, gid: tuple) -> int:
        return F.COMM_SELF if gid[0] == "self" else self.number[gid]
