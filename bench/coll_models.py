#!/usr/bin/env python3
"""Issue 23 bench: the collective model comparison of docs/collectives.md, in one command.

    flock -x /work/.quiet.lock python3 bench/coll_models.py [--procs 2,3,4] [--out DIR]

For each P: `latitude measure-coll` of p2p, fanout and the bcast/reduce algorithms (default,
linear, chain, binary, binomial) at 4 B … 256 KiB, 1,000 calls each, under `mpirun
--oversubscribe -np P`; then `latitude coll-model fit` over all of them (R², RRMSE per model,
the plot fit.png) and `latitude variability` of the smallest P. The samples, model and plots
stay in --out (default a new temporary directory, printed). The load average before and
after is printed: on a machine that other jobs load, the tails and means measure that load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALGS = "bcast=default,linear,chain,binary,binomial;reduce=default,linear,chain,binary,binomial"


def latitude(*args: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    proc = subprocess.run([sys.executable, "-m", "latitude", *args], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"latitude {' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--procs", default="2,3,4", help="process counts (default 2,3,4)")
    ap.add_argument("--sizes", default="4,1KiB,16KiB,64KiB,256KiB")
    ap.add_argument("--iters", default="1000")
    ap.add_argument("--out", help="directory for samples, model and plots (default: a new temporary one)")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="latitude-coll-bench-")
    os.makedirs(out, exist_ok=True)
    mpirun = shutil.which("mpirun.openmpi") or "mpirun"
    print(f"load before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; output in {out}")
    files = []
    for p in args.procs.split(","):
        f = os.path.join(out, f"m{p}.csv")
        latitude("measure-coll", "-o", f, "--colls", "p2p,fanout,bcast,reduce", "--algorithms", ALGS,
                 "--sizes", args.sizes, "--iters", args.iters, "--", mpirun, "--oversubscribe", "-np", p)  # fmt: skip
        files.append(f)
    print(f"load after measuring: {os.getloadavg()[0]:.2f}")
    print(
        latitude(
            "coll-model", "fit", *files, "-o", os.path.join(out, "model.json"), "--plot", os.path.join(out, "fit.png")
        )
    )
    print(latitude("variability", files[0], "--violin", os.path.join(out, "violins.png")))


if __name__ == "__main__":
    main()
