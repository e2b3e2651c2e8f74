"""Writing the files a user asks for: atomically, never over an input, one-line errors.

Every writer (GOAL, CSV, JSON, PNG/SVG, machine files) goes through :func:`atomic`: the
content is written to a temporary file in the target's directory and renamed over the target
only once complete, so a killed or failing run leaves the previous file intact and never a
half-written one (rename within one directory is atomic on POSIX). The temporary file keeps
the target's extension, so writers that choose a format by extension (matplotlib) still do.
A directory that cannot be created or a file that cannot be written is an
:class:`InputError` naming the path: the user chose it.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator

from latitude.errors import InputError


def cache_dir(name: str) -> str:
    """Latitude's cache directory `name` (tracer builds, trace graphs):
    `$LATITUDE_CACHE_DIR/NAME`, else `$XDG_CACHE_HOME/latitude/NAME` (default ~/.cache)."""
    env = os.environ.get("LATITUDE_CACHE_DIR")
    if env:
        return os.path.join(env, name)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "latitude", name)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic(path: str | os.PathLike, what: str = "output") -> Iterator[str]:
    """Yield a temporary path next to `path`; rename it onto `path` if the block succeeds,
    remove it otherwise."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise InputError(path, f"is a directory, expected a file name for the {what}")
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        # /dev/stdout, a FIFO: written in place (renaming over it would replace the device)
        try:
            yield path
        except OSError as err:
            raise InputError(path, f"cannot write the {what}: {err.strerror or err}") from None
        return
    real = os.path.realpath(path)  # a symlink stays a symlink; its target is replaced
    directory = os.path.dirname(real)
    base, ext = os.path.splitext(os.path.basename(real))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as err:
        why = "a file of that name is in the way" if isinstance(err, FileExistsError) else err.strerror
        raise InputError(path, f"cannot create the directory {directory} for the {what}: {why}") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{base}.", suffix=f".tmp{ext}")
        os.close(fd)
        # the mode the file had, or what a plain open() would have created
        mode = os.stat(real).st_mode & 0o7777 if os.path.exists(real) else 0o666 & ~_umask()
        os.chmod(tmp, mode)
    except OSError as err:
        raise InputError(path, f"cannot write the {what}: {err.strerror or err}") from None
    try:
        yield tmp
        os.replace(tmp, real)
    except OSError as err:
        raise InputError(path, f"cannot write the {what}: {err.strerror or err}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike, what: str = "output", newline: str | None = None):
    """A text file opened for writing, installed at `path` when the block succeeds."""
    with atomic(path, what) as tmp:
        try:
            f = open(tmp, "w", newline=newline, encoding="utf-8")
        except OSError as err:
            raise InputError(os.fspath(path), f"cannot write the {what}: {err.strerror or err}") from None
        with f:
            yield f


def write_text(path: str | os.PathLike, text: str, what: str = "output") -> None:
    with open_atomic(path, what) as f:
        f.write(text)


# Options through which a command writes files (argparse dests).
OUTPUT_OPTIONS = ("output", "csv", "plot", "hist", "timeline", "export")


def refuse_input(output: str | os.PathLike | None, given: str | os.PathLike, option: str, pattern: str | None = None):
    """Refuse writing `output` when it is the input `given` itself, or, for a trace (a
    directory, or a rank file naming the pattern ``prefix<r>suffix``), one of its rank files,
    compressed or not (`pmpi-trace-rank-7.txt` beside a trace of `.txt.gz` files would read as
    one of its ranks): the result would destroy or corrupt what it is computed from."""
    if output is None:
        return
    out, src = os.path.realpath(os.fspath(output)), os.path.realpath(os.fspath(given))
    shown = f"{os.fspath(output)} would overwrite the input {os.fspath(given)}"
    if out == src:
        raise InputError(option, f"{shown}; choose another file")
    if pattern:
        trace_dir = src if os.path.isdir(src) else os.path.dirname(src)
        name, ranks = os.path.basename(out).removesuffix(".gz"), rank_regex(pattern.removesuffix(".gz"))
        if os.path.dirname(out) == trace_dir and re.fullmatch(ranks, name):
            raise InputError(option, f"{os.fspath(output)} is a rank file of the input trace {os.fspath(given)}")


def refuse_inputs(args, given: str | os.PathLike, pattern: str | None = None) -> None:
    """:func:`refuse_input` for every output option of a parsed command line."""
    for dest in OUTPUT_OPTIONS:
        value = getattr(args, dest, None)
        if isinstance(value, (str, os.PathLike)):
            refuse_input(value, given, "--" + dest, pattern)


def rank_regex(pattern: str) -> str:
    """``pmpi-trace-rank-<r>.txt`` / ``app-<r:02>.dat`` as a regex for any rank's file."""
    parts = re.split(r"<r(?::0(\d+))?>", pattern)
    return re.escape(parts[0]) + r"\d+" + re.escape(parts[-1]) if len(parts) == 3 else re.escape(pattern)
