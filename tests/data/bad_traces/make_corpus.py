"""Regenerate the malformed-trace corpus: one directory per case with its rank files and an
EXPECTED file holding a substring of the one-line error `latitude schedule` must print.

    python3 tests/data/bad_traces/make_corpus.py
"""

from __future__ import annotations

import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

INIT = "MPI_Init:-:1:2:0\n"
FIN = "MPI_Finalize:50:-\n"
OK = INIT + FIN
EXT = "#@ latitude-trace 1\n#@ world rank={r} size=2\n#@ const any_source=-1 any_tag=-1 proc_null=-2\n#@ comm 9 seq=0 world=0-1\n\n"


def send(t, dest, tag=0, comm="9,0,2", count=1):
    return f"MPI_Send:{t}:100:{count}:1,4,4:{dest}:{tag}:{comm}:{t + 1}\n"


def recv(t, src, tag=0, comm="9,1,2"):
    return f"MPI_Recv:{t}:100:1:1,4,4:{src}:{tag}:{comm}:0:{t + 1}\n"


CASES = {
    # name: (rank files, expected substring)
    "bad_end_time": ([INIT + "MPI_Barrier:3:9,0,2:x\n" + FIN, OK], "t-0.txt:2: MPI_Barrier: end time: expected µs"),
    "bad_start_time": ([INIT + "MPI_Barrier:-:9,0,2:4\n" + FIN, OK], "t-0.txt:2: MPI_Barrier: start time: expected µs"),
    "missing_field": (
        [INIT + "MPI_Send:3:100:1:1,4,4:1:0:4\n" + FIN, OK],
        "t-0.txt:2: MPI_Send: missing field 6 (comm)",
    ),
    "extra_field": (
        [INIT + "MPI_Barrier:3:9,0,2:77:4\n" + FIN, OK],
        "t-0.txt:2: MPI_Barrier: MPI_Barrier has 2 argument fields, expected 1 (comm)",
    ),
    "bad_datatype": (
        [INIT + "MPI_Send:3:100:1:1,4:1:0:9,0,2:4\n" + FIN, OK],
        "t-0.txt:2: MPI_Send: field 3 (datatype): expected a datatype code,size,extent",
    ),
    "bad_comm": (
        [INIT + "MPI_Barrier:3:9,2,2:4\n" + FIN, OK],
        "t-0.txt:2: MPI_Barrier: field 1 (comm): rank 2 in a communicator of size 2",
    ),
    "negative_count": (
        [INIT + send(3, 1, count=-4) + FIN, OK],
        "t-0.txt:2: MPI_Send: field 2 (count): negative count -4",
    ),
    "garbage_line": ([INIT + "hello world\n" + FIN, OK], "t-0.txt:2: expected a call record NAME:TSTART:...:TEND"),
    "no_init": (
        [send(3, 1) + FIN, OK],
        "t-0.txt:1: expected MPI_Init or MPI_Init_thread as the first call, got MPI_Send",
    ),
    "second_init": ([INIT + INIT + FIN, OK], "t-0.txt:2: a second MPI_Init"),
    "after_finalize": ([INIT + FIN + "MPI_Barrier:60:9,0,2:61\n", OK], "t-0.txt:3: MPI_Barrier after MPI_Finalize"),
    "unmatched_send": (
        [INIT + send(3, 1, tag=7) + FIN, OK],
        "t-0.txt:2: send to rank 1 (tag 7 on MPI_COMM_WORLD) has no matching receive",
    ),
    "unmatched_recv": (
        [OK, INIT + recv(3, 0, tag=5) + FIN],
        "t-1.txt:2: receive from rank 0 (tag 5 on MPI_COMM_WORLD) has no matching send",
    ),
    "tag_mismatch": (
        [INIT + send(3, 1, tag=1) + FIN, INIT + recv(3, 0, tag=2) + FIN],
        "t-0.txt:2: send to rank 1 (tag 1 on MPI_COMM_WORLD) has no matching receive",
    ),
    "peer_out_of_range": (
        [INIT + send(3, 5) + FIN, OK],
        "t-0.txt:2: MPI_Send: peer rank 5 outside its communicator of 2 ranks",
    ),
    "root_out_of_range": (
        [INIT + "MPI_Bcast:3:100:1:1,4,4:2:9,0,2:4\n" + FIN, OK],
        "t-0.txt:2: MPI_Bcast: root 2 outside its communicator of 2 ranks",
    ),
    "negative_tag": ([INIT + send(3, 1, tag=-5) + FIN, OK], "t-0.txt:2: MPI_Send: negative tag -5"),
    "send_any_source": ([INIT + send(3, -1) + FIN, OK], "t-0.txt:2: MPI_Send: send to MPI_ANY_SOURCE"),
    "deadlock": (
        [INIT + recv(3, 1, comm="9,0,2") + send(5, 1) + FIN, INIT + recv(3, 0) + send(5, 0, comm="9,1,2") + FIN],
        "dependency cycle (deadlock)",
    ),
    "counts_length": (
        [INIT + "MPI_Allgatherv:3:1:2:1,4,4:3:4:1,1,1:5:0,1,2:1,4,4:9,0,2:4\n" + FIN, OK],
        "t-0.txt:2: MPI_Allgatherv: 3 counts for a communicator of 2 ranks",
    ),
    "killed_rank_unmatched": (
        [INIT + send(3, 1) + "MPI_Recv:5:1\0\0\0\0", INIT + recv(3, 0, comm="9,1,2") + send(5, 0, comm="9,1,2") + FIN],
        "t-1.txt:3: send to rank 0 (tag 0 on MPI_COMM_WORLD) has no matching receive",
    ),
    "ext_before_call": (["#@ done 1\n" + OK, OK], "t-0.txt:1: '#@ done' before the first call record"),
    "bad_status": (
        [EXT.format(r=0) + INIT + "#@ status src=x tag=1 bytes=4\n" + FIN, EXT.format(r=1) + OK],
        "t-0.txt:7: expected '[call=I] src=S tag=T bytes=B'",
    ),
    "bad_comm_line": (
        [EXT.format(r=0) + INIT + "MPI_Comm_dup:3:9,0,2:77:4\n#@ comm 5 seq=0 world=1-0\n" + FIN, EXT.format(r=1) + OK],
        "t-0.txt:8: expected a rank list such as 0-3,5",
    ),
    "comm_disagrees": (
        [EXT.format(r=0) + INIT + "MPI_Barrier:3:9,1,2:4\n" + FIN, EXT.format(r=1) + OK],
        "t-0.txt:7: communicator 9: the call says rank 1 of 2 but its '#@ comm' line makes this rank 0 of 2",
    ),
    "status_outside_world": (
        [
            EXT.format(r=0) + INIT + send(3, 1) + FIN,
            EXT.format(r=1) + INIT + recv(3, -1) + "#@ status src=9 tag=0 bytes=4\n" + FIN,
        ],
        "t-1.txt:7: '#@ status': source 9 is not a world rank",
    ),
    "world_size": (
        [EXT.format(r=0).replace("size=2", "size=3") + OK, EXT.format(r=1) + OK],
        "the trace says the world has 3 ranks but 2 files were found",
    ),
    "rank_header": (
        [EXT.format(r=0) + OK, EXT.format(r=0) + OK],
        "t-1.txt: this is rank 0's trace (header), but its name makes it rank 1",
    ),
    "missing_rank": (
        {"t-0.txt": OK, "t-1.txt": OK, "t-3.txt": OK},
        "t-2.txt: missing: the trace has files for ranks 0-1 and 3 but not for rank 2",
    ),
    "liballprof2": ({"lap2-trace-rank-0-of-2.txt": "MPI_Init:0.00:1:2:3.00\n"}, "a liballprof2 trace"),
    "compressed": ({"t-0.txt.xz": "x", "t-1.txt.xz": "x"}, "a bzip2/xz-compressed trace: decompress it first"),
    "no_traces": ({"notes.md": "nothing here\n"}, "is a directory without liballprof trace files"),
}


def main() -> None:
    for name in os.listdir(HERE):
        if os.path.isdir(os.path.join(HERE, name)):
            shutil.rmtree(os.path.join(HERE, name))
    for name, (files, expected) in CASES.items():
        d = os.path.join(HERE, name)
        os.makedirs(d)
        if isinstance(files, list):
            files = {f"t-{r}.txt": text for r, text in enumerate(files)}
        for fname, text in files.items():
            with open(os.path.join(d, fname), "w", newline="") as f:
                f.write(text)
        with open(os.path.join(d, "EXPECTED"), "w") as f:
            f.write(expected + "\n")


if __name__ == "__main__":
    main()
