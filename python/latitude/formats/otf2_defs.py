"""The global definitions of an OTF2 archive, as the converter needs them: which location is
which MPI rank, which regions are MPI calls, every MPI communicator's members as world
ranks, and the clock.

Score-P's conventions (which other OTF2 writers for MPI follow):

* one group of type COMM_LOCATIONS with paradigm MPI lists the location of every rank, in
  rank order: member i is the location of ``MPI_COMM_WORLD`` rank i;
* a communicator refers to a group of type COMM_GROUP whose members are indices into that
  list (world ranks), or to a COMM_SELF group (every rank alone); an inter-communicator
  (OTF2 3) to two such groups;
* every communicator created during the run has its own definition, the same on all ranks,
  so its reference identifies it across ranks;
* MPI calls are regions with paradigm MPI named after the C function (``MPI_Send``);
* timestamps count ticks of ``timer_resolution`` per second from ``global_offset``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from latitude.errors import InputError


def mpi_name(name: str) -> str | None:
    """The C name of an MPI function region (``mpi_allreduce_`` -> ``MPI_Allreduce``), else None."""
    low = name.strip().lower().rstrip("_")
    if not low.startswith("mpi_") or len(low) < 5:
        return None
    return "MPI_" + low[4].upper() + low[5:]


@dataclass
class CommDef:
    """An MPI communicator: members as world ranks (None for a COMM_SELF group: each rank
    alone), and for an inter-communicator the second group."""

    name: str
    members: tuple | None
    other: tuple | None = None
    _pos: dict = field(default_factory=dict, repr=False)

    def position(self, rank: int, group: tuple) -> int | None:
        key = id(group)
        if key not in self._pos:
            self._pos[key] = {w: i for i, w in enumerate(group)}
        return self._pos[key].get(rank)

    def view(self, rank: int):
        """(local group, remote group or None) as `rank` sees it, or None if not a member."""
        if self.members is None:
            return (rank,), None
        if self.position(rank, self.members) is not None:
            return self.members, self.other
        if self.other is not None and self.position(rank, self.other) is not None:
            return self.other, self.members
        return None


@dataclass
class CommView:
    """A communicator as one rank uses it."""

    handle: int
    me: int  # this rank's rank in the (local) group
    arg: str  # handle,rank,size for the call line
    size: int  # the group peers are named in (remote group of an inter-communicator)
    peers: tuple
    inter: bool


class Definitions:
    def __init__(self, anchor: str, defs, creator: str):
        self.anchor = anchor
        self.creator = creator or "an OTF2 writer"
        clock = defs.clock_properties
        self.resolution = int(clock.timer_resolution)
        self.offset = int(clock.global_offset)
        if self.resolution <= 0:
            raise InputError(
                anchor, f"the clock properties give a timer resolution of {self.resolution} ticks per second"
            )
        self.ranks = self._rank_locations(defs)
        self.rank_of = {loc: r for r, loc in enumerate(self.ranks)}
        self.location_names = {loc._ref: str(loc.name) for loc in defs.locations}
        self.events = {loc._ref: int(loc.number_of_events or 0) for loc in defs.locations}
        self.siblings = self._threads(defs)
        self.regions = self._regions(defs)
        self.comms = self._comms(defs)

    # -- ranks ---------------------------------------------------------------------------

    def _rank_locations(self, defs) -> list[int]:
        from otf2.enums import GroupType, Paradigm

        groups = [g for g in defs.groups if g.group_type == GroupType.COMM_LOCATIONS and g.paradigm == Paradigm.MPI]
        if not groups:
            raise InputError(
                self.anchor,
                "no MPI rank mapping: the archive has no group of type COMM_LOCATIONS with paradigm MPI "
                "(the group Score-P writes listing the location of every MPI rank); is this an MPI trace?",
            )
        members = [m._ref for m in groups[-1].members]
        if len(set(members)) != len(members):
            raise InputError(self.anchor, "the MPI rank mapping (COMM_LOCATIONS group) lists a location twice")
        return members

    def _threads(self, defs) -> dict[int, list[int]]:
        """Other locations of each rank's process (OpenMP or other threads)."""
        by_group: dict[int, list[int]] = {}
        for loc in defs.locations:
            by_group.setdefault(loc.group._ref, []).append(loc._ref)
        group_of = {loc._ref: loc.group._ref for loc in defs.locations}
        return {r: [x for x in by_group.get(group_of.get(loc), []) if x != loc] for r, loc in enumerate(self.ranks)}

    def location(self, rank: int) -> str:
        loc = self.ranks[rank]
        return f"rank {rank} (location {loc} '{self.location_names.get(loc, '?')}')"

    def place(self, origin: str, rank: int) -> tuple[str, str]:
        """(where, prefix) of an error at a converted call whose origin comment is
        `NAME EVENT TICKS` (see the converter): the archive, and the call spelled out."""
        name, pos, ticks = origin.split()
        at = f"event {pos}, " if pos != "-" else ""
        return self.anchor, f"{self.location(rank)}, {name} ({at}{(int(ticks) - self.offset) / self.resolution:.9f} s)"

    # -- regions ---------------------------------------------------------------------------

    def _regions(self, defs) -> list[str | None]:
        from otf2.enums import Paradigm

        top = max((r._ref for r in defs.regions), default=-1)
        names: list[str | None] = [None] * (top + 1)
        for reg in defs.regions:
            name = mpi_name(str(reg.name))
            if name is None and reg.paradigm == Paradigm.MPI and reg.canonical_name is not None:
                name = mpi_name(str(reg.canonical_name))
            names[reg._ref] = name
        return names

    # -- communicators ------------------------------------------------------------------------

    def _group_ranks(self, group, comm_name: str) -> tuple | None:
        from otf2.enums import GroupType

        if group.group_type == GroupType.COMM_SELF:
            return None
        if group.group_type not in (GroupType.COMM_GROUP, GroupType.COMM_LOCATIONS):
            raise InputError(
                self.anchor, f"communicator '{comm_name}' refers to a group of type {group.group_type.name}"
            )
        out = []
        for m in group.members:
            r = self.rank_of.get(getattr(m, "_ref", None))
            if r is None:
                raise InputError(self.anchor, f"communicator '{comm_name}' has a member that is not an MPI rank")
            out.append(r)
        return tuple(out)

    def _comms(self, defs) -> dict[int, CommDef]:
        from otf2.definitions import InterComm
        from otf2.enums import Paradigm

        out: dict[int, CommDef] = {}
        for c in defs.comms:
            name = str(c.name)
            if isinstance(c, InterComm):
                a, b = self._group_ranks(c.groupA, name), self._group_ranks(c.groupB, name)
                out[c._ref] = CommDef(name, a, b)
            elif c.group.paradigm == Paradigm.MPI:
                out[c._ref] = CommDef(name, self._group_ranks(c.group, name))
        return out

    def comm_views(self, rank: int):
        """This rank's communicators: {reference: CommView} and their header lines
        (handle, seq, world, remote). `seq` counts earlier communicators with the same
        members, as `#@ comm` lines do, so equal member lists stay distinct."""
        views: dict[int, CommView] = {}
        header = []
        seen: dict[tuple, int] = {}
        for ref in sorted(self.comms):
            v = self.comms[ref].view(rank)
            if v is None:
                continue
            local, remote = v
            key = (local, remote)
            seq = seen.get(key, 0)
            seen[key] = seq + 1
            me = 0 if self.comms[ref].members is None else self.comms[ref].position(rank, local)
            peers = remote if remote is not None else local
            views[ref] = CommView(ref, me, f"{ref},{me},{len(local)}", len(peers), peers, remote is not None)
            header.append((ref, seq, local, remote))
        return views, header
