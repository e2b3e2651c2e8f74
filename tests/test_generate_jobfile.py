"""The C and Rust job-file parsers accept the same language: `apps/motifs --check` and
`latitude generate --check` print the same canonical text for every valid vector
(tests/data/jobs) and the same one-line error for every bad one (tests/data/bad_jobs)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import ROOT, run_cli

JOBS = os.path.join(ROOT, "tests", "data", "jobs")
BAD = os.path.join(ROOT, "tests", "data", "bad_jobs")

pytestmark = pytest.mark.skipif(not shutil.which("mpicc"), reason="needs mpicc to build apps/motifs")


@pytest.fixture(scope="module")
def motifs(tmp_path_factory):
    out = tmp_path_factory.mktemp("apps")
    subprocess.run(
        ["make", "-s", "-C", os.path.join(ROOT, "apps"), f"BIN={out}", f"{out}/motifs"], check=True, capture_output=True
    )
    return str(out / "motifs")


def _c(motifs, *args):
    return subprocess.run([motifs, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(JOBS) if f.endswith(".job")))
def test_same_canonical_text(motifs, name):
    path = os.path.join(JOBS, name)
    c = _c(motifs, "--check", path)
    r = run_cli("generate", "--check", path)
    assert c.returncode == 0, c.stderr
    assert c.stdout == r.stdout
    assert c.stdout.startswith("world ")


def test_same_errors_on_the_whole_corpus(motifs):
    cases = 0
    with open(os.path.join(BAD, "expected.txt")) as f:
        for line in f:
            name, rest = line.rstrip("\n").split(" ", 1)
            where, msg = rest.split(": ", 1)
            path = os.path.join(BAD, f"{name}.job")
            loc = path if where == "-" else f"{path}:{where}"
            c = _c(motifs, "--check", path)
            assert (c.returncode, c.stderr, c.stdout) == (2, f"motifs: {loc}: {msg}\n", ""), name
            cases += 1
    assert cases >= 70


def test_help_and_usage(motifs, tmp_path):
    h = _c(motifs, "--help")
    assert h.returncode == 0 and "JOBFILE" in h.stdout and "--seed" in h.stdout
    u = _c(motifs)
    assert u.returncode == 2 and "usage:" in u.stderr
    missing = _c(motifs, "--check", str(tmp_path / "none.job"))
    assert missing.returncode == 2 and missing.stderr == f"motifs: {tmp_path / 'none.job'}: no such file\n"
