"""Running a user's launch command (``mpirun -np 4 ./app``): one implementation for trace,
inject, calibrate and validate.

* **Process tree.** The launcher starts in a session of its own, so that a terminal's Ctrl-C
  reaches Latitude only and Latitude decides how to stop the run. MPI launchers put each
  rank in a process group of its own (Open MPI does), and a launcher killed outright leaves
  its ranks running: stopping a run therefore signals every process of the tree below the
  launcher (read from /proc), SIGTERM first, SIGKILL after a grace period.
* **Signals.** SIGTERM and SIGHUP to Latitude raise :class:`Terminated` (installed by the
  CLI with :func:`exit_on_signals`); like Ctrl-C it unwinds the command, so the run is
  stopped and temporary directories are removed on the way out.
* **Timeout.** A run over its limit is stopped the same way and reported with the last lines
  of its standard error (a rank stuck in an MPI library's crash handler never ends).
* **Status and stderr.** The program's exit status is kept as the launcher returned it
  (negative: killed by that signal); its standard error is shown live (or captured) and its
  last lines are kept for the message when the run fails.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from latitude.errors import InputError, ToolError, printable

TAIL_LINES = 12
GRACE_S = 3.0


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (a BaseException, like KeyboardInterrupt: nothing on the
    way out swallows it)."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def exit_on_signals() -> None:
    """Turn SIGTERM and SIGHUP into :class:`Terminated` in the main thread."""

    def raise_terminated(signum, frame):
        raise Terminated(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, raise_terminated)


def status_text(returncode: int) -> str:
    """`exited with status 3`, `was killed by signal 11 (SIGSEGV)`; shells report a signal
    as status 128 + n, which launchers pass on for a killed rank."""
    if returncode < 0:
        return f"was killed by signal {-returncode} ({_signame(-returncode)})"
    if returncode > 128 and _signame(returncode - 128) != "?":
        return f"exited with status {returncode} (a process killed by {_signame(returncode - 128)}?)"
    return f"exited with status {returncode}"


def exit_status(returncode: int) -> int:
    """The status a shell gives a command that ended so (128 + n for signal n)."""
    return 128 - returncode if returncode < 0 else returncode


def _signame(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return "?"


@dataclass
class Run:
    """A finished launch command."""

    cmd: list[str]
    returncode: int
    wall_s: float
    stdout: str | None = None  # captured output (capture=True)
    stderr: str | None = None
    tail: list[str] = field(default_factory=list)  # last lines of its stderr

    def failure(self, what: str) -> str:
        """`<what> exited with status 3` and the last lines of its stderr."""
        lines = "".join(f"\n  {ln}" for ln in self.tail)
        return f"{what} {status_text(self.returncode)}" + (f"; the last lines of its stderr:{lines}" if lines else "")


def run(
    cmd: list[str],
    env: dict[str, str],
    capture: bool = True,
    timeout: float | None = None,
    what: str | None = None,
    stdout_to_stderr: bool = False,
) -> Run:
    """Run a launch command to its end. `capture`: keep stdout and stderr (else they go to
    the terminal, stdout to our stderr with `stdout_to_stderr`, e.g. under --json). A missing
    launcher is bad input; a run over `timeout` seconds is stopped and a ToolError naming
    `what` (default: the command)."""
    what = what or f"`{' '.join(cmd)}`"
    out = subprocess.PIPE if capture else (sys.stderr.fileno() if stdout_to_stderr else None)
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.PIPE, start_new_session=True)
    except FileNotFoundError:
        raise InputError(cmd[0], "launcher not found") from None
    except PermissionError:
        raise InputError(cmd[0], "launcher is not executable") from None
    err = _Tee(proc.stderr, None if capture else sys.stderr)
    got = _Tee(proc.stdout, None) if capture else None
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc)
        err.join()
        tail = "".join(f"\n  {ln}" for ln in err.tail())
        raise ToolError(
            f"{what} did not finish within {timeout:.0f} s and was stopped (raise the limit with --timeout)"
            + (f"; the last lines of its stderr:{tail}" if tail else "")
        ) from None
    except BaseException:
        stop(proc)
        raise
    finally:
        err.join()
        if got:
            got.join()
    return Run(
        list(cmd),
        proc.returncode,
        time.monotonic() - t0,
        got.text() if got else None,
        err.text() if capture else None,
        err.tail(),
    )


class _Tee:
    """Drain a pipe on a thread: copy to `echo` (a text stream) as it comes, keep all of it
    (captured runs) and its last lines."""

    def __init__(self, pipe, echo):
        self.chunks: list[bytes] = []
        self.last = collections.deque(maxlen=TAIL_LINES)
        self.pipe, self.echo = pipe, echo
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self):
        partial = b""
        for chunk in iter(lambda: self.pipe.read1(1 << 16), b""):
            if self.echo is not None:
                try:
                    self.echo.buffer.write(chunk)
                    self.echo.flush()
                except (OSError, ValueError, AttributeError):
                    pass
            else:
                self.chunks.append(chunk)
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()[-4096:]
            self.last.extend(ln[-400:] for ln in lines)
        if partial:
            self.last.append(partial[-400:])
        self.pipe.close()

    def join(self):
        self.thread.join()

    def text(self) -> str:
        return b"".join(self.chunks).decode(errors="replace")

    def tail(self) -> list[str]:
        return [printable(ln.decode(errors="replace").rstrip()) for ln in self.last if ln.strip()]


# ---- stopping a process tree ----
def _processes() -> dict[int, tuple[int, int, int]]:
    """pid -> (parent pid, process group, start time) of every process (Linux /proc)."""
    out = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        try:
            out[int(name)] = (int(fields[1]), int(fields[2]), int(fields[19]))
        except (IndexError, ValueError):
            continue
    return out


def _tree(root: int) -> dict[int, int]:
    """The processes below `root` (and root): pid -> start time."""
    procs = _processes()
    children = collections.defaultdict(list)
    for pid, (ppid, _, _) in procs.items():
        children[ppid].append(pid)
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in procs and pid not in found:
            found[pid] = procs[pid][2]
            todo.extend(children[pid])
    return found


def _signal_all(tree: dict[int, int], sig: int) -> None:
    now = _processes()
    for pid, started in tree.items():
        if pid in now and now[pid][2] == started:  # the same process, not a reused pid
            try:
                os.kill(pid, sig)
            except OSError:
                pass


def stop(proc: subprocess.Popen, grace: float = GRACE_S) -> None:
    """Stop a launcher and every process below it: SIGTERM, then SIGKILL after `grace`."""
    tree = _tree(proc.pid)
    if proc.poll() is None:
        tree.setdefault(proc.pid, _processes().get(proc.pid, (0, 0, 0))[2])
    _signal_all(tree, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        proc.poll()
        alive = {p for p, s in tree.items() if _processes().get(p, (0, 0, -1))[2] == s and p != proc.pid}
        if proc.returncode is not None and not alive:
            break
        time.sleep(0.05)
    tree.update(_tree(proc.pid) if proc.poll() is None else {})
    _signal_all(tree, signal.SIGKILL)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process in uninterruptible sleep
        pass
