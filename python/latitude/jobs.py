"""Synthetic workloads: job files (StressBench / SST Ember style) as execution graphs.

    import latitude
    g = latitude.generate("cfd.job", seed=3)              # a path ...
    g = latitude.generate("[JOB] a\\n[RANKS] 0-7\\n[MOTIF] halo2d\\n")   # ... or the text
    g.report.summary()

The Rust core parses the file and emits the graph (docs/workloads.md has the language;
``latitude.generate`` is ``Graph.from_job``). ``latitude.load(path)`` generates `path`
when it is a job file, so every command that takes a graph also takes a job file.
"""

from __future__ import annotations

import os

from latitude import _core
from latitude.errors import InputError


def job_source(job: str) -> tuple[str, str | None]:
    """(path, text) of a job given as a path (text None) or as the text itself ("<job>")."""
    job = os.fspath(job)
    if "\n" in job or job.lstrip().startswith("["):
        return "<job>", job
    if not os.path.exists(job):
        raise InputError(job, "no such file or directory")
    return job, None


def check(job: str) -> str:
    """The job file as understood: one line per job and motif, every value resolved."""
    path, text = job_source(job)
    return _core.check_job(path, text=text)
