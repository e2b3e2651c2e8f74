"""Regenerate the bundled example graphs (deterministic): python make_examples.py

llamp-fig4b.goal  LLAMP paper Fig. 4b: T = L + 2.015 µs (o = 0, G = 5 ns/B)
llamp-fig4c.goal  Fig. 4c (c0 = 0.1 µs): T = max(L + 1.115 µs, 1.5 µs), L_c = 0.385 µs
halo2d-16.goal    16 ranks (4 x 4, periodic), 5-point halo exchange with Isend/Irecv/Waitall,
                  overlapped interior compute, and an 8-byte recursive-doubling allreduce every
                  4th iteration (a CG-like pattern), written as Schedgen would from a trace.
nccl-ring-allreduce-8x4.goal
                  NCCL-style ring allreduce over 8 GPUs x 4 streams, written the way ATLAHS's
                  NCCL GOAL generator writes its files (one rank per GPU, a node start/end calc
                  on cpu 0, each stream on its own cpu, numeric tags, dependencies after each
                  op): T = launch + 14 (2o + L + (B - 1) G) + 7 reduce (docs/schedule.md).
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def fig4(c0: int) -> str:
    return f"""num_ranks 2

rank 0 {{
l1: calc {c0}
l2: send 4b to 1 tag 0
l3: calc 1000
l2 requires l1
l3 requires l2
}}

rank 1 {{
l1: calc 500
l2: recv 4b from 0 tag 0
l3: calc 1000
l2 requires l1
l3 requires l2
}}
"""


class Rank:
    def __init__(self, r):
        self.r, self.lines, self.deps, self.n, self.last = r, [], [], 0, None

    def op(self, text):
        self.n += 1
        self.lines.append(f"l{self.n}: {text}")
        return self.n

    def dep(self, a, b, kind="requires"):
        self.deps.append(f"l{a} {kind} l{b}")

    def chain(self, text):
        """A blocking op or calc after the previous one."""
        v = self.op(text)
        if self.last is not None:
            self.dep(v, self.last)
        self.last = v
        return v


def halo2d(px=4, py=4, iters=20, face=32768, every=4, seed=7) -> str:
    rng = random.Random(seed)
    p = px * py
    ranks = [Rank(r) for r in range(p)]
    for it in range(iters):
        for rk in ranks:
            x, y = rk.r % px, rk.r // px
            nbrs = [((x + dx) % px) + ((y + dy) % py) * px for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))]
            boundary = rk.chain(f"calc {int(rng.gauss(8000, 600))}")
            reqs = [rk.op(f"recv {face}b from {n} tag {it % 4}") for n in nbrs]
            reqs += [rk.op(f"send {face}b to {n} tag {it % 4}") for n in nbrs]
            interior = rk.op(f"calc {int(rng.gauss(30000, 2500 if rk.r % 5 else 6000))}")
            wait = rk.op("calc 0")
            for q in reqs:
                rk.dep(q, boundary)
                rk.dep(interior, q, "irequires")
                rk.dep(wait, q)
            rk.dep(wait, interior)
            rk.last = wait
        if it % every == every - 1:
            mask = 1
            while mask < p:
                for rk in ranks:
                    peer = rk.r ^ mask
                    s = rk.op(f"send 8b to {peer} tag 1000")
                    rv = rk.op(f"recv 8b from {peer} tag 1000")
                    join = rk.op("calc 0")
                    rk.dep(s, rk.last)
                    rk.dep(rv, rk.last)
                    rk.dep(join, s)
                    rk.dep(join, rv)
                    rk.last = join
                mask <<= 1
    out = [f"num_ranks {p}"]
    for rk in ranks:
        out.append(f"\nrank {rk.r} {{")
        out += rk.lines + rk.deps
        out.append("}")
    return "\n".join(out) + "\n"


def nccl_ring(ranks=8, streams=4, chunk=131072, launch=5000, reduce=3000) -> str:
    """Ring allreduce as NCCL runs it, one ring per stream (channel), even streams forward,
    odd ones backward: step 0 sends a chunk; steps 1 .. p-1 receive, reduce (`calc`) and
    send; steps p .. 2p-3 receive and send; step 2p-2 receives. Tags are ATLAHS's decimal
    concatenation of step, channel (2 digits), sequence (4), event type (1), communicator (2)."""
    out = [f"num_ranks {ranks}"]
    for r in range(ranks):
        n = 0
        lines = [f"\nrank {r} {{"]

        def op(text, *after):
            nonlocal n
            n += 1
            lines.append(f"l{n}: {text}")
            lines.extend(f"l{n} requires l{a}" for a in after)
            return n

        start, end = op("calc 0 cpu 0"), op("calc 0 cpu 0")
        for s in range(streams):
            cpu, step = s + 1, 1 if s % 2 == 0 else -1
            nxt, prv = (r + step) % ranks, (r - step) % ranks
            prev = op(f"calc {launch} cpu {cpu}", start)
            group_end = op(f"calc 0 cpu {cpu}")
            for k in range(2 * ranks - 1):
                if k > 0:
                    prev = op(f"recv {chunk}b from {prv} tag {k - 1}{s:02d}{0:04d}3{0:02d} cpu {cpu} nic 0", prev)
                    if k <= ranks - 1:
                        prev = op(f"calc {reduce} cpu {cpu}", prev)
                if k < 2 * ranks - 2:
                    prev = op(f"send {chunk}b to {nxt} tag {k}{s:02d}{0:04d}3{0:02d} cpu {cpu} nic 0", prev)
            lines.append(f"l{group_end} requires l{prev}")
            lines.append(f"l{end} requires l{group_end}")
        lines.append("}")
        out += lines
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    files = {
        "llamp-fig4b.goal": fig4(1000),
        "llamp-fig4c.goal": fig4(100), "halo2d-16.goal": halo2d(),
        "nccl-ring-allreduce-8x4.goal": nccl_ring(),
    }
    for name, text in files.items():
        with open(os.path.join(HERE, name), "w") as f:
            f.write(text)
        print("wrote", name)
