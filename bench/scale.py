#!/usr/bin/env python3
"""Issue 8 bench: synthetic workloads at 10⁶, 10⁷, 10⁸ vertices — generated, loaded and fully
analysed. The workload is a 3-D stencil code: per iteration a jittered computation, a
periodic 6-neighbour halo exchange (6 Irecv + 6 Isend + Waitall, 64 KiB faces) and an 8-byte
allreduce, on a cube of ranks that grows with the graph (8³, 16³, 32³: ~2,500 ops per rank).

    flock -x /work/.quiet.lock python3 bench/scale.py [--sizes 1e6,1e7,1e8] [--range-us 100]

Each size runs in fresh processes (peak RSS = VmHWM of that process after each stage):
  in memory: generate → analyse: one exact parametric pass gives T(L) on [0, range], from
             which T and λ_L at the machine's L, the 1/2/5 % L tolerances and the 100-point
             curve are read → the same prediction and tolerances from separate calls (checked
             equal) → write GOAL (streamed);
  read back: load the written GOAL in another process, one prediction (same T checked).
The target (issue 8) is generate + analyse in memory at 10⁸ vertices in < 60 s, < 8 GB.
The last column compares generation with reading the same graph's GOAL text (baseline).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

CUBES = {6: 8, 7: 16, 8: 32}  # 10^k vertices -> ranks per side


def hwm_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return float("nan")


def ops_per_iteration(p: int) -> int:
    """Vertices per rank and iteration: halo (13 calls: 12 ops + Waitall, each after a calc)
    and a recursive-doubling allreduce on p = 2^k ranks (2 log2 p ops, collop, calc)."""
    return 26 + 2 * (p.bit_length() - 1) + 2


def job_text(n: float) -> str:
    side = CUBES.get(round(__import__("math").log10(n)), 16)
    p = side**3
    iters = max(1, round(n / (p * ops_per_iteration(p))))
    return (
        f"# bench/scale.py: ~{n:.0e} vertices\n[JOB] stencil\n[RANKS] 0-{p - 1}\n[ITERATIONS] {iters}\n"
        "[MOTIF] compute time=100us dist=gaussian sd=5us\n"
        "[MOTIF] halo3d x=64KiB y=64KiB z=64KiB periodic=1\n"
        "[MOTIF] allreduce bytes=8\n"
    )


def child_memory(job: str, goal: str, range_us: float) -> dict:
    import latitude
    from latitude import Params

    out = {}

    def stage(name, fn):
        t = time.perf_counter()
        r = fn()
        out[name + "_s"] = time.perf_counter() - t
        out[name + "_rss_mib"] = hwm_mib()
        return r

    g = stage("generate", lambda: latitude.generate(job, progress=False))
    info = g.info
    out.update(vertices=info["vertices"], edges=info["edges"], ranks=info["ranks"], messages=info["messages"])
    p = Params()

    def analyse():
        # One parametric pass: T(L) on [0, range] exactly; the prediction at the machine's L,
        # the 1/2/5 % tolerances and the 100-point curve are read off its pieces.
        sens = g.sensitivity(0, range_us * 1e3, params=p)
        tol = sens.tolerance([1, 2, 5])
        if tol is None:
            tol = g.tolerance([1, 2, 5], params=p)  # an answer lies beyond the range
        return sens, tol, sens.runtime(p.L), sens.slope(p.L), sens.curve(100)

    sens, tol, t_base, lam, curve = stage("analyse", analyse)
    out.update(
        breakpoints=len(sens.breakpoints),
        sweep_passes=sens.passes,
        curve_points=len(curve),
        tolerance_ns=[tol.max(x) for x in (1, 2, 5)],
    )
    # The same answers from separate calls (each its own graph pass(es)), checked equal.
    pred = stage("predict", lambda: g.predict(p))
    tol2 = stage("tolerance", lambda: g.tolerance([1, 2, 5], params=p))
    if (pred.runtime_ns, pred.lambda_["L"]) != (t_base, lam) or [tol2.max(x) for x in (1, 2, 5)] != out["tolerance_ns"]:
        raise SystemExit(
            f"one-pass analysis disagrees with predict/tolerance: {(t_base, lam)} vs "
            f"{(pred.runtime_ns, pred.lambda_['L'])}, {out['tolerance_ns']} vs {[tol2.max(x) for x in (1, 2, 5)]}"
        )
    out["runtime_ns"] = pred.runtime_ns
    out["lambda_L"] = pred.lambda_["L"]
    stage("write_goal", lambda: g.write_goal(goal))
    out["goal_bytes"] = os.path.getsize(goal)
    return out


def child_load(goal: str) -> dict:
    import latitude

    t = time.perf_counter()
    g = latitude.load(goal, progress=False)
    out = {"load_s": time.perf_counter() - t, "load_rss_mib": hwm_mib()}
    out["load_runtime_ns"] = g.predict().runtime_ns
    return out


def run_child(args: list) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1e6,1e7,1e8")
    ap.add_argument("--range-us", type=float, default=100.0, help="sensitivity range [0, R] µs (default 100)")
    ap.add_argument("--keep", metavar="DIR", help="keep job and GOAL files here")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        kind, *rest = a.child
        res = child_memory(rest[0], rest[1], float(rest[2])) if kind == "memory" else child_load(rest[0])
        print(json.dumps(res))
        return
    work = a.keep or tempfile.mkdtemp(prefix="latitude-scale-")
    os.makedirs(work, exist_ok=True)
    rows = []
    for n in (float(s) for s in a.sizes.split(",")):
        job = os.path.join(work, f"scale-{n:.0e}.job")
        goal = job[:-4] + ".goal"
        with open(job, "w") as f:
            f.write(job_text(n))
        r = run_child(["memory", job, goal, str(a.range_us)])
        r.update(run_child(["load", goal]))
        if r["load_runtime_ns"] != r["runtime_ns"]:
            raise SystemExit(f"GOAL round trip changed T: {r['runtime_ns']} vs {r['load_runtime_ns']}")
        if not a.keep:
            os.remove(goal)
        rows.append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    print_table(rows)


def print_table(rows: list) -> None:
    head = (
        "vertices",
        "ranks",
        "generate",
        "analyse (T, λ, tol 1/2/5%, curve)",
        "total",
        "peak RSS",
        "predict call",
        "tolerance call",
        "write GOAL",
        "GOAL size",
        "load GOAL",
        "load RSS",
        "gen/load",
    )
    print(" | ".join(head))
    for r in rows:
        total = r["generate_s"] + r["analyse_s"]
        print(
            " | ".join(
                [
                    f"{r['vertices']:,}",
                    f"{r['ranks']:,}",
                    f"{r['generate_s']:.2f} s",
                    f"{r['analyse_s']:.2f} s ({r['breakpoints']} bp, {r['sweep_passes']} passes)",
                    f"{total:.1f} s",
                    f"{r['analyse_rss_mib'] / 1024:.2f} GiB",
                    f"{r['predict_s']:.2f} s",
                    f"{r['tolerance_s']:.2f} s",
                    f"{r['write_goal_s']:.2f} s",
                    f"{r['goal_bytes'] / 2**30:.2f} GiB",
                    f"{r['load_s']:.2f} s",
                    f"{r['load_rss_mib'] / 1024:.2f} GiB",
                    f"{r['generate_s'] / r['load_s']:.2f}x",
                ]
            )
        )
    print(
        "total = generate + analyse (in memory; the analysis includes building the evaluation plan); "
        "peak RSS after the analysis; predict/tolerance call = the same answers from separate calls "
        "(checked equal); gen/load = generation time relative to reading the same graph's GOAL (baseline)"
    )


if __name__ == "__main__":
    main()
