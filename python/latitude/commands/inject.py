"""``latitude inject``: run an MPI program with ΔL added to its network latency."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import tempfile
from pathlib import Path

from latitude import inject, launcher
from latitude.commands.launch_args import add_launch_args
from latitude.errors import InputError, ToolError
from latitude.params import Params
from latitude.units import fmt_size, fmt_time, parse_seconds, parse_size, parse_time

EPILOG = """\
examples:
  latitude inject --delta-L 50us -- mpirun -np 2 apps/halo2d
  latitude inject --delta-L 20us --machine machine.toml -- mpirun -np 2 ./app
  latitude inject --delta-L 5us --json -- mpiexec.mpich -np 4 ./app
  latitude inject --machine ft.toml --placement map.txt -- mpirun -np 8 ./app   # emulated nodes
  latitude inject --machine ft.toml --placement map.txt --self-check -- mpirun -np 2

Messages of more than the eager limit (--eager-limit, or S of --machine) follow the
handshake rendezvous: 3·ΔL to the receiver, 4·ΔL to the sender. Without either option every
message is treated as eager (ΔL to the receiver only). See docs/injector.md.

With --placement, ranks run as if on the machine's nodes: each pair of ranks gets the
machine's latency for its nodes minus the intra-node latency on top of --delta-L (0 by
default); ranks on one emulated node get nothing extra. --self-check measures each class of
pairs on two ranks (the command is then a launcher for 2 ranks, no program) and exits 1 if
one misses its delay by more than max(0.5 µs, 3 %). See docs/placement.md.

The exit status is the program's own (128 + n if a signal n killed it); a failed run shows the
last lines of its standard error. A run is stopped after --timeout (default 1h)."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "inject",
        help="run an MPI program with added network latency (PMPI latency injector)",
        description="Build the latency injector for the MPI in use (once, cached), run the "
        "program with it preloaded on every rank, and report the runtime (MPI_Init end to "
        "MPI_Finalize start, the longest rank).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--delta-L", metavar="TIME", help="added latency ΔL, e.g. 50us (required without --placement)")
    p.add_argument(
        "--eager-limit",
        metavar="SIZE",
        help="S: larger messages use the rendezvous rule (default: --machine's S, else every message is eager)",
    )
    p.add_argument("--machine", metavar="TOML", help="machine file (latitude calibrate): its S and L+2o, G+O estimates")
    p.add_argument(
        "--placement",
        metavar="MAP",
        help="emulate the --machine's nodes: a rank→node map (list, rankfile or Slurm host list)",
    )
    p.add_argument(
        "--self-check",
        action="store_true",
        help="with --placement: measure each pair class's delay on two ranks (command: a launcher for 2 ranks)",
    )
    p.add_argument("--no-collectives", action="store_true", help="leave collectives to MPI (no latency added to them)")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the summary as JSON on stdout (the program's own stdout then goes to stderr)",
    )
    p.add_argument(
        "--timeout",
        default="1h",
        metavar="TIME",
        help="stop the run (every rank) after TIME, e.g. 90s, 10min (default %(default)s; 0: no limit)",
    )
    add_launch_args(p, "the injector", "the launch command, e.g. mpirun -np 2 ./app", print_command=True)
    p.set_defaults(func=run)


def options(args, pair_file: str | None = None) -> inject.InjectOptions:
    """The injector's options; with --placement the pair-delay matrix is written to `pair_file`."""
    from latitude import emulate  # numpy: start-up only emulated nodes pay

    if args.self_check and not (args.placement and args.machine):
        raise InputError("--self-check", "needs --placement and --machine (the pair delays to check)")
    if args.delta_L is None and not args.placement:
        raise InputError("--delta-L", "expected the added latency ΔL, e.g. 50us (or --placement with --machine)")
    delta = parse_time(args.delta_L, "--delta-L") if args.delta_L is not None else 0.0
    coll = not args.no_collectives
    params = Params.from_machine(args.machine) if args.machine else None
    if params is not None:
        opts = inject.InjectOptions.for_machine(params, delta, coll)
    else:
        opts = inject.InjectOptions(delta_L=delta, collectives=coll)
    if args.eager_limit:
        opts = inject.InjectOptions(delta, parse_size(args.eager_limit, "--eager-limit"), opts.one_way, coll)
    if args.placement:
        if not args.machine:
            raise InputError("--placement", "needs --machine (the machine whose nodes are emulated)")
        opts = emulate.emulated_nodes(params, args.placement, pair_file, opts)[0]
    return opts


def run(args) -> int:
    if args.print_command and args.placement:  # the command outlives this process: so does the matrix
        fd, pair_file = tempfile.mkstemp(prefix="latitude-pair-delta-", suffix=".txt")
        os.close(fd)
        return _run(args, pair_file)
    with tempfile.TemporaryDirectory(prefix="latitude-pairs-") as tmp:
        return _run(args, os.path.join(tmp, "pair-delta.txt"))


def _run(args, pair_file: str) -> int:
    opts = options(args, pair_file)
    timeout = parse_seconds(args.timeout)
    launch = inject.Launch.resolve(args.command, args.mpicc)
    lib = inject.build_with_spinner(launch, inject.INJECT_LIB, args.rebuild)
    if args.self_check:
        return _self_check(args, launch, opts, timeout)
    if args.print_command:
        env = inject.preload_env(lib, opts, Path("REPORT_DIR"))
        del env["LATITUDE_INJECT_REPORT"]
        cmd, _ = launch.command(env)
        prefix = "" if launch.family != "unknown" else " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " "
        print(prefix + shlex.join(cmd))
        return 0
    # the program's own output goes straight to the terminal (stdout to stderr under --json)
    with tempfile.TemporaryDirectory(prefix="latitude-inject-") as tmp:
        cmd, env = launch.command(inject.preload_env(lib, opts, Path(tmp)))
        run = launcher.run(
            cmd, env, capture=False, timeout=timeout, what=f"`{' '.join(launch.argv)}`", stdout_to_stderr=args.json
        )
        ranks = inject.read_reports(Path(tmp))
    status = run.returncode
    if not ranks:
        if status != 0:  # the program failed: its own status, not a guess about the build
            inject.log(run.failure(f"`{' '.join(launch.argv)}`"))
            return launcher.exit_status(status)
        raise ToolError(
            f"{launch.argv[0]} exited with status 0 but no rank wrote an injector report: {inject.no_report_hint(launch)}"
        )
    res = inject.RunResult(status, ranks, run.wall_s)
    summary = _summary(res, opts)
    if args.json:
        print(json.dumps(summary, indent=1))
    s = "every message eager" if opts.eager_limit is None else f"eager ≤ {fmt_size(opts.eager_limit)}"
    if opts.pair_delta:
        s += f"; emulated nodes of {os.path.basename(args.machine)} as placed by {args.placement}"
    inject.log(
        f"ΔL = {fmt_time(opts.delta_L)} ({s}): runtime {res.runtime_ns / 1e9:.6f} s "
        f"(MPI_Init end → MPI_Finalize start, longest of {len(ranks)} ranks), "
        f"{summary['messages']:,} messages received, {summary['collectives']:,} collectives, "
        f"held {summary['held_ns'] / 1e6:.3f} ms in all"
    )
    if summary["collectives_passed_through"]:
        inject.log(
            f"{summary['collectives_passed_through']} collective calls were passed to MPI "
            "without added latency (see the warnings above)"
        )
    if status != 0:
        inject.log(run.failure(f"`{' '.join(launch.argv)}`"))
    return launcher.exit_status(status)


def _self_check(args, launch, opts, timeout) -> int:
    from latitude import emulate

    with open(opts.pair_delta) as f:
        matrix = [[float(v) for v in line.split()] for line in f]
    rows = emulate.self_check(launch, matrix, timeout or 300.0)
    if args.json:
        print(json.dumps({"pair_delay_self_check": rows}, indent=1))
    for r in rows:
        pair = f"pairs like {r['pair'][0]}–{r['pair'][1]}"
        if r["measured_ns"] is None:
            inject.log(f"{pair}: one emulated node, no extra delay")
            continue
        inject.log(
            f"{pair}: intended {fmt_time(r['extra_ns'])}, measured {fmt_time(r['measured_ns'])} "
            f"({'ok' if r['ok'] else 'MISSED'}, tolerance {fmt_time(r['tolerance_ns'])})"
        )
    return 0 if all(r["ok"] for r in rows) else 1


def _summary(res: inject.RunResult, opts: inject.InjectOptions) -> dict:
    from latitude import emulate

    emulated = None
    if opts.pair_delta:
        with open(opts.pair_delta) as f:
            emulated = emulate.classes([[float(v) for v in line.split()] for line in f])
    return {
        "pair_delay_classes": emulated,
        "delta_L_ns": opts.delta_L,
        "eager_limit": opts.eager_limit,
        "runtime_ns": res.runtime_ns,
        "rank_span_ns": [r.span_ns for r in res.ranks],
        "rank_busy_ns": res.busy_ns,
        "ranks": len(res.ranks),
        "wall_s": round(res.wall_s, 3),
        "launcher_status": res.returncode,
        "messages": res.total("recvs"),
        "rendezvous": res.total("rendezvous"),
        "collectives": res.total("collectives") // max(1, len(res.ranks)),
        "held_ns": res.total("held_ns"),
        "collectives_passed_through": res.total("collectives_passed_through"),
    }
