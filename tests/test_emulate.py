"""Emulated nodes (latitude.emulate, `latitude inject --machine --placement`): the pair-delay
matrix by hand, the injector's per-pair delays checked from inside a program (apps/latcheck
with every pair on its own emulated node), the self-check per pair class on real MPI runs,
and bad input."""

from __future__ import annotations

import json
import sys

from conftest import one_line, run_cli
from latitude import Params, emulate
from tracetools import ompi, run

# 2-tier fat tree k = 4: nodes 0, 1 under one edge switch, 2, 3 under the next; wire 10 µs,
# switch 5 µs, intra-node 0.5 µs: same edge switch 2 wires + 1 switch = 25 µs, across the
# top 4 wires + 3 switches = 55 µs.
FAT_TREE = """\
o = "1us"
G = "0.018ns"
S = "4040"
[nodes]
ranks_per_node = 2
[intra]
L = "0.5us"
G = "0.01ns"
[topology]
kind = "fat_tree"
k = 4
levels = 2
[topology.latency]
wire = "10us"
switch = "5us"
"""

# every rank on a node of its own, every pair 100 µs beyond the host
FLAT = """\
L = "100.3us"
o = "1us"
S = "4040"
[nodes]
ranks_per_node = 1
[intra]
L = "0.3us"
G = "0.01ns"
"""


def test_pair_delays_by_hand(tmp_path):
    (tmp_path / "m.toml").write_text(FAT_TREE)
    p = Params.from_machine(str(tmp_path / "m.toml"))
    m = emulate.pair_delta(p, [0, 0, 1, 2, 2])
    assert m[0][1] == 0 and m[3][4] == 0  # one node
    assert m[0][2] == 24500 and m[1][2] == 24500  # nodes 0, 1: one edge switch
    assert m[0][3] == 54500 and m[2][4] == 54500  # nodes 0, 2 and 1, 2: over the top
    assert all(m[i][j] == m[j][i] for i in range(5) for j in range(5))
    assert emulate.classes(m) == [
        {"extra_ns": 0.0, "pairs": 2},
        {"extra_ns": 24500.0, "pairs": 2},
        {"extra_ns": 54500.0, "pairs": 6},
    ]
    path = tmp_path / "pd.txt"
    emulate.write_matrix(str(path), m)
    assert path.read_text().splitlines()[0].split() == ["0.000", "0.000", "24500.000", "54500.000", "54500.000"]
    assert emulate.host_one_way(p) == (500 + 2 * 1000, 0.01)


def inject(*args, check=True):
    return run([sys.executable, "-m", "latitude", "inject", *args], check=check, timeout=600)


def test_latcheck_with_every_pair_on_its_own_node(ompi_apps, tmp_path):
    """latcheck's semantics (wildcards, probes, persistent requests, rendezvous 3/4 delays,
    eager senders, an allreduce) hold with the delay coming from the pair matrix alone."""
    # 200 µs: latcheck's timing checks are relative to the delay (an eager send must take under
    # half of it), and 3 ranks on 2 cores can lose ~10 µs to the scheduler (seen: 58 µs of 50)
    (tmp_path / "m.toml").write_text(FLAT.replace('L = "100.3us"', 'L = "200.3us"'))
    (tmp_path / "map.txt").write_text("0 1 2\n")
    prog = [*ompi(3), ompi_apps / "latcheck", "--delta-us", "200", "--eager", "4040", "--rounds", "2"]
    out = inject("--machine", tmp_path / "m.toml", "--placement", tmp_path / "map.txt", "--json", "--", *prog)
    assert "latcheck: ok" in out.stderr and "FAIL" not in out.stderr, out.stderr[-3000:]
    data = json.loads(out.stdout)
    assert data["pair_delay_classes"] == [{"extra_ns": 200000.0, "pairs": 3}]
    assert data["delta_L_ns"] == 0


def test_latcheck_fails_when_the_pairs_share_a_node(ompi_apps, tmp_path):
    """Not vacuous: the same check with all ranks on one emulated node (no extra delay) fails."""
    (tmp_path / "m.toml").write_text(FLAT.replace("ranks_per_node = 1", "ranks_per_node = 3"))
    (tmp_path / "map.txt").write_text("0 0 0\n")
    prog = [*ompi(3), ompi_apps / "latcheck", "--delta-us", "100", "--rounds", "1"]
    out = inject("--machine", tmp_path / "m.toml", "--placement", tmp_path / "map.txt", "--", *prog, check=False)
    assert out.returncode != 0 and "FAIL" in out.stdout + out.stderr


def test_self_check_per_pair_class(ompi_apps, tmp_path):
    (tmp_path / "m.toml").write_text(FAT_TREE)
    (tmp_path / "map.txt").write_text("0 0 1 2\n")
    mpi = [*ompi(2)]
    out = inject(
        "--machine", tmp_path / "m.toml", "--placement", tmp_path / "map.txt", "--self-check", "--json", "--", *mpi
    )
    rows = json.loads(out.stdout)["pair_delay_self_check"]
    assert [r["extra_ns"] for r in rows] == [0.0, 24500.0, 54500.0]
    assert all(r["ok"] for r in rows), rows
    for r in rows[1:]:
        assert abs(r["measured_ns"] - r["extra_ns"]) <= max(500, 0.03 * r["extra_ns"])


def test_bad_emulation_input(tmp_path):
    (tmp_path / "m.toml").write_text(FAT_TREE)
    (tmp_path / "flat.toml").write_text('L = "1us"\n')
    (tmp_path / "map.txt").write_text("0 0 0\n")
    cmd = ["--", "mpirun", "-np", "2", "true"]
    one_line(run_cli("inject", "--placement", tmp_path / "map.txt", *cmd, check=False), "--placement: needs --machine")
    one_line(
        run_cli("inject", "--machine", tmp_path / "m.toml", "--placement", tmp_path / "map.txt", *cmd, check=False),
        "map.txt:1: node 0 gets more than ranks_per_node = 2 ranks",
    )
    one_line(
        run_cli("inject", "--machine", tmp_path / "flat.toml", "--placement", tmp_path / "map.txt", *cmd, check=False),
        "--machine: emulating nodes needs a machine file with [nodes]",
    )
    one_line(
        run_cli("inject", "--self-check", "--delta-L", "1us", *cmd, check=False), "--self-check: needs --placement"
    )
    one_line(run_cli("inject", *cmd, check=False), "--delta-L: expected the added latency")
