"""The binary graph format (.lgraph): `convert`, `generate -o`, `schedule -o` write it, every
command reads it, GOAL -> binary -> GOAL is byte-identical, every analysis gives the same
answer from GOAL and binary (random graphs), and a damaged binary is one line and exit 2."""

from __future__ import annotations

import json
import os
import random

import latitude
import pytest
from conftest import ROOT, run_cli
from latitude.params import Params

JOB = os.path.join(ROOT, "tests", "data", "jobs", "all_motifs.job")


def random_goal(tmp_path, i: int) -> tuple[str, Params]:
    rng = random.Random(500 + i)
    g = latitude.Graph.random(
        ranks=rng.randint(2, 6), rounds=rng.randint(2, 8), seed=i, max_calc=20000, sizes=[0, 8, 1024, 100000]
    )
    path = str(tmp_path / f"r{i}.goal")
    g.write_goal(path)
    p = Params(
        L=rng.choice([0, 500, 2000]), o=rng.choice([0, 300]), G=rng.choice([0, 0.02]), S=rng.choice([4096, "inf"])
    )
    return path, p


def test_goal_binary_goal_round_trip_is_identical(tmp_path, examples):
    for src in [os.path.join(examples, "llamp-fig4b.goal")] + [random_goal(tmp_path, i)[0] for i in range(5)]:
        binary, back = tmp_path / "x.lgraph", tmp_path / "back.goal"
        out = run_cli("convert", src, "-o", binary).stdout
        assert "wrote" in out and "lgraph" in out
        run_cli("convert", binary, "-o", back)
        assert back.read_bytes() == open(src, "rb").read(), src


@pytest.mark.parametrize("i", range(8))
def test_every_analysis_agrees_between_goal_and_binary(tmp_path, i):
    path, p = random_goal(tmp_path, i)
    binary = str(tmp_path / "g.lgraph")
    latitude.load(path).write_lgraph(binary)
    a, b = latitude.load(path), latitude.load(binary)
    assert a.info == {**b.info, "source": a.info["source"]} and b.info["source"] == path
    pa, pb = a.predict(p, path_steps=5), b.predict(p, path_steps=5)
    assert pa.to_dict() == pb.to_dict() and pa.path() == pb.path()
    sa, sb = a.sensitivity(p.L, p.L + 30000, params=p), b.sensitivity(p.L, p.L + 30000, params=p)
    assert sa.to_dict() == sb.to_dict()
    assert a.tolerance([1, 2, 5], params=p).to_dict() == b.tolerance([1, 2, 5], params=p).to_dict()
    assert a.lp(p).solve() == b.lp(p).solve()
    assert a.simulate(p).to_dict() == b.simulate(p).to_dict()
    noisy = dict(noise=["calc:gaussian:sigma=5%"], seed=3)
    assert a.simulate(p, **noisy).to_dict() == b.simulate(p, **noisy).to_dict()


def test_generate_and_schedule_write_binary(tmp_path):
    out = tmp_path / "j.lgraph"
    run_cli("generate", JOB, "-o", out)
    goal = tmp_path / "j.goal"
    run_cli("generate", JOB, "-o", goal)
    a = run_cli("predict", out, "--json").stdout
    assert a == run_cli("predict", goal, "--json").stdout
    assert latitude.load(str(out)).info["vertices"] == latitude.load(str(goal)).info["vertices"]


def damaged(tmp_path, how: str) -> str:
    good = tmp_path / "good.lgraph"
    run_cli("generate", JOB, "-o", good)
    b = bytearray(good.read_bytes())
    if how == "truncated":
        b = b[: len(b) // 2]
    elif how == "flipped":
        b[len(b) // 3] ^= 0x10
    elif how == "version":
        b[8] = 9
    elif how == "table":
        b[130] ^= 1
    path = tmp_path / f"{how}.lgraph"
    path.write_bytes(bytes(b))
    return str(path)


@pytest.mark.parametrize(
    "how, msg",
    [
        ("truncated", "truncated .lgraph file"),
        ("flipped", "corrupted .lgraph file (checksum mismatch"),
        ("version", "format version 9; this Latitude reads version 3"),
        ("table", "corrupted .lgraph file (header checksum mismatch)"),
    ],
)
def test_damaged_binary_is_one_line_and_exit_2(tmp_path, how, msg):
    path = damaged(tmp_path, how)
    for cmd in (["predict"], ["simulate"], ["convert", "-o", str(tmp_path / "o.goal")]):
        proc = run_cli(*cmd[:1], path, *cmd[1:], check=False)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"latitude: {path}: ") and msg in lines[0], proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not os.path.exists(tmp_path / "o.goal")


def test_cache_next_to_a_goal_file_is_used_while_the_goal_is_unchanged(tmp_path):
    from latitude import _core

    goal, p = random_goal(tmp_path, 1)
    cache = goal + ".lgraph"

    def runtime() -> float:
        return json.loads(run_cli("predict", goal, "--cache", "--json").stdout)["runtime_ns"]

    want = runtime()
    assert _core.is_lgraph(cache)
    # While the key (size, mtime) matches, the binary is what is read: plant another graph.
    other = latitude.Graph.random(ranks=3, rounds=2, seed=99)
    other.write_lgraph(cache, key=_core.lgraph_key([goal]))
    planted = other.predict().runtime_ns
    assert planted != want and runtime() == planted
    # The GOAL changes (mtime): read again, cache rewritten.
    os.utime(goal, ns=(1, 1))
    assert runtime() == want and latitude.load(cache).predict().runtime_ns == want
    # A file of that name that is not ours is never overwritten.
    with open(cache, "w") as f:
        f.write("mine")
    assert runtime() == want and open(cache).read() == "mine"


def test_every_command_that_loads_a_graph_takes_cache():
    """--cache is on every command whose input goes through schedule_args.load_graph."""
    import argparse
    import importlib
    import inspect

    from latitude.cli import COMMANDS, build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    loaders = [
        name
        for name in COMMANDS
        if "load_graph(" in inspect.getsource(importlib.import_module(f"latitude.commands.{name}"))
        and name != "schedule_args"
    ]
    assert {"predict", "compare", "pairs", "report", "convert"} <= set(loaders)
    for name in loaders:
        options = {o for a in sub.choices[name]._actions for o in a.option_strings}
        assert "--cache" in options, name
