"""DUMPI traces (SST's sst-dumpi), read by latitude.formats.dumpi: a real MPI run traced
with `latitude trace` and described as the DUMPI run libdumpi would have written for the
same calls at the same times (tests/dumpi_writer.py, written to the format's definition)
gives the same graph; damaged files are one line naming the file, exit 2."""

from __future__ import annotations

import re

import pytest
from conftest import one_line, run_cli
from dumpi_writer import Writer, arr, describe, u16, u32, write_meta
from latitude import Graph
from latitude.formats import dumpi_format as F
from tracetools import assert_same_graph, ompi, trace

APPS = [
    # nonblocking halo + allreduce (Isend/Irecv/Waitall); blocking pipelined sweeps
    ("halo2d", 4, ["--iters", "20", "--nx", "64", "--ny", "64"]),
    ("sweep3d", 4, ["--nx", "16", "--ny", "16", "--nz", "16"]),
    ("pingpong", 2, ["--sizes", "0,8,4096", "--iters", "20", "--warmup", "2"]),  # Barrier, Wtime
]


@pytest.mark.parametrize("app,ranks,args", APPS, ids=[a[0] for a in APPS])
def test_traced_run_and_its_dumpi_description_give_the_same_graph(tmp_path, ompi_apps, app, ranks, args):
    traces = tmp_path / "traces"
    trace(traces, [*ompi(ranks), str(ompi_apps / app), *args])
    (tmp_path / "dumpi").mkdir()
    meta = describe(traces, tmp_path / "dumpi")
    g1 = Graph.from_trace(str(traces), progress=False)
    g2 = Graph.from_trace(meta, progress=False)
    assert g2.report.stats["source"]["format"] == "dumpi"
    assert_same_graph(g1, g2, tmp_path)


# -- small fixtures written record by record ---------------------------------------------------

US = 1000  # ns


def send(count, dest, tag, comm=F.COMM_WORLD, dtype=9):
    """dumpiio.c dumpi_write_send: count, datatype (9 = DUMPI_INT, 4 bytes), dest, tag, comm."""
    return u32(count) + u16(dtype) + u32(dest) + u32(tag) + u16(comm)


def recv(count, src, tag, comm=F.COMM_WORLD):
    """dumpi_write_recv: count, datatype, source, tag, comm, status (count 0: none kept)."""
    return u32(count) + u16(9) + u32(src) + u32(tag) + u16(comm) + u32(0)


def ping(tmp_path, body0=None, ranks=2):
    """Rank 0 computes 5 us, sends 100 ints to rank 1, both allreduce 1 int; `body0`
    replaces rank 0's records between Init and Finalize."""
    for r in range(ranks):
        w = Writer(str(tmp_path / f"run-{r:04d}.bin"))
        w.record("Init", 0, 1 * US, u32(0))
        if r == 0:
            for name, t0, t1, args in body0 or [("Send", 6 * US, 7 * US, send(100, 1, 3))]:
                w.record(name, t0, t1, args)
        else:
            w.record("Recv", 2 * US, 9 * US, recv(100, 0, 3))
        # dumpi_write_allreduce: count, datatype, op (u8, 3 = DUMPI_SUM), comm
        w.record("Allreduce", 10 * US, 12 * US, u32(1) + u16(9) + bytes([3]) + u16(F.COMM_WORLD))
        w.record("Finalize", 13 * US, 14 * US)
        w.close(r)
    return write_meta(str(tmp_path / "run"), ranks)


def test_fixture_messages_and_computation(tmp_path):
    g = Graph.from_trace(ping(tmp_path), progress=False)
    assert g.report.stats["source"]["format"] == "dumpi"
    # the send, and the 2-rank allreduce's exchange (recursive doubling: one message each way)
    assert g.info["messages"] == 3 and g.report.stats["collectives"] == {"allreduce recdoub": 2}
    goal = tmp_path / "g.goal"
    g.write_goal(str(goal))
    text = goal.read_text()
    assert "send 400b to 1 tag 3" in text and "recv 400b from 0 tag 3" in text
    assert re.search(r"calc 5000\b", text)  # rank 0: 1 us (Init ends) .. 6 us (Send starts)


def test_rank_file_or_directory_is_accepted(tmp_path):
    ping(tmp_path)
    for path in (tmp_path, tmp_path / "run-0001.bin"):
        assert Graph.from_trace(str(path), progress=False).info["messages"] >= 1


def damaged(tmp_path, cut):
    meta = ping(tmp_path)
    path = tmp_path / "run-0000.bin"
    data = path.read_bytes()
    path.write_bytes(cut(data))
    return meta, path


@pytest.mark.parametrize(
    "cut,want",
    [
        (lambda d: d[: len(d) // 2], "index"),
        (lambda d: d[:40], "index"),
        (lambda d: b"\0" * 8 + d[8:], "not a DUMPI trace file"),
        (lambda d: d[:4], "not a DUMPI trace file"),
    ],
    ids=["half", "head", "magic", "tiny"],
)
def test_damaged_rank_file_is_one_line(tmp_path, cut, want):
    meta, path = damaged(tmp_path, cut)
    one_line(run_cli("predict", meta, check=False), path.name, want)


def test_truncated_record_names_it(tmp_path):
    meta = ping(tmp_path)
    w = Writer(str(tmp_path / "run-0000.bin"))
    w.record("Init", 0, 1 * US, u32(0))
    w.record("Send", 6 * US, 7 * US, send(100, 1, 3)[:-4])  # the stream ends inside the record
    w.close(0)
    one_line(run_cli("predict", meta, check=False), "run-0000.bin", "truncated", "record 1 (MPI_Send)")


@pytest.mark.parametrize(
    "body,want",
    [
        # dumpi_write_comm_create: comm, group, newcomm -- not mapped, so not skippable
        ([("Comm_create", 6 * US, 7 * US, u16(2) + u16(3) + u16(4))], "record 1 (MPI_Comm_create): not supported"),
        ([("Send", 6 * US, 7 * US, send(100, 1, 3, comm=5))], "communicator 5 is not MPI_COMM_WORLD"),
        ([("Send", 6 * US, 7 * US, send(100, 7, 3))], "destination 7 in a communicator of 2 ranks"),
        ([("Send", 6 * US, 7 * US, send(100, 1, 3, dtype=999))], "datatype 999 has no size"),
        ([(F.ALL_FUNCTIONS - 1, 6 * US, 7 * US, b"")], "record 1 (DUMPIO_Testsome): not supported"),
    ],
    ids=["comm-create", "subcomm", "peer", "datatype", "label"],
)
def test_unmapped_records_are_one_line(tmp_path, body, want):
    one_line(run_cli("predict", ping(tmp_path, body), check=False), "run-0000.bin", want)


def test_bad_meta_and_missing_rank_file(tmp_path):
    meta = ping(tmp_path)
    (tmp_path / "run-0001.bin").unlink()
    one_line(run_cli("predict", meta, check=False), "run.meta", "rank 1's trace file run-0001.bin is missing")
    bad = tmp_path / "bad.meta"
    bad.write_text("hostname=x\n")
    one_line(run_cli("predict", str(bad), check=False), "bad.meta", "numprocs")


def test_wildcard_irecv_takes_source_and_tag_from_its_completion(tmp_path):
    """Rank 1 posts Irecv(ANY_SOURCE, ANY_TAG) and Irecv(0, 4), completes them with Waitsome
    then Testany: the graph receives from rank 0 with the statuses' tags."""
    meta = tmp_path / "run.meta"
    w0 = Writer(str(tmp_path / "run-0000.bin"))
    w0.record("Init", 0, 1 * US, u32(0))
    w0.record("Send", 2 * US, 3 * US, send(10, 1, 7))
    w0.record("Send", 4 * US, 5 * US, send(20, 1, 4))
    w0.record("Finalize", 9 * US, 10 * US)
    w0.close(0)
    w1 = Writer(str(tmp_path / "run-0001.bin"))
    w1.record("Init", 0, 1 * US, u32(0))
    # dumpi_write_irecv: count, datatype, source, tag, comm, request
    w1.record("Irecv", 2 * US, 2 * US, u32(10) + u16(9) + u32(-1) + u32(-1) + u16(F.COMM_WORLD) + u32(7))
    w1.record("Irecv", 2 * US, 3 * US, u32(20) + u16(9) + u32(0) + u32(4) + u16(F.COMM_WORLD) + u32(8))
    # dumpi_write_waitsome: count, requests, outcount, indices, statuses (bytes, source,
    # cancelled, error, tag); dumpi_write_testany: count, requests, index, flag, status
    status = u32(40) + u32(0) + bytes([0, 0]) + u32(7)
    w1.record("Waitsome", 4 * US, 6 * US, u32(2) + arr([7, 8]) + u32(1) + arr([0]) + u32(1) + status)
    w1.record("Testany", 6 * US, 7 * US, u32(1) + arr([8]) + u32(0) + u32(1) + u32(0))
    w1.record("Finalize", 9 * US, 10 * US)
    w1.close(1)
    write_meta(str(tmp_path / "run"), 2)
    g = Graph.from_trace(str(meta), progress=False)
    assert (g.info["messages"], g.info["bytes"]) == (2, 120)
    goal = tmp_path / "g.goal"
    g.write_goal(str(goal))
    text = goal.read_text()
    assert "recv 40b from 0 tag 7" in text and "recv 80b from 0 tag 4" in text


def test_vector_collectives(tmp_path):
    """Alltoallv, Allgatherv and Reduce_scatter over 2 ranks (DUMPI_INT, 4 bytes): rank r
    sends r+1 ints to the other rank in the alltoallv, contributes r+1 ints to the
    allgatherv and gets r+1 ints of the reduce-scatter."""
    for r in range(2):
        w = Writer(str(tmp_path / f"run-{r:04d}.bin"))
        w.record("Init", 0, 1 * US, u32(0))
        world = u16(F.COMM_WORLD)
        sends = [1, 1] if r == 0 else [2, 2]
        # dumpi_write_alltoallv: commsize, sendcounts, senddispls, sendtype, recvcounts,
        # recvdispls, recvtype, comm
        w.record(
            "Alltoallv",
            2 * US,
            3 * US,
            u32(2) + arr(sends) + arr([0, 1]) + u16(9) + arr([1, 2]) + arr([0, 1]) + u16(9) + world,
        )
        # dumpi_write_allgatherv: commsize, sendcount, sendtype, recvcounts, displs, recvtype, comm
        w.record(
            "Allgatherv", 4 * US, 5 * US, u32(2) + u32(r + 1) + u16(9) + arr([1, 2]) + arr([0, 1]) + u16(9) + world
        )
        # dumpi_write_reduce_scatter: commsize, recvcounts, datatype, op, comm
        w.record("Reduce_scatter", 6 * US, 7 * US, u32(2) + arr([1, 2]) + u16(9) + bytes([3]) + world)
        w.record("Finalize", 8 * US, 9 * US)
        w.close(r)
    g = Graph.from_trace(write_meta(str(tmp_path / "run"), 2), progress=False)
    assert set(g.report.stats["collectives"]) == {"alltoallv linear", "allgatherv recdoub", "reduce_scatter rechalving"}
    # each exchanges 4 bytes one way and 8 the other: alltoallv rank 0's 1 int for rank 1 and
    # rank 1's 2 ints for rank 0, allgatherv each rank's block, reduce-scatter the other's part
    assert (g.info["messages"], g.info["bytes"]) == (6, 3 * (4 + 8))
    bad = tmp_path / "bad"
    bad.mkdir()
    for r in range(2):
        w = Writer(str(bad / f"run-{r:04d}.bin"))
        w.record("Init", 0, 1 * US, u32(0))
        w.record("Reduce_scatter", 6 * US, 7 * US, u32(3) + arr([1, 2, 3]) + u16(9) + bytes([3]) + u16(F.COMM_WORLD))
        w.close(r)
    one_line(run_cli("predict", write_meta(str(bad / "run"), 2), check=False), "count arrays of [3] entries")


def test_split_and_dup_communicators(tmp_path):
    """4 ranks split MPI_COMM_WORLD by parity with key -rank (so the even communicator is
    world ranks 2, 0), dup the result and free the split: rank 2 (rank 0 of its half) sends
    to rank 1 of the dup (world rank 0), and each half allreduces."""
    for r in range(4):
        w = Writer(str(tmp_path / f"run-{r:04d}.bin"))
        w.record("Init", 0, 1 * US, u32(0))
        # dumpi_write_comm_split: oldcomm, color, key, newcomm; _comm_dup: oldcomm, newcomm
        w.record("Comm_split", 2 * US, 3 * US, u16(F.COMM_WORLD) + u32(r % 2) + u32(-r) + u16(5))
        w.record("Comm_dup", 3 * US, 4 * US, u16(5) + u16(6))
        w.record("Comm_free", 4 * US, 4 * US, u16(5))  # dumpi_write_comm_free: comm
        if r == 2:
            w.record("Send", 5 * US, 6 * US, send(8, 1, 9, comm=6))
        if r == 0:
            w.record("Recv", 5 * US, 7 * US, recv(8, 0, 9, comm=6))
        w.record("Allreduce", 8 * US, 9 * US, u32(2) + u16(9) + bytes([3]) + u16(6))
        w.record("Finalize", 10 * US, 11 * US)
        w.close(r)
    g = Graph.from_trace(write_meta(str(tmp_path / "run"), 4), progress=False)
    goal = tmp_path / "g.goal"
    g.write_goal(str(goal))
    ranks = re.split(r"\nrank (\d+) \{", goal.read_text())
    text = {int(ranks[i]): ranks[i + 1] for i in range(1, len(ranks), 2)}
    assert "send 32b to 0 tag " in text[2] and "recv 32b from 2 tag " in text[0]  # tags carry the communicator
    # each half's 2-rank allreduce exchanges within the half only
    assert re.findall(r"send 8b to (\d+)", text[1]) == ["3"] and re.findall(r"send 8b to (\d+)", text[0]) == ["2"]
    bad = tmp_path / "bad"
    bad.mkdir()
    for r in range(2):
        w = Writer(str(bad / f"run-{r:04d}.bin"))
        w.record("Init", 0, 1 * US, u32(0))
        w.record("Comm_dup", 3 * US, 4 * US, u16(7) + u16(8))  # from a handle nothing made
        w.close(r)
    one_line(
        run_cli("predict", write_meta(str(bad / "run"), 2), check=False), "record 1 (MPI_Comm_dup)", "communicator 7"
    )


def test_gatherv_and_scatterv(tmp_path):
    """2 ranks, root 0: rank 1 gathers 2 ints (8 bytes) to the root, the root scatters 3 ints
    (12 bytes) to rank 1; the counts arrays come at the root only."""
    for r in range(2):
        w = Writer(str(tmp_path / f"run-{r:04d}.bin"))
        w.record("Init", 0, 1 * US, u32(0))
        world = u16(F.COMM_WORLD)
        at_root = r == 0
        # dumpi_write_gatherv: commrank, commsize, sendcount, sendtype, root, comm,
        # [recvcounts, displs at the root], recvtype
        g = u32(r) + u32(2) + u32(r + 1) + u16(9) + u32(0) + world
        w.record("Gatherv", 2 * US, 3 * US, g + (arr([1, 2]) + arr([0, 1]) if at_root else b"") + u16(9))
        # dumpi_write_scatterv: commrank, commsize, sendtype, recvcount, recvtype, root, comm,
        # [sendcounts, displs at the root]
        sv = u32(r) + u32(2) + u16(9) + u32(1 if at_root else 3) + u16(9) + u32(0) + world
        w.record("Scatterv", 4 * US, 5 * US, sv + (arr([1, 3]) + arr([0, 1]) if at_root else b""))
        w.record("Finalize", 8 * US, 9 * US)
        w.close(r)
    g = Graph.from_trace(write_meta(str(tmp_path / "run"), 2), progress=False)
    assert (g.info["messages"], g.info["bytes"]) == (2, 8 + 12)
