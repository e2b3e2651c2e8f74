"""Progress bars on stderr for long work (rich), silent when stderr is not a terminal."""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def progress(description: str, total: float | None = None, unit: str = "", enabled: bool = True):
    """Yield ``update(done, total=None)``; shows a bar only on a TTY. With a `unit` the bar
    also counts done/total units and their rate (``1,234/10,000 points  56.7 points/s``)."""
    if not enabled or not sys.stderr.isatty():
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
    if unit:
        cols[3:3] = [
            TextColumn(f"{{task.completed:,.0f}}/{{task.total:,.0f}} {unit}"),
            TextColumn(f"{{task.fields[rate]}} {unit}/s"),
        ]
    with Progress(*cols, transient=True, console=_console()) as bar:
        task = bar.add_task(description, total=total, rate="–")

        def update(done, total_=None):
            if total_:
                bar.update(task, total=total_)
            bar.update(task, completed=done)
            speed = bar.tasks[task].speed
            if speed:
                bar.update(task, rate=f"{speed:,.1f}")

        yield update


def _console():
    from rich.console import Console

    return Console(stderr=True)
