"""``latitude calibrate``: measure L, o, g, G, O, S, the copy cost C and the collective call's cost K
and write a machine file."""

from __future__ import annotations

import argparse
import json
import os
import sys

from latitude import calibrate, inject, loggp_fit, protocol_fit, tracer
from latitude.commands.launch_args import add_launch_args, require_positive
from latitude.errors import InputError
from latitude.outputs import write_text
from latitude.units import parse_size

EPILOG = """\
examples:
  latitude calibrate -o machine.toml -- mpirun -np 2
  latitude calibrate -o machine.toml -- srun -n 2 -N 2        # two nodes: the network
  latitude calibrate --under-injector -- mpirun -np 2         # the machine injected runs see
  latitude calibrate --from-samples machine.samples.csv       # fit saved measurements again

The launcher command is given without a program: Latitude appends its measurement program
(built once for this MPI, like the tracer). Ranks 0 and 1 measure; place them where the
messages you care about travel (two nodes for the network, one node for shared memory).
o is the time inside MPI_Send/MPI_Recv of a small message, L the half round trip minus both
(per protocol), G the slope over large messages, C the slope of memcpy of 64 KiB to 4 MiB with
cold caches (the cost per byte of a collective's local copy), K what a collective call costs
beyond its messages (2-rank barrier − 0 B exchange, allreduce of 8 B − 8 B exchange; measured
only when the launcher starts exactly 2 ranks); each with its spread over the --repeat runs.
With -o, every sample is saved next to the machine file (NAME.samples.csv)."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="measure the LogGPS parameters (ping-pong, overheads, streaming, local copies, collective calls)",
        description="Measure half round trips, the time inside send and receive calls, back-to-back "
        "sends, one send against two at once (nic_serialization), the eager limit and cold memory copies on "
        "ranks 0 and 1, and barriers and allreduces against "
        "exchanges of the same bytes (2 ranks); identify L, o, g, G, O, S, the copy cost C and the "
        "collective call's cost K with their "
        "uncertainty, print them with the model against every measured size and write a machine "
        "file usable as --machine.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", metavar="TOML", help="write the machine file here")
    p.add_argument(
        "--sizes",
        metavar="LIST",
        help="message sizes, comma separated with units (default 0,8,64,128,256,512,1KiB,...,1MiB)",
    )
    p.add_argument("--batches", type=int, default=11, help="timed batches per size (default 11)")
    p.add_argument("--iters", type=int, default=200, help="round trips per batch (default 200)")
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        metavar="N",
        help="measurement runs, combined per size by the median; their spread is the parameters' "
        "uncertainty (default 3)",
    )
    under = p.add_mutually_exclusive_group()
    under.add_argument(
        "--under-injector",
        action="store_true",
        help="measure with the latency injector preloaded at ΔL = 0 (its overhead "
        "becomes part of o and L, as in the runs `latitude validate` compares with)",
    )
    under.add_argument(
        "--under-tracer",
        action="store_true",
        help="measure with the tracer preloaded (the cost of recording each call becomes part of "
        "o and L, as in a traced run a ΔL = 0 prediction is compared with)",
    )
    p.add_argument(
        "--samples", metavar="CSV", help="save every sample here (default with -o: NAME.samples.csv next to it)"
    )
    p.add_argument(
        "--from-samples", metavar="CSV", help="fit the samples of an earlier calibration instead of measuring"
    )
    p.add_argument(
        "--allow-zero-L", action="store_true", help="write L = 0 when it is not identified instead of refusing"
    )
    p.add_argument("--json", action="store_true", help="print the fit as JSON on stdout")
    g = p.add_argument_group("Bayesian calibration (docs/calibration.md)")
    g.add_argument(
        "--bayes",
        action="store_true",
        help="also sample the posterior of L, o, G, O, the protocol classes' terms and the noise by MCMC "
        "(emcee); C and K stay at their point values; with -o saved as "
        "NAME.posterior.csv (give it to predict --posterior)",
    )
    g.add_argument(
        "--prior", metavar="SPEC", help="uniform prior ranges, e.g. L=0:10us,o=0:2us,G=0:0.1ns,large.L=0:5us"
    )
    g.add_argument("--steps", type=int, default=3000, help="MCMC steps per walker (default 3000; half burn-in)")
    g.add_argument("--posterior-out", metavar="CSV", help="where to save the posterior samples")
    g.add_argument("--plot", metavar="F", help="marginal posterior plots (PNG/SVG/PDF by extension)")
    add_launch_args(
        p, "the measuring programs", "the launch command without a program, e.g. mpirun -np 2", required=False
    )
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


def samples_path(args) -> str | None:
    if args.samples:
        return args.samples
    if args.output and not args.from_samples:
        return os.path.splitext(args.output)[0] + ".samples.csv"
    return None


def measured(args) -> tuple[calibrate.Measurements, str]:
    """The measurements: from a samples file, or measured now with the launcher."""
    if args.from_samples:
        runs = calibrate.read_samples(args.from_samples)
        return calibrate.combine(runs), f"samples of {args.from_samples} ({len(runs)} runs)"
    require_positive(args, ("batches", "iters", "repeat"), "count")
    sizes = parse_sizes(args.sizes)
    if not args.command:
        raise InputError("command", "no launcher given (e.g. -- mpirun -np 2), or --from-samples CSV")
    launch = inject.Launch.resolve(args.command, args.mpicc)
    lib = inject.build_with_spinner(launch, inject.INJECT_LIB, args.rebuild) if args.under_injector else None
    traced = inject.build_with_spinner(launch, tracer.LIB_NAME, args.rebuild) if args.under_tracer else None
    inject.log(
        f"measuring {len(sizes)} sizes × {args.batches} batches × {args.iters} round trips"
        f"{f', {args.repeat} runs' if args.repeat > 1 else ''} ({inject.environment_note()}) ..."
    )
    return calibrate.measure(
        launch, sizes, args.batches, args.iters, lib, args.rebuild, repeat=args.repeat, tracer_lib=traced
    )


def run(args) -> int:
    m, command = measured(args)
    samples = samples_path(args)
    if samples:
        calibrate.write_samples(m.runs or [m], samples)
    f = loggp_fit.fit(m)
    loggp_fit.require_identified(f, args.allow_zero_L)
    classes = protocol_fit.fit_classes(m, f)
    post, post_path = posterior(args, m, f, classes)
    written = protocol_fit.written_fit(f, classes)  # with the classes' O when they are written
    if args.output:
        text = loggp_fit.to_toml(written, command, args.under_injector, samples, tracer=args.under_tracer)
        if post_path:
            text += f"# posterior samples (latitude calibrate --bayes): predict --posterior {post_path}\n"
        write_text(args.output, text + "".join(f"{line}\n" for line in classes.toml()), "machine file")
    extra = {"samples": samples, "protocol_classes": classes.to_dict()}
    if post is not None:
        extra["posterior"] = {"path": post_path, "acceptance": post.acceptance, "draws": len(post.samples)}
        extra["posterior"]["params"] = post.summary()
    if args.json:
        print(json.dumps(written.to_dict() | extra, indent=1))
    else:
        print(loggp_fit.table(f, protocol_fit.with_classes(f.rows, f, classes)))
        print("\n".join(f"note: {n}" for n in classes.notes))
        if post is not None:
            print(bayes_table(post))
    if f.too_noisy:
        inject.log("warning: " + next(n for n in f.notes if "too noisy" in n))
    if samples:
        inject.log(f"wrote {samples} (every sample; refit with --from-samples {samples})")
    if args.output:
        print(f"latitude: wrote {args.output} (use it as --machine {args.output})", file=sys.stderr)
    return 0


def posterior(args, m, f, classes):
    """The posterior when --bayes is given, saved to --posterior-out (or NAME.posterior.csv)."""
    if not args.bayes:
        return None, None
    from latitude import bayes

    require_positive(args, ("steps",), "count")
    priors = bayes.Priors.around(f, args.prior, classes, m)
    inject.log(f"sampling the posterior of {', '.join(priors.names)}: 32 walkers × {args.steps} steps (emcee) ...")
    post = bayes.sample(m, f, priors, steps=args.steps, classes=classes)
    path = args.posterior_out or (os.path.splitext(args.output)[0] + ".posterior.csv" if args.output else None)
    if path:
        post.write(path)
        inject.log(f"wrote {path} ({len(post.samples):,} posterior draws)")
    if args.plot:
        bayes.plot(post, args.plot)
    return post, path


def bayes_table(post) -> str:
    out = [f"\nposterior ({len(post.samples):,} draws, acceptance {post.acceptance:.2f}): median [95 % interval]"]
    for name, s in post.summary().items():
        lo, hi = s["ci95"]
        out.append(f"  {name:8} {s['median']:.6g}  [{lo:.6g}, {hi:.6g}]")
    return "\n".join(out)
