"""Every `--json` output follows its JSON Schema (docs/json.md), checked on real command output:
the bundled example, liballprof's sample trace, a job file. trace, inject, calibrate and validate
are checked where their tests run MPI (test_trace_cli, test_inject, test_calibrate, test_validate)."""

from __future__ import annotations

import copy
import json
import os

import jsonschema
import pytest
from conftest import EXAMPLES, ROOT, run_cli
from jsonschemas import SCHEMA_DIR, check, schema

GOAL = os.path.join(EXAMPLES, "halo2d-16.goal")
TRACE = os.path.join(ROOT, "tests", "data", "liballprof-bcast")
JOB = os.path.join(EXAMPLES, "stencil-and-io.job")
FAT_TREE = os.path.join(EXAMPLES, "machines", "fat-tree-k16.toml")  # a network: named parameters beyond L, G
DRAGONFLY = os.path.join(EXAMPLES, "machines", "dragonfly-g8.toml")


def out(*args) -> dict:
    return json.loads(run_cli(*args, "--json").stdout)


CASES = {
    "predict": [
        ("predict", GOAL, "--path", "5"),
        ("predict", TRACE),
        ("predict", JOB, "-S", "inf"),
        ("predict", GOAL, "--machine", FAT_TREE),
    ],
    "sensitivity": [
        ("sensitivity", GOAL, "--range", "0:100us"),
        ("sensitivity", GOAL, "--param", "G", "--range", "0:0.1ns"),
        ("sensitivity", GOAL, "--machine", FAT_TREE, "--param", "wire", "--range", "274:424ns"),
    ],
    "tolerance": [
        ("tolerance", GOAL),
        ("tolerance", TRACE, "--pct", "0,1,1000"),
        ("tolerance", GOAL, "--method", "lp"),
        ("tolerance", GOAL, "--machine", FAT_TREE, "--param", "wire"),
    ],
    "tolerance-map": [
        ("tolerance", GOAL, "--map", "L=0:20us,G=0:0.1ns", "--resolution", "4"),
        ("tolerance", GOAL, "--machine", FAT_TREE, "--map", "wire,switch", "--resolution", "4"),
    ],
    "lp": [("lp", GOAL, "--solve"), ("lp", GOAL, "--machine", FAT_TREE, "--solve")],
    "simulate": [
        ("simulate", GOAL, "--samples", "4", "--noise", "calc:gaussian:sigma=5%"),
        ("simulate", GOAL, "--loggopsim-compat", "-G", "6", "-S", "65535"),
    ],
    "schedule": [("schedule", TRACE), ("schedule", TRACE, "--no-collectives")],
    "generate": [("generate", JOB)],
    "pairs": [("pairs", GOAL), ("pairs", GOAL, "--machine", FAT_TREE), ("pairs", TRACE)],
    "compare": [
        ("compare", GOAL, "--machine", FAT_TREE, "--machine", DRAGONFLY, "--param", "wire", "--pct", "1,5"),
        ("compare", GOAL, "--machine", FAT_TREE, "--machine", DRAGONFLY, "--param", "wire", "--range", "274:3500ns"),
    ],
    "decompose": [("decompose", GOAL, "-S", "0"), ("decompose", TRACE), ("decompose", JOB)],
}


@pytest.mark.parametrize("name,args", [(n, a) for n, cases in CASES.items() for a in cases])
def test_output_follows_its_schema(name, args):
    check(name, out(*args))


def test_the_timeline_summary_follows_the_schema(tmp_path):
    check("simulate", out("simulate", GOAL, "--timeline", tmp_path / "t.json"))


def test_the_sweep_summary_follows_the_schema(tmp_path):
    pytest.importorskip("pyarrow")
    spec = tmp_path / "spec.toml"
    spec.write_text(f'input = ["{GOAL}", "{JOB}"]\n[params]\nL = ["1us", "2us"]\n')
    summary = check("sweep", out("sweep", spec, "-o", tmp_path / "r.parquet", "--workers", "1"))
    assert (summary["points"], summary["evaluated"]) == (4, 4)


def test_every_schema_is_valid_and_documented():
    docs = open(os.path.join(ROOT, "docs", "json.md"), encoding="utf-8").read()
    names = sorted(f[: -len(".json")] for f in os.listdir(SCHEMA_DIR))
    # variability and coll-model: checked on real measurements (test_variability, test_coll_model)
    assert names == sorted([*CASES, "trace", "inject", "calibrate", "validate", "sweep", "variability", "coll-model"])
    for name in names:
        jsonschema.Draft202012Validator.check_schema(schema(name))
        assert f"schema/{name}.json" in docs, name


def test_a_renamed_or_mistyped_key_fails():
    """The schemas can fail: the stable keys are required and typed."""
    good = out("predict", GOAL)
    for mutate in (
        lambda d: d.pop("runtime_ns"),
        lambda d: d["lambda"].pop("L"),
        lambda d: d.__setitem__("rho_L", "0.5"),
        lambda d: d["critical_path"].__setitem__("messages", -1),
        lambda d: d["params"].__setitem__("protocol", "rdma"),
    ):
        bad = copy.deepcopy(good)
        mutate(bad)
        with pytest.raises(jsonschema.ValidationError):
            check("predict", bad)
