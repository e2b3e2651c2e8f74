"""``latitude variability``: latency distributions of measured collectives."""

from __future__ import annotations

import argparse
import json
import math
import sys

from latitude.outputs import write_text

EPILOG = """\
examples:
  latitude variability coll.csv
  latitude variability coll.parquet --violin violins.png --hist hist.png --json

Per configuration (collective, algorithm, P, size; over all runs in the file): mean, median,
p90, p99, the share of the time spent in the calls beyond p90, and the bimodality coefficient
(BC > 5/9 suggests two modes). With b recorded by at least three runs of a configuration,
the Pearson and Spearman correlation of b with the runs' mean latency."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "variability",
        help="latency distributions of measured collectives (percentiles, tails, bimodality, b)",
        description="Statistics and plots of the samples `latitude measure-coll` writes.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "samples", metavar="SAMPLES", nargs="+", help="CSV or Parquet samples tables (several: runs compared)"
    )
    p.add_argument("--violin", metavar="PNG|SVG", help="violin plot per collective")
    p.add_argument("--hist", metavar="PNG|SVG", help="histogram per configuration")
    p.add_argument("--csv", metavar="PATH", help="write the statistics table as CSV")
    p.add_argument("--json", action="store_true", help="print statistics and correlations as JSON")
    p.set_defaults(func=run)


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def text_table(stats: list) -> str:
    head = ["coll", "algorithm", "P", "bytes", "n", "mean_us", "median_us", "p90_us", "p99_us", "tail_share", "BC", "b"]
    rows = [
        [
            s.coll,
            s.algorithm,
            s.procs,
            s.bytes,
            s.n,
            s.mean_us,
            s.median_us,
            s.p90_us,
            s.p99_us,
            s.tail_share,
            s.bimodality,
            s.b,
        ]
        for s in stats
    ]
    cells = [head] + [[_fmt(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells)


def run(args) -> int:
    from latitude import plot_variability

    for option in ("violin", "hist"):
        if getattr(args, option):
            plot_variability._check_ext(getattr(args, option), f"--{option}")
    from latitude import variability  # numpy: start-up only the command itself pays

    cols = variability.read_many(args.samples)
    stats = variability.table(cols)
    corr = variability.b_correlation(cols)
    if args.csv:
        keys = list(stats[0].to_dict())
        lines = [",".join(keys)] + [
            ",".join(_fmt(v) if v is not None else "" for v in s.to_dict().values()) for s in stats
        ]
        write_text(args.csv, "\n".join(lines) + "\n", "statistics CSV")
    if args.violin:
        plot_variability.collective_violins(cols, variability.groups(cols), args.violin)
    if args.hist:
        plot_variability.collective_histograms(cols, variability.groups(cols), args.hist)
    if args.json:
        print(
            json.dumps(
                {"configurations": [_clean(s.to_dict()) for s in stats], "b_correlation": [_clean(c) for c in corr]},
                indent=1,
            )
        )
        return 0
    print(text_table(stats))
    if corr:
        print("\ncorrelation of b with the runs' mean latency:")
        for c in corr:
            print(
                f"  {c['coll']} {c['algorithm']} P={c['procs']} {c['bytes']} B: {c['runs']} runs, Pearson {_fmt(c['pearson'])}, Spearman {_fmt(c['spearman'])}"
            )
    elif not any(s.b is not None for s in stats):
        print("(no b recorded: measured without a Slurm queue)", file=sys.stderr)
    return 0


def _clean(d: dict) -> dict:
    """NaN as null (JSON has no NaN)."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}
