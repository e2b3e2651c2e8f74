"""Regenerate the bundled example graphs (deterministic): python make_examples.py

llamp-fig4b.goal  LLAMP paper Fig. 4b: T = L + 2.015 µs (o = 0, G = 5 ns/B)
llamp-fig4c.goal  Fig. 4c (c0 = 0.1 µs): T = max(L + 1.115 µs, 1.5 µs), L_c = 0.385 µs
halo2d-16.goal    16 ranks (4 x 4, periodic), 5-point halo exchange with Isend/Irecv/Waitall,
                  overlapped interior compute, and an 8-byte recursive-doubling allreduce every
                  4th iteration (a CG-like pattern), written as Schedgen would from a trace.
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


if __name__ == "__main__":
    files = {"llamp-fig4b.goal": fig4(1000), "llamp-fig4c.goal": fig4(100), "halo2d-16.goal": halo2d()}
    for name, text in files.items():
        with open(os.path.join(HERE, name), "w") as f:
            f.write(text)
        print("wrote", name)
