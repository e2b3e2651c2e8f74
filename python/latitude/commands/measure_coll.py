"""``latitude measure-coll``: OSU-style timing of collectives per algorithm, every sample kept."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile

from latitude import collbench, inject
from latitude.commands.launch_args import add_launch_args, require_positive
from latitude.errors import InputError
from latitude.units import parse_size

EPILOG = """\
examples:
  latitude measure-coll -o coll.csv -- mpirun -np 4
  latitude measure-coll --colls bcast,reduce --algorithms 'bcast=binomial,chain;reduce=default,binary' \\
      --sizes 4,1KiB,64KiB --iters 2000 -o bcast.parquet -- mpirun -np 4
  latitude variability coll.csv --violin coll.png
  latitude measure-coll --machine m.toml --placement map.txt --colls p2p,fanout,bcast -o emu.csv \
      -- mpirun -np 4          # map.txt: 0 0 1 1, 2 emulated nodes: coll-model fits shm and emulated

The launcher is given without a program: Latitude appends its timing program (built once for
this MPI, like the tracer) and runs it once per collective and algorithm. Algorithms are named
as in `--coll` (docs/schedule.md) and forced through the library's own parameters: Open MPI's
coll_tuned MCA parameters or MPICH's MPIR_CVAR_*_INTRA_ALGORITHM; `default` leaves the
library's choice. Per size: --warmup calls, then --iters calls each after a barrier, timed on
every rank; a sample is the slowest rank's time of one call. Each row carries the run's
metadata (MPI library, algorithm, P, size, hosts and cores, channels, Slurm's b).

--machine M --placement P runs on emulated nodes (as `latitude inject`): messages between
ranks placed on different nodes of M are delayed by M's latency for the pair minus its
intra-node one. Rows then record each rank's node (`nodes`), the added delays (`emulated_ns`)
and `channels` shm+emulated. The injector runs the collectives itself (Latitude's default
preset), so only the `default` algorithm can be measured there (docs/collectives.md)."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "measure-coll",
        help="time bcast/reduce/allreduce/alltoall per algorithm, every sample kept",
        description="OSU-style timing of MPI collectives for chosen algorithms and message sizes; "
        "every timed call is kept, with the run's metadata, in a CSV or Parquet table for "
        "`latitude variability`.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", metavar="CSV|PARQUET", required=True, help="the samples table")
    p.add_argument(
        "--colls",
        metavar="LIST",
        default=",".join(collbench.COLLECTIVES),
        help="collectives (default bcast,reduce,allreduce,alltoall); p2p and fanout measure the "
        "point-to-point inputs of `latitude coll-model`",
    )
    p.add_argument(
        "--algorithms",
        metavar="SPEC",
        help="per collective, e.g. 'bcast=binomial,chain;alltoall=default,pairwise' (default: the library's own)",
    )
    p.add_argument(
        "--sizes",
        metavar="LIST",
        help="bytes per rank (alltoall: per peer), with units (default 4,64,1KiB,16KiB,64KiB,256KiB)",
    )
    p.add_argument("--iters", type=int, default=1000, help="timed calls per size (default 1000)")
    p.add_argument("--warmup", type=int, default=100, help="untimed calls first (default 100)")
    p.add_argument("--root", type=int, default=0, help="root of bcast and reduce (default 0)")
    p.add_argument("--machine", metavar="TOML", help="with --placement: the machine whose nodes are emulated")
    p.add_argument(
        "--placement",
        metavar="MAP",
        help="emulate --machine's nodes on this host: a rank→node map (list, rankfile or Slurm host list)",
    )
    add_launch_args(p, "the timing program", "the launch command without a program, e.g. mpirun -np 4")
    p.set_defaults(func=run)


def options(args) -> collbench.BenchOptions:
    require_positive(args, ("iters",), "count")
    if args.warmup < 0 or args.root < 0:
        raise InputError("--warmup" if args.warmup < 0 else "--root", "expected a value ≥ 0")
    colls = tuple(c.strip() for c in args.colls.split(",") if c.strip())
    known = collbench.COLLECTIVES + collbench.P2P_MODES
    for c in colls:
        if c not in known:
            raise InputError("--colls", f"expected some of {', '.join(known)}, got {c!r}")
    if not colls:
        raise InputError("--colls", "no collective given")
    sizes = collbench.DEFAULT_SIZES
    if args.sizes:
        sizes = tuple(parse_size(t.strip(), "--sizes") for t in args.sizes.split(",") if t.strip())
        if not sizes or max(sizes) > 1 << 30:
            raise InputError("--sizes", "expected sizes from 0 to 1 GiB")
    if {"reduce", "allreduce"} & set(colls) and any(s % 4 for s in sizes):
        raise InputError("--sizes", "reduce and allreduce sum floats: sizes must be multiples of 4 bytes")
    algs = collbench.parse_algorithms(args.algorithms, colls)
    return collbench.BenchOptions(colls, algs, sizes, args.iters, args.warmup, args.root)


def run(args) -> int:
    opts = options(args)
    collbench.output_format(args.output)  # a wrong name is refused before minutes of measuring
    if not args.placement:
        if args.machine:
            raise InputError("--machine", "only used with --placement (the emulated nodes)")
        return _run(args, opts)
    with tempfile.TemporaryDirectory(prefix="latitude-pairs-") as tmp:
        return _run(args, _emulated(args, opts, os.path.join(tmp, "pair-delta.txt")))


def _emulated(args, opts: collbench.BenchOptions, pair_file: str) -> collbench.BenchOptions:
    """`opts` on the emulated nodes of --machine as --placement puts the ranks."""
    from latitude import emulate  # numpy: start-up only emulated nodes pay
    from latitude.params import Params

    if not args.machine:
        raise InputError("--placement", "needs --machine (the machine whose nodes are emulated)")
    for coll in opts.colls:
        others = [a for a in opts.algorithms[coll] if a != "default"]
        if others:
            raise InputError(
                "--algorithms",
                f"on emulated nodes the injector runs {coll} as Latitude's default preset: "
                f"{', '.join(others)} cannot be forced (measure default)",
            )
    params = Params.from_machine(args.machine)
    base = inject.InjectOptions.for_machine(params)
    emu = collbench.Emulation(*emulate.emulated_nodes(params, args.placement, pair_file, base))
    return dataclasses.replace(opts, emulation=emu)


def _run(args, opts: collbench.BenchOptions) -> int:
    launch = inject.Launch.resolve(args.command, args.mpicc)
    for coll in opts.colls:  # every algorithm exists in this library before the first run
        for alg in opts.algorithms[coll]:
            collbench.algorithm_env(launch.info.family, coll, alg)
    runs = sum(len(opts.algorithms[c]) for c in opts.colls)
    inject.log(
        f"timing {runs} collective/algorithm runs × {len(opts.sizes)} sizes × {opts.iters} calls "
        f"({inject.environment_note()}) ..."
    )
    done = []

    def progress(coll, alg):
        done.append(1)
        inject.log(f"[{len(done)}/{runs}] {coll} {alg} done")

    rows = collbench.measure(launch, opts, args.rebuild, progress)
    collbench.write_samples(args.output, rows)
    channels = sorted({r[collbench.COLUMNS.index("channels")] for r in rows})
    have_b = any(r[collbench.COLUMNS.index("b")] is not None for r in rows)
    print(
        f"latitude: wrote {args.output} ({len(rows):,} samples; channels measured: {', '.join(channels)}"
        f"{'' if have_b else '; no Slurm queue, b not recorded'})",
        file=sys.stderr,
    )
    return 0
