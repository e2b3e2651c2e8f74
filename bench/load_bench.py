#!/usr/bin/env python3
"""Issue 21 bench: loading graphs — GOAL text in parallel, the binary .lgraph mapped — and
`latitude predict/tolerance/sensitivity` end to end on bench/scale.py's stencil workload.

    flock -x /work/.quiet.lock python3 bench/load_bench.py [--sizes 1e6,1e7,1e8] [--repeat 3] [--binary-only 1e8]
    python3 bench/load_bench.py --instructions 1e6 [--dir DIR]   # callgrind instruction counts instead

Per size, in fresh processes (wall time, median of --repeat; peak RSS = the child's
ru_maxrss), with every file in the page cache:
  floor     `cat FILE > /dev/null` for the GOAL and the .lgraph file (the physical floor);
  GOAL      latitude.load() on one core (`taskset -c 0`: the one-pass reader, the baseline
            of this run) and on all cores (the parallel reader): MB/s of GOAL text;
            `latitude predict FILE.goal --json` end to end;
  binary    `latitude predict FILE.lgraph --json`, `tolerance --pct 1,2,5` and `sensitivity
            --range 3us:100us` end to end, peak RSS against the in-memory graph's (a process
            that generates the same graph and predicts: the target is within +10 %);
  LogGOPSim on its own binary schedule, and txt2bin + LogGOPSim, when LATITUDE_LOGGOPSIM
            (and LATITUDE_TXT2BIN) name the binaries; otherwise one line says why not.
`python -m latitude predict --help` is timed too (interpreter start-up and the imports of
one command are part of end to end).
The checkout's Python package is byte-compiled first, as `pip install` does: without .pyc
files (PYTHONDONTWRITEBYTECODE=1 in the environment) every start-up would compile the
package's source again, ~45 % of a small command's instructions.
The T printed from GOAL and from .lgraph is checked equal.
"""

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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from scale import job_text  # noqa: E402

LAT = [sys.executable, "-m", "latitude"]
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
MODEL = ["-L", "3us", "-o", "1.5us", "-G", "6ns"]  # the parameters (G = 6 ns/B)


def measured(cmd: list, repeat: int, stdout=subprocess.PIPE) -> tuple[float, float, str]:
    """Median wall time, max peak RSS and the last stdout over `repeat` runs, each with its
    rusage taken from wait4 (resource.RUSAGE_CHILDREN would give the max over all runs).
    The child's output goes to temporary files, not pipes: a progress bar on stderr would
    fill a pipe nobody reads until the child exits."""
    walls, rsss, out = [], [], ""
    for _ in range(repeat):
        with tempfile.TemporaryFile("w+") as o, tempfile.TemporaryFile("w+") as e:
            t = time.perf_counter()
            proc = subprocess.Popen(
                cmd, stdout=o if stdout == subprocess.PIPE else stdout, stderr=e, env=ENV, text=True
            )
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
            walls.append(time.perf_counter() - t)
            rsss.append(usage.ru_maxrss / 1024)
            o.seek(0)
            e.seek(0)
            out = o.read()
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{e.read()}")
    return statistics.median(walls), max(rsss), out


def run(cmd: list, stdout=subprocess.PIPE) -> tuple[float, float, str]:
    """(wall s, peak RSS MiB, stdout) of one run."""
    return measured(cmd, 1, stdout)


def child_load(path: str) -> None:
    """Time latitude.load(path) alone (the child's own clock, after the imports)."""
    from latitude.api import load

    t = time.perf_counter()
    g = load(path, progress=False)
    print(json.dumps({"load_s": time.perf_counter() - t, "vertices": g.info["vertices"]}))


def child_memory(job: str) -> None:
    """The in-memory graph: generate the job and predict, like `predict` on a binary."""
    import latitude

    g = latitude.generate(job, progress=False)
    t = g.predict(L="3us", o="1.5us", G="6ns").runtime_ns
    print(json.dumps({"runtime_ns": t}))


def load_time(path: str, repeat: int, one_core: bool) -> float:
    pin = ["taskset", "-c", "0"] if one_core else []
    times = []
    for _ in range(repeat):
        _, _, out = run(pin + [sys.executable, __file__, "--child", "load", path])
        times.append(json.loads(out)["load_s"])
    return statistics.median(times)


def loggopsim(goal: str, binary: str, repeat: int) -> dict:
    exe, txt2bin = os.environ.get("LATITUDE_LOGGOPSIM"), os.environ.get("LATITUDE_TXT2BIN")
    out = {}
    if txt2bin:
        out["txt2bin_s"] = measured([txt2bin, "-i", goal, "-o", binary], 1)[0]
    elif not os.path.exists(binary):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "goal2bin.py"), goal, binary], check=True)
    args = [exe, "-f", binary, "-L", "3000", "-o", "1500", "-G", "6"]
    out["loggopsim_s"], out["loggopsim_rss_mib"], _ = measured(args, repeat)
    return out


def bench_size(n: float, work: str, repeat: int, have_loggopsim: bool, text: bool) -> dict:
    """One size's row; without `text`, the binary columns only (no GOAL file)."""
    job = os.path.join(work, f"stencil-{n:.0e}.job")
    goal, lgraph = job[:-4] + ".goal", job[:-4] + ".lgraph"
    with open(job, "w") as f:
        f.write(job_text(n))
    print(f"{n:.0e}: generating {goal if text else ''} {lgraph}", file=sys.stderr, flush=True)
    if text and not os.path.exists(goal):
        run(LAT + ["generate", job, "-o", goal])
    r = {"size": f"{n:.0e}", "goal_bytes": os.path.getsize(goal) if text else 0}
    # The binary straight from the job file, like the in-memory graph it is compared with
    # (`convert` from the GOAL would also keep each op's GOAL line: 4 bytes per op more).
    r["generate_lgraph_s"] = run(LAT + ["generate", job, "-o", lgraph])[0]
    r["lgraph_bytes"] = os.path.getsize(lgraph)
    for name, path in (("goal", goal), ("lgraph", lgraph))[0 if text else 1 :]:
        run(["cat", path], stdout=subprocess.DEVNULL)  # into the page cache
        r[f"cat_{name}_s"] = measured(["sh", "-c", f"cat '{path}' > /dev/null"], repeat)[0]
    print(f"{n:.0e}: loading", file=sys.stderr, flush=True)
    if text:
        r["load_goal_1core_s"] = load_time(goal, repeat, one_core=True)
        r["load_goal_s"] = load_time(goal, repeat, one_core=False)
    r["load_lgraph_s"] = load_time(lgraph, repeat, one_core=False)
    print(f"{n:.0e}: predict, tolerance, sensitivity", file=sys.stderr, flush=True)
    r["predict_lgraph_s"], r["predict_lgraph_rss_mib"], out_bin = measured(
        LAT + ["predict", lgraph, *MODEL, "--json"], repeat
    )
    t_bin = json.loads(out_bin)["runtime_ns"]
    if text:
        r["predict_goal_s"], r["predict_goal_rss_mib"], out_goal = measured(
            LAT + ["predict", goal, *MODEL, "--json"], repeat
        )
        if json.loads(out_goal)["runtime_ns"] != t_bin:
            raise SystemExit(f"T differs between GOAL ({out_goal}) and .lgraph ({t_bin})")
    r["runtime_ns"] = t_bin
    r["tolerance_s"], r["tolerance_rss_mib"], _ = measured(LAT + ["tolerance", lgraph, *MODEL, "--pct", "1,2,5"], 1)
    r["sensitivity_s"], r["sensitivity_rss_mib"], _ = measured(
        LAT + ["sensitivity", lgraph, *MODEL, "--range", "3us:100us"], 1
    )
    _, r["in_memory_rss_mib"], out = measured([sys.executable, __file__, "--child", "memory", job], 1)
    if json.loads(out)["runtime_ns"] != t_bin:
        raise SystemExit("T differs between the in-memory graph and .lgraph")
    if have_loggopsim and text:
        r.update(loggopsim(goal, job[:-4] + ".bin", repeat))
    return r


def instructions(n: float, work: str) -> None:
    """Instruction counts of `predict --json` on the .lgraph of size n under callgrind (the VM
    has no hardware counters; counts are deterministic where wall times under load are not):
    the whole process and its parts, as docs/benchmarks.md's profile table lists them."""
    if not shutil.which("valgrind"):
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    job = os.path.join(work, f"stencil-{n:.0e}.job")
    lgraph = job[:-4] + ".lgraph"
    if not os.path.exists(lgraph):
        with open(job, "w") as f:
            f.write(job_text(n))
        run(LAT + ["generate", job, "-o", lgraph])
    out = os.path.join(work, "callgrind.out")
    # The interpreter itself, not a wrapper script (pyenv's shims are shell scripts).
    python = subprocess.run([sys.executable, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True)
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python.stdout.strip(), *LAT[1:]]
    subprocess.run(cmd + ["predict", lgraph, *MODEL, "--json"], env=ENV, check=True, capture_output=True)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True, text=True).stdout
    total = int(re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", ann).group(1).replace(",", ""))
    # Functions (inclusive counts, summed); the checks and checksums run on two threads.
    parts = {
        "engine pass (engine::predict)": [r"engine::predict::predict"],
        "checks of the mapped file (ops, locals, dependencies)": [r"lgraph::check::(?:ops|locals|dependencies)"],
        "checksums (XXH3)": [r"lgraph::read::verify_checksums::\{\{closure\}\}"],
        "plan: sinks": [r"engine::plan::sinks"],
    }
    print(f"`predict --json` on the stencil {n:.0e} .lgraph, callgrind: {total / 1e6:,.0f} M instructions")
    for name, patterns in parts.items():
        found = {}
        for pattern in patterns:
            for count, fn in re.findall(r"^\s*([\d,]+) \([^)]*\)\s+\S*?:(\S*" + pattern + r") \[", ann, re.M):
                found[fn] = max(found.get(fn, 0), int(count.replace(",", "")))
        print(f"  {name}: {sum(found.values()) / 1e6:,.0f} M")
    os.remove(out)


def table(rows: list, startup_s: float) -> None:
    mb = 1e6
    print(
        "| graph | GOAL | cat GOAL | GOAL load 1 core (baseline) | GOAL load 2 cores | `predict` GOAL | "
        ".lgraph | cat .lgraph | load .lgraph | `predict` .lgraph | RSS .lgraph / in-memory graph | "
        "`tolerance` .lgraph | `sensitivity` .lgraph | LogGOPSim on .bin | txt2bin + LogGOPSim |"
    )
    print("|---" * 15 + "|")
    for r in rows:
        gb = r["goal_bytes"]
        if not gb:  # binary only: the GOAL columns empty
            r = dict(r, goal_bytes=float("nan"), cat_goal_s=float("nan"), load_goal_1core_s=float("nan"))
            r.update(load_goal_s=float("nan"), predict_goal_s=float("nan"), predict_goal_rss_mib=float("nan"))
            gb = r["goal_bytes"]
        lgs = r.get("loggopsim_s")
        both = lgs + r["txt2bin_s"] if lgs and "txt2bin_s" in r else None
        line = (
            f"| stencil {r['size']} | {gb / 2**20:,.0f} MiB | {r['cat_goal_s']:.2f} s ({gb / mb / r['cat_goal_s']:,.0f} MB/s) "
            f"| {r['load_goal_1core_s']:.2f} s ({gb / mb / r['load_goal_1core_s']:,.0f} MB/s) "
            f"| {r['load_goal_s']:.2f} s ({gb / mb / r['load_goal_s']:,.0f} MB/s) "
            f"| {r['predict_goal_s']:.2f} s, {r['predict_goal_rss_mib'] / 1024:.2f} GiB "
            f"| {r['lgraph_bytes'] / 2**20:,.0f} MiB | {r['cat_lgraph_s']:.3f} s | {r['load_lgraph_s']:.3f} s "
            f"| {r['predict_lgraph_s']:.2f} s "
            f"| {r['predict_lgraph_rss_mib'] / 1024:.2f} / {r['in_memory_rss_mib'] / 1024:.2f} GiB "
            f"({r['predict_lgraph_rss_mib'] / r['in_memory_rss_mib'] - 1:+.0%}) "
            f"| {r['tolerance_s']:.2f} s | {r['sensitivity_s']:.2f} s "
            f"| {f'{lgs:.2f} s' if lgs else '—'} "
            f"| {f'{both:.2f} s' if both else '—'} |"
        )
        print(re.sub(r"\| [^|]*nan[^|]* ", "| — ", line))
    print(f"\n`python -m latitude predict --help` (interpreter start-up and imports): {startup_s:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--binary-only",
        default="1e8",
        metavar="SIZES",
        help="sizes measured from .lgraph only (no GOAL file: the 10^8 GOAL is 5.7 GB and minutes to read; "
        "default 1e8, '' for none)",
    )
    ap.add_argument("--dir", metavar="DIR", help="keep job, GOAL and .lgraph files here (reused when present)")
    ap.add_argument(
        "--instructions",
        metavar="SIZE",
        help="instead of timing: instruction counts of `predict` on that size's .lgraph under callgrind (e.g. 1e6)",
    )
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        (child_load if a.child[0] == "load" else child_memory)(a.child[1])
        return
    if a.instructions:
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "python", "latitude")], check=True)
        work = a.dir or tempfile.mkdtemp(prefix="latitude-load-")
        os.makedirs(work, exist_ok=True)
        instructions(float(a.instructions), work)
        if not a.dir:
            shutil.rmtree(work)
        return
    have_loggopsim = bool(os.environ.get("LATITUDE_LOGGOPSIM"))
    if not have_loggopsim:
        print(
            "LogGOPSim: not run — set LATITUDE_LOGGOPSIM (and LATITUDE_TXT2BIN) to its binaries; its source is not "
            "on this machine's package registries (PyPI, crates.io, Debian), so this bench cannot build it",
            file=sys.stderr,
        )
    if not shutil.which("taskset"):
        raise SystemExit("taskset (util-linux) is needed for the one-core baseline")
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "python", "latitude")], check=True)
    work = a.dir or tempfile.mkdtemp(prefix="latitude-load-")
    os.makedirs(work, exist_ok=True)
    startup = measured(LAT + ["predict", "--help"], max(a.repeat, 5))[0]
    rows = []
    for n in (float(s) for s in a.sizes.split(",")):
        binary_only = {float(x) for x in a.binary_only.split(",") if x}
        rows.append(bench_size(n, work, a.repeat, have_loggopsim, n not in binary_only))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    table(rows, startup)
    if not a.dir:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
