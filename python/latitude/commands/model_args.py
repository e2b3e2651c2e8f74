"""The LogGPS flags of every command that prices a graph (-L, -o, -G, ..., --machine)."""

from __future__ import annotations

import argparse

from latitude.errors import InputError
from latitude.params import DEFAULTS, OPTIONAL, PARAM_NAMES, PROTOCOLS, Params
from latitude.units import fmt_time, parse_time


def add_model_args(p: argparse.ArgumentParser, output_o: bool = False) -> None:
    """The LogGPS flags shared by every command that prices a graph. With `output_o` the
    command uses -o for its output file and the overhead is --overhead."""
    grp = p.add_argument_group("LogGPS model (units accepted: 3us, 1.5µs, 500ns; G as 0.018ns or 50GB/s)")
    grp.add_argument("-L", metavar="TIME", help=f"network latency (default {fmt_time(DEFAULTS['L'])})")
    grp.add_argument(
        *(("--overhead",) if output_o else ("-o",)),
        dest="o",
        metavar="TIME",
        help=f"CPU overhead per message (default {fmt_time(DEFAULTS['o'])})",
    )
    grp.add_argument("-G", metavar="GAP", help=f"gap per byte, 1/bandwidth (default {DEFAULTS['G']} ns)")
    grp.add_argument("-g", metavar="TIME", help="NIC gap per message; implies --serialize-nic (default 0)")
    grp.add_argument("-O", metavar="GAP", help="CPU overhead per byte (default 0)")
    grp.add_argument(
        "-C",
        metavar="GAP",
        help="cost per byte of a local memory copy (a collective's own block; default: priced as -O)",
    )
    grp.add_argument(
        "-K",
        metavar="TIME",
        help="the MPI library's own cost of one collective call on a rank, beyond its messages (default: none)",
    )
    grp.add_argument(
        "-S", metavar="SIZE", help="eager limit: larger messages use rendezvous (default 256KiB; 'inf' = all eager)"
    )
    grp.add_argument("--rendezvous", choices=PROTOCOLS, help="rendezvous protocol (default handshake)")
    grp.add_argument(
        "--small-limit",
        metavar="SIZE",
        help="protocol size classes: messages up to SIZE are small (mailbox), up to -S medium (eager), "
        "larger rendezvous; each class's extra o and L are --set small.o=..., medium.L=... (docs/model.md)",
    )
    grp.add_argument(
        "--serialize-nic",
        action="store_true",
        help="serialize each rank's sends on its NIC in trace order (g + bytes·G apart)",
    )
    grp.add_argument(
        "--machine",
        metavar="TOML",
        help="read parameters and the network from a machine file (docs/network.md; flags override it)",
    )
    grp.add_argument(
        "--set",
        action="append",
        metavar="NAME=VALUE",
        help="set any named parameter, e.g. --set wire=300ns --set intra.L=0.2us --set C=0.07ns (repeatable)",
    )


def params_from_args(args: argparse.Namespace) -> Params:
    base = Params.from_machine(args.machine) if getattr(args, "machine", None) else Params()
    kw = {}
    for name in PARAM_NAMES + ("S", *OPTIONAL):
        value = getattr(args, name, None)
        if value is not None:
            kw[name] = value
    if getattr(args, "rendezvous", None):
        kw["protocol"] = args.rendezvous
    if getattr(args, "small_limit", None) is not None:
        kw["S1"] = args.small_limit
    if getattr(args, "serialize_nic", False) or (args.g is not None and parse_time(args.g, "-g") > 0):
        kw["nic_serialization"] = True
    out = base.replace(**kw) if kw else base
    return with_sets(out, getattr(args, "set", None))


def with_sets(params: Params, sets) -> Params:
    """Apply --set NAME=VALUE options."""
    changes = {}
    for item in sets or ():
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not name:
            raise InputError("--set", f"expected NAME=VALUE such as wire=300ns, got {item!r}")
        try:
            params.kind(name)  # a parameter of this point (C may be set on any)
        except InputError as err:
            raise InputError("--set", err.what) from None
        changes[name] = params.parse(name, value.strip(), f"--set {name}")
    return params.with_values(changes) if changes else params


def add_posterior_args(p, what: str, cost: str) -> None:
    """--posterior F and --draws N: `what` from the parameters drawn from calibrate --bayes's posterior."""
    p.add_argument(
        "--posterior",
        metavar="CSV",
        help=f"posterior of latitude calibrate --bayes: also {what}, (L, o, G, O and class terms) drawn from it ({cost})",
    )
    p.add_argument("--draws", type=int, default=200, metavar="N", help="posterior draws (default 200)")
