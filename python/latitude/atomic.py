"""Outputs written atomically: a temporary file in the target's directory, renamed over it
when complete, so a reader (or a killed run) never sees half a file and an old file is
replaced only by a whole new one."""

from __future__ import annotations

import contextlib
import os
import tempfile

from latitude.errors import InputError


@contextlib.contextmanager
def atomic_path(path: str, where: str = "-o"):
    """Yield a temporary path next to `path`; on success it becomes `path` (with the
    permissions a new file gets), on error it is removed."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(where, f"no such directory: {directory}")
    fd, tmp = tempfile.mkstemp(prefix=".latitude-", suffix=os.path.splitext(path)[1], dir=directory)
    os.close(fd)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
