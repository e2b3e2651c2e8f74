"""Machines with networks (docs/network.md): machine files, hop counts, a ping-pong worked
by hand, engine = LP per named parameter and per pair of ranks on random machines, exact λ
per class, the commands end to end, and bad machine files (one line naming file and key)."""

import json
import os
import random

import latitude
import pytest
from conftest import run_cli
from latitude import Params
from latitude.errors import InputError

HERE = os.path.dirname(os.path.abspath(__file__))

# The issue's example machine file (TOML needs newlines where the issue wrote ';').
FAT_TREE = """\
o = "1.5us"
G = "0.018ns"
S = "256KiB"
[nodes]
ranks_per_node = 4
placement = "block"
[intra]
L = "0.3us"
G = "0.01ns"
[topology]
kind = "fat_tree"
k = 16
levels = 3
[topology.latency]
wire = "274ns"
switch = "108ns"
"""

DRAGONFLY = """\
o = "1.5us"
G = "0.018ns"
[params]
wire = "274ns"
[topology]
kind = "dragonfly"
g = 8
a = 4
p = 8
[topology.latency]
terminal = "wire"
local = "wire"
global = "wire"
switch = "108ns"
"""

# 4 nodes, 5 switches: n0, n1 on s0; n2 on s1; n3 on s2; s0-s3-s1, s0-s4-s1, s1-s2, s2-s4.
NETWORK = """\
# a 5-switch network
nodes 4
switches 5
n0 s0 host
n1 s0 host
n2 s1 host
n3 s2 host
s0 s3 wire
s3 s1 wire
s0 s4 wire
s4 s1 wire
s1 s2 wire
s2 s4 wire
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def machine(tmp_path, text, name="m.toml") -> Params:
    return Params.from_machine(write(tmp_path, name, text))


def topo(kind, shape, latency, extra=""):
    lat = "\n".join(f'{k} = "{v}"' for k, v in latency.items())
    return f'[topology]\nkind = "{kind}"\n{shape}\n[topology.latency]\n{lat}\n{extra}'


# -- hop counts against hand counts ---------------------------------------------------------


def test_fat_tree_k4_two_levels_by_hand(tmp_path):
    m = machine(tmp_path, topo("fat_tree", "k = 4\nlevels = 2", {"wire": "1ns", "switch": "1ns"})).machine
    assert m.nodes() == 8 and m.classes == ("wire", "switch")
    assert m.node_route(0, 1) == {"wire": 2, "switch": 1}  # one edge switch
    assert m.node_route(0, 2) == {"wire": 4, "switch": 3}  # up to a spine and down
    assert m.node_route(7, 1) == {"wire": 4, "switch": 3}


def test_dragonfly_g3_a2_p2_by_hand(tmp_path):
    lat = {"terminal": "1ns", "local": "1ns", "global": "1ns", "switch": "1ns"}
    m = machine(tmp_path, topo("dragonfly", "g = 3\na = 2\np = 2", lat)).machine
    assert m.nodes() == 12
    # routers: g0 = {r0: n0 n1, r1: n2 n3}, g1 = {r2: n4 n5, r3: n6 n7}, g2 = {r4, r5}
    # global links (router t of a group reaches its t-th next group): g0r0-g1r1, g0r1-g2r0, g1r0-g2r1
    assert m.node_route(0, 1) == {"terminal": 2, "local": 0, "global": 0, "switch": 1}
    assert m.node_route(0, 3) == {"terminal": 2, "local": 1, "global": 0, "switch": 2}
    assert m.node_route(0, 7) == {"terminal": 2, "local": 0, "global": 1, "switch": 2}
    assert m.node_route(0, 5) == {"terminal": 2, "local": 1, "global": 1, "switch": 3}
    assert m.node_route(3, 4) == {"terminal": 2, "local": 2, "global": 1, "switch": 4}
    assert m.node_route(9, 2) == {"terminal": 2, "local": 0, "global": 1, "switch": 2}


def test_torus_3x3_by_hand(tmp_path):
    m = machine(tmp_path, topo("torus", "dims = [3, 3]", {"x": "1ns", "y": "1ns", "switch": "1ns"})).machine
    assert m.nodes() == 9 and m.classes == ("x", "y", "switch")
    assert m.node_route(0, 1) == {"x": 1, "y": 0, "switch": 2}
    assert m.node_route(0, 2) == {"x": 1, "y": 0, "switch": 2}  # the wrap-around link
    assert m.node_route(0, 8) == {"x": 1, "y": 1, "switch": 3}  # (0,0) -> (2,2): both wrap
    assert m.node_route(4, 0) == {"x": 1, "y": 1, "switch": 3}
    assert m.node_route(1, 7) == {"x": 0, "y": 1, "switch": 2}


def test_five_switch_graph_file_by_hand(tmp_path):
    write(tmp_path, "net.txt", NETWORK)
    lat = {"host": "1ns", "wire": "1ns", "switch": "1ns"}
    m = machine(tmp_path, topo("graph", 'file = "net.txt"', lat)).machine
    assert m.nodes() == 4 and m.classes == ("host", "wire", "switch")
    assert m.node_route(0, 1) == {"host": 2, "wire": 0, "switch": 1}
    assert m.node_route(0, 2) == {"host": 2, "wire": 2, "switch": 3}  # via s3 (lower id than s4)
    assert m.node_route(0, 3) == {"host": 2, "wire": 2, "switch": 3}  # via s4, s2
    assert m.node_route(2, 3) == {"host": 2, "wire": 1, "switch": 2}


# -- a ping-pong worked by hand ----------------------------------------------------------------

PING_PONG = """\
num_ranks 2
rank 0 {
l1: send 1001b to 1 tag 0
l2: recv 1001b from 1 tag 1
l2 requires l1
}
rank 1 {
l1: recv 1001b from 0 tag 0
l2: send 1001b to 0 tag 1
l2 requires l1
}
"""


def test_ping_pong_on_two_fat_tree_nodes_by_hand(tmp_path):
    # Ranks on nodes 0 and 2 of a 2-level k = 4 fat tree: 4 wires and 3 switches each way.
    # Each leg: o + (4·274 + 3·108 ns) + 1000 B·0.018 ns + o = 1000 + 1420 + 18 + 1000 ns;
    # T = 2 legs = 6876 ns; λ_wire = 8, λ_switch = 6, λ_L = 2 (L = 0: nothing added).
    write(tmp_path, "map.txt", "0\n2\n")
    goal = write(tmp_path, "pp.goal", PING_PONG)
    text = 'o = "1us"\nG = "0.018ns"\n[nodes]\nplacement = "file"\nplacement_file = "map.txt"\n' + topo(
        "fat_tree", "k = 4\nlevels = 2", {"wire": "274ns", "switch": "108ns"}
    )
    m = write(tmp_path, "ft.toml", text)
    out = json.loads(run_cli("predict", goal, "--machine", m, "--json").stdout)
    assert out["runtime_ns"] == 6876.0
    assert out["lambda"] == {"L": 2, "G": 2000, "o": 4, "g": 0, "O": 2000, "wire": 8, "switch": 6}
    assert out["critical_path"]["latency_terms"] == 2
    assert out["params"]["wire"] == 274.0 and out["params"]["machine"]["topology"]["kind"] == "fat_tree"
    # the same two ranks on one node pay only L (0 here): 2·(1000 + 18 + 1000)
    one = write(tmp_path, "one.toml", text.replace('"file"\nplacement_file = "map.txt"', '"block"\nranks_per_node = 2'))
    assert json.loads(run_cli("predict", goal, "--machine", one, "--json").stdout)["runtime_ns"] == 4036.0


# -- engine = LP per class and per pair, random machines ----------------------------------------


def random_machine(rng: random.Random, ranks: int, tmp_path, i: int) -> Params:
    """A random machine file for `ranks` ranks (every topology kind, placements, [intra],
    per-pair L matrices), with random non-integer values."""
    rpn = rng.randint(1, 3)
    need = -(-ranks // rpn)
    t = lambda: f"{rng.uniform(10, 900):.3f}ns"  # noqa: E731
    kind = rng.choice(["flat", "fat_tree", "dragonfly", "torus", "graph"])
    text = f'L = "{rng.uniform(0, 3000):.3f}ns"\no = "{rng.choice([0, 100, 1500])}ns"\nG = "{rng.choice([0, 0.018, 1.0])}ns"\n'
    text += f'S = {rng.choice([0, 1024, 65536, 1 << 40])}\nprotocol = "{rng.choice(["handshake", "loggopsim"])}"\n'
    if kind == "fat_tree":
        k, levels = 4, rng.randint(1, 2)
        while 2 * (k // 2) ** levels < need:
            levels += 1
        text += topo(kind, f"k = {k}\nlevels = {levels}", {"wire": t(), "switch": t()})
        nodes = 2 * (k // 2) ** levels
    elif kind == "dragonfly":
        g, a, p = 3, 2, rng.randint(1, 2)
        text += topo(kind, f"g = {g}\na = {a}\np = {p}", {c: t() for c in ("terminal", "local", "global", "switch")})
        nodes = g * a * p
    elif kind == "torus":
        dims = [rng.randint(2, 4), rng.randint(2, 3)]
        text += topo(kind, f"dims = {dims}", {"x": t(), "y": t(), "switch": t()})
        nodes = dims[0] * dims[1]
    elif kind == "graph":
        write(tmp_path, f"net{i}.txt", NETWORK)
        text += topo(kind, f'file = "net{i}.txt"', {"host": t(), "wire": t(), "switch": t()})
        nodes = 4
    else:
        nodes = need + 2
    if nodes < need:
        rpn = -(-ranks // nodes)
    placement = rng.choice(["block", "round-robin", "file"])
    text += f'[nodes]\nranks_per_node = {rpn}\nplacement = "{placement}"\n'
    if placement == "file":
        slots = [n for n in range(nodes) for _ in range(rpn)]
        rng.shuffle(slots)
        write(tmp_path, f"map{i}.txt", "\n".join(map(str, slots[:ranks])))
        text += f'placement_file = "map{i}.txt"\n'
    if rng.random() < 0.5:
        text += f'[intra]\nL = "{t()}"\nG = "{rng.choice([0, 0.01])}ns"\n'
    if kind != "flat" and rng.random() < 0.3:
        text += f'[params]\nfar = "{t()}"\n[matrix]\nL = "lat{i}.csv"\n'
        cells = [["" for _ in range(ranks)] for _ in range(ranks)]
        for a in range(ranks):
            for b in range(a + 1, ranks):
                cells[a][b] = cells[b][a] = rng.choice(["", "", "far", "2*far + 50ns", "400ns"])
        write(tmp_path, f"lat{i}.csv", "\n".join(",".join(r) for r in cells) + "\n")
    return machine(tmp_path, text, f"m{i}.toml")


@pytest.mark.parametrize("block", range(6))
def test_engine_equals_lp_per_class_and_per_pair(block, tmp_path):
    """Per named parameter: the LP's optimum is T and its reduced costs are the engine's λ
    (a subgradient at a tie). Per pair: the pairwise LP's reduced costs of l_i_j and g_i_j are
    the engine's pairwise λ_L^{ij}, λ_G^{ij} (compared where the engine saw no tie)."""
    per = 50
    pairs_compared = 0
    for i in range(block * per, (block + 1) * per):
        rng = random.Random(1800 + i)
        spec = dict(
            ranks=rng.randint(2, 6), rounds=rng.randint(1, 6), seed=i, max_calc=5000, p_nonblocking=rng.random()
        )
        g = latitude.Graph.random(**spec)
        params = random_machine(rng, spec["ranks"], tmp_path, i)
        pred = g.predict(params)
        t = pred.runtime_ns
        sol = g.lp(params).solve()
        assert sol["status"] == "optimal", (i, sol)
        assert abs(sol["runtime_ns"] - t) <= 1e-9 * max(t, 1.0), (i, t, sol["runtime_ns"])
        names = ["l", "o", "gap", "g", "O"] + list(params.names[5:])
        tie = False
        for name, col in zip(params.names, names):
            rc, lo, hi = sol["reduced_costs"][col], pred.lambda_left[name], pred.lambda_[name]
            assert lo - 1e-6 <= rc <= hi + 1e-6, (i, name, rc, lo, hi)
            if lo == hi:
                assert abs(rc - hi) <= 1e-6 * max(1, hi), (i, name, rc, hi)
            tie |= lo != hi
        if tie or pred.raw["latency_terms_left"] != pred.raw["latency_terms_right"]:
            continue
        pw = g.lp(params, pairwise=True).solve()
        assert abs(pw["runtime_ns"] - t) <= 1e-9 * max(t, 1.0)
        engine = {(r["rank_a"], r["rank_b"]): (r["lambda_L"], r["lambda_G"]) for r in g.pairs(params).rows()}
        for r in pw["pair_reduced_costs"]:
            want = engine.get((r["a"], r["b"]), (0, 0))
            assert abs(r["l"] - want[0]) <= 1e-6 and abs(r["g"] - want[1]) <= 1e-6 * max(1, want[1]), (i, r, want)
        pairs_compared += 1
    assert pairs_compared >= per * 0.7, pairs_compared


def test_pairwise_lp_equals_the_engine_up_to_64_ranks(tmp_path):
    """The issue's bound: per-pair reduced costs equal the engine's λ_L^{ij}, λ_G^{ij} on graphs
    of up to 64 ranks (random machines of every kind; draws with a tie are passed over)."""
    compared = []
    for i in range(12):
        rng = random.Random(6400 + i)
        ranks = [64, 48, 32][i % 3]
        g = latitude.Graph.random(
            ranks=ranks, rounds=rng.randint(8, 16), seed=6400 + i, max_calc=5000, p_nonblocking=0.3
        )
        params = random_machine(rng, ranks, tmp_path, 6400 + i)
        pred = g.predict(params)
        if pred.raw["latency_terms_left"] != pred.raw["latency_terms_right"] or pred.lambda_left != pred.lambda_:
            continue
        pw = g.lp(params, pairwise=True).solve()
        t = pred.runtime_ns
        assert pw["status"] == "optimal" and abs(pw["runtime_ns"] - t) <= 1e-9 * max(t, 1.0), (i, pw["status"])
        engine = {(r["rank_a"], r["rank_b"]): (r["lambda_L"], r["lambda_G"]) for r in g.pairs(params).rows()}
        for r in pw["pair_reduced_costs"]:
            want = engine.get((r["a"], r["b"]), (0, 0))
            assert abs(r["l"] - want[0]) <= 1e-6 and abs(r["g"] - want[1]) <= 1e-6 * max(1, want[1]), (i, r, want)
        compared.append(ranks)
        assert sum(1 for r in pw["pair_reduced_costs"] if r["l"]) >= 3, i  # a path through several pairs
        if len(compared) >= 4 and 64 in compared:
            break
    assert 64 in compared and len(compared) >= 3, compared


def test_lambda_per_class_is_the_finite_difference(tmp_path):
    g = latitude.load(os.path.join(latitude.__path__[0], "data", "examples", "halo2d-16.goal"))
    base = machine(tmp_path, FAT_TREE)
    p0 = g.predict(base)
    d = 1e-3  # ns: far below any breakpoint distance of this integer-valued example
    for name in base.names:
        up = g.predict(base.with_values({name: base.value(name) + d}))
        assert abs((up.runtime_ns - p0.runtime_ns) - d * p0.lambda_[name]) < 1e-6, name
        if base.value(name) >= d:
            down = g.predict(base.with_values({name: base.value(name) - d}))
            assert abs((p0.runtime_ns - down.runtime_ns) - d * p0.lambda_left[name]) < 1e-6, name
    assert p0.lambda_["wire"] > 0 and p0.lambda_["intra.L"] > 0


# -- the commands end to end ----------------------------------------------------------------------


@pytest.fixture
def ft(tmp_path):
    return write(tmp_path, "ft.toml", FAT_TREE)


def test_commands_on_the_issue_machine_file(tmp_path, ft, examples):
    app = os.path.join(examples, "halo2d-16.goal")
    pred = json.loads(run_cli("predict", app, "--machine", ft, "--json").stdout)
    assert set(pred["lambda"]) == {"L", "G", "o", "g", "O", "wire", "switch", "intra.L", "intra.G"}
    sens = json.loads(
        run_cli("sensitivity", app, "--machine", ft, "--param", "wire", "--range", "274:424ns", "--json").stdout
    )
    assert sens["param"] == "wire" and sens["pieces"][0]["runtime_from_ns"] == pytest.approx(pred["runtime_ns"])
    assert sens["pieces"][0]["slope"] == pred["lambda"]["wire"]
    tol = json.loads(run_cli("tolerance", app, "--machine", ft, "--param", "switch", "--pct", "1", "--json").stdout)
    t0 = pred["runtime_ns"]
    m = tol["tolerance"][0]["max_ns"]
    at = json.loads(run_cli("predict", app, "--machine", ft, "--set", f"switch={m}ns", "--json").stdout)
    assert at["runtime_ns"] == pytest.approx(1.01 * t0, rel=1e-9)
    out = run_cli(
        "tolerance", app, "--machine", ft, "--map", "wire,switch", "--pct", "1,5", "--resolution", "8", "--json"
    )
    tmap = json.loads(out.stdout)
    assert tmap["axes"] == ["wire", "switch"] and "wire_range_ns" in tmap
    assert any(p["status"] == "boundary" for b in tmap["boundaries"] for p in b["points"])
    plot = tmp_path / "map.png"
    run_cli(
        "tolerance",
        app,
        "--machine",
        ft,
        "--map",
        "wire=274:5000ns,switch=108:3000ns",
        "--resolution",
        "6",
        "--plot",
        plot,
    )
    assert plot.stat().st_size > 10_000
    lp = json.loads(run_cli("lp", app, "--machine", ft, "--solve", "--json").stdout)
    assert lp["runtime_ns"] == pytest.approx(t0, rel=1e-9)
    assert lp["reduced_costs"]["wire"] == pytest.approx(pred["lambda"]["wire"])
    sim = json.loads(run_cli("simulate", app, "--machine", ft, "--no-cpu-serialization", "--json").stdout)
    assert sim["runtime_ns"] == pytest.approx(t0, rel=1e-12)  # the default simulation = the engine


def test_pairs_command(tmp_path, ft, examples):
    app = os.path.join(examples, "halo2d-16.goal")
    csv, nodes, png = tmp_path / "pairs.csv", tmp_path / "nodes.csv", tmp_path / "pairs.png"
    run_cli("pairs", app, "--machine", ft, "-o", csv, "--nodes", nodes, "--plot", png)
    import pandas as pd

    rows, per_node = pd.read_csv(csv), pd.read_csv(nodes)
    pred = json.loads(run_cli("predict", app, "--machine", ft, "--json").stdout)
    assert rows["lambda_L"].sum() == pred["critical_path"]["latency_terms"] == per_node["lambda_L"].sum()
    inter = rows[rows.node_a != rows.node_b]
    assert inter["lambda_L"].sum() == pred["lambda"]["L"]  # L is paid between nodes only
    assert rows[rows.node_a == rows.node_b]["lambda_L"].sum() == pred["lambda"]["intra.L"]
    assert (rows.rank_a <= rows.rank_b).all() and png.stat().st_size > 10_000
    out = json.loads(run_cli("pairs", app, "--machine", ft, "--json").stdout)
    assert out["pairs"] == len(rows) and out["latency_terms"] == rows["lambda_L"].sum()


def test_compare_command(tmp_path, ft, examples):
    df = write(tmp_path, "df.toml", DRAGONFLY)
    app = os.path.join(examples, "halo2d-16.goal")
    png = tmp_path / "cmp.png"
    args = ("compare", app, "--machine", ft, "--machine", df, "--param", "wire", "--range", "274:3500ns", "--pct", "1")
    out = json.loads(run_cli(*args, "--json", "--plot", png).stdout)
    assert [m["machine"] for m in out["machines"]] == ["ft", "df"]
    for m, f in zip(out["machines"], (ft, df)):
        tol = json.loads(run_cli("tolerance", app, "--machine", f, "--param", "wire", "--pct", "1", "--json").stdout)
        assert m["tolerance"][0]["max_ns"] == tol["tolerance"][0]["max_ns"]
    assert png.stat().st_size > 10_000
    text = run_cli(*args).stdout
    assert "largest wire at 1 %" in text.replace("\n", " ") or "wire" in text


def test_flat_machine_files_keep_their_meaning(tmp_path, examples):
    app = os.path.join(examples, "halo2d-16.goal")
    flat = write(tmp_path, "flat.toml", 'L = "3us"\no = "1.5us"\nG = "0.018ns"\n')
    a = json.loads(run_cli("predict", app, "--machine", flat, "--json").stdout)
    b = json.loads(run_cli("predict", app, "-L", "3us", "-o", "1.5us", "-G", "0.018ns", "--json").stdout)
    assert a == b and set(a["lambda"]) == {"L", "G", "o", "g", "O"}
    # one rank per node without [intra]: the same numbers through the machine path
    nodes = write(tmp_path, "nodes.toml", 'L = "3us"\no = "1.5us"\nG = "0.018ns"\n[nodes]\nranks_per_node = 2\n')
    c = json.loads(run_cli("predict", app, "--machine", nodes, "--json").stdout)
    assert c["runtime_ns"] == a["runtime_ns"] and c["lambda"]["L"] == a["lambda"]["L"]


# -- bad machine files: one line naming file and key, exit 2 ---------------------------------------


BAD = [
    (topo("mesh", "", {}), "topology.kind: expected one of fat_tree"),
    (topo("fat_tree", "k = 5\nlevels = 2", {"wire": "1ns", "switch": "1ns"}), "topology.k: expected an even"),
    (
        topo("fat_tree", "k = 4\nlevels = 1", {"wire": "1ns", "switch": "1ns"}),
        "nodes: 16 ranks at 1 per node need 16 nodes",
    ),
    (topo("fat_tree", "k = 4\nlevels = 2", {"wire": "-3ns", "switch": "1ns"}), "topology.latency.wire"),
    (topo("fat_tree", "k = 4\nlevels = 2", {"wire": "1ns"}), "no latency for the link class 'switch'"),
    (
        topo("fat_tree", "k = 4\nlevels = 2", {"wire": "1ns", "switch": "1ns", "global": "1ns"}),
        "topology.latency.global: unknown link class",
    ),
    (topo("torus", "dims = [3, 0]", {"x": "1ns", "y": "1ns", "switch": "1ns"}), "topology.dims"),
    ("O = true\n", "for O, got true"),  # the globals as latitude.tomlfile reads them (test_cli_edges)
    ("[sect]\nx = 1\n", "unknown table [sect]"),
    ('[intra]\nL = "1us"\n', "intra: expected both L and G"),
    ('[nodes]\nplacement = "spread"\n', "nodes.placement: expected 'block', 'round-robin' or 'file'"),
    ("[nodes]\nranks_per_node = 0\n", "nodes.ranks_per_node: expected an integer ≥ 1"),
    # values the core's exact arithmetic cannot hold (the CI fuzzer's finds): one line, not a ValueError
    ("o = 9223372036854775807000\n", "beyond the model's range"),
    ('G = "2e15ns"\n', "beyond the model's range"),
    ('[params]\nfoo = "1e16ns"\n', "params.foo: 1e+16 ns is beyond the model's range"),
    ('[nodes]\nplacement = "file"\nplacement_file = "nope.txt"\n', "nodes.placement_file: no such file"),
]


@pytest.mark.parametrize("text,msg", BAD)
def test_bad_machine_files(tmp_path, examples, text, msg):
    m = write(tmp_path, "bad.toml", text)
    proc = run_cli("predict", os.path.join(examples, "halo2d-16.goal"), "--machine", m, check=False)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"latitude: {m}") and msg in lines[0], proc.stderr


def test_bad_matrices_and_networks(tmp_path, examples):
    app = os.path.join(examples, "halo2d-16.goal")
    base = topo("fat_tree", "k = 4\nlevels = 2", {"wire": "1ns", "switch": "1ns"}) + "[nodes]\nranks_per_node = 2\n"
    cases = [
        ("1ns,2*wire+foo\n2*wire+foo,1ns\n", "column 2: unknown latency parameter or class 'foo'"),
        ("0,1ns\n2ns,0\n", "(the matrix must be symmetric)"),
        ("0,L\nL,0\n", "L is added to every message between nodes"),
        ("0,1ns,2ns\n1ns,0\n", "expected 2 cells (a 2×2 matrix), got 3"),
        ("0,1e14us+1e14us\n1e14us+1e14us,0\n", "column 2: 2e+17 ns is beyond the model's range"),
        ("0,99999999999999999999*wire\n99999999999999999999*wire,0\n", "wire counted 99999999999999999999 times"),
    ]
    for csv, msg in cases:
        write(tmp_path, "lat.csv", csv)
        m = write(tmp_path, "m.toml", base + '[matrix]\nL = "lat.csv"\nindex = "node"\n')
        proc = run_cli("predict", app, "--machine", m, check=False)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and msg in lines[0] and "lat.csv:" in lines[0], proc.stderr
    # a rank matrix must match the graph's ranks
    write(tmp_path, "lat.csv", "0,1ns\n1ns,0\n")
    m = write(tmp_path, "m.toml", base + '[matrix]\nL = "lat.csv"\n')
    proc = run_cli("predict", app, "--machine", m, check=False)
    assert proc.returncode == 2 and "matrix.L: a 2×2 matrix of ranks for a graph of 16 ranks" in proc.stderr
    # graph files
    for text, msg in [
        ("nodes 2\nswitches 1\nn0 s1 wire\n", "switch s1 beyond the 1 switches"),
        ("nodes 2\nn0 n1 wire\nn1 n0 wire\n", "a second link between n1 and n0"),
        ("nodes 2\nswitches 1\nn0 s0\n", "expected a link 'A B CLASS'"),
    ]:
        write(tmp_path, "net.txt", text)
        m = write(tmp_path, "g.toml", topo("graph", 'file = "net.txt"', {"wire": "1ns", "switch": "1ns"}))
        proc = run_cli("predict", app, "--machine", m, check=False)
        assert proc.returncode == 2 and msg in proc.stderr and "net.txt:" in proc.stderr, proc.stderr


def test_unknown_parameter_names(tmp_path, ft, examples):
    app = os.path.join(examples, "halo2d-16.goal")
    for args, msg in [
        (("tolerance", "--param", "global"), "no parameter 'global'"),
        (("sensitivity", "--param", "local", "--range", "0:1us"), "no parameter 'local'"),
        (("predict", "--set", "wirex=3ns"), "--set: no parameter 'wirex'"),
        (("predict", "--set", "wire"), "expected NAME=VALUE"),
    ]:
        proc = run_cli(args[0], app, "--machine", ft, *args[1:], check=False)
        assert proc.returncode == 2 and msg in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_params_api(tmp_path):
    p = machine(tmp_path, FAT_TREE)
    assert p.names == ("L", "o", "g", "G", "O", "wire", "switch", "intra.L", "intra.G")
    assert p.L == 0.0 and p.value("wire") == 274.0 and p.kind("intra.G") == "gap"
    q = p.with_values({"wire": "300ns"}, L=5)
    assert q.value("wire") == 300.0 and q.L == 5.0 and p.value("wire") == 274.0
    with pytest.raises(InputError):
        p.value("nope")


def test_the_bundled_topology_study(tmp_path, examples):
    """docs/network.md's study: the bundled 256-rank job on the bundled fat tree and dragonfly.
    Splitting the dragonfly's shared `wire` into its three link classes changes nothing but
    the bookkeeping: the same T, and λ_wire = λ_terminal + λ_local + λ_global."""
    job = os.path.join(examples, "halo-allreduce-256.job")
    ft, df, dfc = (
        os.path.join(examples, "machines", f)
        for f in ("fat-tree-k16.toml", "dragonfly-g8.toml", "dragonfly-g8-classes.toml")
    )
    out = json.loads(run_cli("compare", job, "--machine", ft, "--machine", df, "--param", "wire", "--json").stdout)
    fat, dra = out["machines"]
    assert fat["lambda"]["wire"] > dra["lambda"]["wire"] > 0  # more links per message on the fat tree
    assert dra["tolerance"][0]["max_ns"] > fat["tolerance"][0]["max_ns"] > 274
    split = json.loads(run_cli("predict", job, "--machine", dfc, "--json").stdout)
    assert split["runtime_ns"] == dra["runtime_ns"]
    assert sum(split["lambda"][c] for c in ("terminal", "local", "global")) == dra["lambda"]["wire"]
    assert split["lambda"]["switch"] == dra["lambda"]["switch"]
