#!/usr/bin/env python3
"""Issue 19 study: placements predicted by the engine and measured on emulated nodes.

    flock -x /work/.quiet.lock python3 bench/placement_study.py [--runs 5] [--budget 10] \
        [--json out.json] [--plot docs/placement/study.png]

Two programs where placement matters, run for real by apps/motifs from their job files
(the same calls `latitude generate` models): two groups interleaved by rank (each a ring
allreduce plus a ping-pong), which block order splits over the nodes; and a 2-D halo
exchange on a 3 × 2 grid on nodes of 4 ranks (the grid's rows do not match the nodes).
For each, `latitude.place.compare` computes the block, sens, anneal and Scotch maps and
their predicted T on the machine; then every map runs --runs times (in a shuffled order per
round) under `latitude inject --machine M --placement MAP`, which emulates the machine's
nodes on this host, and the runtimes (MPI_Init end → MPI_Finalize start) are compared: the
median and spread per map, the measured change against block, and the gain of the best
method over block and over Scotch. Absolute predicted and measured times differ (the model
has the machine's o and G, the host has its own); the comparison is between maps.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import latitude  # noqa: E402
from latitude import Params, place  # noqa: E402
from latitude import placement as maps  # noqa: E402

MACHINE = """\
name = "2 nodes of 4 behind a 40 µs network"
L = "40us"
o = "1us"
G = "0.05ns"
[nodes]
ranks_per_node = {rpn}
[intra]
L = "0.5us"
G = "0.01ns"
"""

CASES = {
    "two-groups": (
        """\
[JOB] a
[RANKS] 0,2
[ITERATIONS] 200
[MOTIF] compute time=20us
[MOTIF] pingpong bytes=1KiB
[MOTIF] allreduce bytes=8KiB alg=ring
[JOB] b
[RANKS] 1,3
[ITERATIONS] 200
[MOTIF] compute time=20us
[MOTIF] pingpong bytes=1KiB
[MOTIF] allreduce bytes=8KiB alg=ring
""",
        2,
    ),
    "halo-3x2": (
        """\
[JOB] halo
[RANKS] 0-5
[ITERATIONS] 200
[MOTIF] compute time=20us
[MOTIF] halo2d px=3 py=2 x=4KiB y=4KiB periodic=0
[MOTIF] allreduce bytes=8 alg=recdoub
""",
        4,
    ),
}
METHODS = ("sens", "anneal", "scotch")


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def build_motifs(d: str) -> str:
    out = os.path.join(d, "motifs")
    src = os.path.join(ROOT, "apps")
    subprocess.run(["mpicc", "-O2", "-I", src, "-o", out, os.path.join(src, "motifs.c"), "-lm"], check=True)
    return out


def measure(machine: str, mapfile: str, prog: str, plan: str, ranks: int) -> float:
    mpirun = [shutil.which("mpirun.openmpi") or "mpirun", "--oversubscribe", "-np", str(ranks)]
    if os.geteuid() == 0:
        mpirun.insert(1, "--allow-run-as-root")
    cmd = [sys.executable, "-m", "latitude", "inject", "--machine", machine, "--placement", mapfile, "--json"]
    proc = subprocess.run(cmd + ["--", *mpirun, prog, plan], capture_output=True, text=True, env=env(), check=True)
    return json.loads(proc.stdout)["runtime_ns"]


def study(name: str, job: str, rpn: int, runs: int, budget: float, prog: str, tmp: str) -> dict:
    jobfile, machine = os.path.join(tmp, f"{name}.job"), os.path.join(tmp, f"{name}.toml")
    with open(jobfile, "w") as f:
        f.write(job)
    with open(machine, "w") as f:
        f.write(MACHINE.format(rpn=rpn))
    plan = os.path.join(tmp, f"{name}.plan")
    gen = subprocess.run(
        [sys.executable, "-m", "latitude", "generate", jobfile, "--check"],
        capture_output=True,
        text=True,
        env=env(),
        check=True,
    )
    with open(plan, "w") as f:
        f.write(gen.stdout)
    graph, params = latitude.load(jobfile), Params.from_machine(machine)
    results = place.compare(graph, params, "block", METHODS, place.Options(seed=1, budget=budget))
    files = {}
    for r in results:
        files[r.method] = os.path.join(tmp, f"{name}-{r.method}.txt")
        maps.write_map(files[r.method], r.nodes)
    measured = {r.method: [] for r in results}
    rng = random.Random(1)
    for _ in range(runs):
        order = list(measured)
        rng.shuffle(order)
        for m in order:
            measured[m].append(measure(machine, files[m], prog, plan, graph.num_ranks))
    block_pred, block_meas = results[0].runtime_ns, statistics.median(measured["block"])
    rows = []
    for r in results:
        med = statistics.median(measured[r.method])
        rows.append(
            {
                "method": r.method,
                "placement": list(r.nodes),
                "predicted_ns": r.runtime_ns,
                "predicted_vs_block": r.runtime_ns / block_pred - 1,
                "measured_ns": measured[r.method],
                "measured_median_ns": med,
                "measured_vs_block": med / block_meas - 1,
            }
        )
    best = min(rows[1:], key=lambda r: r["measured_median_ns"])
    scotch = next(r for r in rows if r["method"] == "scotch")
    return {
        "case": name,
        "ranks": graph.num_ranks,
        "ranks_per_node": rpn,
        "rows": rows,
        "best": best["method"],
        "best_vs_block": best["measured_median_ns"] / block_meas - 1,
        "best_vs_scotch": best["measured_median_ns"] / scotch["measured_median_ns"] - 1,
    }


def plot(studies: list, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(studies), figsize=(5 * len(studies), 3.8))
    for ax, s in zip(axes, studies):
        names = [r["method"] for r in s["rows"]]
        xs = range(len(names))
        meas = [[v / 1e6 for v in r["measured_ns"]] for r in s["rows"]]
        ax.boxplot(meas, positions=list(xs), widths=0.5)
        ax.scatter(
            xs, [r["predicted_ns"] / 1e6 for r in s["rows"]], marker="x", color="C3", zorder=3, label="predicted"
        )
        ax.set_xticks(list(xs), names)
        ax.set_title(f"{s['case']} ({s['ranks']} ranks, {s['ranks_per_node']} per node)")
        ax.set_ylabel("runtime (ms): measured (boxes), predicted (x)")
        ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--budget", type=float, default=10.0)
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--plot", metavar="PNG")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="latitude-study-") as tmp:
        prog = build_motifs(tmp)
        studies = [study(n, job, rpn, args.runs, args.budget, prog, tmp) for n, (job, rpn) in CASES.items()]
    for s in studies:
        print(f"\n{s['case']}: {s['ranks']} ranks, {s['ranks_per_node']} per node, {args.runs} runs per map")
        print(
            f"{'method':<8} {'predicted':>11} {'vs block':>9} {'measured median':>16} {'min–max':>19} {'vs block':>9}"
        )
        for r in s["rows"]:
            lo, hi = min(r["measured_ns"]) / 1e6, max(r["measured_ns"]) / 1e6
            print(
                f"{r['method']:<8} {r['predicted_ns'] / 1e6:>9.3f}ms {100 * r['predicted_vs_block']:>+8.2f}% "
                f"{r['measured_median_ns'] / 1e6:>14.3f}ms {lo:>8.3f}–{hi:.3f}ms {100 * r['measured_vs_block']:>+8.2f}%"
            )
        print(
            f"best measured: {s['best']}, {100 * s['best_vs_block']:+.2f} % vs block, {100 * s['best_vs_scotch']:+.2f} % vs Scotch"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(studies, f, indent=1)
    if args.plot:
        plot(studies, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
