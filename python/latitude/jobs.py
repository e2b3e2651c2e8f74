"""Synthetic workloads: job files (StressBench / SST Ember style) as execution graphs.

    import latitude
    g = latitude.generate("cfd.job", seed=3)              # a path ...
    g = latitude.generate("[JOB] a\\n[RANKS] 0-7\\n[MOTIF] halo2d\\n")   # ... or the text
    g.generate_report.summary()

The Rust core parses the file and emits the graph (docs/workloads.md has the language);
``latitude.load(path)`` calls :func:`generate` when `path` is a job file, so every command
that takes a graph also takes a job file.
"""

from __future__ import annotations

import os

from latitude.errors import InputError
from latitude.traces import GraphReport
from latitude.units import fmt_size


def is_job_file(path: str) -> bool:
    """A `.job` file, or one whose first statement (after blank and `#` lines) is a
    `[SECTION]` line."""
    if os.path.isdir(path):
        return False
    if path.endswith(".job"):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    for line in head.splitlines():
        text = line.split(b"#", 1)[0].strip()
        if text:
            return text.startswith(b"[")
    return False


def _looks_like_text(spec: str) -> bool:
    return "\n" in spec or spec.lstrip().startswith("[")


class GenerateReport(GraphReport):
    """What generation did: the core's stats dict plus the graph's size."""

    def summary(self) -> str:
        """One line: jobs with their motifs, then the graph's size."""
        jobs = []
        for j in self.stats["jobs"]:
            motifs = ", ".join(
                m["motif"] + (f"/{m['alg']}" if m["alg"] else "") + f" ×{m['calls']:,}" for m in j["motifs"]
            )
            jobs.append(f"{j['name']} ({j['ranks']:,} ranks, {j['iterations']:,} iterations: {motifs})")
        i = self.info
        return (
            f"{len(jobs)} job{'s' if len(jobs) != 1 else ''} on {self.stats['world']:,} ranks: "
            + "; ".join(jobs)
            + f" → {i['vertices']:,} ops, {i['messages']:,} messages ({fmt_size(i['bytes'])})"
        )


def generate(job: str, seed: int = 1, coll: str = "default", progress: bool = True):
    """The graph of a job file. `job` is a path or the job text itself; `seed` drives the
    compute motifs' distributions; `coll` chooses algorithms for collective motifs without
    `alg=` (the `--coll` syntax). Returns a latitude.Graph with `.generate_report`."""
    from latitude.api import Graph, _core

    job = os.fspath(job)
    if _looks_like_text(job):
        path, text = "<job>", job
    else:
        if not os.path.exists(job):
            raise InputError(job, "no such file or directory")
        path, text = job, None
    if seed < 0 or seed >= 2**64:
        raise InputError("--seed", f"expected a seed in 0..2^64-1, got {seed}")
    core = _core()
    if progress:
        from latitude.progress import progress as bar

        with bar("generating") as update:

            def report(phase, done, total):
                if phase == "generating":
                    update(done, total)

            handle, stats = core.generate_job(path, text=text, seed=seed, coll=coll, progress=report)
    else:
        handle, stats = core.generate_job(path, text=text, seed=seed, coll=coll)
    graph = Graph(handle, path if text is None else None)
    graph.generate_report = GenerateReport(stats, graph.info)
    return graph


def check(job: str) -> str:
    """The job file as understood: one line per job and motif, every value resolved."""
    from latitude.api import _core

    job = os.fspath(job)
    if _looks_like_text(job):
        return _core().check_job("<job>", text=job)
    if not os.path.exists(job):
        raise InputError(job, "no such file or directory")
    return _core().check_job(job)
