"""Rank placement: search for the rank → node map with the smallest predicted runtime.

Every method maps the P ranks onto the allocation (latitude.place_model: the nodes of the
initial map, ``ranks_per_node`` slots each) and every map is priced exactly by one engine
pass (the machine re-bound to the map; the graph and its plan are reused).

**sens** — the LLAMP paper's Algorithm 3 with the engine in place of the LP. At the current
map π the engine's critical path gives the pairwise sensitivities λ_L^{ij} (latency terms
the path's messages between i and j pay) and λ_G^{ij} (their bytes). Swapping the ranks x
(on node A) and y (on node B) — or moving x into a free slot of B — changes the costs of
the pairs that involve x or y; the path's cost changes by −gain with

    gain(x, y) = Σ_{(i,j) ∋ x or y} λ_L^{ij}·(L_ij(π) − L_ij(π')) + λ_G^{ij}·(G_ij(π) − G_ij(π')),

so T(π') ≥ T(π) − gain (T is the longest path; the old path is still a path), with equality
while that path stays critical. The pair (x, y) itself keeps its cost (its nodes swap), so
gain(x, y) = g_x(B) + g_y(A) − (the x–y terms of both), where g_x(B) is the gain of x alone
moving to B: one sum per (rank on the path, node), a candidate per pair in O(1). A rank off
the path has no sensitivities, so every such y on B (and every free slot) gives gain
g_x(B). Algorithm 3 swaps the best candidate, re-predicts T, and stops when no candidate
has a positive gain or when the re-predicted T is not better (the paper's two rules).
Then, because a swap's first-order gain may be eaten by another path becoming critical,
the search continues with the exact T of the best few candidates per round (``top``),
taking the best that improves T, and stops when none does (or the budget is spent).
Candidates whose bound T − gain cannot beat the round's best are not evaluated. The
refinement also prices *double swaps*: two ranks of a pair on the path that share a node,
moved together to another node in exchange for two ranks off the path (or free slots),
with the same first-order gain over the pairs they touch. They get out of the plateau
where a group is split half and half over two nodes: moving one of its ranks alone cuts
one pair and joins another (gain 0), moving two that talk joins the group.

**anneal** — simulated annealing over swaps and moves (seeded): each candidate is one
engine pass; x is drawn from the critical path's ranks half the time, uniformly otherwise;
a worse map is accepted with probability exp(−ΔT / τ), τ falling geometrically from
2 % to 0.001 % of the initial T over the budget (seconds, or engine passes).

**Baselines** — block, round-robin, random (best of N, seeded), greedy volume (grow each
node from the unplaced rank with the most bytes, adding the rank with the most bytes to
the node's ranks), and Scotch (latitude.scotch).
"""

from __future__ import annotations

import dataclasses
import math
import random as _random
from dataclasses import dataclass, field

from latitude import placement as maps
from latitude import scotch
from latitude.place_model import Budget, Problem, volumes

METHODS = ("block", "round-robin", "random", "greedy", "scotch", "sens", "anneal")
SEARCHES = ("sens", "anneal")
STALE = 5000


@dataclass
class Result:
    """One method's map, its prediction and what it cost."""

    method: str
    nodes: tuple
    runtime_ns: float
    lambda_L: int
    latency_terms: int
    seconds: float
    evaluations: int
    info: dict = field(default_factory=dict)

    def to_dict(self, block_ns: float | None = None) -> dict:
        out = {
            "method": self.method,
            "runtime_ns": self.runtime_ns,
            "lambda_L": self.lambda_L,
            "latency_terms": self.latency_terms,
            "seconds": self.seconds,
            "evaluations": self.evaluations,
            "placement": list(self.nodes),
            **self.info,
        }
        if block_ns:
            out["change_vs_block"] = self.runtime_ns / block_ns - 1.0
        return out


@dataclass
class Options:
    """How the searches run: the seed, a wall-clock budget per search (seconds), a cap on
    engine passes (tests), candidates evaluated exactly per round, random maps tried."""

    seed: int = 1
    budget: float | None = 30.0
    max_evaluations: int | None = None
    top: int = 8
    random_tries: int = 32
    # called with the share of the budget spent (0..1) as a search goes: a progress bar
    tick: object = field(default=None, repr=False, compare=False)

    def report(self, budget: Budget, evals: int) -> None:
        if self.tick:
            self.tick(budget.fraction(evals))


# -- baselines -------------------------------------------------------------------------


def block_map(prob: Problem) -> list:
    slots = prob.slots()
    return slots[: prob.ranks]


def round_robin_map(prob: Problem) -> list:
    nodes = prob.nodes
    out, load = [], dict.fromkeys(nodes, 0)
    k = 0
    for _ in range(prob.ranks):
        while load[nodes[k % len(nodes)]] >= prob.per_node:
            k += 1
        n = nodes[k % len(nodes)]
        out.append(n)
        load[n] += 1
        k += 1
    return out


def random_map(prob: Problem, rng: _random.Random) -> list:
    slots = prob.slots()
    rng.shuffle(slots)
    return slots[: prob.ranks]


def greedy_map(prob: Problem, vol: dict) -> list:
    """Grow nodes in allocation order: seed with the unplaced rank of most total bytes, then
    add the unplaced rank with the most bytes to the node's ranks (ties: lowest rank)."""
    adj: dict = {}
    for (i, j), w in vol.items():
        adj.setdefault(i, {})[j] = w
        adj.setdefault(j, {})[i] = w
    total = {r: sum(adj.get(r, {}).values()) for r in range(prob.ranks)}
    unplaced = set(range(prob.ranks))
    out = [0] * prob.ranks
    for n in prob.nodes:
        if not unplaced:
            break
        seed = min(unplaced, key=lambda r: (-total[r], r))
        members = [seed]
        unplaced.discard(seed)
        attach = dict(adj.get(seed, {}))
        while len(members) < prob.per_node and unplaced:
            r = min(unplaced, key=lambda r: (-attach.get(r, 0), -total[r], r))
            members.append(r)
            unplaced.discard(r)
            for o, w in adj.get(r, {}).items():
                attach[o] = attach.get(o, 0) + w
        for r in members:
            out[r] = n
    return out


def scotch_map(prob: Problem, vol: dict) -> list:
    costs = prob.costs()
    # distance between nodes: the latency of a message between them (no rank matrix)
    return scotch.map_ranks(prob.ranks, vol, list(prob.nodes), prob.per_node, lambda a, b: costs.latency(0, 0, a, b))


# -- Algorithm 3 (sens) ----------------------------------------------------------------


class SwapGains:
    """First-order gains of every swap or move at one map, from its critical path's pairs."""

    def __init__(self, prob: Problem, nodes, pairs):
        self.prob, self.nodes = prob, list(nodes)
        self.costs = prob.costs()
        raw = pairs.raw
        self.touch: dict = {}
        for a, b, ll, lg in zip(
            raw["a"].tolist(), raw["b"].tolist(), raw["lambda_L"].tolist(), raw["lambda_G"].tolist()
        ):
            if a != b and (ll or lg):
                self.touch.setdefault(a, []).append((b, ll, lg))
                self.touch.setdefault(b, []).append((a, ll, lg))

    def pair_cost(self, i: int, j: int, a: int, b: int, ll: int, lg: int) -> float:
        c = self.costs
        return ll * c.latency(i, j, a, b) + lg * c.gap(i, j, a, b)

    def move_gain(self, x: int, dest: int) -> float:
        """g_x(dest): x alone moved to node `dest`, the others where they are."""
        src, nodes = self.nodes[x], self.nodes
        return sum(
            self.pair_cost(x, o, src, nodes[o], ll, lg) - self.pair_cost(x, o, dest, nodes[o], ll, lg)
            for o, ll, lg in self.touch.get(x, ())
        )

    def gain(self, x: int, y: int | None, dest: int) -> float:
        """Gain of swapping x with y (on node dest), or of moving x to dest (y None)."""
        g = self.move_gain(x, dest)
        if y is None:
            return g
        src = self.nodes[x]
        g += self.move_gain(y, src)
        for o, ll, lg in self.touch.get(x, ()):
            if o == y:  # in both sums as if the other stayed; after the swap its cost is unchanged
                g -= self.pair_cost(x, y, src, dest, ll, lg) - self.pair_cost(x, y, dest, dest, ll, lg)
                g -= self.pair_cost(y, x, dest, src, ll, lg) - self.pair_cost(y, x, src, src, ll, lg)
        return g

    def change_gain(self, moves) -> float:
        """First-order gain of any change of several ranks' nodes ((rank, node), ...)."""
        new = dict(moves)
        nodes, g = self.nodes, 0.0
        for r, dest in new.items():
            for o, ll, lg in self.touch.get(r, ()):
                if o in new and o < r:
                    continue  # a pair of two moved ranks counts once
                before = self.pair_cost(r, o, nodes[r], nodes[o], ll, lg)
                g += before - self.pair_cost(r, o, dest, new.get(o, nodes[o]), ll, lg)
        return g

    def candidates(self, double: bool = False) -> list:
        """(gain, moves) for every swap or move worth a look, best first; moves are
        ((rank, node), ...). Only positive gains (a change that does not shorten the current
        path cannot lower T). With `double`, also two ranks of a pair on the path that
        share a node, swapped together with two ranks off the path (or free slots) of
        another node: the way out when one rank alone gains nothing (half of a group on
        each node)."""
        nodes, prob = self.nodes, self.prob
        free = prob.free(nodes)
        off: dict = {}
        for r, n in enumerate(nodes):
            if r not in self.touch:
                off.setdefault(n, []).append(r)  # ranks off the path, per node
        out = []
        crit = sorted(self.touch)
        for x in crit:
            for dest in prob.nodes:
                if dest == nodes[x]:
                    continue
                g = self.move_gain(x, dest)
                if g > 0:
                    if dest in free:
                        out.append((g, ((x, dest),)))
                    elif dest in off:
                        out.append((g, ((x, dest), (off[dest][0], nodes[x]))))
            for y in crit:
                if y > x and nodes[y] != nodes[x]:
                    g = self.gain(x, y, nodes[y])
                    if g > 0:
                        out.append((g, ((x, nodes[y]), (y, nodes[x]))))
        if double:
            for x in crit:
                for y, _, _ in self.touch[x]:
                    if y > x and nodes[y] == nodes[x]:
                        out += self._double(x, y, free, off)
        out.sort(key=lambda c: (-c[0], c[1]))
        return out

    def _double(self, x: int, y: int, free: dict, off: dict) -> list:
        out = []
        src = self.nodes[x]
        for dest in self.prob.nodes:
            if dest == src:
                continue
            room = free.get(dest, 0)
            victims = off.get(dest, [])[: max(0, 2 - room)]
            if room + len(victims) < 2:
                continue
            moves = ((x, dest), (y, dest)) + tuple((v, src) for v in victims)
            g = self.change_gain(moves)
            if g > 0:
                out.append((g, moves))
        return out


def apply_moves(nodes, moves) -> list:
    out = list(nodes)
    for r, n in moves:
        out[r] = n
    return out


def apply(nodes, x: int, y: int | None, dest: int) -> list:
    """Swap x with y (y goes to x's node), or move x alone (y None), to node `dest`."""
    moves = ((x, dest),) if y is None else ((x, dest), (y, nodes[x]))
    return apply_moves(nodes, moves)


def sens(prob: Problem, init, opts: Options) -> tuple[list, dict]:
    """Algorithm 3, then the exact refinement; returns the map and what happened."""
    budget = Budget(opts.budget, opts.max_evaluations)
    cur = list(init)
    t_cur = prob.runtime(cur)
    start_evals = prob.evaluations
    info = {"swaps": 0, "alg3_swaps": 0, "alg3_runtime_ns": t_cur, "stop": ""}
    alg3 = True
    while True:
        opts.report(budget, prob.evaluations - start_evals)
        if budget.spent(prob.evaluations - start_evals):
            info["stop"] = "budget"
            break
        cands = SwapGains(prob, cur, prob.pairs(cur)).candidates(double=not alg3)
        if not cands:
            if alg3:  # the paper's first rule ends Algorithm 3; refinement also tries pairs
                alg3 = False
                info["alg3_runtime_ns"], info["alg3_swaps"] = t_cur, info["swaps"]
                continue
            info["stop"] = "no swap with a positive gain"
            break
        best = None
        for g, moves in cands[: 1 if alg3 else opts.top]:
            if best is not None and t_cur - g >= best[0]:
                continue  # its bound cannot beat this round's best
            cand = apply_moves(cur, moves)
            t = prob.runtime(cand)
            if t < t_cur and (best is None or t < best[0]):
                best = (t, cand)
            if budget.spent(prob.evaluations - start_evals):
                break
        if best is None:
            if alg3:  # the paper's second rule ends Algorithm 3; refine with exact T
                alg3 = False
                info["alg3_runtime_ns"], info["alg3_swaps"] = t_cur, info["swaps"]
                continue
            info["stop"] = f"none of the best {opts.top} candidates improves T"
            break
        t_cur, cur = best
        info["swaps"] += 1
    if alg3:
        info["alg3_runtime_ns"], info["alg3_swaps"] = t_cur, info["swaps"]
    return cur, info


# -- simulated annealing ---------------------------------------------------------------


def anneal(prob: Problem, init, opts: Options) -> tuple[list, dict]:
    rng = _random.Random(opts.seed)
    # no budget at all: 100 passes per rank (annealing has no stopping rule of its own)
    cap = opts.max_evaluations if opts.budget or opts.max_evaluations else 100 * prob.ranks
    budget = Budget(opts.budget, cap)
    start_evals = prob.evaluations
    cur = list(init)
    t_cur = prob.runtime(cur)
    t0 = t_cur
    best = (t_cur, list(cur))
    crit = sorted(SwapGains(prob, cur, prob.pairs(cur)).touch)
    accepted = 0
    if len(prob.nodes) < 2:
        return cur, {"accepted": 0}
    stale = 0  # proposals in a row that were priced before (a small space, explored)
    while not budget.spent(prob.evaluations - start_evals) and stale < STALE:
        x = rng.choice(crit) if crit and rng.random() < 0.5 else rng.randrange(prob.ranks)
        dest = rng.choice([n for n in prob.nodes if n != cur[x]])
        free = prob.free(cur)
        if dest in free and rng.random() < 0.5 or not any(n == dest for n in cur):
            y = None
        else:
            y = rng.choice([r for r, n in enumerate(cur) if n == dest])
        cand = apply(cur, x, y, dest)
        opts.report(budget, prob.evaluations - start_evals)
        seen = prob.evaluations
        t = prob.runtime(cand)
        stale = stale + 1 if prob.evaluations == seen else 0
        tau = t0 * 0.02 * (5e-4 ** budget.fraction(prob.evaluations - start_evals))
        if t <= t_cur or rng.random() < math.exp(-(t - t_cur) / max(tau, 1e-12)):
            cur, t_cur = cand, t
            accepted += 1
            if t < best[0]:
                best = (t, list(cand))
                crit = sorted(SwapGains(prob, cur, prob.pairs(cur)).touch)
    return best[1], {"accepted": accepted}


# -- the comparison --------------------------------------------------------------------


def initial_map(prob_ranks: int, per_node: int, how, rng: _random.Random) -> list:
    """The initial map: block, round-robin, random (over block's nodes) or a given map."""
    if how == "block":
        return list(maps.block(prob_ranks, per_node))
    if how == "round-robin":
        return list(maps.round_robin(prob_ranks, per_node))
    if how == "random":
        out = list(maps.block(prob_ranks, per_node))
        rng.shuffle(out)
        return out
    return list(how)


def compare(graph, params, init="block", methods=METHODS, opts: Options | None = None, progress=None) -> list:
    """Run `methods` on `graph` at `params` from the initial map `init` (block, round-robin,
    random, or a node per rank); block is always included. Returns one Result per method.
    `progress(done)` is told the methods done so far (fractions while a search runs)."""
    import time

    opts = opts or Options()
    rng = _random.Random(opts.seed)
    per_node = params.machine.ranks_per_node if params.machine else 1
    start = initial_map(graph.num_ranks, per_node, init, rng)
    prob = Problem.of(graph, params, start)
    vol = None
    out = []
    for i, m in enumerate(("block",) + tuple(x for x in methods if x != "block")):
        if progress:
            progress(i)
            opts = dataclasses.replace(opts, tick=lambda f, i=i: progress(i + f))
        t = time.perf_counter()
        e0 = prob.evaluations
        info: dict = {}
        if m == "block":
            nodes = block_map(prob)
        elif m == "round-robin":
            nodes = round_robin_map(prob)
        elif m == "random":
            r = _random.Random(opts.seed)
            cands = [random_map(prob, r) for _ in range(opts.random_tries)]
            nodes = min(cands, key=prob.runtime)
            info["tries"] = opts.random_tries
        elif m in ("greedy", "scotch"):
            vol = volumes(graph) if vol is None else vol
            nodes = greedy_map(prob, vol) if m == "greedy" else scotch_map(prob, vol)
        elif m == "sens":
            nodes, info = sens(prob, start, opts)
        else:
            nodes, info = anneal(prob, start, opts)
        pred = prob.predict(nodes)
        out.append(
            Result(
                m,
                tuple(int(n) for n in nodes),
                pred.runtime_ns,
                int(pred.lambda_["L"]),
                pred.latency_terms,
                time.perf_counter() - t,
                prob.evaluations - e0,
                info,
            )
        )
    return out


def best(results: list) -> Result:
    """The lowest predicted T (ties: the earlier method, block first)."""
    return min(results, key=lambda r: r.runtime_ns)
