"""Test setup: every test runs against the checkout it lives in (python/ first on sys.path),
and CLI tests run `python -m latitude` with the same path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYDIR = os.path.join(ROOT, "python")
if PYDIR not in sys.path:
    sys.path.insert(0, PYDIR)
EXAMPLES = os.path.join(PYDIR, "latitude", "data", "examples")


def cli_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = PYDIR + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def run_cli(*args, check=True, input=None, cwd=None, timeout=600):
    """Run `latitude ARGS...`; returns the CompletedProcess (text mode)."""
    cmd = [sys.executable, "-m", "latitude", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=cli_env(), input=input, cwd=cwd, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def one_line(proc, *wants, code=2):
    """`proc` failed the way bad input must: one line `latitude: ...` on stderr, exit `code`,
    nothing of a traceback; each of `wants` is in the line."""
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("latitude"), proc.stderr
    assert "Traceback" not in proc.stderr
    for w in wants:
        assert str(w) in proc.stderr, proc.stderr


@pytest.fixture(scope="session", autouse=True)
def private_cache_home(tmp_path_factory):
    """Nothing a test runs writes into the real ~/.cache (trace graphs, tracer builds): the
    whole session gets a cache home of its own (tests that need another set their own)."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def examples():
    return EXAMPLES


# The tracer fixtures (built tracers, compiled apps) are session-wide: shared by every test module.
from slurmtools import slurm_cluster  # noqa: E402, F401 - a real single-node Slurm, session-wide
from tracetools import mpich_apps, ompi_apps, tracer_cache  # noqa: E402, F401
