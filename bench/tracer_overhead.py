#!/usr/bin/env python3
"""Tracer overhead per app: runtime without and with the PMPI tracer, same machine, same
run of this script.

Each app runs --runs times in each mode, the modes interleaved (so load drifts hit both
alike); the table shows medians of the app's own timed region ("elapsed_s", between two
barriers after setup; LAMMPS: its "Loop time"; HPCC: the whole run) and of the whole
launcher run, calls and bytes per call of the trace, and bytes per message of the graph the
trace schedules into. Two traced modes, each with the environment `latitude trace` gives the
ranks: compressed, `latitude trace`'s default (gz x: traced / untraced wall; gz B/msg), and
plain text, `latitude trace --plain` (plain x, plain B/msg, and the per-call columns). The apps are the motif apps, apps/polls (a
polling loop as HPCC's RandomAccess makes), and where installed Debian's LAMMPS, HPCC
(N = 1000, P x Q = 1 x 2) and Quantum ESPRESSO (pw.x, bulk Si). 2 ranks by default (the
machine is shared with builds: keep it small, repeat).

    python3 bench/tracer_overhead.py [--runs 7] [--np 2] [--mpicc mpicc] [--launcher mpirun]
                                     [--quick] [--only APP] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests"))
import realapps  # noqa: E402  (the HPCC and QE inputs the tests use)
from latitude import tracer  # noqa: E402
from trace_bytes import messages  # noqa: E402  (messages of the scheduled graph)

# app, arguments sized for ~0.3-1 s of timed region on 2 ranks of a small machine
CASES = [
    ("halo2d", ["--nx", "1024", "--ny", "1024", "--iters", "400", "--mode", "nonblocking"]),
    ("halo2d", ["--nx", "1024", "--ny", "1024", "--iters", "400", "--mode", "blocking"]),
    ("sweep3d", ["--nx", "64", "--ny", "64", "--nz", "128", "--kba", "4", "--angles", "8"]),
    ("alltoall", ["--n", "1024", "--iters", "20"]),
    ("persistent", ["--n", "100000", "--iters", "4000"]),
    ("subcomm", ["--iters", "40000", "--n", "256"]),
    ("pingpong", ["--sizes", "8,1024,65536", "--iters", "20000"]),
    # polling as HPCC's RandomAccess does it (many polls per message), and call-bound (a message
    # every ~2 us of work: the cost of the real records dominates, as for subcomm)
    ("polls", ["--iters", "4000", "--work", "3000"]),
    ("polls", ["--iters", "20000", "--work", "100"]),
]
QUICK = {"--iters": lambda v: str(max(1, int(v) // 10)), "steps": lambda v: str(max(5, int(v) // 10))}
# LAMMPS (Debian's lmp, if installed): the LJ benchmark; its timed region is "Loop time"
LAMMPS = ("lmp", ["-in", str(ROOT / "bench/lammps/in.lj"), "-log", "none", "-var", "steps", "50"])
TIMED = re.compile(r"elapsed_s ([\d.]+)|Loop time of ([\d.]+)|PWSCF\s*:.*?([\d.]+)s WALL")


def build_apps(dest: Path, mpicc: str) -> None:
    subprocess.run(["make", "-s", "-C", str(ROOT / "apps"), f"MPICC={mpicc}", f"BIN={dest}"], check=True)


def run_once(cmd: list[str], env: dict, cwd: Path | None = None) -> tuple[float, float]:
    """(app's timed region, whole run) in seconds; the whole run for apps that report none."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
    m = TIMED.search(proc.stderr + proc.stdout)
    return (float(next(g for g in m.groups() if g)) if m else wall), wall


def measure(
    app: Path,
    args: list[str],
    launch: list[str],
    family: str,
    lib: Path,
    tracedir: Path,
    runs: int,
    cwd=None,
    compressed: bool = True,
) -> dict:
    argv = [*launch, str(app), *args]  # app: a path, or a command name such as lmp
    gzdir = tracedir.with_name(tracedir.name + "-gz")
    gzdir.mkdir(exist_ok=True)
    cmds = {"plain": (argv, dict(os.environ))}
    for mode, d, compress in (("traced", tracedir, False), ("gz", gzdir, True)):  # "traced": --plain
        cmds[mode] = tracer.launch_command(argv, family, tracer.trace_env(lib, d, compress=compress))
    modes = ("plain", "traced", "gz") if compressed else ("plain", "traced")
    times = {m: [] for m in modes}
    dirs = {"traced": tracedir, "gz": gzdir}
    for i in range(runs):
        order = modes[i % len(modes) :] + modes[: i % len(modes)]  # each mode first in turn
        for mode in order:
            for f in tracer.trace_files(dirs[mode]) if mode in dirs else []:
                f.unlink()
            times[mode].append(run_once(*cmds[mode], cwd))
    s = tracer.summarize(tracedir)
    nmsg = messages(tracedir)
    gz_bytes = tracer.summarize(gzdir).bytes if compressed else 0
    med = {m: (statistics.median(t[0] for t in v), statistics.median(t[1] for t in v)) for m, v in times.items()}
    # runs i of all modes are adjacent in time: their ratio sees the same machine load
    paired = statistics.median(t[0] / p[0] for p, t in zip(times["plain"], times["traced"]))
    gz = (
        {
            "gz_wall_ratio": med["gz"][1] / med["plain"][1],
            "gz_wall_ratio_paired": statistics.median(t[1] / p[1] for p, t in zip(times["plain"], times["gz"])),
            "gz_bytes": gz_bytes,
            "gz_bytes_per_message": gz_bytes / nmsg if nmsg else 0.0,
        }
        if compressed
        else {}
    )
    return {
        "app": app.name,
        "args": " ".join(args),
        "ranks": s.ranks,
        "plain_s": med["plain"][0],
        "traced_s": med["traced"][0],
        "overhead_pct": 100 * (med["traced"][0] / med["plain"][0] - 1),
        "overhead_paired_pct": 100 * (paired - 1),
        "plain_wall_s": med["plain"][1],
        "traced_wall_s": med["traced"][1],
        "wall_overhead_pct": 100 * (med["traced"][1] / med["plain"][1] - 1),
        "wall_ratio": med["traced"][1] / med["plain"][1],
        "wall_ratio_paired": statistics.median(t[1] / p[1] for p, t in zip(times["plain"], times["traced"])),
        "calls": s.calls,
        "folded_polls": s.folded_polls,
        "bytes": s.bytes,
        "bytes_per_call": s.bytes / s.calls if s.calls else 0.0,
        "messages": nmsg,
        "bytes_per_message": s.bytes / nmsg if nmsg else 0.0,
        "runs": runs,
        **gz,
        "samples": times,
    }


# single rank, call-bound: the cost per traced call without any interplay between ranks
PER_CALL = ("persistent", ["--n", "64", "--halo", "1", "--iters", "200000"])


def per_call_ns(
    app: Path, launcher: str, family: str, lib: Path, tracedir: Path, runs: int
) -> tuple[float, float, int]:
    """The cost of one traced call, plain and compressed trace (ns), and the calls measured."""
    tracedir.mkdir(exist_ok=True)
    r = measure(app, PER_CALL[1], [launcher, "-np", "1"], family, lib, tracedir, runs)
    cost = {
        mode: statistics.median(t[0] - p[0] for p, t in zip(r["samples"]["plain"], r["samples"][mode]))
        / r["calls"]
        * 1e9
        for mode in ("traced", "gz")
    }
    return cost["traced"], cost["gz"], r["calls"]


def label(r: dict) -> str:
    if r["app"] == "lmp":
        return "LAMMPS in.lj (32k atoms)"
    if r["app"] in ("hpcc", "pw.x"):
        return {"hpcc": "HPCC (N 1000, 1x2)", "pw.x": "QE pw.x (Si, 2 atoms)"}[r["app"]]
    m = re.search(r"--(mode|variant|work) (\S+)", r["args"])
    what = m and (f"work {m.group(2)}" if m.group(1) == "work" else m.group(2))
    return r["app"] + (f" ({what})" if what else "")


def print_table(rows: list[dict]) -> None:
    head = (
        f"{'app':24} {'without_s':>10} {'with_s':>10} {'overhead':>9} {'paired':>8} "
        f"{'wall_ovh':>9} {'plain x':>7} {'expected':>9} {'calls':>10} {'calls/s':>9} {'B/call':>7} "
        f"{'plain B/msg':>11} {'gz x':>6} {'gz B/msg':>8}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        rate = r["calls"] / r["ranks"] / r["plain_s"] if r["plain_s"] else 0
        print(
            f"{label(r):24} {r['plain_s']:10.4f} {r['traced_s']:10.4f} "
            f"{r['overhead_pct']:8.1f}% {r['overhead_paired_pct']:7.1f}% "
            f"{r['wall_overhead_pct']:8.1f}% {r['wall_ratio']:7.3f} {r.get('expected_pct', 0):8.2f}% {r['calls']:10d} "
            f"{rate:9.0f} {r['bytes_per_call']:7.1f} {r['bytes_per_message']:11.1f} "
            f"{r.get('gz_wall_ratio', 0):6.3f} {r.get('gz_bytes_per_message', 0):8.1f}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per mode (median; default 7)")
    ap.add_argument("--np", type=int, default=2, help="ranks (default 2)")
    ap.add_argument("--mpicc", default="mpicc")
    ap.add_argument("--launcher", default="mpirun")
    ap.add_argument("--quick", action="store_true", help="a tenth of the iterations")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--no-lammps", action="store_true", help="skip the LAMMPS case")
    ap.add_argument("--only", metavar="APP", action="append", help="run only this app (repeatable; lmp for LAMMPS)")
    a = ap.parse_args()
    if a.runs < 1:
        ap.error("--runs must be >= 1")
    family = tracer.launcher_family([a.launcher])
    info = tracer.probe_mpi(tracer.find_mpicc([a.launcher], shutil.which(a.mpicc) and a.mpicc))
    lib = tracer.build_tracer(info)
    launch = [a.launcher, "-np", str(a.np)]
    if family == "openmpi":
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    rows = []
    with tempfile.TemporaryDirectory(prefix="latitude-bench-") as tmp:
        apps = Path(tmp) / "apps"
        build_apps(apps, info.mpicc)
        cases = [(apps / app, args, None) for app, args in CASES]
        if shutil.which(LAMMPS[0]) and family == "openmpi" and not a.no_lammps:
            cases.append((Path(LAMMPS[0]), LAMMPS[1], None))
        if family == "openmpi":  # Debian's packages link Open MPI
            if realapps.have_hpcc():
                cmd, cwd = realapps.hpcc_case(Path(tmp) / "hpcc")
                cases.append((Path(cmd[0]), cmd[1:], cwd))
            if realapps.have_qe():
                cmd, cwd = realapps.qe_case(Path(tmp) / "qe")
                cases.append((Path(cmd[0]), cmd[1:], cwd))
        if a.only:
            cases = [c for c in cases if c[0].name in a.only]
        for app, args, cwd in cases:
            if a.quick:
                args = [QUICK[args[i - 1]](v) if i and args[i - 1] in QUICK else v for i, v in enumerate(args)]
            tracedir = Path(tmp) / f"t-{len(rows)}"
            tracedir.mkdir()
            rows.append(measure(app, args, launch, family, lib, tracedir, a.runs, cwd))
            print(f"  {label(rows[-1])}: {rows[-1]['overhead_pct']:+.1f} %", file=sys.stderr)
        cost, cost_gz, n = per_call_ns(apps / PER_CALL[0], a.launcher, family, lib, Path(tmp) / "percall", a.runs)
    for r in rows:  # calls/s per rank x cost per call; ranks run in parallel
        r["expected_pct"] = 100 * r["calls"] / r["ranks"] * cost * 1e-9 / r["plain_s"]
    print(
        f"tracer overhead, {a.np} ranks, {info.family} ({info.mpicc}), {a.runs} runs per "
        "mode, interleaved. gz x / gz B/msg: a compressed trace, latitude trace's default (wall of "
        "the medians of the whole launcher run, traced / untraced; trace bytes per message of the "
        "scheduled graph); plain x / plain B/msg: the same for a plain trace (latitude trace --plain), "
        "which the other columns are of. overhead: of the medians of the app's timed region; paired: "
        "median of the per-pair ratios (run i with / run i without, adjacent in time); "
        "wall_ovh: of the medians of the whole launcher run; expected: calls/s per rank x "
        "cost per call; calls/s: per rank (polls folded into '#@ polls' records count)"
    )
    print_table(rows)
    print(
        f"cost per traced call: {cost_gz:.0f} ns compressed (the default), {cost:.0f} ns plain (1 rank, {PER_CALL[0]} "
        f"{' '.join(PER_CALL[1])}, {n} calls, median of {a.runs} paired runs)"
    )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
