"""``latitude trace``: run an MPI program under the PMPI tracer, one trace file per rank."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import time
from pathlib import Path

from latitude import launcher, tracer
from latitude.commands.launch_args import add_launch_args
from latitude.errors import InputError, ToolError
from latitude.graph import PROGRESS_BYTES
from latitude.progress import progress as progress_bar
from latitude.units import parse_size

EPILOG = """\
examples:
  latitude trace -- mpirun -np 4 apps/halo2d --iters 200
  latitude trace -o traces/run1 -- mpiexec.mpich -np 4 ./app
  latitude trace --print-command -- srun -n 256 ./app     # inspect, or paste into a job script

Each rank writes pmpi-trace-rank-N.txt.gz: a liballprof v1 trace with Latitude's '#@'
extension lines (docs/trace-format.md), gzip-compressed while the program runs (4-8x smaller,
30-61 bytes per message on HPCC, QE and LAMMPS). Every latitude command reads the .gz files
as they are; for Schedgen/LLAMP, `gunzip DIR/*.gz` or trace with --plain. The run is traced
into a fresh directory inside DIR; its rank files replace a previous trace's (with --force)
only if the run succeeded, and no other file in DIR is touched. The exit status is the
program's own."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "trace",
        help="run an MPI program under the PMPI tracer (one trace file per rank)",
        description="Build the tracer for the MPI in use (once, cached), run the launcher with "
        "the tracer preloaded on every rank, and summarize the traces.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "-o",
        "--output",
        default="latitude-traces",
        metavar="DIR",
        help="directory for the rank files (default: %(default)s)",
    )
    p.add_argument(
        "--padded",
        action="store_true",
        help="zero-pad rank numbers in file names as liballprof does "
        "(default: unpadded, the names Schedgen and LLAMP look for)",
    )
    p.add_argument(
        "--buffer",
        metavar="SIZE",
        help="per-rank trace window (default 8MiB; compressed, also the most text per gzip member, up to 1MiB)",
    )
    form = p.add_mutually_exclusive_group()
    form.add_argument(
        "--compress",
        action="store_true",
        help="write each rank's trace gzip-compressed, pmpi-trace-rank-N.txt.gz (the default); every "
        "latitude command reads it as it is, `gunzip` gives Schedgen/LLAMP the plain files",
    )
    form.add_argument(
        "--plain",
        action="store_true",
        help="write plain text, pmpi-trace-rank-N.txt (the liballprof files Schedgen/LLAMP read; 4-8x larger)",
    )
    p.add_argument(
        "--no-fold",
        action="store_true",
        help="write every unsuccessful MPI_Test*/MPI_Iprobe as its own record instead of folding "
        "consecutive ones into one '#@ polls' record",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the trace already in DIR (its pmpi-trace-rank-N.txt[.gz] files, once the new run succeeded)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the summary as JSON on stdout (the program's own stdout then goes to stderr)",
    )
    add_launch_args(p, "the tracer", "the launch command, e.g. mpirun -np 4 ./app", print_command=True)
    p.set_defaults(func=run)


def _log(msg: str) -> None:
    print(f"latitude: {msg}", file=sys.stderr, flush=True)


def _build(info, force: bool) -> Path:
    """The cached tracer; building it takes a few seconds: a spinner on a terminal."""
    if not sys.stderr.isatty():
        return tracer.build_tracer(info, force=force, log=_log)
    from rich.console import Console

    with Console(stderr=True).status(f"building the tracer for {info.family} ...") as status:
        return tracer.build_tracer(info, force=force, log=lambda msg: status.update(f"latitude: {msg}"))


def _prepare_output(outdir: Path, force: bool) -> bool:
    """Create DIR; refuse one that holds a trace without --force. True if it holds one."""
    if outdir.exists() and not outdir.is_dir():
        raise InputError("-o", f"{outdir} exists and is not a directory")
    old = tracer.trace_files(outdir)
    if old and not force:
        raise InputError(
            "-o",
            f"{outdir} already holds a trace ({len(old)} rank files, {old[0].name} ...); pass --force "
            "to replace it once the new run succeeded, or choose another directory",
        )
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError("-o", f"cannot create {outdir}: {err.strerror}") from None
    return bool(old)


def _trace_env(lib: Path, outdir: Path, args) -> dict[str, str]:
    env = tracer.trace_env(lib, outdir, compress=not args.plain)
    if args.padded:
        env["LATITUDE_TRACE_PADDED"] = "1"
    if args.buffer:
        env["LATITUDE_TRACE_BUFFER"] = str(parse_size(args.buffer, "--buffer"))
    if args.no_fold:
        env["LATITUDE_TRACE_FOLD"] = "0"
    return env


def _human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def run(args) -> int:
    argv = [a for a in args.command]
    if argv and argv[0] == "--":
        argv = argv[1:]
    family, info = tracer.resolve_launch(argv, args.mpicc)
    lib = _build(info, args.rebuild)
    outdir = Path(args.output).absolute()
    cmd, env = tracer.launch_command(argv, family, _trace_env(lib, outdir, args))
    if args.print_command:
        extra = (
            ""
            if family != "unknown"
            else " ".join(f"{k}={shlex.quote(v)}" for k, v in _trace_env(lib, outdir, args).items()) + " "
        )
        print(extra + shlex.join(cmd))
        return 0
    had_trace = _prepare_output(outdir, args.force)
    run, target = _traced_run(argv, family, lib, outdir, had_trace, args)
    if target is None:
        if run.returncode != 0:  # the program failed: its own status and stderr, not a guess
            _log(run.failure(f"`{' '.join(argv)}`") + f"\nlatitude: no rank wrote a trace to {outdir}")
            return launcher.exit_status(run.returncode)
        raise ToolError(
            f"{argv[0]} exited with status 0 and no rank wrote a trace to "
            f"{outdir}. Was the program built with {info.family} ({info.mpicc})? A statically "
            "linked MPI, a program that never calls MPI_Init, or MPICH's mpi_f08 Fortran "
            "module cannot be traced (docs/tracing.md)."
        )
    return _report(target, argv, run, info, args.json)


def _traced_run(argv, family, lib, outdir: Path, had_trace: bool, args) -> tuple[launcher.Run, Path | None]:
    """Run once with the tracer writing into a fresh directory inside `outdir`, then install
    the rank files: into `outdir`, or beside a previous trace if this run failed. Returns
    the run and where its trace is (None: no rank wrote one)."""
    staging = tracer.staging_dir(outdir)
    try:
        cmd, env = tracer.launch_command(argv, family, _trace_env(lib, staging, args))
        run = launcher.run(cmd, env, capture=False, what=f"`{' '.join(argv)}`", stdout_to_stderr=args.json)
        for f in tracer.trace_files(staging):  # the launcher is gone: so are all ranks
            tracer.repair(f)
        if not tracer.trace_files(staging):
            return run, None
        target = outdir
        if had_trace and run.returncode != 0:  # keep the previous trace; this one aside
            target = outdir / time.strftime("failed-run-%Y%m%d-%H%M%S")
            target.mkdir()
            _log(f"the run failed: the previous trace in {outdir} is kept, this run's trace is in {target}")
        tracer.install(staging, target)
        return run, target
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _report(outdir: Path, argv: list[str], run: launcher.Run, info, as_json: bool) -> int:
    s = _summarize(outdir)
    status, wall = run.returncode, run.wall_s
    if as_json:
        print(
            json.dumps(
                {
                    "traces_dir": str(outdir),
                    "files": [str(f) for f in s.files],
                    "ranks": s.ranks,
                    "calls": s.calls,
                    "folded_polls": s.folded_polls,
                    "bytes": s.bytes,
                    "wall_s": round(wall, 3),
                    "launcher_status": status,
                    "endings": s.endings,
                    "mpi": info.family,
                },
                indent=1,
            )
        )
    first, last = s.files[0].name, s.files[-1].name
    _log(f"traces in {outdir}/ ({first}" + (f" ... {last})" if s.ranks > 1 else ")"))
    per_call = f", {s.bytes / s.calls:.0f} B/call" if s.calls else ""
    folded = f" ({s.folded_polls:,} unsuccessful polls folded)" if s.folded_polls else ""
    _log(f"{s.ranks} ranks, {s.calls:,} calls{folded}, {_human_bytes(s.bytes)}{per_call}, wall {wall:.2f} s")
    unfinished = {k: v for k, v in s.endings.items() if k != "finalize"}
    if unfinished:
        _log(
            "not every rank reached MPI_Finalize: "
            + ", ".join(f"{v} ended by {k}" for k, v in sorted(unfinished.items()))
        )
    if status != 0:
        _log(run.failure(f"`{' '.join(argv)}`"))
    return launcher.exit_status(status)


def _summarize(outdir: Path) -> tracer.TraceSummary:
    """The trace's summary; reading a big trace takes a while: a progress bar."""
    total = sum(f.stat().st_size for f in tracer.trace_files(outdir))
    if total < PROGRESS_BYTES:
        return tracer.summarize(outdir)
    with progress_bar(f"summarising {outdir.name}", total) as update:
        return tracer.summarize(outdir, update)
