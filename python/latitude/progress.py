"""Progress bars on stderr for long work (rich), silent when stderr is not a terminal."""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def progress(description: str, total: float | None = None, unit: str = ""):
    """Yield ``update(done, total=None)``; shows a bar only on a TTY."""
    if not sys.stderr.isatty():
        yield lambda done, total=None: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    cols = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    ]
    with Progress(*cols, transient=True, console=_console()) as bar:
        task = bar.add_task(description, total=total)

        def update(done, total_=None):
            if total_:
                bar.update(task, total=total_)
            bar.update(task, completed=done)

        yield update


def _console():
    from rich.console import Console

    return Console(stderr=True)
