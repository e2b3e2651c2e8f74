#!/usr/bin/env python3
"""Issue 6 study: `latitude validate` on five applications with 2 ranks, ΔL = 0:200us:9, 5 runs
per point (the LLAMP paper's Table II on this machine). Needs a quiet machine:

    flock -x /work/.quiet.lock python3 bench/validation.py [--apps cg,lammps] [--reps 5]
        [--delta-L 0:200us:9] [-o latitude-validation] [--docs docs/validation]

Each application gets its own `latitude validate` (3 traces at ΔL = 0 of which the median
one is used, calibration under the injector from 3 runs combined by per-size medians,
prediction over the grid, interleaved injected runs). The table printed at the end
is the one in docs/validation.md; --docs copies each app's plot and CSV there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APPS_DIR = os.path.join(ROOT, "apps")
LAMMPS_IN = os.path.join(ROOT, "bench", "lammps", "in.lj")

# name -> (title, program and arguments); every run is 1-2 s at ΔL = 0 (LAMMPS ~9 s)
APPS = {
    "halo2d": (
        "halo2d + allreduce (1024², 2000 iterations, allreduce every iteration)",
        [f"{APPS_DIR}/halo2d", "--nx", "1024", "--ny", "1024", "--iters", "2000", "--allreduce-every", "1"],
    ),
    "sweep3d": (
        "sweep3d wavefront (128×128×512, KBA 4, 12 angles, 8 octants)",
        [f"{APPS_DIR}/sweep3d", "--nx", "128", "--ny", "128", "--nz", "512", "--kba", "4", "--angles", "12"],
    ),
    "cg": ("CG (512², 2000 iterations: halo + 2 allreduces each)", [f"{APPS_DIR}/cg", "--n", "512", "--iters", "2000"]),
    "alltoall": (
        "alltoall transposes (1024², 50 iterations)",
        [f"{APPS_DIR}/alltoall", "--n", "1024", "--iters", "50"],
    ),
    "lammps": (
        "LAMMPS LJ melt (Debian lmp, 40×20×20 fcc cells, 500 steps)",
        [
            "lmp",
            "-in",
            LAMMPS_IN,
            "-var",
            "x",
            "2",
            "-var",
            "y",
            "1",
            "-var",
            "z",
            "1",
            "-var",
            "steps",
            "500",
            "-log",
            "none",
        ],
    ),
}


def run_app(name: str, a, outdir: str) -> dict:
    title, prog = APPS[name]
    cmd = [
        sys.executable,
        "-m",
        "latitude",
        "validate",
        "--delta-L",
        a.delta_L,
        "--reps",
        str(a.reps),
        "--traces",
        str(a.traces),
        "-o",
        outdir,
        "--json",
        "--title",
        title,
        "--",
        "mpirun",
        "-np",
        "2",
        *prog,
    ]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    print(f"== {name}: {' '.join(cmd[3:])}", file=sys.stderr, flush=True)
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=outdir, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: latitude validate exited with {proc.returncode}")
    s = json.loads(proc.stdout)
    s["name"], s["title"], s["wall_s"] = name, title, time.perf_counter() - t
    s["command"] = "latitude validate " + " ".join(cmd[4:]).replace(ROOT + "/", "")
    return s


def row(s: dict) -> str:
    pts = s["points"]
    p0, pn = pts[0], pts[-1]
    worst = max(pts, key=lambda p: abs(p["error_pct"]))
    return (
        f"| {s['name']} | {p0['mean_us'] / 1e3:.1f} ± {p0['std_us'] / 1e3:.1f} | {p0['predicted_us'] / 1e3:.1f} "
        f"| {pn['mean_us'] / 1e3:.1f} ± {pn['std_us'] / 1e3:.1f} | {pn['predicted_us'] / 1e3:.1f} "
        f"| {p0['lambda_L']}–{pn['lambda_L']} | {worst['error_pct']:+.2f} % | **{100 * s['rrmse']:.2f} %** "
        f"| {'yes' if s['output_identical'] else 'NO'} |"
    )


def table(results: list) -> str:
    head = (
        "| app | measured ΔL=0 (ms) | predicted | measured ΔL=200µs (ms) | predicted | λ_L | worst point "
        "| RRMSE | output identical |\n|---|---|---|---|---|---|---|---|---|"
    )
    return "\n".join([head, *map(row, results)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default=",".join(APPS), help="comma list of %(default)s")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--delta-L", default="0:200us:9")
    ap.add_argument("--traces", type=int, default=3, help="traced runs per app, the median one used (default 3)")
    ap.add_argument("-o", "--output", default="latitude-validation")
    ap.add_argument("--docs", metavar="DIR", help="copy each app's validation.png/.csv here as APP.png/.csv")
    a = ap.parse_args()
    names = [n.strip() for n in a.apps.split(",") if n.strip()]
    unknown = [n for n in names if n not in APPS]
    if unknown:
        ap.error(f"unknown app(s) {', '.join(unknown)}; choose from {', '.join(APPS)}")
    results = []
    for name in names:
        out = os.path.abspath(os.path.join(a.output, name))
        os.makedirs(out, exist_ok=True)
        s = run_app(name, a, out)
        results.append(s)
        print(row(s), file=sys.stderr, flush=True)
        if a.docs:
            os.makedirs(a.docs, exist_ok=True)
            shutil.copy(s["files"]["plot"], os.path.join(a.docs, f"{name}.png"))
            shutil.copy(s["files"]["csv"], os.path.join(a.docs, f"{name}.csv"))
    with open(os.path.join(a.output, "study.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(table(results))
    for s in results:
        print(f"\n{s['name']}: {s['command']}\n  machine: {s['params']}  ({s['wall_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
