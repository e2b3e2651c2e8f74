"""apps/motifs runs the plan `latitude generate --check` prints (one job-file grammar, in
Rust): for every job file of tests/data/jobs and examples, `motifs --check PLAN` reads the plan
and prints it back unchanged (every key read), and a bad plan is one line naming file and line."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import EXAMPLES, ROOT, run_cli

JOBS = os.path.join(ROOT, "tests", "data", "jobs")
VECTORS = [os.path.join(JOBS, f) for f in sorted(os.listdir(JOBS)) if f.endswith(".job")]
VECTORS.append(os.path.join(EXAMPLES, "stencil-and-io.job"))

pytestmark = pytest.mark.skipif(not shutil.which("mpicc"), reason="needs mpicc to build apps/motifs")


@pytest.fixture(scope="module")
def motifs(tmp_path_factory):
    out = tmp_path_factory.mktemp("apps")
    subprocess.run(
        ["make", "-s", "-C", os.path.join(ROOT, "apps"), f"BIN={out}", f"{out}/motifs"], check=True, capture_output=True
    )
    return str(out / "motifs")


def _c(motifs, *args):
    return subprocess.run([motifs, *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("job", VECTORS, ids=os.path.basename)
def test_motifs_reads_every_key_of_the_plan(motifs, job, tmp_path):
    plan = tmp_path / "plan.txt"
    plan.write_text(run_cli("generate", "--check", job).stdout)
    c = _c(motifs, "--check", plan)
    assert (c.returncode, c.stderr) == (0, "")
    assert c.stdout == plan.read_text()


def test_a_lognormal_sigma_travels_exactly(motifs, tmp_path):
    """The plan writes sigma with as many digits as it takes to read back the same double."""
    job = "[JOB] a\n[RANKS] 0-1\n[MOTIF] compute time=1us dist=lognormal sigma=0.123456789012345\n"
    text = run_cli("generate", "--check", job).stdout
    assert "sigma=0.123456789012345 " in text
    plan = tmp_path / "plan.txt"
    plan.write_text(text)
    assert _c(motifs, "--check", plan).stdout == text


@pytest.mark.parametrize(
    "text,line,what",
    [
        (
            "world 4\njob 1 a ranks=2 iterations=1 list=0-1\nmotif 2 halo2d px=2 py=1 wings=3 iterations=1 every=1\n",
            3,
            "unknown key or bad value in a motif line",
        ),
        ("world 4\nmotif 2 barrier alg=default compute=0 iterations=1 every=1\n", 2, "expected 'motif LINE KIND"),
        ("world 4\njob 1 a ranks=3 iterations=1 list=0-1\n", 2, "the job's rank list does not match its rank count"),
        (
            "world 4\njob 1 a ranks=2 iterations=1 list=0-1\nmotif 2 pingpong bytes=-8 iterations=1 every=1\n",
            3,
            "unknown key or bad value",
        ),
        (
            "world 4\njob 1 a ranks=2 iterations=1 list=0-1\nmotif 2 pingpong bytes=8 iterations=0 every=1\n",
            3,
            "a motif needs iterations >= 1",
        ),
        ("[JOB] a\n[RANKS] 0-1\n[MOTIF] barrier\n", 1, "a job file: run its plan"),
        ("hello\n", 1, "expected a 'world', 'job' or 'motif' line"),
        ("", None, "expected a plan"),
    ],
)
def test_a_bad_plan_is_one_line(motifs, tmp_path, text, line, what):
    plan = tmp_path / "plan.txt"
    plan.write_text(text)
    c = _c(motifs, "--check", plan)
    where = f"{plan}:{line}" if line else f"{plan}"
    assert c.returncode == 2 and c.stdout == "" and c.stderr.startswith(f"motifs: {where}: {what}"), c.stderr
    assert c.stderr.count("\n") == 1


def test_help_and_usage(motifs, tmp_path):
    h = _c(motifs, "--help")
    assert h.returncode == 0 and "PLAN" in h.stdout and "--seed" in h.stdout and "generate --check" in h.stdout
    u = _c(motifs)
    assert u.returncode == 2 and "usage:" in u.stderr
    missing = _c(motifs, "--check", tmp_path / "none.txt")
    assert missing.returncode == 2 and missing.stderr == f"motifs: {tmp_path / 'none.txt'}: no such file\n"
    bad_seed = _c(motifs, "--seed", "x", tmp_path / "none.txt")
    assert bad_seed.returncode == 2 and bad_seed.stderr == "motifs: --seed: expected a whole number, got 'x'\n"
