"""Rank placement search (latitude.place): the pair costs it prices swaps with equal the
core's, swap gains are exact first-order bookkeeping (T(π') ≥ T(π) − gain, equal while the
path stays critical), Algorithm 3 and annealing find the brute-force optimum on small jobs,
the Scotch adapter on a known volume graph (a real Scotch run), and the CLI end to end."""

import itertools
import json
import random

import latitude
import pytest
from conftest import one_line, run_cli
from latitude import Params, place, scotch
from latitude import placement as maps
from latitude.place_model import PairCosts, Problem, volumes
from test_network import random_machine

TWO_NODES = """\
o = "1us"
L = "2us"
G = "0.05ns"
[nodes]
ranks_per_node = 4
[intra]
L = "0.2us"
G = "0.01ns"
"""

FAT_TREE = """\
o = "1us"
[nodes]
ranks_per_node = 2
[intra]
L = "0.3us"
G = "0.01ns"
[topology]
kind = "fat_tree"
k = 4
levels = 1
[topology.latency]
wire = "274ns"
switch = "108ns"
"""

PINGPONG = """\
[JOB] pp
[RANKS] 0-5
[ITERATIONS] 3
[MOTIF] pingpong bytes=1KiB
"""

# Four ping-pong pairs that block order puts across the two nodes: (0,4) (1,5) (2,6) (3,7).
PAIRS_APART = """\
[JOB] pp
[RANKS] 0,4,1,5,2,6,3,7
[ITERATIONS] 5
[MOTIF] compute time=2us vary=rank dist=uniform spread=1us
[MOTIF] pingpong bytes=4KiB
"""

# Two groups interleaved by rank, each with a ring allreduce.
GROUPS = """\
[JOB] a
[RANKS] 0,2,4,6
[ITERATIONS] 4
[MOTIF] compute time=20us
[MOTIF] allreduce bytes=64KiB alg=ring
[JOB] b
[RANKS] 1,3,5,7
[ITERATIONS] 4
[MOTIF] compute time=25us
[MOTIF] allreduce bytes=32KiB alg=ring
"""


def files(tmp_path, machine, job):
    (tmp_path / "m.toml").write_text(machine)
    (tmp_path / "app.job").write_text(job)
    return str(tmp_path / "app.job"), str(tmp_path / "m.toml")


def load(tmp_path, machine, job):
    job, m = files(tmp_path, machine, job)
    return latitude.load(job), Params.from_machine(m)


def brute_force(prob: Problem) -> float:
    """The best T over every map of the ranks onto the allocation's slots."""
    best = float("inf")
    seen = set()
    for perm in itertools.permutations(range(prob.ranks)):
        nodes = tuple(prob.slots()[perm.index(r)] for r in range(prob.ranks))
        if nodes not in seen:
            seen.add(nodes)
            best = min(best, prob.runtime(nodes))
    return best


def balanced_maps(prob: Problem):
    """Every distinct map of P ranks on the allocation (full nodes)."""
    nodes = prob.nodes
    for combo in itertools.combinations(range(prob.ranks), prob.per_node):
        yield tuple(nodes[0] if r in combo else nodes[1] for r in range(prob.ranks))


def test_pair_costs_equal_the_cores(tmp_path):
    rng = random.Random(7)
    checked = 0
    for i in range(40):
        ranks = rng.randint(2, 6)
        g = latitude.Graph.random(ranks=ranks, rounds=4, seed=i)
        params = random_machine(rng, ranks, tmp_path, i)
        if params.machine is None:
            continue
        nodes = [int(n) for n in g.placement(params)]
        costs = PairCosts(params)
        for r in g.pairs(params).rows():
            a, b = r["rank_a"], r["rank_b"]
            assert costs.latency(a, b, nodes[a], nodes[b]) == pytest.approx(r["latency_ns"], rel=1e-9, abs=1e-6)
            assert costs.gap(a, b, nodes[a], nodes[b]) == pytest.approx(r["gap_ns_per_byte"], rel=1e-9, abs=1e-12)
            checked += 1
    assert checked > 50


def all_swaps(sg: place.SwapGains, nodes):
    for x, y in itertools.combinations(range(len(nodes)), 2):
        if nodes[x] != nodes[y]:
            yield x, y, sg.gain(x, y, nodes[y])


def test_swap_gain_equals_repredicted_change_while_the_path_stays(tmp_path):
    # one ping-pong pair (ranks 0 and 5) and idle ranks: the exchange is always the path
    g, p = load(tmp_path, TWO_NODES, "[JOB] pp\n[RANKS] 0,5\n[ITERATIONS] 3\n[MOTIF] pingpong bytes=2KiB\n")
    signs = set()
    for start in ([0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 0]):  # the pair apart, then together
        prob = Problem.of(g, p, start)
        t0 = prob.runtime(start)
        sg = place.SwapGains(prob, start, prob.pairs(start))
        for x, y, gn in all_swaps(sg, start):
            signs.add((gn > 0) - (gn < 0))
            assert prob.runtime(place.apply(start, x, y, start[y])) == pytest.approx(t0 - gn, rel=1e-12), (x, y)
    assert signs == {-1, 0, 1}
    start = [0, 0, 0, 0, 1, 1]
    prob = Problem.of(g, p, start)
    sg = place.SwapGains(prob, start, prob.pairs(start))
    t0 = prob.runtime(start)
    for x in range(4):  # moves into the free slots of node 1
        assert prob.runtime(place.apply(start, x, None, 1)) == pytest.approx(t0 - sg.gain(x, None, 1), rel=1e-12)
    for x, y in itertools.combinations(range(4), 2):  # two ranks at once, for the two of node 1
        moves = ((x, 1), (y, 1), (4, 0), (5, 0))
        t = prob.runtime(place.apply_moves(start, moves))
        assert t == pytest.approx(t0 - sg.change_gain(moves), rel=1e-12), (x, y)


def test_swap_gain_bounds_the_new_runtime_on_random_graphs(tmp_path):
    rng = random.Random(3)
    swaps = 0
    for i in range(25):
        ranks = rng.randint(3, 7)
        g = latitude.Graph.random(ranks=ranks, rounds=4, seed=100 + i)
        params = random_machine(rng, ranks, tmp_path, i)
        if params.machine is None:
            continue
        nodes = [int(n) for n in g.placement(params)]
        prob = Problem.of(g, params, nodes)
        t0 = prob.runtime(nodes)
        sg = place.SwapGains(prob, nodes, prob.pairs(nodes))
        for x, y, gn in all_swaps(sg, nodes):
            t = prob.runtime(place.apply(nodes, x, y, nodes[y]))
            assert t >= t0 - gn - 1e-9 * t0, (i, x, y, t, t0, gn)
            swaps += 1
        for x in range(ranks):  # moves into free slots, and the search's own candidates
            for dest in prob.free(nodes):
                if dest != nodes[x]:
                    t = prob.runtime(place.apply(nodes, x, None, dest))
                    assert t >= t0 - sg.gain(x, None, dest) - 1e-9 * t0, (i, x, dest)
        for gn, moves in sg.candidates(double=True):
            t = prob.runtime(place.apply_moves(nodes, moves))
            assert gn == pytest.approx(sg.change_gain(moves), rel=1e-9), (i, moves)
            assert t >= t0 - gn - 1e-9 * t0, (i, moves, t, t0, gn)
    assert swaps > 50


def test_algorithm3_finds_the_brute_force_optimum(tmp_path):
    g, p = load(tmp_path, TWO_NODES, PAIRS_APART)
    block = [0, 0, 0, 0, 1, 1, 1, 1]
    prob = Problem.of(g, p, block)
    opt = min(prob.runtime(m) for m in balanced_maps(prob))
    assert opt < prob.runtime(block) * 0.9  # block order really is bad here
    nodes, info = place.sens(prob, block, place.Options(budget=None))
    assert prob.runtime(nodes) == pytest.approx(opt, rel=1e-12), info
    assert info["alg3_swaps"] >= 1
    assert brute_force(prob) == pytest.approx(opt, rel=1e-12)  # holes cannot help: nodes are full


def test_sens_never_worsens_and_anneal_reaches_the_optimum(tmp_path):
    g, p = load(tmp_path, TWO_NODES, GROUPS)
    block = [0, 0, 0, 0, 1, 1, 1, 1]
    prob = Problem.of(g, p, block)
    opt = min(prob.runtime(m) for m in balanced_maps(prob))
    t_block = prob.runtime(block)
    assert opt < t_block * 0.95
    nodes, info = place.sens(prob, block, place.Options(budget=None))
    # Algorithm 3 alone is stuck (each group half on each node: one rank moved alone cuts
    # one pair of its ring and joins another); a double swap of two ring neighbours is not
    assert info["alg3_runtime_ns"] == t_block and info["alg3_swaps"] == 0
    assert prob.runtime(nodes) == pytest.approx(opt, rel=1e-12)
    found, _ = place.anneal(prob, block, place.Options(seed=5, budget=None, max_evaluations=200))
    assert prob.runtime(found) == pytest.approx(opt, rel=1e-12)
    again, _ = place.anneal(prob, block, place.Options(seed=5, budget=None, max_evaluations=200))
    assert again == found  # seeded


def test_every_method_fits_the_allocation(tmp_path):
    job, m = files(tmp_path, FAT_TREE, PAIRS_APART)
    g, p = latitude.load(job), Params.from_machine(m)
    results = place.compare(g, p, "block", place.METHODS, place.Options(budget=None, max_evaluations=60))
    assert [r.method for r in results] == list(place.METHODS)
    for r in results:
        assert sorted(set(r.nodes)) == [0, 1, 2, 3] and max(r.nodes.count(n) for n in set(r.nodes)) <= 2
        assert g.predict(p.with_placement(r.nodes)).runtime_ns == r.runtime_ns
    by = {r.method: r for r in results}
    assert by["sens"].runtime_ns <= by["block"].runtime_ns and by["anneal"].runtime_ns <= by["block"].runtime_ns
    # the volume methods pair each ping-pong on a node
    for m in ("greedy", "scotch"):
        nodes = by[m].nodes
        assert all(nodes[a] == nodes[a + 4] for a in range(4)), (m, nodes)


def test_scotch_maps_a_known_volume_graph():
    # two 4-cliques of heavy traffic joined by light edges, 2 nodes of 4: one clique per node
    vol = {}
    for grp in ((0, 2, 4, 6), (1, 3, 5, 7)):
        for a, b in itertools.combinations(grp, 2):
            vol[(a, b)] = 1 << 20
    for a in range(7):
        vol[(a, a + 1)] = vol.get((a, a + 1), 0) + 10
    out = scotch.map_ranks(8, vol, [3, 7], 4, lambda a, b: 500.0)
    assert sorted(out) == [3, 3, 3, 3, 7, 7, 7, 7]
    assert len({out[r] for r in (0, 2, 4, 6)}) == 1 and len({out[r] for r in (1, 3, 5, 7)}) == 1
    # a ring of 8 onto 4 nodes of 2 on a line: every node holds two ring neighbours
    ring = {(min(i, (i + 1) % 8), max(i, (i + 1) % 8)): 1000 for i in range(8)}
    out = scotch.map_ranks(8, ring, [0, 1, 2, 3], 2, lambda a, b: 100.0 * abs(a - b))
    for n in range(4):
        a, b = [r for r in range(8) if out[r] == n]
        assert (a, b) in ring, out


def test_fit_moves_ranks_off_full_nodes():
    vol = {(0, 1): 100, (2, 3): 100, (1, 2): 1}
    assert scotch.fit([0, 0, 0, 1], vol, [0, 1], 2) == [0, 0, 1, 1]
    assert scotch.fit([0, 0, 1, 1], vol, [0, 1], 2) == [0, 0, 1, 1]


def test_volumes_count_bytes_both_ways(tmp_path):
    g, _ = load(tmp_path, TWO_NODES, "[JOB] pp\n[RANKS] 0-1\n[ITERATIONS] 3\n[MOTIF] pingpong bytes=1000\n")
    assert volumes(g) == {(0, 1): 6 * 1000}


def test_place_command(tmp_path):
    job, m = files(tmp_path, TWO_NODES, PAIRS_APART)
    out = tmp_path / "rankfile"
    proc = run_cli("place", job, "--machine", m, "--method", "all", "--evaluations", "80", "--budget", "60", "-o", out)
    text = proc.stdout
    for name in place.METHODS:
        assert name in text
    assert "vs block" in text and "wrote" in text
    proc = run_cli(
        "place",
        job,
        "--machine",
        m,
        "--method",
        "all",
        "--evaluations",
        "80",
        "--json",
        "-o",
        out,
        "--format",
        "rankfile",
    )
    data = json.loads(proc.stdout)
    assert [r["method"] for r in data["methods"]] == list(place.METHODS)
    best = min(data["methods"], key=lambda r: r["runtime_ns"])
    assert data["best"] == best["method"] and best["change_vs_block"] < -0.1
    assert out.read_text().startswith("# latitude place") and "rank 0=node" in out.read_text()
    nodes = maps.read_map(str(out)).nodes
    assert list(nodes) == best["placement"]
    p = Params.from_machine(m)
    assert latitude.load(job).predict(p.with_placement(nodes)).runtime_ns == best["runtime_ns"]
    # the map written is a valid --init, and sens from the optimum stays there
    again = json.loads(run_cli("place", job, "--machine", m, "--init", out, "--json").stdout)
    assert again["methods"][1]["runtime_ns"] <= best["runtime_ns"]


def test_place_needs_a_machine_with_nodes(tmp_path):
    job, _ = files(tmp_path, TWO_NODES, PAIRS_APART)
    one_line(run_cli("place", job, check=False), "--machine: placement needs a machine file")
    flat = tmp_path / "flat.toml"
    flat.write_text('L = "2us"\n')
    one_line(run_cli("place", job, "--machine", flat, check=False), "placement needs a machine file")
    one_line(run_cli("place", job, "--machine", tmp_path / "m.toml", "--budget", "0", check=False), "--budget")


def test_bad_init_files_on_the_command_line(tmp_path):
    (tmp_path / "m.toml").write_text(FAT_TREE)
    (tmp_path / "pp.job").write_text(PINGPONG)
    cases = [
        ("0 0 1 1 2\n", "short.txt: places 5 ranks, the graph has 6"),
        ("0 0 1 1 2 2 3\n", "long.txt:1: places 7 ranks, the graph has 6"),
        ("0\n0\n1\n1\n2\n9\n", "far.txt:6: rank 5 is placed on node 9, but the network has 4 nodes"),
        ("0 0 0 1 1 2\n", "full.txt:1: node 0 gets more than ranks_per_node = 2 ranks"),
        ("rank 0=node0\nrank 0=node1\n", "twice.txt:2: rank 0 is placed twice"),
    ]
    for (text, msg), name in zip(cases, ("short", "long", "far", "full", "twice")):
        f = tmp_path / f"{name}.txt"
        f.write_text(text)
        proc = run_cli("place", tmp_path / "pp.job", "--machine", tmp_path / "m.toml", "--init", f, check=False)
        one_line(proc, msg)
    proc = run_cli("place", tmp_path / "pp.job", "--machine", tmp_path / "m.toml", "--init", "nowhere", check=False)
    one_line(proc, "--init: expected block, round-robin, random or a map file")


def test_searches_against_brute_force_on_random_jobs(tmp_path):
    """Random programs of 8 ranks on two nodes of 4: both searches never end worse than their
    start, never below the optimum, and annealing (400 passes over the 70 maps) finds it."""
    (tmp_path / "m.toml").write_text(TWO_NODES)
    p = Params.from_machine(str(tmp_path / "m.toml"))
    sens_hits = 0
    for seed in range(8):
        g = latitude.Graph.random(ranks=8, rounds=5, seed=seed, max_calc=3000)
        block = [0, 0, 0, 0, 1, 1, 1, 1]
        prob = Problem.of(g, p, block)
        opt = min(prob.runtime(m) for m in balanced_maps(prob))
        t_block = prob.runtime(block)
        nodes, _ = place.sens(prob, block, place.Options(budget=None))
        t = prob.runtime(nodes)
        assert opt - 1e-9 <= t <= t_block, seed
        sens_hits += t == opt
        found, _ = place.anneal(prob, block, place.Options(seed=seed, budget=None, max_evaluations=400))
        assert prob.runtime(found) == pytest.approx(opt, rel=1e-12), seed
    print(f"sens reached the optimum on {sens_hits} of 8")


def test_the_machine_files_placement_is_the_default_start(tmp_path):
    job, m = files(
        tmp_path,
        FAT_TREE.replace("ranks_per_node = 2", 'ranks_per_node = 2\nplacement = "file"\nplacement_file = "map.txt"'),
        PINGPONG,
    )
    (tmp_path / "map.txt").write_text("3 2 3 1 2 1\n")  # nodes 1-3 of the 4: the allocation
    data = json.loads(run_cli("place", job, "--machine", m, "--method", "all", "--evaluations", "50", "--json").stdout)
    for r in data["methods"]:
        assert set(r["placement"]) == {1, 2, 3}, r
    assert data["methods"][0]["placement"] == [1, 1, 2, 2, 3, 3]  # block over the allocation
    (tmp_path / "map.txt").write_text("3 2 3\n")
    one_line(run_cli("place", job, "--machine", m, check=False), "gives the node of 3 ranks, the graph has 6")
