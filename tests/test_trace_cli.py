"""`latitude trace` plumbing (launcher detection, preload options, file naming, repair) and
the format checker itself: it must reject broken traces, and our traces must keep the field
positions that Schedgen-style liballprof readers index."""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest
import tracecheck
from jsonschemas import check
from latitude import tracer
from tracetools import HAVE_MPICH, HAVE_OMPI, ompi, run, trace

LIB = "/cache/liblatitude_trace.so"
ENV = {"LD_PRELOAD": LIB, "LATITUDE_TRACE_PREFIX": "/out/pmpi-trace-rank-"}


def test_launch_command_per_launcher():
    cmd, _ = tracer.launch_command(["mpirun", "-np", "4", "./a"], "openmpi", ENV)
    assert cmd == [
        "mpirun",
        "-x",
        f"LD_PRELOAD={LIB}",
        "-x",
        "LATITUDE_TRACE_PREFIX=/out/pmpi-trace-rank-",
        "-np",
        "4",
        "./a",
    ]
    cmd, _ = tracer.launch_command(["mpiexec", "-n", "2", "./a"], "mpich", ENV)
    assert cmd[:4] == ["mpiexec", "-genv", "LD_PRELOAD", LIB] and cmd[-3:] == ["-n", "2", "./a"]
    cmd, _ = tracer.launch_command(["srun", "-n", "2", "./a"], "srun", ENV)
    assert cmd == [
        "srun",
        f"--export=ALL,LD_PRELOAD={LIB},LATITUDE_TRACE_PREFIX=/out/pmpi-trace-rank-",
        "-n",
        "2",
        "./a",
    ]
    cmd, env = tracer.launch_command(["./a", "x"], "unknown", ENV)
    assert cmd == ["./a", "x"] and env["LD_PRELOAD"] == LIB


def test_family_detection():
    assert tracer.family_of("gcc -I/usr/lib/x86_64-linux-gnu/openmpi/include -lmpi") == "openmpi"
    assert tracer.family_of("gcc -I/usr/include/x86_64-linux-gnu/mpich -lmpich") == "mpich"
    assert tracer.family_of("HYDRA build details:") == "mpich"
    assert tracer.family_of("Intel(R) MPI Library for Linux* OS, Version 2021") == "intel"
    assert tracer.launcher_family(["srun", "-n", "2"]) == "srun"
    assert tracer.launcher_family(["./app"]) == "unknown"
    if shutil.which("mpirun.openmpi"):
        assert tracer.launcher_family(["mpirun.openmpi"]) == "openmpi"
    if HAVE_MPICH:
        assert tracer.launcher_family(["mpiexec.mpich"]) == "mpich"
        assert tracer.find_mpicc(["mpiexec.mpich", "-np", "2"]).endswith("mpicc.mpich")
        assert tracer.probe_mpi(shutil.which("mpicc.mpich")).family == "mpich"


@pytest.mark.skipif(not HAVE_OMPI, reason="needs Open MPI")
def test_print_command_and_mismatch(tmp_path, tracer_cache):
    out = run(
        [
            sys.executable,
            "-m",
            "latitude",
            "trace",
            "--print-command",
            "-o",
            tmp_path,
            "--",
            "mpirun",
            "-np",
            "4",
            "./app",
        ]
    ).stdout
    assert re.match(
        r"mpirun -x LD_PRELOAD=\S+/liblatitude_trace\.so -x "
        rf"LATITUDE_TRACE_PREFIX={tmp_path}/pmpi-trace-rank- -x LATITUDE_TRACE_COMPRESS=1 -x LATITUDE_TRACE_PROBE=1 -np 4 \./app$",
        out,
    )
    plain = run([sys.executable, "-m", "latitude", "trace", "--print-command", "--plain", "--", "./app"]).stdout
    # an unknown launcher: the variables go first; the library's own default (plain) is said,
    # so a LATITUDE_TRACE_COMPRESS in the user's environment does not decide
    assert re.match(
        r"LD_PRELOAD=\S+ LATITUDE_TRACE_PREFIX=\S+ LATITUDE_TRACE_COMPRESS=0 LATITUDE_TRACE_PROBE=1 \./app$", plain
    ), plain
    if HAVE_MPICH:
        bad = run(
            [
                sys.executable,
                "-m",
                "latitude",
                "trace",
                "--mpicc",
                "mpicc.openmpi",
                "--",
                "mpiexec.mpich",
                "-np",
                "2",
                "./app",
            ],
            check=False,
        )
        assert bad.returncode == 2 and "--mpicc" in bad.stderr


def test_padded_names_and_stale_files(ompi_apps, tmp_path):
    (tmp_path / "pmpi-trace-rank-7.txt").write_text("stale")
    (tmp_path / "pmpi-trace-rank-0-backup.txt").write_text("the user's")
    trace(tmp_path, [*ompi(10), ompi_apps / "pingpong", "--sizes", "8", "--iters", "2"], opts=("--padded", "--force"))
    names = sorted(p.name for p in tmp_path.glob("pmpi-trace-rank-*"))  # compressed: the default
    assert names == ["pmpi-trace-rank-0-backup.txt"] + [f"pmpi-trace-rank-{r:02d}.txt.gz" for r in range(10)]
    assert not (tmp_path / "pmpi-trace-rank-7.txt").exists()
    assert (tmp_path / "pmpi-trace-rank-0-backup.txt").read_text() == "the user's"
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == []  # no staging directory left
    (tmp_path / "pmpi-trace-rank-0-backup.txt").unlink()  # not a rank file for the checker
    _, errors = tracecheck.check([str(tmp_path)])
    assert not errors


def test_repair_of_a_killed_rank(tmp_path):
    f = tmp_path / "pmpi-trace-rank-0.txt"
    f.write_bytes(b"#@ latitude-trace 1\n\nMPI_Init:-:1:2:5.000\nMPI_Barr" + b"\0" * 5000)
    assert tracer.repair(f)
    assert f.read_bytes() == b"#@ latitude-trace 1\n\nMPI_Init:-:1:2:5.000\n#@ end killed\n"
    assert not tracer.repair(f)
    # The unfinished record may be longer than any window: cut at the last complete line.
    head = b"#@ latitude-trace 1\nMPI_Init:-:1:2:5.000\n"
    f.write_bytes(head + b"MPI_Alltoallv:6.000:" + b"1," * 300_000 + b"\0" * (3 << 20))
    assert tracer.repair(f)
    assert f.read_bytes() == head + b"#@ end killed\n"
    f.write_bytes(b"MPI_Init:-:" + b"9" * 200_000)  # no complete line at all
    assert tracer.repair(f) and f.read_bytes() == b"#@ end killed\n"


# ---- the checker rejects what is broken ----
GOOD = """\
# Latitude PMPI Tracer 1 Output File (liballprof v1 format)
#@ latitude-trace 1
#@ world rank=0 size=1 host=h pid=1
#@ const any_source=-1 any_tag=-1 proc_null=-2 root=-4 undefined=-32766 in_place=1 bottom=0 status_ignore=0 statuses_ignore=0
#@ comm 100 seq=0 world=0

MPI_Init:-:1:2:10.000
MPI_Irecv:11.000:5:4:1,4,4:-1:7:100,0,1:8:12.000
MPI_Isend:13.000:6:4:1,4,4:0:7:100,0,1:16:14.500
MPI_Waitall:15.000:2:8:0:16.250
#@ done 1,2
#@ status call=1 src=0 tag=7 bytes=16
MPI_Finalize:17.000:-
#@ end finalize
"""
BROKEN = {
    "time goes back": ("MPI_Waitall:15.000", "MPI_Waitall:13.000"),
    "not three decimals": ("16.250", "16.25"),
    "missing done": ("#@ done 1,2\n", ""),
    "unknown request": ("#@ done 1,2", "#@ done 1,5"),
    "wildcard unresolved": ("#@ status call=1 src=0 tag=7 bytes=16\n", ""),
    "short field list": (":0:7:100,0,1:16:14.500", ":0:7:100,0,1:14.500"),
    "bad datatype": ("1,4,4:0:7", "1,4:0:7"),
    "no end": ("#@ end finalize\n", ""),
    "unknown call": ("MPI_Finalize:17.000:-", "MPI_Finalise:17.000:-"),
    "malformed extension": ("#@ done 1,2", "#@ done one"),
    "wildcard resolved to the wrong message": ("call=1 src=0 tag=7", "call=1 src=0 tag=8"),
    "message to a rank that never receives it": (":0:7:100,0,1:16:", ":0:9:100,0,1:16:"),
}


def _check_text(tmp_path, text):
    f = tmp_path / "pmpi-trace-rank-0.txt"
    f.write_text(text)
    return tracecheck.check([str(f)])[1]


def test_checker_accepts_the_reference_example(tmp_path):
    assert _check_text(tmp_path, GOOD) == []


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_checker_rejects(tmp_path, case):
    old, new = BROKEN[case]
    assert old in GOOD
    assert _check_text(tmp_path, GOOD.replace(old, new)), f"{case} not detected"


# ---- Schedgen's delimiter indices (docs/reference/liballprof.md §6) hold on real traces ----
SCHEDGEN_INDICES = {  # call: {what: index of the value after the k-th ':' or ','}
    "MPI_Init": {"end": 4},
    "MPI_Send": {"count": 3, "size": 5, "dest": 7, "tag": 8, "end": 12},
    "MPI_Recv": {"count": 3, "size": 5, "src": 7, "tag": 8, "end": 13},
    "MPI_Isend": {"count": 3, "size": 5, "req": 12, "end": 13},
    "MPI_Irecv": {"src": 7, "tag": 8, "req": 12, "end": 13},
    "MPI_Wait": {"req": 2, "end": 4},
    "MPI_Waitall": {"n": 2, "req": 3, "end": 5},
    "MPI_Sendrecv": {"scount": 3, "ssize": 5, "dest": 7, "rcount": 10, "src": 14, "end": 20},
    "MPI_Barrier": {"p": 4, "end": 5},
    "MPI_Bcast": {"count": 3, "size": 5, "root": 7, "p": 10, "end": 11},
    "MPI_Reduce": {"count": 4, "size": 6, "root": 9, "p": 12, "end": 13},
    "MPI_Allreduce": {"count": 4, "size": 6, "p": 11, "end": 12},
    "MPI_Alltoall": {"count": 3, "size": 5, "p": 14, "end": 15},
    "MPI_Finalize": {"start": 1},
}


def test_schedgen_field_indices(ompi_apps, tmp_path):
    trace(tmp_path, [*ompi(2), ompi_apps / "callmix", "--rounds", "1"], opts=("--plain",))
    trace(tmp_path / "pp", [*ompi(2), ompi_apps / "pingpong", "--sizes", "8", "--iters", "3"], opts=("--plain",))
    seen = set()
    files = [*tmp_path.glob("*.txt"), *(tmp_path / "pp").glob("*.txt")]
    assert len(files) == 4  # the plain files Schedgen reads
    for f in files:
        for line in f.read_text().splitlines():
            name = line.split(":", 1)[0]
            if name not in SCHEDGEN_INDICES:
                continue
            fields = re.split(r"[:,]", line)
            for what, k in SCHEDGEN_INDICES[name].items():
                value = fields[k]
                if what in ("end", "start"):
                    assert re.fullmatch(r"\d+\.\d{3}", value), (line, what)
                else:
                    assert re.fullmatch(r"-?\d+", value), (line, what)
            if name != "MPI_Finalize":
                assert len(fields) - 1 == max(SCHEDGEN_INDICES[name].values()) or name in ("MPI_Init",), line
            seen.add(name)
    assert seen == set(SCHEDGEN_INDICES)


@pytest.mark.skipif(not HAVE_OMPI, reason="needs Open MPI")
def test_trace_json_summary(ompi_apps, tmp_path):
    proc = trace(tmp_path / "t", [*ompi(2), ompi_apps / "pingpong", "--sizes", "8", "--iters", "5"], opts=("--json",))
    s = check("trace", json.loads(proc.stdout[proc.stdout.index("{\n") :]))
    assert s["ranks"] == 2 and len(s["files"]) == 2 and s["endings"] == {"finalize": 2}
    assert s["launcher_status"] == 0 and s["calls"] > 10 and s["mpi"] == "openmpi"
