"""Seeded mutation fuzzer for everything a user hands Latitude: GOAL files, traces, job files,
machine files and option strings.

Each case takes a valid seed input, mutates it (bytes flipped, lines deleted, duplicated or
swapped, numbers replaced by extreme ones, control characters, NUL bytes, endless lines,
truncation) and runs the CLI on it under a time limit and an address-space limit. Allowed:
exit 0, or exactly one line `latitude...` on stderr with exit 2. Anything else (a traceback,
a signal, a hang, a memory blow-up, another exit status) is a failure; the case's input is
kept in --keep and the command to replay it printed.

    python3 tests/fuzz.py --seconds 120                 # random seed, printed (CI seeds from the commit)
    python3 tests/fuzz.py --seed 7 --case 41            # replay one case
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PYDIR = os.path.join(ROOT, "python")
EXAMPLES = os.path.join(PYDIR, "latitude", "data", "examples")
SEEDS = os.path.join(HERE, "data", "fuzz_seeds")

CASE_TIMEOUT = 60.0  # s: a small input that takes longer is a hang
MEMORY = 4 << 30  # address space: the interpreter, numpy and HiGHS fit; a blow-up does not
MAX_OPS = "2000000"  # job files: a mutated count may ask for a large but legal graph

MACHINE = "[loggps]\nL = '3us'\no = '1.5us'\ng = 0\nG = '0.018ns'\nO = 0\nS = '256KiB'\nprotocol = 'handshake'\n"
OPTIONS = {  # option -> a valid value to mutate (predict / tolerance / simulate)
    "-L": "3us",
    "-o": "1.5us",
    "-G": "50GB/s",
    "-S": "256KiB",
    "--pct": "1,2,5",
    "--map": "L=0:10us,G=0:0.1ns",
    "--noise": "calc:gaussian:sigma=5%",
    "--seed": "3",
    "--coll": "allreduce=ring",
}
EXTREMES = [
    "0",
    "-1",
    "-0",
    "1e308",
    "1e-308",
    "nan",
    "inf",
    "18446744073709551616",
    "9223372036854775807",
    "4294967296",
    "2147483648",
    "0x10",
    "1e9",
    "",
    "999999999999999999999999999999",
]
JUNK = ["\x00", "\x1b[31m", "\r", "\t", "\u2028", "\xff", "µ", "#", "{", "}", "[", "]", "=", ":", ",", "\\"]


def seeds() -> list[tuple[str, str]]:
    """(kind, path) of every valid seed input."""
    out = [("goal", os.path.join(EXAMPLES, n)) for n in ("llamp-fig4b.goal", "llamp-fig4c.goal")]
    out.append(("job", os.path.join(EXAMPLES, "stencil-and-io.job")))
    out += [
        ("job", os.path.join(HERE, "data", "jobs", n)) for n in sorted(os.listdir(os.path.join(HERE, "data", "jobs")))
    ]
    out += [("trace", os.path.join(SEEDS, n)) for n in sorted(os.listdir(SEEDS))]
    out.append(("machine", ""))
    out.append(("options", ""))
    return out


# ---- mutations (each takes and returns bytes) ----
def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def flip(rng, data):
    if not data:
        return b"\x00"
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


def delete_line(rng, data):
    ls = _lines(data)
    del ls[rng.randrange(len(ls))]
    return b"\n".join(ls)


def duplicate_line(rng, data):
    ls = _lines(data)
    i = rng.randrange(len(ls))
    ls.insert(i, ls[i])
    return b"\n".join(ls)


def swap_lines(rng, data):
    ls = _lines(data)
    i, j = rng.randrange(len(ls)), rng.randrange(len(ls))
    ls[i], ls[j] = ls[j], ls[i]
    return b"\n".join(ls)


def extreme_number(rng, data):
    nums = list(re.finditer(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?", data))
    if not nums:
        return insert_junk(rng, data)
    m = rng.choice(nums)
    return data[: m.start()] + rng.choice(EXTREMES).encode() + data[m.end() :]


def insert_junk(rng, data):
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(JUNK).encode("utf-8", "surrogatepass") + data[i:]


def truncate(rng, data):
    return data[: rng.randrange(len(data) + 1)]


def long_line(rng, data):
    i = rng.randrange(len(data) + 1)
    return data[:i] + b"7" * rng.choice((1 << 10, 1 << 16, (1 << 20) + 7)) + data[i:]


MUTATIONS = [flip, delete_line, duplicate_line, swap_lines, extreme_number, extreme_number, insert_junk, truncate]
RARE = [long_line]


def mutate(rng, data: bytes) -> bytes:
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.choice(RARE) if rng.random() < 0.05 else rng.choice(MUTATIONS)
        data = op(rng, data)
    return data


# ---- cases ----
def build_case(seed: int, k: int, work: str) -> list[str]:
    """Write case `k`'s inputs under `work` and return the latitude arguments."""
    rng = random.Random(f"{seed}:{k}")
    kind, path = rng.choice(seeds())
    if kind == "goal":
        out = os.path.join(work, "g.goal")
        with open(path, "rb") as f, open(out, "wb") as g:
            g.write(mutate(rng, f.read()))
        return [rng.choice(("predict", "tolerance")), out]
    if kind == "job":
        out = os.path.join(work, "j.job")
        with open(path, "rb") as f, open(out, "wb") as g:
            g.write(mutate(rng, f.read()))
        return [rng.choice(("predict", "generate")), out, "--max-ops", MAX_OPS]
    if kind == "trace":
        d = os.path.join(work, "trace")
        shutil.rmtree(d, ignore_errors=True)  # a work directory reused for several cases
        shutil.copytree(path, d)
        names = sorted(os.listdir(d))
        victim = os.path.join(d, rng.choice(names))
        with open(victim, "rb") as f:
            data = f.read()
        with open(victim, "wb") as f:
            f.write(mutate(rng, data))
        return [rng.choice(("predict", "schedule")), d]
    goal = os.path.join(EXAMPLES, "llamp-fig4b.goal")
    if kind == "machine":
        m = os.path.join(work, "m.toml")
        with open(m, "wb") as f:
            f.write(mutate(rng, MACHINE.encode()))
        return ["predict", goal, "--machine", m]
    opt = rng.choice(sorted(OPTIONS))
    # an argument cannot hold NUL and is at most 128 KiB (execve)
    value = mutate(rng, OPTIONS[opt].encode()).decode("utf-8", "replace").replace("\x00", "")[:100_000]
    command = {"--pct": "tolerance", "--map": "tolerance", "--noise": "simulate", "--seed": "simulate"}.get(
        opt, "predict"
    )
    extra = ["--samples", "20"] if command == "simulate" else []
    given = [opt + "=" + value] if opt.startswith("--") else [opt, value]  # `-L=x` would mean "=x"
    return [command, goal, *given, *extra]


def verdict(proc) -> str | None:
    """None when the run behaved; else what was wrong."""
    if proc.returncode in (0, 2) and (proc.returncode == 0 or _one_line(proc.stderr)):
        return None
    if proc.returncode < 0:
        return f"killed by signal {-proc.returncode}"
    if "Traceback" in proc.stderr:
        return "traceback"
    return f"exit {proc.returncode} with {proc.stderr.count(chr(10))} lines on stderr"


def _one_line(stderr: str) -> bool:
    return stderr.count("\n") == 1 and stderr.startswith("latitude")


def run_case(seed: int, k: int, keep: str | None, tally: dict | None = None) -> str | None:
    work = tempfile.mkdtemp(prefix=f"latitude-fuzz-{seed}-{k}-")
    try:
        args = build_case(seed, k, work)
        env = dict(os.environ, PYTHONPATH=PYDIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
        env.pop("LATITUDE_PROGRESS", None)

        def cap():
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

        try:
            proc = subprocess.run(
                [sys.executable, "-m", "latitude", *args],
                capture_output=True,
                text=True,
                errors="replace",
                env=env,
                cwd=work,
                timeout=CASE_TIMEOUT,
                preexec_fn=cap,
            )
            bad = verdict(proc)
            detail = proc.stderr.strip()[-1500:]
            if tally is not None:
                tally[proc.returncode] = tally.get(proc.returncode, 0) + 1
        except subprocess.TimeoutExpired:
            bad, detail = f"no answer within {CASE_TIMEOUT:.0f} s (hang)", ""
        if bad:
            kept = work
            if keep:
                kept = os.path.join(keep, f"case-{seed}-{k}")
                shutil.rmtree(kept, ignore_errors=True)
                shutil.copytree(work, kept)
            print(f"fuzz: case {k}: {bad}: latitude {' '.join(args)}\n  input kept in {kept}\n  {detail}", flush=True)
            return bad
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="seed (default: random, printed)")
    ap.add_argument("--seconds", type=float, default=120.0, help="time budget (default 120)")
    ap.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    ap.add_argument("--case", type=int, default=None, help="run only this case (replay)")
    ap.add_argument("--keep", default=os.path.join(ROOT, "out", "fuzz"), help="where failing inputs are kept")
    a = ap.parse_args(argv)
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 32)
    print(
        f"fuzz: seed {seed}, budget {a.seconds:g} s (replay: python3 tests/fuzz.py --seed {seed} --case K)", flush=True
    )
    if a.case is not None:
        return 1 if run_case(seed, a.case, a.keep) else 0
    start, k, failures, tally = time.monotonic(), 0, 0, {}
    while time.monotonic() - start < a.seconds and (a.cases is None or k < a.cases):
        failures += run_case(seed, k, a.keep, tally) is not None
        k += 1
    print(
        f"fuzz: {k} cases in {time.monotonic() - start:.0f} s: {tally.get(0, 0)} ran, {tally.get(2, 0)} refused "
        f"in one line, {failures} failed (seed {seed})",
        flush=True,
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
