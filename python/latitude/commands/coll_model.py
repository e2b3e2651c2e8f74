"""``latitude coll-model fit|predict``: latency models of bcast/reduce algorithms."""

from __future__ import annotations

import argparse
import json
import math

from latitude import coll_names
from latitude.errors import InputError
from latitude.outputs import write_text
from latitude.params import Params
from latitude.units import parse_size

EPILOG = """\
examples:
  latitude measure-coll -o m.csv --colls p2p,fanout,bcast,reduce \\
      --algorithms 'bcast=default,linear,chain,binary,binomial;reduce=default,linear,chain,binary,binomial' \\
      --sizes 4,1KiB,16KiB,64KiB,256KiB -- mpirun -np 4
  latitude coll-model fit m.csv -o model.json --plot fit.png
  latitude coll-model predict model.json --coll bcast --algorithm binomial -P 8 --sizes 1KiB,1MiB

fit: α, β per channel from the p2p rows, γ(k, m) from the fanout rows, the composition of each
tree algorithm, a regression per algorithm, and per collective and algorithm R², RRMSE and
the winner. The library's `default` runs are matched size by size with the nearest composed
tree: the --coll rule printed reproduces the library's choice in `latitude schedule`."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "coll-model",
        help="fit and compare latency models of bcast/reduce algorithms (p2p composition, regression)",
        description="Models of MPI_Bcast and MPI_Reduce algorithms fitted to `latitude measure-coll` samples.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    f = sub.add_parser("fit", help="fit the models to a samples table and compare them")
    f.add_argument(
        "samples",
        metavar="SAMPLES",
        nargs="+",
        help="CSV or Parquet of latitude measure-coll (several: e.g. one per P)",
    )
    f.add_argument("-o", "--output", metavar="JSON", help="write the model (parameters, table, detected --coll)")
    f.add_argument("--plot", metavar="PNG|SVG", help="measured vs both models per collective and algorithm")
    f.add_argument(
        "--machine",
        metavar="TOML",
        help="LogGPS parameters for Latitude's graph prediction (e.g. from latitude calibrate; "
        "default: L = α, G = β of the p2p fit)",
    )
    f.add_argument(
        "--stat",
        choices=tuple(coll_names.STATS),
        default="median",
        help="the statistic of each configuration's calls the models are fitted to and judged on (default median)",
    )
    f.add_argument("--json", action="store_true", help="print the model as JSON")
    f.set_defaults(func=run_fit)
    q = sub.add_parser("predict", help="predict an algorithm's latency from a fitted model")
    q.add_argument("model", metavar="MODEL", help="JSON written by coll-model fit -o")
    q.add_argument("--coll", required=True, choices=coll_names.MODELLED)
    q.add_argument("--algorithm", required=True, choices=coll_names.TREES)
    q.add_argument("-P", "--procs", type=int, required=True, help="number of ranks")
    q.add_argument("--nodes", type=int, default=1, help="hosts the ranks are spread over in blocks (default 1)")
    q.add_argument("--sizes", required=True, metavar="LIST", help="message sizes with units")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=run_predict)
    p.set_defaults(func=lambda args: p.error("expected an action: fit or predict"))


def _f(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def run_fit(args) -> int:
    if args.plot:
        from latitude import plot_variability

        plot_variability._check_ext(args.plot, "--plot")
    params = Params.from_machine(args.machine) if args.machine else None
    from latitude import coll_fit, variability  # numpy: start-up only the command itself pays

    model = coll_fit.fit(variability.read_many(args.samples), params, args.stat)
    doc = model.to_dict()
    if args.output:
        write_text(args.output, json.dumps(_clean(doc), indent=1) + "\n", "model")
    if args.plot:
        from latitude import plot_coll_model

        plot_coll_model.fit_plot(model, args.plot)
    if args.json:
        print(json.dumps(_clean(doc), indent=1))
        return 0
    for name, h in model.channels.items():
        print(f"channel {name}: α = {h.alpha:.3f} µs, β = {h.beta * 1e3:.4f} ns/B")
    head = ["coll", "algorithm", "points", "R2 comp", "RRMSE comp", "R2 regr", "RRMSE regr", "R2 graph", "RRMSE graph"]
    keys = [f"{m}_{k}" for m in ("composition", "regression", "graph") for k in ("r2", "rrmse")]
    head.append("winner")
    rows = [
        [s["coll"], s["algorithm"], str(s["points"])] + [_f(s[k]) for k in keys] + [s["winner"]] for s in model.summary
    ]
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    if model.detected:
        print(f"library default matched by size: --coll '{doc['coll_rule']}'")
    return 0


def run_predict(args) -> int:
    try:
        with open(args.model) as f:
            doc = json.load(f)
    except OSError as err:
        raise InputError(args.model, f"cannot read the model ({err.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(args.model, "not a JSON model (expected the output of coll-model fit -o)") from None
    if not isinstance(doc, dict):
        raise InputError(args.model, "expected a model written by `latitude coll-model fit`")
    from latitude import coll_fit, coll_model  # numpy: start-up only the command itself pays

    model = coll_fit.Model.from_dict(doc, args.model)
    if args.procs < 2 or not 1 <= args.nodes <= args.procs:
        raise InputError("-P", "expected at least 2 ranks and 1 ≤ --nodes ≤ P")
    sizes = [parse_size(s.strip(), "--sizes") for s in args.sizes.split(",") if s.strip()]
    per_node = -(-args.procs // args.nodes)
    hosts = [f"node{r // per_node}" for r in range(args.procs)]
    coef = model.regression.get(f"{args.coll}/{args.algorithm}")
    out = []
    for m in sizes:
        comp = model.compose(args.coll, args.algorithm, hosts, m)
        reg = coll_model.predict_regression(coef, m, args.procs, args.nodes > 1) if coef else None
        out.append({"bytes": m, "composition_us": comp, "regression_us": reg})
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"{args.coll} {args.algorithm}, P = {args.procs} on {args.nodes} host(s):")
        for r in out:
            print(
                f"  {r['bytes']:>10} B  composition {_f(r['composition_us'])} µs  regression {_f(r['regression_us'])} µs"
            )
    return 0


def _clean(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v
