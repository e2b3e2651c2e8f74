"""Every malformed GOAL file gives exactly one line `latitude: <file>[:<line>]: <what>`,
exit code 2, and no traceback or panic. Each corpus file states its expectation in its
first line: `// expect: <line or 0 for none>: <message substring>`."""

import glob
import os
import re

import pytest
from conftest import ROOT, run_cli

CORPUS = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "bad_goal", "*.goal")))


def expectation(path):
    with open(path) as f:
        m = re.match(r"// expect: (\d+): (.*)", f.readline())
    assert m, f"{path}: missing expectation header"
    return int(m.group(1)), m.group(2).strip()


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("path", CORPUS, ids=[os.path.basename(p) for p in CORPUS])
def test_malformed_goal_gives_one_line_error(path):
    line, msg = expectation(path)
    proc = run_cli("predict", path, check=False)
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1, proc.stderr
    where = f"{path}:{line}: " if line else f"{path}: "
    assert err[0].startswith("latitude: " + where), err[0]
    assert msg in err[0], err[0]
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
    assert proc.stdout == ""


def test_missing_file_and_directory(tmp_path):
    proc = run_cli("predict", tmp_path / "nope.goal", check=False)
    assert proc.returncode == 2 and "no such file" in proc.stderr
    proc = run_cli("predict", tmp_path, check=False)
    assert proc.returncode == 2 and "is a directory" in proc.stderr


def test_bad_parameter_values(examples):
    g = os.path.join(examples, "llamp-fig4b.goal")
    for args, msg in (
        (["-L", "3parsecs"], "unknown time unit"),
        (["-S", "1.5B"], "not a whole number"),
        (["-G=-1ns"], "expected a per-byte gap"),
        (["-G"], "expected one argument"),
        (["--machine", "/nonexistent.toml"], "no such machine file"),
    ):
        proc = run_cli("predict", g, *args, check=False)
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and msg in proc.stderr, (args, proc.stderr)
