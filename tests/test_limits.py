"""Memory bounds: inputs that would make Latitude grow without bound are refused in one line
with how big they would be, under an address-space limit that turns any blow-up into a
failure of the test (not of the machine)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest
from conftest import EXAMPLES, cli_env, one_line

LIMIT = 4 << 30  # address space: enough for the interpreter, numpy and HiGHS


def limited(*args, timeout=120):
    """`latitude ARGS` under an address-space limit."""

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    cmd = [sys.executable, "-m", "latitude", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=cli_env(), timeout=timeout, preexec_fn=cap)


@pytest.mark.parametrize("command", ["predict", "schedule", "generate", "simulate"])
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_input_is_refused(command, device, tmp_path):
    out = ["-o", tmp_path / "x.goal"] if command == "generate" else []
    one_line(limited(command, device, *out, timeout=60), device)


def test_endless_line_in_a_file(tmp_path):
    f = tmp_path / "a.goal"
    f.write_bytes(b"num_ranks 2\n" + b"x" * (3 << 20))
    one_line(limited("predict", f), f"{f}:2: line longer than 1 MiB")


def test_enormous_jobs_are_refused_before_generating(tmp_path):
    job = tmp_path / "big.job"
    job.write_text("[JOB] big\n[RANKS] 0-3\n[ITERATIONS] 1000000000\n[MOTIF] allreduce bytes=8\n")
    one_line(limited("predict", job), f"{job}:1: the graph would have about 2.40e10 operations")
    job.write_text("[JOB] wide\n[RANKS] 0-16777215\n[MOTIF] alltoall bytes=8 alg=pairwise\n")
    one_line(limited("generate", job, "-o", tmp_path / "w.goal"), "about 5.63e14 operations", "at most")
    assert not (tmp_path / "w.goal").exists()


def test_samples_that_do_not_fit_are_refused():
    proc = limited("simulate", os.path.join(EXAMPLES, "llamp-fig4b.goal"), "--samples", "1000000000000")
    one_line(proc, "--samples: 1,000,000,000,000 samples would keep", "at most about")
