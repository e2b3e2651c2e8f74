"""Traces other tools write, read by converting them into Latitude's own trace format.

Every converter here turns a foreign trace into one liballprof v1 file per rank with
Latitude's ``#@`` extension lines (docs/trace-format.md), written by
:mod:`latitude.formats.trace_writer`; the Rust core then schedules those files with the same
rules as a trace from ``latitude trace``. So an OTF2 archive (Score-P) becomes exactly
the graph our own tracer's records of the same calls would give.

* :mod:`latitude.formats.otf2_archive`: OTF2 archives (Score-P conventions): definitions
  (otf2_defs), events (otf2_events), calls (otf2_calls).
* :mod:`latitude.formats.foreign`: which kind a path is, and converting it for scheduling.
"""
