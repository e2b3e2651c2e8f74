"""The background network utilisation b of a Slurm cluster, from its job queue (Salimi Beni,
Hunold and Cosenza's cheap estimate of other users' network traffic).

From the running jobs (pending ones have no nodes yet) and the cluster's node count:

    b         = N_c / N_t
    b_refined = ½ (N_c / N_t + N'_c / N_a)

N_c: distinct nodes held by running jobs of at least two nodes (a one-node job sends nothing
over the network); N_t: the cluster's nodes; N'_c: the same jobs' nodes counted once per job
(a node shared by several communicating jobs weighs more); N_a: the nodes of all running jobs
counted once per job. Our own job (``SLURM_JOB_ID``) is left out: b estimates the others'.

A value is kept only when the queue read before and after the measurement give b within 0.05
(the paper's 5 % stability rule); otherwise the measurement is recorded without b.

The queue is read with ``squeue -h -t R -o '%i|%D|%N'`` (job id, node count, compressed node
list such as ``n[01-04,07],gpu3``) and the node count with ``sinfo -h -N -o %N``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from latitude.errors import InputError

SQUEUE = ["squeue", "-h", "-t", "R", "-o", "%i|%D|%N"]
SINFO = ["sinfo", "-h", "-N", "-o", "%N"]
STABLE_WITHIN = 0.05


@dataclass(frozen=True)
class Background:
    b: float
    refined: float
    jobs: int  # running jobs counted (ours left out)
    nodes: int  # N_t


def expand_hostlist(text: str, where: str = "squeue") -> list[str]:
    """Slurm's compressed host list (``n[01-03,7],login``) as host names, zero padding kept."""
    hosts: list[str] = []
    for m in re.finditer(r"([^,\[\]]*)(?:\[([^\]]*)\])?([^,\[\]]*)(?:,|$)", text.strip()):
        prefix, ranges, suffix = m.group(1), m.group(2), m.group(3)
        if ranges is None:
            if prefix or suffix:
                hosts.append(prefix + suffix)
            continue
        for part in ranges.split(","):
            lo, dash, hi = part.partition("-")
            if not lo.isdigit() or (dash and not hi.isdigit()):
                raise InputError(where, f"expected a host range like n[01-04], got {text[:80]!r}")
            width = len(lo)
            for i in range(int(lo), int(hi if dash else lo) + 1):
                hosts.append(f"{prefix}{i:0{width}d}{suffix}")
    return hosts


def parse_squeue(text: str, where: str = "squeue") -> list[tuple[str, list[str]]]:
    """(job id, its nodes) per line of `squeue -h -o '%i|%D|%N'`."""
    jobs = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.strip().split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            raise InputError(f"{where}:{n}", f"expected JOBID|NODES|NODELIST, got {line[:80]!r}")
        nodes = expand_hostlist(parts[2], f"{where}:{n}") if parts[2].strip() not in ("", "(null)") else []
        jobs.append((parts[0].strip(), nodes))
    return jobs


def background(jobs: list[tuple[str, list[str]]], total_nodes: int, own_job: str | None = None) -> Background:
    """b and the refined b of the running `jobs` on a cluster of `total_nodes` nodes."""
    if total_nodes < 1:
        raise InputError("sinfo", "the cluster has no nodes")
    others = [(j, nodes) for j, nodes in jobs if own_job is None or j.split("_")[0] != own_job]
    talking = [set(nodes) for _, nodes in others if len(set(nodes)) >= 2]
    n_c = len(set().union(*talking)) if talking else 0
    n_c_dup = sum(len(s) for s in talking)
    n_a = sum(len(set(nodes)) for _, nodes in others)
    b = n_c / total_nodes
    refined = 0.5 * (b + (n_c_dup / n_a if n_a else 0.0))
    return Background(b, refined, len(others), total_nodes)


def background_now(timeout: float = 10) -> Background | None:
    """b of the cluster this runs on, or None without a reachable Slurm."""
    if not shutil.which("squeue") or not shutil.which("sinfo"):
        return None
    try:
        q = subprocess.run(SQUEUE, capture_output=True, text=True, timeout=timeout)
        s = subprocess.run(SINFO, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if q.returncode != 0 or s.returncode != 0:
        return None
    nodes = {h for line in s.stdout.split() for h in expand_hostlist(line, "sinfo")}
    return background(parse_squeue(q.stdout), len(nodes), os.environ.get("SLURM_JOB_ID"))


def stable(before: Background | None, after: Background | None) -> Background | None:
    """The b of a measurement: `after` when both reads agree within STABLE_WITHIN, else None."""
    if before is None or after is None or abs(before.refined - after.refined) > STABLE_WITHIN:
        return None
    return after
