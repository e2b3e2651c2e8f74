"""A real single-node Slurm cluster for the tests: Debian's slurm-wlm and munge (installed by
scripts/setup), started here as root with a generated slurm.conf in a private directory.

munged runs with a fresh key and its own socket; slurmctld and slurmd listen on free ports
on 127.0.0.1. The real node `HOST` has 8 CPUs declared (config_overrides: a 2-core test
machine still runs 4-rank jobs) and is the default partition `debug`. `spare1` is a second
node on the same machine, served by a second slurmd (its own port, spool and pid file, from a
copy of slurm.conf), in the partition `pair` with `HOST` only: a job of `-p pair -N 2` spans
two nodes and so counts as network traffic for b (latitude.slurm), while jobs of the default
partition stay on `HOST`. `spare[2-3]` are configured DOWN in a third partition, so the
cluster counts 4 nodes, as sinfo reports them. Every command sees the cluster through
SLURM_CONF (the env the fixture yields). Everything is stopped and removed at the end of the
session.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

DAEMONS = ("munged", "slurmctld", "slurmd")
START_TIMEOUT_S = 40


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _daemon(path: str) -> str | None:
    return shutil.which(path) or next((p for p in (f"/usr/sbin/{path}", f"/sbin/{path}") if os.path.exists(p)), None)


def _ports(n: int) -> list[int]:
    out: list[int] = []
    while len(out) < n:
        p = _free_port()
        if p not in out:
            out.append(p)
    return out


def slurm_conf(d: Path, host: str, ports: list[int]) -> str:
    ctld, slurmd, spare = ports
    return f"""\
ClusterName=latitude
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge/sock
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName={host} NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
NodeName=spare1 NodeAddr=127.0.0.1 Port={spare} CPUs=8 State=UNKNOWN
NodeName=spare[2-3] NodeAddr=127.0.0.1 CPUs=1 State=DOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=pair Nodes={host},spare1 MaxTime=INFINITE State=UP
PartitionName=spare Nodes=spare[2-3] MaxTime=INFINITE State=UP
"""


def spare_conf(d: Path, conf: str, port: int) -> str:
    """slurm.conf as the second slurmd (node spare1) reads it: its own port, spool, pid, log."""
    own = {"SlurmdPort": port, "SlurmdSpoolDir": d / "spool2", "SlurmdPidFile": d / "slurmd2.pid"}
    own["SlurmdLogFile"] = d / "slurmd2.log"
    lines = []
    for ln in conf.splitlines():
        key = ln.partition("=")[0]
        lines.append(f"{key}={own[key]}" if key in own else ln)
    return "\n".join(lines) + "\n"


class Cluster:
    def __init__(self, d: Path):
        self.dir = d
        self.host = socket.gethostname().split(".")[0]
        self.procs: list[subprocess.Popen] = []
        self.env = dict(os.environ, SLURM_CONF=str(d / "slurm.conf"))
        self.env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        self.env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

    def start(self) -> None:
        d = self.dir
        for sub in ("munge", "state", "spool", "spool2"):
            (d / sub).mkdir(mode=0o700)
        key = d / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        (d / "munge").chmod(0o711)  # munged wants the socket's directory traversable
        ports = _ports(3)
        (d / "slurm.conf").write_text(slurm_conf(d, self.host, ports))
        (d / "slurm-spare1.conf").write_text(spare_conf(d, (d / "slurm.conf").read_text(), ports[2]))
        m = d / "munge"
        self._spawn(
            _daemon("munged"),
            "-F",
            "-f",
            f"--key-file={key}",
            f"--socket={m}/sock",
            f"--pid-file={m}/pid",
            f"--log-file={m}/log",
            f"--seed-file={m}/seed",
        )
        self._wait(lambda: (m / "sock").exists(), "munged")
        self._spawn(_daemon("slurmctld"), "-D", "-i", "-f", str(d / "slurm.conf"))
        self._spawn(_daemon("slurmd"), "-D", "-f", str(d / "slurm.conf"), "-N", self.host)
        self._spawn(_daemon("slurmd"), "-D", "-f", str(d / "slurm-spare1.conf"), "-N", "spare1")
        for node in (self.host, "spare1"):
            self._wait(lambda n=node: "idle" in self.run("sinfo", "-h", "-n", n, "-o", "%t", check=False).stdout, node)

    def _spawn(self, *argv) -> None:
        log = open(self.dir / f"{Path(argv[0]).name}.out", "w")
        self.procs.append(
            subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        )

    def _wait(self, ready, what: str) -> None:
        end = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < end:
            if ready():
                return
            if any(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.3)
        self.stop()
        logs = "".join(f"\n--- {f.name}\n{f.read_text()[-1500:]}" for f in sorted(self.dir.glob("*.out")))
        raise RuntimeError(f"the test Slurm did not start ({what}):{logs}")

    def run(self, *argv, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        proc = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def stop(self) -> None:
        if self.procs:
            subprocess.run(["scancel", "--full", "--user", "root"], env=self.env, capture_output=True, timeout=30)
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self.procs.clear()


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    """A running single-node Slurm; skipped (with the reason) without slurm-wlm and munge or
    without root (slurmd starts jobs as their user)."""
    missing = [d for d in DAEMONS if not _daemon(d)]
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)} missing: scripts/setup installs slurm-wlm and munge)")
    if os.geteuid() != 0:
        pytest.skip("the test Slurm runs slurmd as root")
    # a short path: munge's socket path must fit in a sockaddr_un
    d = Path(tmp_path_factory.mktemp("slurm"))
    c = Cluster(d)
    c.start()
    try:
        yield c
    finally:
        c.stop()
