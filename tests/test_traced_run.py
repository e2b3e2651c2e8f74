"""A disturbed traced run is recognised: the time every rank spends inside MPI at once
(latitude.traced_run), exactly on synthetic traces, and on a real run whose rank is stopped
(SIGSTOP) inside MPI; `latitude predict` warns when that time explains why the prediction
falls short of the traced run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from latitude import traced_run, tracer
from tracetools import env, ompi, run, trace

HEADER = "#@ latitude-trace 1\n#@ world rank={r} size=2 host={host} pid=1\n"


def write_trace(d, r, calls, host="h", end=1000):
    """calls: (name, start µs, end µs) between MPI_Init (ends at 0) and MPI_Finalize at `end`."""
    lines = [HEADER.format(r=r, host=host), "MPI_Init:-:1:2:0.000\n"]
    lines += [f"{name}:{a:.3f}:x:{b:.3f}\n" for name, a, b in calls]
    lines.append(f"MPI_Finalize:{end:.3f}:{end + 0.5:.3f}\n#@ end finalize\n")
    (d / f"pmpi-trace-rank-{r}.txt").write_text("".join(lines))


def test_all_in_mpi_exact(tmp_path):
    # rank 0 inside MPI on [10, 50], [100, 300], [2000, 4500]; rank 1 on [40, 120], [200, 250],
    # [1500, 4000]: together on [40, 50], [100, 120], [200, 250], [2000, 4000] -> 2,080 µs,
    # of which 2,000 µs in one stretch of 1 ms or more (at 2000, in MPI_Alltoall); run 10 ms
    write_trace(tmp_path, 0, [("MPI_Recv", 10, 50), ("MPI_Waitall", 100, 300), ("MPI_Alltoall", 2000, 4500)], end=1e4)
    write_trace(tmp_path, 1, [("MPI_Send", 40, 120), ("MPI_Barrier", 200, 250), ("MPI_Alltoall", 1500, 4000)], end=1e4)
    run = traced_run.analyse(tmp_path)
    assert run.runtime_ns == pytest.approx(10e6)
    assert run.all_in_mpi_ns == pytest.approx(2080e3) and run.long_in_mpi_ns == pytest.approx(2000e3)
    assert run.longest_ns == pytest.approx(2000e3)
    assert run.longest_call == "MPI_Alltoall" and run.longest_at_ns == pytest.approx(1990e3)
    assert traced_run.check(run, 9.5e6) is None  # within 10 %
    assert traced_run.check(run, 5e6) is None  # 2 ms cannot explain a 5 ms shortfall
    assert "every rank was inside MPI at once" in traced_run.check(run, 8.5e6)


def test_short_stretches_are_messages_not_preemption(tmp_path):
    """50 stretches of 90 µs with both ranks inside MPI (4.5 ms): what underpriced messages
    look like; a 2 ms shortfall is the model's, not a disturbed run."""
    calls = [("MPI_Sendrecv", 100 + 100 * k, 190 + 100 * k) for k in range(50)]
    write_trace(tmp_path, 0, calls, end=1e4)
    write_trace(tmp_path, 1, calls, end=1e4)
    run = traced_run.analyse(tmp_path)
    assert run.all_in_mpi_ns == pytest.approx(4500e3) and run.long_in_mpi_ns == 0
    assert traced_run.check(run, 8e6) is None


def test_several_nodes_not_compared(tmp_path):
    write_trace(tmp_path, 0, [("MPI_Recv", 10, 50)], host="a")
    write_trace(tmp_path, 1, [("MPI_Send", 10, 50)], host="b")
    assert traced_run.analyse(tmp_path) is None


def stalled_trace(ompi_apps, out):
    """pingpong traced into `out` with rank 1 stopped for 4 s mid-run; predict's JSON."""
    cmd = [sys.executable, "-m", "latitude", "trace", "-o", str(out), "--"]
    cmd += [*ompi(2), str(ompi_apps / "pingpong"), "--sizes", "65536", "--iters", "40000"]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        pid = None
        deadline = time.monotonic() + 300  # the first trace builds the tracer
        while pid is None and time.monotonic() < deadline and proc.poll() is None:
            # the run traces into a staging directory inside `out`, installed when it ends
            for rank1 in out.glob(".latitude-trace-*/pmpi-trace-rank-1.txt*"):  # compressed by default
                with tracer.open_trace(rank1) as f:  # its header is written (a gzip member) at the start
                    head = f.read(2048).decode(errors="replace")
                pid = next((int(w[4:]) for w in head.split() if w.startswith("pid=")), None)
            time.sleep(0.02)
        assert pid, "rank 1 did not start"
        time.sleep(0.15)
        os.kill(pid, signal.SIGSTOP)
        # 4 s: the warning needs the stall to explain half of the shortfall, and the undisturbed
        # traced run alone takes ~1.7 s on an idle machine (more under load) against a ~0.6 s
        # prediction at the default parameters; 0.8 s was too short on an idle machine
        time.sleep(4.0)
        os.kill(pid, signal.SIGCONT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    pred = subprocess.run(
        [sys.executable, "-m", "latitude", "predict", str(out), "--json"], env=env(), capture_output=True, text=True
    )
    s = json.loads(pred.stdout)
    return s


def test_predict_warns_about_a_rank_stopped_inside_mpi(ompi_apps, tmp_path):
    """pingpong spends nearly all its time inside MPI; rank 1 is stopped for 4 s mid-run
    (as a preempting process would), so both ranks sit inside MPI for that long. A stop that
    lands between two calls is computation of rank 1's, in the graph: the prediction holds it
    and nothing is said; then the stop is tried again (up to 3 runs)."""
    for i in range(3):
        out = tmp_path / f"tr{i}"
        s = stalled_trace(ompi_apps, out)
        if s["traced_run"]["longest_ns"] >= 3.5e9:
            break
        assert s["runtime_ns"] >= 3.5e9 and not s["warnings"], s
    assert s["traced_run"]["longest_ns"] >= 3.5e9, s["traced_run"]
    assert len(s["warnings"]) == 1 and "disturbed" in s["warnings"][0]
    for flags in ([], ["--no-cache"]):  # the cached graph and analysis (latitude.trace_cache), and a fresh one
        again = subprocess.run(
            [sys.executable, "-m", "latitude", "predict", str(out), "--json", *flags],
            env=env(),
            capture_output=True,
            text=True,
        )
        assert json.loads(again.stdout) == s, flags
    text = subprocess.run(
        [sys.executable, "-m", "latitude", "predict", str(out)], env=env(), capture_output=True, text=True
    )
    assert text.stderr.startswith("latitude: warning: the traced run took")


def _machine(path, probe_ns):
    path.write_text(f'[loggps]\nL = "300ns"\no = "200ns"\nG = "0.1ns"\n\n[fit]\nprobe_ns = {probe_ns}\n')
    return path


def _predict(trace_dir, machine) -> dict:
    cmd = [sys.executable, "-m", "latitude", "predict", str(trace_dir), "--machine", str(machine), "--json"]
    return json.loads(subprocess.run(cmd, env=env(), capture_output=True, text=True, check=True).stdout)


def test_machine_state_probe_in_the_header_and_compared_by_predict(ompi_apps, tmp_path):
    """`latitude trace` has ranks 0 and 1 take the 8 B probe in MPI_Init (PMPI, before the
    run's time starts) and again in MPI_Finalize; rank 0's file carries both (`#@ probe` in
    the header, `#@ probe_end` before `#@ end`). predict compares each with the machine
    file's: a probe outside [0.87, 1.15]× the machine's is another machine state, said in a
    warning; inside, only the ratios are reported."""
    out = tmp_path / "t"
    trace(out, [*ompi(3), ompi_apps / "pingpong", "--sizes", "8", "--iters", "20"])
    files = tracer.trace_files(out)
    probe = traced_run.probe_of(files[0])
    assert probe is not None and 10 < probe < 1e6
    assert traced_run.probe_of(files[1]) is None and traced_run.probe_of(files[2]) is None
    text = tracer.open_trace(files[0]).read().decode()
    end = re.search(
        r"\nMPI_Finalize:[^\n]*\n#@ probe_end half_rt_ns=([0-9.]+) bytes=8 rounds=200\n#@ end finalize\n$", text
    )
    assert end, text[-300:]
    probe_end = float(end.group(1))
    assert 10 < probe_end < 1e6
    for factor, warned in ((1.1, False), (1 / 1.1, False), (2.0, True), (0.5, True)):
        s = _predict(out, _machine(tmp_path / f"m{factor}.toml", probe / factor))
        assert (s["traced_run"]["probe_ns"], s["traced_run"]["probe_end_ns"]) == (probe, probe_end)
        assert s["traced_run"]["state_ratio"] == pytest.approx(factor, rel=1e-3)
        end_ratio = factor * probe_end / probe
        assert s["traced_run"]["end_state_ratio"] == pytest.approx(end_ratio, rel=1e-3)
        said = [w for w in s["warnings"] if "machine state" in w]
        if 1 / traced_run.STATE_RATIO <= end_ratio <= traced_run.STATE_RATIO:  # the end probe agrees too
            assert bool(said) == warned, (factor, s["warnings"])
            if warned:
                assert f"was {factor:.2f}× in MPI_Init that of" in said[0]
                assert f"that factor {'more' if factor > 1 else 'less'} than" in said[0]
        elif warned:  # the state at the end differed too (a loaded machine): both are named
            assert f"{factor:.2f}× in MPI_Init and " in said[0] and "in MPI_Finalize that of" in said[0]
    # the state changed during the run: the start agrees with the machine, the end is 1.6× it
    changed = tmp_path / "changed"
    changed.mkdir()
    for f in files:
        t = tracer.open_trace(f).read()
        if f == files[0]:
            t = t.replace(end.group(0).encode(), end.group(0).replace(end.group(1), f"{1.6 * probe:.1f}").encode())
        (changed / f.name.removesuffix(".gz")).write_bytes(t)
    s = _predict(changed, _machine(tmp_path / "same.toml", probe))
    assert s["traced_run"]["state_ratio"] == pytest.approx(1) and s["traced_run"]["end_state_ratio"] == pytest.approx(
        1.6, rel=1e-3
    )
    said = [w for w in s["warnings"] if "machine state" in w]
    assert len(said) == 1 and "was 1.60× in MPI_Finalize that of" in said[0] and "MPI_Init" not in said[0]
    assert "that factor more than" in said[0]
    no_probe = _machine(tmp_path / "old.toml", 0).read_text().replace("probe_ns = 0\n", "")
    (tmp_path / "old.toml").write_text(no_probe)  # a machine file from before the probe
    s = _predict(out, tmp_path / "old.toml")
    assert (
        "state_ratio" not in s["traced_run"]
        and "end_state_ratio" not in s["traced_run"]
        and not [w for w in s["warnings"] if "machine state" in w]
    )


def test_no_probe_without_a_partner_or_when_not_asked(ompi_apps, tmp_path):
    """One rank has no partner; the library preloaded by hand (no LATITUDE_TRACE_PROBE=1)
    takes no probe, since the other rank might not be traced and would never answer."""
    trace(tmp_path / "one", [*ompi(1), ompi_apps / "pingpong", "--sizes", "8", "--iters", "2"], check=False)
    files = tracer.trace_files(tmp_path / "one")
    assert files and all(traced_run.probe_of(f) is None and not _has_end_probe(f) for f in files)
    printed = run([sys.executable, "-m", "latitude", "trace", "--print-command", "--", "./app"]).stdout
    lib = re.search(r"LD_PRELOAD=(\S+)", printed).group(1)
    hand = tmp_path / "hand"
    hand.mkdir()
    e = env() | {"LD_PRELOAD": lib, "LATITUDE_TRACE_PREFIX": f"{hand}/pmpi-trace-rank-"}
    e.pop("LATITUDE_TRACE_PROBE", None)
    subprocess.run([*ompi(2), ompi_apps / "pingpong", "--sizes", "8", "--iters", "2"], env=e, check=True, timeout=120)
    files = tracer.trace_files(hand)
    assert len(files) == 2 and all(traced_run.probe_of(f) is None and not _has_end_probe(f) for f in files)


def _has_end_probe(path) -> bool:
    with tracer.open_trace(path) as f:
        return b"#@ probe_end" in f.read()
