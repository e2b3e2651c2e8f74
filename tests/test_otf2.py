"""OTF2 archives (Score-P conventions) read by `latitude schedule ARCHIVE/traces.otf2`.

Each test writes an archive through the OTF2 writer API the way Score-P's wrappers record
the calls (tests/scorep_archive.py) and the Latitude trace of the same calls by hand, and
requires the two graphs to be identical (same GOAL text): the converter must give exactly
what our own tracer's records would give. Then the refusals and bad archives.
"""

from __future__ import annotations

import os
import re

import pytest

otf2 = pytest.importorskip("otf2")

from latitude import Graph  # noqa: E402
from latitude.errors import InputError  # noqa: E402
from scorep_archive import OPS, UNDEFINED, Archive  # noqa: E402


def schedule(path, progress=False):
    g = Graph.from_trace(path, progress=progress)
    return g, g.report


def goal_of(path, tmp_path, name):
    """The graph's GOAL text with message tags renamed in order of first use: tags are
    labels (a communicator's dense id is part of them), the graphs must match up to that."""
    g, report = schedule(str(path), progress=False)
    out = tmp_path / f"{name}.goal"
    g.write_goal(str(out))
    names: dict[str, str] = {}
    text = re.sub(r"tag (\d+)", lambda m: "tag " + names.setdefault(m.group(1), str(len(names))), out.read_text())
    return text, report


def lat_trace(d, ranks: dict[int, list[str]], comms=()):
    """Latitude trace files: `ranks` maps rank -> call lines (times in µs), `comms` extra
    `#@ comm` header specs (MPI_COMM_WORLD is handle 7)."""
    os.makedirs(d, exist_ok=True)
    n = len(ranks)
    for r, lines in ranks.items():
        head = ["#@ latitude-trace 1", f"#@ world rank={r} size={n}", "#@ const any_source=-1 any_tag=-1 proc_null=-2"]
        head += [f"#@ comm 7 seq=0 world=0-{n - 1}"] + [f"#@ comm {c}" for c in comms]
        with open(os.path.join(d, f"t-{r}.txt"), "w") as f:
            f.write("\n".join(head + lines) + "\n#@ end finalize\n")
    return d


def same_graph(arch_dir, expected_dir, tmp_path):
    got, report = goal_of(os.path.join(arch_dir, "traces.otf2"), tmp_path, "otf2")
    want, _ = goal_of(expected_dir, tmp_path, "lat")
    assert got == want
    return report


W = "7,{r},{n}"  # MPI_COMM_WORLD argument of the hand-written traces


def test_point_to_point_blocking(tmp_path):
    a = Archive(tmp_path / "a", 2)
    r0, r1 = a.rank(0), a.rank(1)
    for k in (r0, r1):
        k.init(0, 1000)
    r0.user("compute", 1500, 1900)
    r0.send(2000, 2500, 1, 3, 800)
    r0.send(3000, 3100, 1, 4, 10, name="MPI_Ssend")
    r0.recv(4000, 5000, 1, 5, 16)
    r0.finalize(9000, 9500)
    r1.recv(2000, 2600, 0, 3, 800)
    r1.recv(2700, 3200, 0, 4, 10)
    r1.send(3300, 3400, 0, 5, 16, name="MPI_Bsend")
    r1.finalize(8000, 8100)
    a.close()
    w0, w1 = W.format(r=0, n=2), W.format(r=1, n=2)
    exp = lat_trace(
        tmp_path / "e",
        {
            0: [
                "MPI_Init:-:0:0:1.000",
                f"MPI_Send:2.000:0:800:1,1,1:1:3:{w0}:2.500",
                f"MPI_Ssend:3.000:0:10:1,1,1:1:4:{w0}:3.100",
                f"MPI_Recv:4.000:0:16:1,1,1:1:5:{w0}:0:5.000",
                "MPI_Finalize:9.000:-",
            ],
            1: [
                "MPI_Init:-:0:0:1.000",
                f"MPI_Recv:2.000:0:800:1,1,1:0:3:{w1}:0:2.600",
                f"MPI_Recv:2.700:0:10:1,1,1:0:4:{w1}:0:3.200",
                f"MPI_Bsend:3.300:0:16:1,1,1:0:5:{w1}:3.400",
                "MPI_Finalize:8.000:-",
            ],
        },
    )
    report = same_graph(tmp_path / "a", exp, tmp_path)
    assert report.stats["source"]["format"] == "otf2"
    assert report.info["messages"] == 3


def test_nonblocking_requests_waits_and_tests(tmp_path):
    """Isend/Irecv completed by Waitall, Waitany, an unsuccessful then a successful Test;
    the receive's source, tag and size come from the MpiIrecv that completes it."""
    a = Archive(tmp_path / "a", 2)
    exp = {}
    for r in range(2):
        k, o, w = a.rank(r), 1 - r, W.format(r=r, n=2)
        k.init(0, 1000)
        q1 = k.irecv(2000, 2100)
        q2 = k.isend(2200, 2300, o, 9, 4096)
        k.complete(3000, 4000, [(q1, ("recv", o, 9, 4096)), (q2, "send")], name="MPI_Waitall")
        q3 = k.irecv(5000, 5100)
        k.complete(5200, 5300, [], name="MPI_Test", tested=[q3])
        q4 = k.isend(5400, 5500, o, 11, 8)
        k.complete(6000, 6500, [(q4, "send")], name="MPI_Waitany")
        k.complete(7000, 7200, [(q3, ("recv", o, 11, 8))], name="MPI_Test")
        k.finalize(9000, 9100)
        exp[r] = [
            "MPI_Init:-:0:0:1.000",
            f"MPI_Irecv:2.000:0:4096:1,1,1:{o}:9:{w}:0:2.100",
            f"MPI_Isend:2.200:0:4096:1,1,1:{o}:9:{w}:0:2.300",
            "MPI_Waitall:3.000:2:0:0:4.000",
            "#@ done 1,2",
            f"MPI_Irecv:5.000:0:8:1,1,1:{o}:11:{w}:0:5.100",
            "MPI_Test:5.200:0:0:0:5.300",
            "#@ done -",
            f"MPI_Isend:5.400:0:8:1,1,1:{o}:11:{w}:0:5.500",
            "MPI_Waitany:6.000:1:0:0:0:6.500",
            "#@ done 6",
            "MPI_Test:7.000:0:0:0:7.200",
            "#@ done 4",
            "MPI_Finalize:9.000:-",
        ]
    a.close()
    same_graph(tmp_path / "a", lat_trace(tmp_path / "e", exp), tmp_path)


def test_sendrecv_and_persistent_starts(tmp_path):
    """MPI_Sendrecv (one MpiSend + one MpiRecv in the region) and MPI_Startall, where
    Score-P records MpiIsend / MpiIrecvRequest with the persistent request's id at every
    start: persistent requests, as our tracer's Send_init/Recv_init + Startall records."""
    a = Archive(tmp_path / "a", 2)
    exp = {}
    for r in range(2):
        k, o, w = a.rank(r), 1 - r, W.format(r=r, n=2)
        k.init(0, 1000)
        k.sendrecv(2000, 3000, o, 1, 64, o, 1, 64)
        k.region("MPI_Send_init", 3100, 3200)
        k.region("MPI_Recv_init", 3300, 3400)
        send_req, recv_req = 100, 101  # the ids Score-P gave at *_init, reused at each start
        for t in (4000, 6000):
            k.region(
                "MPI_Startall",
                t,
                t + 100,
                [
                    lambda wr, t=t, o=o, q=send_req: wr.mpi_isend(t, o, a.world, 2, 32, q),
                    lambda wr, t=t, q=recv_req: wr.mpi_irecv_request(t + 100, q),
                ],
            )
            k.complete(t + 500, t + 900, [(send_req, "send"), (recv_req, ("recv", o, 2, 32))])
        k.finalize(9000, 9100)
        exp[r] = [
            "MPI_Init:-:0:0:1.000",
            f"MPI_Sendrecv:2.000:0:64:1,1,1:{o}:1:0:64:1,1,1:{o}:1:{w}:0:3.000",
            f"MPI_Send_init:4.000:0:32:1,1,1:{o}:2:{w}:0:4.000",
            f"MPI_Recv_init:4.000:0:32:1,1,1:-1:-1:{w}:0:4.000",
        ]
        for t in (4.0, 6.0):
            exp[r] += [
                f"MPI_Startall:{t:.3f}:2:0:{t + 0.1:.3f}",
                "#@ start 2,3",
                f"MPI_Waitall:{t + 0.5:.3f}:2:0:0:{t + 0.9:.3f}",
                "#@ done 2,3",
                f"#@ status call=3 src={o} tag=2 bytes=32",
            ]
        exp[r].append("MPI_Finalize:9.000:-")
    a.close()
    same_graph(tmp_path / "a", lat_trace(tmp_path / "e", exp), tmp_path)


COLLS = [
    # name, OTF2 op, root, (sent, received) per rank as Score-P records them for block n, block n
    ("MPI_Barrier", OPS.BARRIER, None, lambda me, p, n: (0, 0), lambda n, w: w),
    ("MPI_Bcast", OPS.BCAST, 1, lambda me, p, n: (p * n if me == 1 else 0, n), lambda n, w: f"0:{n}:1,1,1:1:{w}"),
    ("MPI_Reduce", OPS.REDUCE, 2, lambda me, p, n: (n, p * n if me == 2 else 0), lambda n, w: f"0:0:{n}:1,1,1:0:2:{w}"),
    ("MPI_Allreduce", OPS.ALLREDUCE, None, lambda me, p, n: (p * n, p * n), lambda n, w: f"0:0:{n}:1,1,1:0:{w}"),
    (
        "MPI_Gather",
        OPS.GATHER,
        0,
        lambda me, p, n: (n, p * n if me == 0 else 0),
        lambda n, w: f"0:{n}:1,1,1:0:{n}:1,1,1:0:{w}",
    ),
    (
        "MPI_Scatter",
        OPS.SCATTER,
        2,
        lambda me, p, n: (p * n if me == 2 else 0, n),
        lambda n, w: f"0:{n}:1,1,1:0:{n}:1,1,1:2:{w}",
    ),
    (
        "MPI_Allgather",
        OPS.ALLGATHER,
        None,
        lambda me, p, n: (p * n, p * n),
        lambda n, w: f"0:{n}:1,1,1:0:{n}:1,1,1:{w}",
    ),
    ("MPI_Alltoall", OPS.ALLTOALL, None, lambda me, p, n: (p * n, p * n), lambda n, w: f"0:{n}:1,1,1:0:{n}:1,1,1:{w}"),
    ("MPI_Scan", OPS.SCAN, None, lambda me, p, n: ((p - me) * n, (me + 1) * n), lambda n, w: f"0:0:{n}:1,1,1:0:{w}"),
    ("MPI_Exscan", OPS.EXSCAN, None, lambda me, p, n: ((p - me - 1) * n, me * n), lambda n, w: f"0:0:{n}:1,1,1:0:{w}"),
    (
        "MPI_Reduce_scatter_block",
        OPS.REDUCE_SCATTER_BLOCK,
        None,
        lambda me, p, n: (p * n, p * n),
        lambda n, w: f"0:0:{n}:1,1,1:0:{w}",
    ),
]


@pytest.mark.parametrize("name,op,root,recorded,fields", COLLS, ids=[c[0] for c in COLLS])
def test_collectives_take_their_block_from_score_p_byte_counts(tmp_path, name, op, root, recorded, fields):
    """A collective's size is one rank's block, recovered from the bytes Score-P records
    (scorep_mpi_coll_bytes_*), here on a sub-communicator of world ranks 1-3 (rank 0 is not
    a member), so roots and peers are communicator ranks."""
    n, p = 3000, 3
    a = Archive(tmp_path / "a", 4)
    sub = a.comm("sub", [1, 2, 3])
    exp = {}
    for r in range(4):
        k = a.rank(r)
        k.init(0, 1000)
        exp[r] = ["MPI_Init:-:0:0:1.000"]
        if r > 0:
            me = r - 1
            sent, recvd = recorded(me, p, n)
            k.collective(2000, 3000 + 100 * r, name, op, sent, recvd, UNDEFINED if root is None else root, comm=sub)
            exp[r].append(f"{name}:2.000:{fields(n, f'9,{me},3')}:{3 + 0.1 * r:.3f}")
        k.finalize(9000, 9100)
        exp[r].append("MPI_Finalize:9.000:-")
    a.close()
    report = same_graph(tmp_path / "a", lat_trace(tmp_path / "e", exp, comms=["9 seq=0 world=1-3"]), tmp_path)
    assert sum(report.stats["collectives"].values()) == 3


def test_v_collectives_spread_their_totals_evenly(tmp_path):
    """OTF2 keeps only each rank's total bytes of MPI_Alltoallv: the per-peer counts are
    spread evenly, and a note says so."""
    a = Archive(tmp_path / "a", 3)
    exp = {}
    for r in range(3):
        k = a.rank(r)
        k.init(0, 1000)
        k.collective(2000, 3000, "MPI_Alltoallv", OPS.ALLTOALLV, 300 + r, 301)
        k.finalize(9000, 9100)
        s = ",".join(str(x) for x in [(300 + r) // 3 + (1 if i < (300 + r) % 3 else 0) for i in range(3)])
        exp[r] = [
            "MPI_Init:-:0:0:1.000",
            f"MPI_Alltoallv:2.000:0:0:{s}:0:0,0,0:1,1,1:0:0:101,100,100:0:0,0,0:1,1,1:7,{r},3:3.000",
            "MPI_Finalize:9.000:-",
        ]
    a.close()
    report = same_graph(tmp_path / "a", lat_trace(tmp_path / "e", exp), tmp_path)
    assert any("spread evenly" in n for n in report.notes())


def test_nonblocking_collective_completes_at_its_wait(tmp_path):
    a = Archive(tmp_path / "a", 2)
    exp = {}
    for r in range(2):
        k, w = a.rank(r), W.format(r=r, n=2)
        k.init(0, 1000)
        q = k.icollective(2000, 2100, "MPI_Iallreduce")
        k.user("overlap", 2200, 4000)
        k.complete(5000, 6000, [(q, ("coll", OPS.ALLREDUCE, UNDEFINED, 2 * 512, 2 * 512))], name="MPI_Wait")
        k.finalize(9000, 9100)
        exp[r] = [
            "MPI_Init:-:0:0:1.000",
            f"MPI_Iallreduce:2.000:0:0:512:1,1,1:0:{w}:0:2.100",
            "MPI_Wait:5.000:0:0:6.000",
            "#@ done 1",
            "MPI_Finalize:9.000:-",
        ]
    a.close()
    same_graph(tmp_path / "a", lat_trace(tmp_path / "e", exp), tmp_path)


def test_cancelled_requests_are_left_out(tmp_path):
    """A receive request cancelled (MpiRequestCancelled where it completes) is not in the
    graph, as if never posted; the note counts it."""
    a = Archive(tmp_path / "a", 2)
    exp = {}
    for r in range(2):
        k = a.rank(r)
        k.init(0, 1000)
        q = k.irecv(2000, 2100)
        k.region("MPI_Cancel", 2200, 2300)
        k.complete(3000, 3100, [(q, "cancelled")], name="MPI_Wait")
        k.finalize(9000, 9100)
        exp[r] = ["MPI_Init:-:0:0:1.000", "MPI_Finalize:9.000:-"]
    a.close()
    report = same_graph(tmp_path / "a", lat_trace(tmp_path / "e", exp), tmp_path)
    assert any("cancelled requests left out" in n for n in report.notes())


def test_timer_resolution_comes_from_the_clock_properties(tmp_path):
    """2.5 GHz ticks from a large global offset: a gap of 2,500 ticks is 1 µs of computation."""
    res, t0 = 2_500_000_000, 7 * 10**15
    a = Archive(tmp_path / "a", 1, resolution=res)
    k = a.rank(0)
    k.init(t0, t0 + 100)
    k.collective(t0 + 100 + 2500, t0 + 100 + 2600, "MPI_Barrier", OPS.BARRIER, 0, 0)
    k.finalize(t0 + 100 + 2600 + 5000, t0 + 10**6)
    a.close()
    g, _ = schedule(str(tmp_path / "a"), progress=False)
    assert g.predict(L=0, o=0, G=0).runtime_ns == pytest.approx(1000.0 + 2000.0)


def test_threads_without_mpi_are_computation_with_mpi_refused(tmp_path):
    a = Archive(tmp_path / "a", 1, threads=1)
    k = a.rank(0)
    k.init(0, 100)
    k.finalize(5000, 5100)
    t = a.tr.event_writer_from_location(a.extra[0][0])
    t.enter(200, a.region("worker", mpi=False))
    t.leave(4000, a.region("worker", mpi=False))
    a.close()
    _, report = schedule(str(tmp_path / "a"), progress=False)
    assert any("other threads" in n for n in report.notes())

    b = Archive(tmp_path / "b", 2, threads=1)
    for r in range(2):
        b.rank(r).init(0, 100)
        b.rank(r).finalize(5000, 5100)
    t = b.tr.event_writer_from_location(b.extra[1][0])
    t.mpi_send(300, 0, b.world, 1, 8)
    b.close()
    with pytest.raises(
        InputError, match=r"location \d+ 'OMP thread 1' of rank 1: event 1: an MPI event on a second thread"
    ):
        schedule(str(tmp_path / "b"), progress=False)


def test_rma_events_are_reported_not_modelled(tmp_path):
    a = Archive(tmp_path / "a", 1)
    k = a.rank(0)
    k.init(0, 100)
    win = a.tr.definitions.rma_win("win", comm=a.world)
    k.region("MPI_Put", 200, 300, [lambda w: w.rma_put(250, win, 0, 64, 1)])
    k.finalize(5000, 5100)
    a.close()
    _, report = schedule(str(tmp_path / "a"), progress=False)
    notes = report.notes()
    assert any("RmaPut events (one-sided communication): not modelled" in n for n in notes), notes
    assert "MPI_Put" in report.stats["unmodelled"]


def test_unmatched_send_names_the_otf2_event(tmp_path, cli):
    a = Archive(tmp_path / "a", 2)
    a.rank(0).init(0, 100)
    a.rank(0).send(200, 300, 1, 5, 8)
    a.rank(0).finalize(400, 500)
    a.rank(1).init(0, 100)
    a.rank(1).finalize(400, 500)
    a.close()
    proc = cli("predict", tmp_path / "a" / "traces.otf2", check=False)
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith(
        f"latitude: {tmp_path / 'a' / 'traces.otf2'}: rank 0 (location 0 'Master thread'), MPI_Send (event 3, 0.000000200 s):"
    ), err
    assert "no matching" in err


def test_events_naming_unknown_peers_or_communicators_are_refused(tmp_path):
    a = Archive(tmp_path / "a", 2)
    for r in range(2):
        a.rank(r).init(0, 100)
    a.rank(0).send(200, 300, 5, 1, 8)
    a.close()
    with pytest.raises(
        InputError,
        match=r"rank 0 \(location 0 'Master thread'\), event 4 \(0.000000200 s\): MpiSend names rank 5 of a communicator of 2 ranks",
    ):
        schedule(str(tmp_path / "a"), progress=False)


def _archive(tmp_path):
    a = Archive(tmp_path / "arch", 2)
    for r in range(2):
        k = a.rank(r)
        k.init(0, 100)
        for i in range(50):
            k.collective(1000 * i + 200, 1000 * i + 300, "MPI_Allreduce", OPS.ALLREDUCE, 16, 16)
        k.finalize(60000, 60100)
    a.close()
    return tmp_path / "arch"


@pytest.mark.parametrize(
    "damage,message",
    [
        (
            lambda d: open(d / "traces" / "1.evt", "r+b").truncate(300),
            "rank 1 (location 1 'Master thread'): the archive's events cannot be read",
        ),
        (
            lambda d: os.remove(d / "traces" / "1.evt"),
            "rank 1 (location 1 'Master thread'): the archive's events cannot be read",
        ),
        (lambda d: open(d / "traces.def", "r+b").truncate(40), "not a readable OTF2 archive"),
        (lambda d: open(d / "traces.otf2", "wb").write(b"OTF2" + b"\x00" * 20), "not a readable OTF2 archive"),
    ],
    ids=["truncated-events", "missing-events", "truncated-definitions", "garbage-anchor"],
)
def test_bad_archives_are_one_line_and_exit_2(tmp_path, cli, damage, message):
    d = _archive(tmp_path)
    damage(d)
    proc = cli("schedule", d / "traces.otf2", check=False)
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr
    assert err.count("\n") == 1 and "Traceback" not in err and "[OTF2]" not in err, err
    assert err.startswith(f"latitude: {d / 'traces.otf2'}: ") and message in err, err


def test_cli_takes_the_archive_or_its_directory(tmp_path, cli):
    d = _archive(tmp_path)
    out = tmp_path / "app.goal"
    proc = cli("schedule", d, "-o", out)
    assert "2 ranks, 104 calls" in proc.stdout
    p1 = cli("predict", d / "traces.otf2", "-L", "1us", "-o", "0", "-G", "0", "--json")
    p2 = cli("predict", out, "-L", "1us", "-o", "0", "-G", "0", "--json")
    import json

    assert json.loads(p1.stdout)["runtime_ns"] == json.loads(p2.stdout)["runtime_ns"]


def test_parallel_conversion_writes_the_same_files(tmp_path):
    """Large archives are converted by worker processes, ranks split between them: the files
    are the same as one process writes, and an error in a worker is the same one line."""
    from latitude.formats.otf2_archive import convert

    d = _archive(tmp_path)
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    c1 = convert(str(d / "traces.otf2"), str(tmp_path / "one"), workers=1)
    c2 = convert(str(d / "traces.otf2"), str(tmp_path / "two"), workers=2)
    assert c1.events == c2.events == 2 * (4 + 50 * 4)
    for r in range(2):
        name = f"pmpi-trace-rank-{r}.txt"
        assert (tmp_path / "one" / name).read_text() == (tmp_path / "two" / name).read_text()
    open(d / "traces" / "1.evt", "r+b").truncate(300)
    (tmp_path / "three").mkdir()
    with pytest.raises(InputError, match=r"rank 1 \(location 1 'Master thread'\): the archive's events cannot be read"):
        convert(str(d / "traces.otf2"), str(tmp_path / "three"), workers=2)
