"""Placement map files (latitude.placement): the three formats round-trip, bad maps are one
line naming file and line, and a machine's placement can be swapped without a reload."""

import latitude
import pytest
from latitude import Params
from latitude import placement as maps
from latitude.errors import InputError

NODES = (1, 1, 0, 2, 0, 2, 1)

MACHINE = """\
o = "1us"
L = "2us"
[nodes]
ranks_per_node = 3
[intra]
L = "0.2us"
G = "0.01ns"
"""

PINGPONG = """\
[JOB] pp
[RANKS] 0-5
[ITERATIONS] 3
[MOTIF] pingpong bytes=1KiB
"""


@pytest.mark.parametrize("fmt", maps.FORMATS)
def test_formats_round_trip(tmp_path, fmt):
    path = tmp_path / f"map.{fmt}"
    maps.write_map(str(path), NODES, fmt, comment="a comment\non two lines")
    assert maps.detect_format(str(path)) == fmt
    m = maps.read_map(str(path))
    assert m.nodes == NODES
    assert maps.check(m, len(NODES), 3, None) == NODES


def test_rankfile_and_slurm_text():
    assert maps.render([1, 0, 1], "rankfile") == "rank 0=node1 slot=0\nrank 1=node0 slot=0\nrank 2=node1 slot=1\n"
    hosts = ["nid001", "nid007"]
    assert maps.render([1, 0, 1], "slurm", hosts) == "nid007\nnid001\nnid007\n"


def test_host_list(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("alpha\nbeta  # comment\ngamma\n")
    names = maps.read_hosts(str(hosts))
    assert names == ["alpha", "beta", "gamma"]
    path = tmp_path / "rf"
    maps.write_map(str(path), [2, 0, 2], "rankfile", names)
    assert "rank 0=gamma slot=0" in path.read_text()
    assert maps.read_map(str(path), hosts=names).nodes == (2, 0, 2)
    with pytest.raises(InputError, match="not in the host list"):
        maps.read_map(str(path), hosts=["alpha"])


def test_rankfile_in_any_order(tmp_path):
    path = tmp_path / "rf"
    path.write_text("rank 1=node3 slot=0\nrank 0=node3 slot=1\nrank 2=n0\n")
    assert maps.read_map(str(path)).nodes == (3, 3, 0)


BAD = [
    ("list", "0\n1\nx\n", "map:3: expected node ids"),
    ("rankfile", "rank 0=node0 slot=0\nrank 0=node1 slot=0\n", "map:2: rank 0 is placed twice (first on line 1)"),
    ("rankfile", "rank 0=node0\nrank 2=node1\n", "rank 1 is not placed"),
    ("rankfile", "rank 0 node0\n", "map:1: expected 'rank R=HOST slot=S'"),
    ("slurm", "node0\nlocalhost\n", "map:2: host 'localhost' does not end in a node number"),
    ("list", "# only a comment\n", "an empty placement file"),
    ("list", "0\n99999999999999999999\n", "map:2: node 99999999999999999999 is beyond the largest node id"),
    ("list", "0\n\u0663\n", "map:2: expected node ids"),  # an Arabic-Indic digit is not a node id
    ("slurm", "node0\nnode4294967295\n", "map:2: node 4294967295 is beyond the largest node id"),
]


@pytest.mark.parametrize("fmt,text,msg", BAD)
def test_bad_map_files(tmp_path, fmt, text, msg):
    path = tmp_path / "map"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        maps.read_map(str(path), fmt)
    assert msg in str(err.value), str(err.value)


@pytest.mark.parametrize(
    "nodes,ranks,cap,msg",
    [
        ((0, 0, 1, 1), 5, None, "map: places 4 ranks, the graph has 5"),
        ((0, 0, 1, 1, 2, 2), 5, None, "map:5: places 6 ranks, the graph has 5"),
        ((0, 0, 1, 9, 2), 5, 4, "map:4: rank 3 is placed on node 9, but the network has 4 nodes"),
        ((0, 0, 0, 1, 2), 5, None, "map:3: node 0 gets more than ranks_per_node = 2 ranks"),
    ],
)
def test_maps_that_do_not_fit(tmp_path, nodes, ranks, cap, msg):
    path = tmp_path / "map"
    path.write_text("".join(f"{n}\n" for n in nodes))
    with pytest.raises(InputError) as err:
        maps.check(maps.read_map(str(path)), ranks, 2, cap)
    assert str(err.value).endswith(msg), str(err.value)


def test_machine_placement_file_uses_the_same_reader(tmp_path):
    (tmp_path / "map.txt").write_text("0 1 # rank 0, 1\n1 x\n")
    (tmp_path / "m.toml").write_text(
        MACHINE.replace("ranks_per_node = 3", 'placement = "file"\nplacement_file = "map.txt"')
    )
    with pytest.raises(InputError, match=r"map.txt:2: expected node ids"):
        Params.from_machine(str(tmp_path / "m.toml"))


def test_with_placement_rebinds_the_same_graph(tmp_path):
    (tmp_path / "m.toml").write_text(MACHINE)
    (tmp_path / "pp.job").write_text(PINGPONG)
    g = latitude.load(str(tmp_path / "pp.job"))
    p = Params.from_machine(str(tmp_path / "m.toml"))
    apart = p.with_placement([0, 1, 0, 1, 0, 1])  # every pair of the pingpong across nodes
    together = p.with_placement([0, 0, 1, 1, 2, 2])
    assert list(g.placement(apart)) == [0, 1, 0, 1, 0, 1]
    t_apart, t_together = g.predict(apart), g.predict(together)
    # 3 round trips of 2 messages: L 2 µs vs 0.2 µs, (1 KiB − 1)·G with G 0.018 vs 0.01 ns/B
    assert t_apart.runtime_ns - t_together.runtime_ns == pytest.approx(3 * 2 * (1800 + 1023 * 0.008), rel=1e-9)
    assert g.predict(p).runtime_ns == g.predict(p.with_placement([0, 0, 0, 1, 1, 1])).runtime_ns  # block
    with pytest.raises(InputError, match="gets more than ranks_per_node"):
        g.predict(p.with_placement([0, 0, 0, 0, 1, 1]))
    with pytest.raises(InputError, match="a placement needs a machine file"):
        Params().with_placement([0])
