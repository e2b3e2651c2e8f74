#!/usr/bin/env python3
"""Where an injected run spends the time the model does not predict, pattern by pattern.

Each pattern of apps/gaps (a blocking round trip, a nonblocking exchange, a round trip whose
receiver polls MPI_Test between chunks of work, Sendrecv, the collectives the injector
re-implements, rendezvous round trips and exchanges) runs on 2 ranks with a fixed spin of work
between repetitions. Two measurements per pattern:

* **growth per repetition** (default; robust to other load): under the injector, ΔL switched
  inside one run (MPI_Pcontrol, 25 paired blocks, block medians; apps/gaps
  --paired-delta-us), in units of ΔL — against the model's (T(L₀+ΔL) − T(L₀)) / repetitions
  from a trace of the same pattern: is ΔL paid once per message, as the model counts? For the
  polling patterns also the model's growth without the shift of a work loop's last half poll
  interval (docs/schedule.md, "Polling"): the same trace with each successful MPI_Test read
  as an MPI_Wait, which joins the same requests and is never shifted.
* with --absolute (needs a quiet machine): the model's error on its traced run (machine
  calibrated under the tracer), what the injector costs a repetition at ΔL = 0, what of that
  the model with the injector's machine does not see (separate runs, fastest of --reps).

Plus the cost of one unsuccessful MPI_Test plain, traced and injected (apps/gaps --pattern
testcost).

    flock -x /work/.quiet.lock python3 bench/inject_gap.py [--delta-L 20] [--patterns a,b] [--absolute]

Prints Markdown tables (stdout) and writes --json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
from latitude import tracer  # noqa: E402

MPIRUN = ["mpirun", "--oversubscribe", "-np", "2"]
# name: arguments of apps/gaps (work 20 µs between repetitions; 64 KiB is rendezvous on shared
# memory and in the model above S)
PATTERNS = {
    "pingpong": ["--pattern", "pingpong"],
    "exchange": ["--pattern", "exchange"],
    "poll": ["--pattern", "poll", "--chunk", "1000"],
    "poll-coarse": ["--pattern", "poll", "--chunk", "4000"],
    "poll-10us": ["--pattern", "poll", "--chunk", "10000"],
    "poll-40us": ["--pattern", "poll", "--chunk", "40000"],
    "sendrecv": ["--pattern", "sendrecv"],
    "allreduce": ["--pattern", "allreduce"],
    "bcast": ["--pattern", "bcast"],
    "alltoall": ["--pattern", "alltoall"],
    "barrier": ["--pattern", "barrier"],
    "pingpong-64k": ["--pattern", "pingpong", "--bytes", "65536"],
    "sendrecv-64k": ["--pattern", "sendrecv", "--bytes", "65536"],
    "exchange-64k": ["--pattern", "exchange", "--bytes", "65536"],
    # CG's halo rows (512 doubles): just above the eager limit of 4040 B
    "exchange-4k": ["--pattern", "exchange", "--bytes", "4096"],
    # back to back (less work than ΔL between calls): the receive-first serialisation
    # (docs/validation.md, "2 MiB exchanges posted receive-first")
    "sendrecv-2m": ["--pattern", "sendrecv", "--bytes", "2097152", "--work", "0"],
    "exchange-2m": ["--pattern", "exchange", "--bytes", "2097152", "--work", "0"],
}


def latitude(*args: str, cwd: str | None = None) -> str:
    cmd = [sys.executable, "-m", "latitude", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-3000:]}")
    return p.stdout


def calibrate(out: Path, under: str) -> Path:
    sizes = "0,8,64,256,1KiB,4KiB,16KiB,64KiB,256KiB"
    latitude(
        "calibrate", under, "--allow-zero-L", "--sizes", sizes, "--batches", "5", "--iters", "200",
        "--repeat", "3", "-o", str(out), "--", *MPIRUN,
    )  # fmt: skip
    return out


def predict(trace: Path, machine: Path, delta_ns: float = 0.0) -> dict:
    s = json.loads(latitude("predict", str(trace), "--machine", str(machine), "--json"))
    if delta_ns:
        L = s["params"]["L"] + delta_ns
        s = json.loads(latitude("predict", str(trace), "--machine", str(machine), "-L", f"{L}ns", "--json"))
    return s


def injected(prog: list[str], machine: Path, delta_us: float) -> float:
    out = latitude("inject", "--delta-L", f"{delta_us}us", "--machine", str(machine), "--json", "--", *MPIRUN, *prog)
    return float(json.loads(out)["runtime_ns"])


def as_waits(src: Path, dst: Path) -> Path:
    """A copy of the trace with every successful MPI_Test (the only Test apps/gaps makes) read
    as an MPI_Wait on the same request: the graph the schedule made before the shift."""
    dst.mkdir()
    for f in tracer.trace_files(src):  # compressed (latitude trace's default) or plain
        with tracer.open_trace(f) as fh:
            lines = fh.read().decode().splitlines(keepends=True)
        for i, line in enumerate(lines[:-1]):
            if (
                line.startswith("MPI_Test:")
                and lines[i + 1].startswith("#@ done ")
                and lines[i + 1].strip() != "#@ done -"
            ):
                p = line.rstrip("\n").split(":")  # MPI_Test:ts:req:flag:status:te
                lines[i] = ":".join(["MPI_Wait", p[1], p[2], p[4], p[5]]) + "\n"
        (dst / f.name.removesuffix(".gz")).write_text("".join(lines))  # written plain
    return dst


def paired(name: str, prog: list[str], a, machine: Path, tmp: Path) -> dict:
    """Measured growth per repetition (ΔL switched inside one injected run) against the model's."""
    iters = 200  # repetitions of the traced run the model's growth is read from
    trace = tmp / f"trace-{name}"
    latitude("trace", "-o", str(trace), "--", *MPIRUN, *prog, "--iters", str(iters))
    p0, pd = predict(trace, machine), predict(trace, machine, a.delta_L * 1e3)
    cmd = [sys.executable, "-m", "latitude", "inject", "--delta-L", "0", "--machine", str(machine), "--"]
    cmd += [*MPIRUN, *prog, "--iters", "20", "--paired-delta-us", str(a.delta_L)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    found = re.search(r"paired_growth_us (\S+)", p.stdout + p.stderr)
    if p.returncode != 0 or not found:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}, no growth line\n{p.stderr[-3000:]}")
    model = (pd["runtime_ns"] - p0["runtime_ns"]) / iters / (a.delta_L * 1e3)
    row = {"pattern": name, "args": prog[1:], "measured_dl": float(found.group(1)) / a.delta_L, "model_dl": model}
    if "poll" in prog:
        waits = as_waits(trace, tmp / f"waits-{name}")
        u0, ud = predict(waits, machine), predict(waits, machine, a.delta_L * 1e3)
        row["unshifted_dl"] = (ud["runtime_ns"] - u0["runtime_ns"]) / iters / (a.delta_L * 1e3)
        row["traced_us"] = p0["traced_run"]["runtime_ns"] / iters / 1e3
        row["pred0_us"], row["unshifted0_us"] = p0["runtime_ns"] / iters / 1e3, u0["runtime_ns"] / iters / 1e3
    return row


def paired_table(rows: list[dict], dl: float) -> str:
    lines = [
        f"| pattern | growth per repetition, ΔL = 0 → {dl:g} µs (in ΔL) | the model's (λ_L per repetition) "
        "| measured − model (µs) | without the shift | its miss (µs) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        d = (r["measured_dl"] - r["model_dl"]) * dl
        u = r.get("unshifted_dl")
        rest = f"{u:.3f} | {(r['measured_dl'] - u) * dl:+.2f}" if u is not None else "– | –"
        lines.append(f"| {r['pattern']} | {r['measured_dl']:.3f} | {r['model_dl']:.3f} | {d:+.2f} | {rest} |")
    polled = [r for r in rows if "unshifted_dl" in r]
    if polled:
        lines += [
            "",
            "| pattern | traced run (µs per repetition) | ΔL = 0 prediction | without the shift |",
            "|---|---:|---:|---:|",
        ]
        for r in polled:
            t, p, u = r["traced_us"], r["pred0_us"], r["unshifted0_us"]
            lines.append(
                f"| {r['pattern']} | {t:.2f} | {p:.2f} ({100 * (p / t - 1):+.1f} %) | {u:.2f} ({100 * (u / t - 1):+.1f} %) |"
            )
    return "\n".join(lines)


def measure(name: str, prog: list[str], iters: int, a, machines: dict, tmp: Path) -> dict:
    trace = tmp / f"trace-{name}"
    latitude("trace", "-o", str(trace), "--", *MPIRUN, *prog)
    traced = predict(trace, machines["tracer"])
    p0 = predict(trace, machines["injector"])
    pd = predict(trace, machines["injector"], a.delta_L * 1e3)
    runs: dict[float, list[float]] = {0.0: [], a.delta_L: []}
    for _ in range(a.reps):
        for d in runs:
            runs[d].append(injected(prog, machines["injector"], d))
    # the fastest run: other load only adds time (two spinning ranks fill the 2 cores)
    m0, md = min(runs[0.0]), min(runs[a.delta_L])
    per = 1e3 * iters  # ns per repetition → µs
    row = {
        "pattern": name,
        "args": prog[1:],
        "iters": iters,
        "traced_us": traced["traced_run"]["runtime_ns"] / per,
        "pred_tracer_us": traced["runtime_ns"] / per,
        "pred0_us": p0["runtime_ns"] / per,
        "predD_us": pd["runtime_ns"] / per,
        "lambda_L": p0["lambda"]["L"] / iters,
        "inj0_us": m0 / per,
        "injD_us": md / per,
        "inj0_runs_us": [x / per for x in runs[0.0]],
        "injD_runs_us": [x / per for x in runs[a.delta_L]],
    }
    row["growth_us"] = row["injD_us"] - row["inj0_us"]
    row["pred_growth_us"] = row["predD_us"] - row["pred0_us"]
    row["growth_in_dl"] = row["growth_us"] / a.delta_L
    row["pred_growth_in_dl"] = row["pred_growth_us"] / a.delta_L
    return row


def test_cost(gaps: Path, tmp: Path, machine: Path) -> dict:
    """ns of one unsuccessful MPI_Test (apps/gaps --pattern testcost): plain, traced, injected
    (with the injector's machine, so its eager limit), of an 8-byte receive and of an 8 KiB one
    (HPCC's RandomAccess: above the eager limit, a receive the waiting loops also poll)."""
    out = {}
    for nbytes in (8, 8192):
        prog = [str(gaps), "--pattern", "testcost", "--iters", "10000", "--bytes", str(nbytes)]
        trace = str(tmp / f"trace-testcost-{nbytes}")
        cmds = {
            "plain": [*MPIRUN, *prog],
            "traced": [sys.executable, "-m", "latitude", "trace", "-o", trace, "--", *MPIRUN, *prog],
            "injected": [
                sys.executable, "-m", "latitude", "inject", "--delta-L", "0", "--machine", str(machine),
                "--", *MPIRUN, *prog,
            ],
        }  # fmt: skip
        for k, cmd in cmds.items():
            p = subprocess.run(cmd, capture_output=True, text=True)
            found = [float(ln.split()[1]) for ln in (p.stdout + p.stderr).splitlines() if ln.startswith("test_ns ")]
            out[f"{k} {nbytes} B"] = min(found) if found else None
    return out


HPCC_SECTIONS = ("HPL_time", "PTRANS_time", "MPIRandomAccess_time", "MPIRandomAccess_LCG_time", "MPIFFT_time2")
# b_eff (LatencyBandwidth) prints no *_time= line but the time of each of its parts
# ("- for ring bandwidth = 0.159 sec"): 8-byte and 2 MB ping-pongs and rings (MPI_Sendrecv,
# MPI_Irecv/Isend/Waitall)
HPCC_BEFF = {
    "beff_pingpong_latency": "cross ping_pong latency",
    "beff_pingpong_bandwidth": "cross ping_pong bandwidth",
    "beff_ring_latency": "ring latency",
    "beff_ring_bandwidth": "ring bandwidth",
}


def hpcc_sections(tmp: Path, mode: str, delta_us: float, machine: Path) -> dict:
    """One HPCC run (N = 1000, 1 × 2, the real-application suite's input): its own per-section
    times (s, hpccoutf.txt) and, injected (with the injector's machine: its eager limit, so b_eff's
    2 MB messages follow the rendezvous rules), the span the model predicts (s)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from realapps import HPCCINF  # the suite's input: one definition

    d = Path(tempfile.mkdtemp(dir=tmp))
    (d / "hpccinf.txt").write_text(HPCCINF.format(n=1000))
    cmd = [*MPIRUN, "hpcc"]
    if mode != "plain":
        cmd = [sys.executable, "-m", "latitude", "inject", "--delta-L", f"{delta_us if mode == 'dl' else 0}us"]
        cmd += ["--machine", str(machine), "--json", "--", *MPIRUN, "hpcc"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=d)
    text = (d / "hpccoutf.txt").read_text(errors="replace") if (d / "hpccoutf.txt").exists() else ""
    row = {k: float(m.group(1)) for k in HPCC_SECTIONS if (m := re.search(rf"^{k}=(\S+)", text, re.M))}
    for k, what in HPCC_BEFF.items():
        if m := re.search(rf"- for {what}\s*=\s*(\S+) sec", text):
            row[k] = float(m.group(1))
    if mode != "plain" and p.returncode == 0:
        row["span"] = json.loads(p.stdout)["runtime_ns"] / 1e9
    return row


def hpcc_table(runs: dict, dl: float) -> str:
    cols = {"plain": "plain", "0": "injected, ΔL = 0", "dl": f"injected, ΔL = {dl:g} µs"}
    lines = ["| section (s, median) | " + " | ".join(cols.values()) + " |", "|---|" + "---:|" * len(cols)]
    for k in (*HPCC_SECTIONS, *HPCC_BEFF, "span"):
        cells = []
        for m in cols:
            v = [r[k] for r in runs[m] if k in r]
            cells.append(f"{sorted(v)[len(v) // 2]:.4f}" if v else "–")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table(rows: list[dict], dl: float) -> str:
    head = (
        "| pattern | traced | traced − pred (tracer m.) | inj(0) − traced | inj(0) − pred(0) (injector m.) "
        f"| growth to ΔL = {dl:g} µs, in ΔL | model's growth, in ΔL | inj(ΔL) − pred(ΔL) |"
    )
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['pattern']} | {r['traced_us']:.2f} | {r['traced_us'] - r['pred_tracer_us']:+.2f} "
            f"| {r['inj0_us'] - r['traced_us']:+.2f} | {r['inj0_us'] - r['pred0_us']:+.2f} "
            f"| {r['growth_in_dl']:.2f} | {r['pred_growth_in_dl']:.2f} | {r['injD_us'] - r['predD_us']:+.2f} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--patterns", default=",".join(PATTERNS))
    ap.add_argument("--reps", type=int, default=3, help="injected runs per ΔL (the fastest is used)")
    ap.add_argument("--delta-L", type=float, default=20.0, help="µs (default %(default)s)")
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("--absolute", action="store_true", help="also separate runs at ΔL = 0 and ΔL (quiet machine)")
    ap.add_argument(
        "--hpcc", type=int, default=0, metavar="REPS",
        help="also HPCC's own per-section times: plain, injected at 0 and ΔL, REPS interleaved runs each",
    )  # fmt: skip
    a = ap.parse_args()
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    with tempfile.TemporaryDirectory(prefix="latitude-injgap-") as t:
        tmp = Path(t)
        subprocess.run(["make", "-s", "-C", str(ROOT / "apps"), f"BIN={tmp}", f"{tmp}/gaps"], check=True)
        machines = {"injector": calibrate(tmp / "injector.toml", "--under-injector")}
        if a.absolute:
            machines["tracer"] = calibrate(tmp / "tracer.toml", "--under-tracer")
        for k, m in machines.items():
            print(f"machine under the {k}: " + m.read_text().split("[", 2)[1].replace("\n", " ")[:160], file=sys.stderr)
        cost = test_cost(tmp / "gaps", tmp, machines["injector"])
        rows, grow = [], []
        for name in [p for p in a.patterns.split(",") if p]:
            base = [str(tmp / "gaps"), *PATTERNS[name]]
            grow.append(paired(name, base, a, machines["injector"], tmp))
            g = grow[-1]
            print(f"{name}: growth {g['measured_dl']:.3f} ΔL (model {g['model_dl']:.3f})", file=sys.stderr, flush=True)
            if a.absolute:
                rows.append(measure(name, [*base, "--iters", str(a.iters)], a.iters, a, machines, tmp))
        hpcc: dict = {"plain": [], "0": [], "dl": []}
        for _ in range(a.hpcc):
            for m in hpcc:
                hpcc[m].append(hpcc_sections(tmp, m, a.delta_L, machines["injector"]))
    load = os.getloadavg()[0]
    print(f"2 ranks, 20 µs of work per repetition (none in the -2m patterns), load average {load:.1f}\n")
    print(paired_table(grow, a.delta_L))
    if a.absolute:
        print(f"\n{a.iters} repetitions; µs per repetition; fastest of {a.reps} injected runs per ΔL\n")
        print(table(rows, a.delta_L))
    if a.hpcc:
        print(f"\nHPCC N = 1000, 1 × 2 ({a.hpcc} interleaved runs per column; span = MPI_Init end → Finalize)\n")
        print(hpcc_table(hpcc, a.delta_L))
    shown = ", ".join(f"{k} {v:.1f} ns" if v else f"{k} (no output)" for k, v in cost.items())
    print(f"\none unsuccessful MPI_Test (apps/gaps --pattern testcost, fastest of 20 × 10,000): {shown}")
    if a.json:
        doc = {"growth": grow, "absolute": rows, "test_ns": cost} | ({"hpcc": hpcc} if a.hpcc else {})
        Path(a.json).write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
