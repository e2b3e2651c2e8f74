"""GOAL in Schedgen style (as `latitude` writes it) -> LogGOPSim's binary schedule, the
layout `txt2bin` writes (docs/reference/goal.md §5): packed little-endian, 39-byte
nodes, successor appendix in the order of the dependency statements. Used to run LogGOPSim
itself as an oracle (tests/test_loggopsim_oracle.py):  python3 tests/goal2bin.py in.goal out.bin"""

import re
import struct
import sys

OPS = re.compile(
    r"^l(\d+): (send|recv|calc) (\d+)(?:b (?:to|from) (-?\d+))?(?: tag (-?\d+))?(?: cpu (\d+))?(?: nic (\d+))?$"
)
DEP = re.compile(r"^l(\d+) (requires|irequires) l(\d+)$")


def u32(x):
    """A GOAL peer or tag as stored (-1, i.e. any, is 0xFFFFFFFF)."""
    return 0xFFFFFFFF if x == "-1" else int(x or 0)


def parse(path):
    """Per rank: ops (type, peer, size, tag, cpu, nic) and deps (a, kind, b), in file order."""
    ranks, cur = [], None
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("num_ranks"):
            continue
        if line.startswith("rank"):
            cur = {"ops": [], "deps": []}
            ranks.append(cur)
            continue
        if line == "}":
            continue
        m = OPS.match(line)
        if m:
            n, kind, val, peer, tag, cpu, nic = m.groups()
            assert int(n) == len(cur["ops"]) + 1
            cur["ops"].append(
                ({"send": 1, "recv": 2, "calc": 3}[kind], u32(peer), int(val), u32(tag), int(cpu or 0), int(nic or 0))
            )
            continue
        m = DEP.match(line)
        assert m, line
        cur["deps"].append((int(m.group(1)) - 1, m.group(2), int(m.group(3)) - 1))
    return ranks


def rank_block(r):
    """One rank's block: header, roots, nodes, appendix (requires then irequires successors)."""
    n = len(r["ops"])
    cnt = [0] * n
    succ = [[] for _ in range(n)]
    isucc = [[] for _ in range(n)]
    for a, kind, b in r["deps"]:
        cnt[a] += 1
        (succ if kind == "requires" else isucc)[b].append(a)
    roots = [i for i in range(n) if cnt[i] == 0]
    out = struct.pack("<II", n, len(roots)) + b"".join(struct.pack("<I", x) for x in roots)
    app, k = [], 0
    for i, (typ, peer, size, tag, cpu, nic) in enumerate(r["ops"]):
        first = k
        k += len(succ[i])
        ifirst = k
        k += len(isucc[i])
        out += struct.pack(
            "<IBIQIBBIIII", cnt[i], typ, peer, size, tag, cpu, nic, len(succ[i]), first, len(isucc[i]), ifirst
        )
        app += succ[i] + isucc[i]
    return out + b"".join(struct.pack("<I", x) for x in app)


def main(src, dst):
    ranks = parse(src)
    blocks = [rank_block(r) for r in ranks]
    max_cpu = max((op[4] for r in ranks for op in r["ops"]), default=0)
    max_nic = max((op[5] for r in ranks for op in r["ops"]), default=0)
    head = 4 + 2 + 16 * len(ranks)
    table, pos = b"", head
    for b in blocks:
        table += struct.pack("<QQ", pos, pos + len(b))
        pos += len(b)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", 4223) + struct.pack("<IBB", len(ranks), max_cpu, max_nic) + table + b"".join(blocks))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
