"""``latitude calibrate``: measure L, o, g, G, O, S and write a machine file."""

from __future__ import annotations

import argparse
import json
import sys

from latitude import calibrate, inject
from latitude.commands.launch_args import add_launch_args, require_positive
from latitude.errors import InputError
from latitude.units import parse_size

EPILOG = """\
examples:
  latitude calibrate -o machine.toml -- mpirun -np 2
  latitude calibrate -o machine.toml -- srun -n 2 -N 2        # two nodes: the network
  latitude calibrate --under-injector -- mpirun -np 2         # the machine injected runs see

The launcher command is given without a program: Latitude appends its measurement program
(built once for this MPI, like the tracer). Ranks 0 and 1 measure; place them where the
messages you care about travel (two nodes for the network, one node for shared memory)."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="measure the LogGPS parameters (ping-pong, overheads, streaming)",
        description="Measure half round trips, send/receive overheads, back-to-back sends and "
        "the eager limit between ranks 0 and 1, fit L, o, g, G, O, S with the model's formulas, "
        "print the fit and write a machine file usable as --machine.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", metavar="TOML", help="write the machine file here")
    p.add_argument(
        "--sizes", metavar="LIST", help="message sizes, comma separated with units (default 0,8,64,256,1KiB,...,1MiB)"
    )
    p.add_argument("--batches", type=int, default=11, help="timed batches per size (default 11)")
    p.add_argument("--iters", type=int, default=200, help="round trips per batch (default 200)")
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        metavar="N",
        help="measurement runs, combined per size by the median before the fit "
        "(default 3; the notes show how far single-run fits are apart)",
    )
    p.add_argument(
        "--under-injector",
        action="store_true",
        help="measure with the latency injector preloaded at ΔL = 0 (its overhead "
        "becomes part of o and L, as in the runs `latitude validate` compares with)",
    )
    p.add_argument("--json", action="store_true", help="print the fit as JSON on stdout")
    add_launch_args(p, "the measuring programs", "the launch command without a program, e.g. mpirun -np 2")
    p.set_defaults(func=run)


def parse_sizes(text: str | None) -> tuple[int, ...]:
    if not text:
        return calibrate.DEFAULT_SIZES
    sizes = tuple(parse_size(t.strip(), "--sizes") for t in text.split(",") if t.strip())
    if len(sizes) < 2:
        raise InputError("--sizes", f"expected at least two message sizes, got {text!r}")
    if max(sizes) > 1 << 30:
        raise InputError("--sizes", "sizes above 1 GiB are not supported")
    return sizes


def run(args) -> int:
    require_positive(args, ("batches", "iters", "repeat"), "count")
    sizes = parse_sizes(args.sizes)
    launch = inject.Launch.resolve(args.command, args.mpicc)
    lib = inject.build_with_spinner(launch, inject.INJECT_LIB, args.rebuild) if args.under_injector else None
    inject.log(
        f"measuring {len(sizes)} sizes × {args.batches} batches × {args.iters} round trips"
        f"{f', {args.repeat} runs' if args.repeat > 1 else ''} ({inject.environment_note()}) ..."
    )
    m, command = calibrate.measure(launch, sizes, args.batches, args.iters, lib, args.rebuild, repeat=args.repeat)
    f = calibrate.fit(m)
    if args.output:
        with open(args.output, "w") as out:
            out.write(calibrate.to_toml(f, command, args.under_injector))
    if args.json:
        print(json.dumps(f.to_dict(), indent=1))
    else:
        print(calibrate.table(f))
    if args.output:
        print(f"latitude: wrote {args.output} (use it as --machine {args.output})", file=sys.stderr)
    return 0
