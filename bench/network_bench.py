#!/usr/bin/env python3
"""Issue 18 bench: the network model's cost against the flat network, on one graph.

    flock -x /work/.quiet.lock python3 bench/network_bench.py [--vertices 1e7] [--repeat 3]

The workload is bench/scale.py's 3-D stencil (halo3d with 64 KiB faces + 8-byte allreduce)
on 16³ = 4,096 ranks, ~10⁷ vertices, generated from a job file in each process. Two machines:

  flat      L = 3 µs, o = 1.5 µs, G = 0.018 ns (every pair the same: the baseline)
  fat tree  k = 16, 3 tiers (1,024 nodes), 4 ranks per node (block), wire 274 ns,
            switch 108 ns, intra-node L 0.3 µs and G 0.01 ns, L = 0

and per machine, each in a fresh process (graph generated first, then VmHWM reset through
/proc/self/clear_refs so that peak RSS is the graph plus what the analysis adds):
  predict     T and λ of every named parameter and the critical path (one pass)
  tolerance   the 1/2/5 % tolerance of L (flat) / of the link class `wire` (fat tree), the
              others fixed (App. H): Newton steps, several points per pass
  pairs       (fat tree) pairwise λ_L^{ij}, λ_G^{ij} of all 4,096 ranks from one prediction,
              written as CSV (rank pairs and node pairs)
Targets: fat-tree predict and tolerance within 2× of the flat ones, peak RSS within 1.5×.
Times are the median of --repeat runs; ratios are against the flat run of the same repeat.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

FAT_TREE = """\
o = "1.5us"
G = "0.018ns"
S = "256KiB"
[nodes]
ranks_per_node = 4
[intra]
L = "0.3us"
G = "0.01ns"
[topology]
kind = "fat_tree"
k = 16
levels = 3
[topology.latency]
wire = "274ns"
switch = "108ns"
"""
FLAT = 'L = "3us"\no = "1.5us"\nG = "0.018ns"\nS = "256KiB"\n'


def job_text(vertices: float, side: int = 16) -> str:
    p = side**3
    per_iter = 26 + 2 * (p.bit_length() - 1) + 2  # bench/scale.py's ops per rank and iteration
    iters = max(1, round(vertices / (p * per_iter)))
    return (
        f"[JOB] stencil\n[RANKS] 0-{p - 1}\n[ITERATIONS] {iters}\n"
        "[MOTIF] compute time=100us dist=gaussian sd=5us\n"
        "[MOTIF] halo3d x=64KiB y=64KiB z=64KiB periodic=1\n"
        "[MOTIF] allreduce bytes=8\n"
    )


def hwm_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_hwm() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def child(kind: str, job: str, machine: str, out_dir: str) -> dict:
    import latitude
    from latitude import Params

    g = latitude.load(job, progress=False)
    params = Params.from_machine(machine)
    out = {"vertices": g.info["vertices"], "ranks": g.info["ranks"], "graph_rss_mib": hwm_mib()}

    def stage(name, fn):
        reset_hwm()
        t = time.perf_counter()
        r = fn()
        out[name + "_s"] = time.perf_counter() - t
        out[name + "_rss_mib"] = hwm_mib()
        return r

    param = "L" if kind == "flat" else "wire"
    pred = stage("predict", lambda: g.predict(params))
    tol = stage("tolerance", lambda: g.tolerance([1, 2, 5], param=param, params=params))
    out.update(runtime_ns=pred.runtime_ns, param=param, **{"lambda": pred.lambda_[param]})
    out["tolerance_ns"] = [tol.max(x) for x in (1, 2, 5)]
    if kind != "flat":

        def pairs():
            p = g.pairs(params)
            p.write_csv(os.path.join(out_dir, "pairs.csv"))
            p.write_csv(os.path.join(out_dir, "nodes.csv"), nodes=True)
            return p

        p = stage("pairs", pairs)
        out.update(pairs=len(p), node_pairs=len(p.node_rows()), latency_terms=p.lambda_L_total)
        out["pairs_csv_bytes"] = os.path.getsize(os.path.join(out_dir, "pairs.csv"))
    return out


def run_child(kind: str, job: str, machine: str, out_dir: str) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, job, machine, out_dir]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{kind} run failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vertices", type=float, default=1e7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", metavar="FILE", help="also write the raw results here")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    with tempfile.TemporaryDirectory(prefix="latitude-netbench-") as tmp:
        job = os.path.join(tmp, "stencil.job")
        with open(job, "w") as f:
            f.write(job_text(args.vertices))
        machines = {}
        for kind, text in (("flat", FLAT), ("fat_tree", FAT_TREE)):
            machines[kind] = os.path.join(tmp, f"{kind}.toml")
            with open(machines[kind], "w") as f:
                f.write(text)
        runs = {"flat": [], "fat_tree": []}
        for _ in range(args.repeat):
            for kind in runs:
                runs[kind].append(run_child(kind, job, machines[kind], tmp))
    flat, ft = runs["flat"], runs["fat_tree"]
    med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
    ratio = lambda k: statistics.median(b[k] / a[k] for a, b in zip(flat, ft))  # noqa: E731
    v, ranks = ft[0]["vertices"], ft[0]["ranks"]
    print(f"{v:,} vertices, {ranks:,} ranks; median of {args.repeat} runs (ratios per repeat, then median)")
    print(f"{'':24}{'flat':>12}{'fat tree':>12}{'ratio':>8}  target")
    for name, key, target in (
        ("predict (s)", "predict_s", "≤ 2"),
        ("tolerance 1/2/5 % (s)", "tolerance_s", "≤ 2"),
        ("peak RSS predict (MiB)", "predict_rss_mib", "≤ 1.5"),
        ("peak RSS tolerance (MiB)", "tolerance_rss_mib", "≤ 1.5"),
    ):
        print(f"{name:24}{med(flat, key):12.3f}{med(ft, key):12.3f}{ratio(key):8.2f}  {target}")
    print(f"{'graph (MiB)':24}{med(flat, 'graph_rss_mib'):12.1f}{med(ft, 'graph_rss_mib'):12.1f}")
    f0, t0 = flat[0], ft[0]
    print(
        f"flat: T = {f0['runtime_ns'] / 1e6:.4f} ms, λ_L = {f0['lambda']:,}, L within 1/2/5 %: "
        + ", ".join(f"{x / 1e3:.4g} µs" for x in f0["tolerance_ns"])
    )
    print(
        f"fat tree: T = {t0['runtime_ns'] / 1e6:.4f} ms, λ_wire = {t0['lambda']:,}, wire within 1/2/5 %: "
        + ", ".join(f"{x:.5g} ns" for x in t0["tolerance_ns"])
    )
    print(
        f"pairs (fat tree, {ranks:,} ranks): {t0['pairs']:,} rank pairs and {t0['node_pairs']:,} node pairs on the "
        f"critical path, {t0['latency_terms']:,} latency terms; predict + both CSVs {med(ft, 'pairs_s'):.3f} s, "
        f"peak {med(ft, 'pairs_rss_mib'):.1f} MiB, rank-pair CSV {t0['pairs_csv_bytes'] / 1024:.1f} KiB"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
