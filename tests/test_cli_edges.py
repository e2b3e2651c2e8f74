"""Hostile input at the command line's edge: every case is one line `latitude: <where>: <what>`
and exit 2 (or works, where that is the right answer), never a traceback; nothing the user
has is overwritten or lost."""

from __future__ import annotations

import gzip
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import EXAMPLES, cli_env, one_line, run_cli

GOAL = os.path.join(EXAMPLES, "halo2d-16.goal")
JOB = os.path.join(EXAMPLES, "stencil-and-io.job")


def bad(*args):
    return run_cli(*args, check=False)


# ---- machine files ----
@pytest.mark.parametrize(
    "text, where, wants",
    [
        ("S = -1\n", ":1:", "expected a size >= 0 bytes"),
        ("L = '3us'\nO = true\n", ":2:", "for O, got true"),
        ("[loggps]\nL = 3\n[sect]\nx = 1\n", ":3:", "unknown table [sect]"),
        ("L = [1, 2]\n", ":1:", "got an array"),
        ("protocol = 3\n", ":1:", "a string"),
        ("nic_serialization = 1\n", ":1:", "expected true or false, got 1"),
        ("L = '1e400us'\n", ":1:", "too large"),
        ("L = 1e999\n", ":1:", "too large"),
        ("[loggps]\nL = 3\nbogus = 1\n", ":3:", "unknown machine parameter 'bogus'"),
        ("L = 3\n[loggps]\no = 1\n", ":1:", "outside [loggps]"),
        ("L = \n", ":1:", "not valid TOML"),
        ("protocol = 'fast'\n", ":1:", "expected one of handshake, loggopsim"),
    ],
)
def test_bad_machine_file(tmp_path, text, where, wants):
    m = tmp_path / "m.toml"
    m.write_text(text)
    one_line(bad("predict", GOAL, "--machine", m), f"{m}{where}", wants)


def test_machine_file_that_is_not_a_file(tmp_path):
    one_line(bad("predict", GOAL, "--machine", tmp_path), "is a directory, expected a machine file")
    one_line(bad("predict", GOAL, "--machine", "/proc/self/mem"), "/proc/self/mem: cannot read the machine file")
    one_line(bad("predict", GOAL, "--machine", tmp_path / "none.toml"), "no such machine file")
    one_line(bad("predict", GOAL, "--machine", "/dev/zero"), "/dev/zero", "larger than 1 MiB")


def test_calibrated_machine_file_still_reads(tmp_path):
    # what `latitude calibrate` writes: [loggps] plus the descriptive [fit] and [measured]
    m = tmp_path / "m.toml"
    m.write_text(
        "[loggps]\nL = '2.5us'\no = '1us'\ng = 0\nG = '0.1ns'\nO = '0ns'\nS = 'inf'\nprotocol = 'handshake'\n"
        "[fit]\nr2 = 0.99\nunder_injector = false\n[measured]\nbytes = [8, 64]\n"
    )
    assert '"L": 2500.0' in run_cli("predict", GOAL, "--machine", m, "--json").stdout


# ---- numbers out of range ----
@pytest.mark.parametrize(
    "args, wants",
    [
        (("tolerance", GOAL, "--pct", "1e308"), "--pct: expected a percentage of at most"),
        (("tolerance", GOAL, "--pct", "1e-30"), "--pct: expected at most 9 decimal places"),
        (("tolerance", GOAL, "--map", "L=0:1e308us,G=0:0.1ns"), "--map L: '1e308us' is too large"),
        (("predict", GOAL, "-L", "1e400"), "-L: "),
        (("predict", GOAL, "-S", "1e400GiB"), "-S: "),
        (("predict", GOAL, "-o", "1e22"), "-o: 1e+22 ns is beyond the model's range"),
        (("tolerance", GOAL, "-G", "1e16"), "-G: 1e+16 ns is beyond the model's range"),
    ],
)
def test_numbers_out_of_range(args, wants):
    one_line(bad(*args), wants)


# ---- outputs ----
def test_plot_into_a_directory_that_cannot_be_created(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("mine\n")
    one_line(bad("tolerance", GOAL, "--plot", blocker / "sub" / "t.png"), "cannot create the directory")
    one_line(bad("tolerance", GOAL, "--plot", "/proc/nonexistent/t.png"), "/proc/nonexistent/t.png")
    assert blocker.read_text() == "mine\n"


def test_output_to_a_full_disk():
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "latitude", "predict", GOAL, "--json"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
    one_line(proc, "<stdout>: cannot write: No space left on device")
    one_line(bad("tolerance", GOAL, "--csv", "/dev/full"), "/dev/full: cannot write the CSV")
    assert os.path.exists("/dev/full") and not os.path.isfile("/dev/full")  # the device is still a device


@pytest.mark.parametrize("args", [("predict", GOAL), ("predict", GOAL, "--json"), ("--help",), ("schedule", "--help")])
def test_broken_pipe_is_quiet(args):
    proc = subprocess.Popen(
        [sys.executable, "-m", "latitude", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    proc.stdout.readline()  # `| head -1`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0 and err == "", err


def test_trace_plain_and_compress_conflict(tmp_path):
    """`latitude trace --plain --compress`: the two forms of a trace, both asked for; refused
    before anything is built, run or written."""
    proc = bad("trace", "-o", tmp_path / "t", "--plain", "--compress", "--", "mpirun", "-np", "2", "true")
    one_line(proc, "latitude trace: argument --compress: not allowed with argument --plain")
    assert proc.stdout == "" and not (tmp_path / "t").exists()


def _trace(directory):
    os.makedirs(directory)
    for r in (0, 1):
        with open(os.path.join(directory, f"pmpi-trace-rank-{r}.txt"), "w") as f:
            f.write("MPI_Init:-:1:2:0\nMPI_Finalize:50:-\n")


def test_unreadable_trace_directory(tmp_path):
    d = tmp_path / "tr"
    _trace(d)
    os.chmod(d, 0)
    try:
        cmd = [sys.executable, "-m", "latitude", "predict", str(d)]
        if os.geteuid() == 0:  # root reads anything unless it gives up the capabilities that allow it
            if not shutil.which("setpriv"):
                pytest.skip("needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE as root")
            drop = "-dac_override,-dac_read_search"
            cmd = ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=cli_env())
    finally:
        os.chmod(d, 0o755)
    one_line(proc, str(d), "permission denied")


# ---- nothing the user has is lost ----
def test_output_over_its_own_input_is_refused(tmp_path):
    job = tmp_path / "x.job"
    shutil.copy(JOB, job)
    before = job.read_bytes()
    one_line(bad("generate", job, "-o", job), "would overwrite the input")
    assert job.read_bytes() == before
    d = tmp_path / "tr"
    _trace(d)
    rank1 = (d / "pmpi-trace-rank-1.txt").read_bytes()
    one_line(bad("schedule", d, "-o", d / "pmpi-trace-rank-1.txt"), "is a rank file of the input trace")
    one_line(bad("schedule", d / "pmpi-trace-rank-0.txt", "-o", d / "pmpi-trace-rank-2.txt"), "is a rank file")
    one_line(bad("tolerance", d, "--csv", d / "pmpi-trace-rank-0.txt"), "is a rank file")
    one_line(bad("tolerance", GOAL, "--csv", GOAL), "would overwrite the input")
    assert (d / "pmpi-trace-rank-1.txt").read_bytes() == rank1
    assert not (d / "pmpi-trace-rank-2.txt").exists()
    # the other form of a rank file's name would read as a rank of the trace too
    one_line(bad("schedule", d, "-o", d / "pmpi-trace-rank-2.txt.gz"), "is a rank file of the input trace")
    gz = tmp_path / "gz"
    gz.mkdir()
    for r in (0, 1):  # a compressed trace, `latitude trace`'s default
        (gz / f"pmpi-trace-rank-{r}.txt.gz").write_bytes(gzip.compress((d / f"pmpi-trace-rank-{r}.txt").read_bytes()))
    one_line(bad("schedule", gz, "-o", gz / "pmpi-trace-rank-1.txt.gz"), "is a rank file of the input trace")
    one_line(bad("schedule", gz, "-o", gz / "pmpi-trace-rank-7.txt"), "is a rank file of the input trace")
    assert sorted(p.name for p in gz.iterdir()) == ["pmpi-trace-rank-0.txt.gz", "pmpi-trace-rank-1.txt.gz"]
    assert not (d / "pmpi-trace-rank-2.txt.gz").exists()
    run_cli("schedule", d, "-o", d / "app.goal")  # a new file next to the trace is fine


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_outputs_are_replaced_atomically(tmp_path, sig):
    """A killed `generate` leaves the previous file whole: the new one appears only complete
    (SIGTERM also removes the temporary file; SIGKILL cannot, it stays as a hidden .g.*)."""
    job = tmp_path / "big.job"
    job.write_text("[JOB] j\n[RANKS] 0-63\n[ITERATIONS] 1000\n[MOTIF] halo2d x=64 y=64\n[MOTIF] allreduce bytes=8\n")
    out = tmp_path / "g.goal"
    out.write_text("previous\n")
    os.chmod(out, 0o640)
    proc = subprocess.Popen(
        [sys.executable, "-m", "latitude", "generate", str(job), "-o", str(out)],
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while (
        time.time() < deadline and proc.poll() is None and not any(p.name.startswith(".g.") for p in tmp_path.iterdir())
    ):
        time.sleep(0.01)  # until it writes its temporary file
    proc.send_signal(sig)
    code = proc.wait()
    text = out.read_text()
    if code == 0:  # finished before the signal arrived: then the new file is complete
        assert text.startswith("num_ranks 64") and text.rstrip().endswith("}")
    else:
        assert text == "previous\n"
        if sig == signal.SIGTERM:
            assert code == 128 + sig and sorted(p.name for p in tmp_path.iterdir()) == ["big.job", "g.goal"]
    run_cli("generate", job, "-o", out)
    assert os.stat(out).st_mode & 0o777 == 0o640  # the file's mode is kept
    assert out.read_text().startswith("num_ranks 64")


def test_atomic_helper_keeps_the_old_file_on_failure(tmp_path):
    from latitude.errors import InputError
    from latitude.outputs import atomic, write_text

    target = tmp_path / "keep.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic(target) as tmp:
        with open(tmp, "w") as f:
            f.write("half")
        raise RuntimeError("killed mid-write")
    assert target.read_text() == "old\n" and os.listdir(tmp_path) == ["keep.csv"]
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    write_text(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    with pytest.raises(InputError, match="is a directory"):
        write_text(tmp_path, "x")


# ---- traces are never silently misread (a real traced run, damaged by hand) ----
SEED_TRACE = os.path.join(os.path.dirname(__file__), "data", "fuzz_seeds", "trace_persistent")


def _first(lines, prefix):
    return next(i for i, line in enumerate(lines) if line.startswith(prefix))


def _delete_first(prefix):
    def edit(data):
        lines = data.split(b"\n")
        del lines[_first(lines, prefix)]
        return b"\n".join(lines)

    return edit


def _duplicate_first(prefix):
    def edit(data):
        lines = data.split(b"\n")
        i = _first(lines, prefix)
        lines.insert(i, lines[i])
        return b"\n".join(lines)

    return edit


@pytest.mark.parametrize(
    "edit, wants",
    [
        (
            lambda d: d.replace(b"#@ done 3,4,5,6", b"#@ done 99999", 1),
            ":30: '#@ done 99999': call 99999 is not before",
        ),
        (lambda d: d[: len(d) // 2] + b"\0" + d[len(d) // 2 :], "a NUL byte in mid-file"),
        (lambda d: b"", "pmpi-trace-rank-1.txt: an empty file"),
        (_delete_first(b"MPI_Waitall"), ":29: '#@ done' follows call 13, which is not a Wait or Test call"),
        (_delete_first(b"MPI_Recv_init"), "pmpi-trace-rank-1.txt:"),
        (_duplicate_first(b"MPI_Send_init"), "pmpi-trace-rank-1.txt:"),
        (lambda d: d.replace(b"MPI_Barrier", b"MPI_Bar\x1b[31mrier", 1), "MPI_Bar\\x1b[31mrier"),
    ],
    ids=["done-unknown", "nul-mid-file", "empty-file", "deleted-wait", "deleted-init", "duplicated-init", "escape"],
)
def test_damaged_trace_is_refused_where_it_is_damaged(tmp_path, edit, wants):
    d = tmp_path / "trace"
    shutil.copytree(SEED_TRACE, d)
    f = d / "pmpi-trace-rank-1.txt"
    f.write_bytes(edit(f.read_bytes()))
    one_line(bad("predict", d), wants)


def test_symlinked_rank_files_are_followed(tmp_path):
    d = tmp_path / "links"
    d.mkdir()
    for name in os.listdir(SEED_TRACE):
        (d / name).symlink_to(os.path.join(os.path.abspath(SEED_TRACE), name))
    want = run_cli("predict", SEED_TRACE, "--json").stdout
    assert run_cli("predict", d, "--json").stdout == want


def test_goal_label_defined_twice_is_refused(tmp_path):
    g = tmp_path / "dup.goal"
    g.write_text("num_ranks 1\nrank 0 {\nl1: calc 10\nl1: calc 20\n}\n")
    one_line(bad("predict", g), f"{g}:4:", "l1")
