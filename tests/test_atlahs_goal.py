"""GOAL as ATLAHS's NCCL generator writes it (one rank per GPU, each stream on its own cpu,
tags wider than 32 bits, many labels and ranks): the bundled NCCL-style ring allreduce
(8 GPUs x 4 streams) against its hand-derived runtime, in `predict` and `simulate`."""

from __future__ import annotations

import importlib.util
import json
import os
import re

import pytest
from conftest import EXAMPLES, one_line, run_cli
from latitude.graph import Graph

FIXTURE = os.path.join(EXAMPLES, "nccl-ring-allreduce-8x4.goal")
L, O, G = 3000.0, 1500.0, 0.018  # ns, ns, ns per byte
MODEL = ["-L", "3us", "-o", "1.5us", "-G", "0.018ns", "-S", "inf"]


def generator():
    spec = importlib.util.spec_from_file_location("make_examples", os.path.join(EXAMPLES, "make_examples.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.nccl_ring


def hand_derived(ranks, chunk=131072, launch=5000, reduce=3000):
    """Every stream is its own ring and its own cpu, all ranks in lock step: a step is the
    send's o, L, (chunk - 1) G and the receive's o; 2p - 2 steps, p - 1 of them reduce."""
    step = 2 * O + L + (chunk - 1) * G
    return launch + (2 * ranks - 2) * step + (ranks - 1) * reduce


def runtime(command, path, *extra):
    return json.loads(run_cli(command, path, *MODEL, *extra, "--json").stdout)["runtime_ns"]


def test_the_fixture_is_what_the_generator_writes():
    assert open(FIXTURE).read() == generator()()


def test_fixture_uses_atlahs_constructs():
    text = open(FIXTURE).read()
    assert {int(c) for c in re.findall(r" cpu (\d+)", text)} == {0, 1, 2, 3, 4}
    assert max(int(t) for t in re.findall(r" tag (\d+)", text)) >= 2**32  # wider than 32 bits


@pytest.mark.parametrize("command", ["predict", "simulate"])
def test_ring_allreduce_8x4_matches_the_hand_derived_runtime(command):
    # 5000 + 14 (2 * 1500 + 3000 + 131071 * 0.018) + 7 * 3000
    assert hand_derived(8) == pytest.approx(143029.892, abs=1e-6)
    assert runtime(command, FIXTURE) == pytest.approx(hand_derived(8), abs=1e-3)


def test_many_ranks_and_labels(tmp_path):
    path = tmp_path / "ring-96x4.goal"
    path.write_text(generator()(ranks=96, streams=4))
    assert runtime("predict", str(path)) == pytest.approx(hand_derived(96), abs=1e-3)


def test_streams_on_one_cpu_queue_for_it_in_the_simulator(tmp_path):
    """LogGOPSim's rule: one phase at a time per (rank, cpu). With every stream's ops on
    cpu 0 the four rings' phases queue for one CPU; the engine (predict) has no CPU
    contention and is unchanged."""
    path = tmp_path / "one-cpu.goal"
    path.write_text(re.sub(r" cpu \d+", "", open(FIXTURE).read()))
    assert runtime("predict", str(path)) == pytest.approx(hand_derived(8), abs=1e-3)
    assert runtime("simulate", str(path)) > 1.5 * hand_derived(8)


def test_wide_tags_match_exactly(tmp_path):
    """Two tags with the same low 32 bits stay different (txt2bin would truncate both to
    705033004 and match the 8-byte receive with the 1 MB send)."""
    a, b = 5000000300, 5000000300 + 2**32
    path = tmp_path / "wide.goal"
    path.write_text(
        f"num_ranks 2\nrank 0 {{\nl1: send 1000000b to 1 tag {a}\nl2: send 8b to 1 tag {b}\n}}\n"
        f"rank 1 {{\nl1: recv 8b from 0 tag {b}\nl2: recv 1000000b from 0 tag {a}\nl2 requires l1\n}}\n"
    )
    # the 8-byte message ends first; the 1 MB one needs o + L + (10^6 - 1) G + o on its own
    t = runtime("simulate", str(path))
    assert t == pytest.approx(2 * O + L + 999999 * G, abs=1e-3)
    assert runtime("predict", str(path)) == pytest.approx(t, abs=1e-3)


def shifted(text, cpu, nic):
    """The fixture with every cpu index raised by `cpu` and every nic index by `nic`."""
    text = re.sub(r" cpu (\d+)", lambda m: f" cpu {int(m[1]) + cpu}", text)
    return re.sub(r" nic (\d+)", lambda m: f" nic {int(m[1]) + nic}", text)


@pytest.mark.parametrize("command", ["predict", "simulate"])
def test_cpu_and_nic_indices_above_255(tmp_path, command):
    """ATLAHS numbers the streams and NICs of a node consecutively, past 255: the same ring
    on cpus 300..304 and nics 1000.. has the same runtime, and a GOAL round trip keeps them."""
    path = tmp_path / "wide-cpus.goal"
    path.write_text(shifted(open(FIXTURE).read(), 300, 1000))
    assert runtime(command, str(path)) == pytest.approx(hand_derived(8), abs=1e-3)
    out = tmp_path / "again.goal"
    graph = Graph.from_goal(str(path), progress=False)
    assert (graph.info["max_cpu"], graph.info["max_nic"]) == (304, 1000)
    graph.write_goal(str(out))
    again = out.read_text()
    assert {int(c) for c in re.findall(r" cpu (\d+)", again)} == {300, 301, 302, 303, 304}
    assert min(int(n) for n in re.findall(r" nic (\d+)", again)) == 1000
    # and so does the binary form (.lgraph: cpu and nic are 16-bit sections)
    binary = tmp_path / "wide-cpus.lgraph"
    graph.write_lgraph(str(binary))
    assert runtime(command, str(binary)) == runtime(command, str(path))
    mapped = Graph.from_lgraph(str(binary))
    assert (mapped.info["max_cpu"], mapped.info["max_nic"]) == (304, 1000)


def test_streams_on_one_wide_cpu_still_queue(tmp_path):
    """cpu 65535 (the largest index) is one CPU like any other: the four rings queue for it."""
    path = tmp_path / "one-wide-cpu.goal"
    path.write_text(re.sub(r" cpu \d+", " cpu 65535", open(FIXTURE).read()))
    assert runtime("simulate", str(path)) > 1.5 * hand_derived(8)


def test_cpu_index_beyond_16_bits_is_refused(tmp_path):
    path = tmp_path / "too-wide.goal"
    path.write_text("num_ranks 1\nrank 0 {\nl1: calc 5 cpu 65536\n}\n")
    one_line(run_cli("predict", str(path), check=False), "too-wide.goal:3", "cpu index 65536", "0..65535")
