"""`latitude sweep SPEC -o results.parquet`: a design-space sweep (docs/sweep.md)."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="design-space sweep: T, λ, ρ_L and tolerances over a grid of inputs and machines",
        description="Evaluate the cartesian product of a sweep spec (inputs, seeds, --coll choices, "
        "machine files, parameter grids; docs/sweep.md): for every point T, λ per parameter, ρ_L, "
        "the critical path and the x % tolerances, one row per point. Runs on a local process "
        "pool (default), a Dask LocalCluster (--dask local) or a running Dask scheduler.",
    )
    p.add_argument("spec", help="sweep spec (TOML, docs/sweep.md)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="results table: .parquet or .csv")
    p.add_argument("--resume", action="store_true", help="skip the points already in the output (and its journal)")
    p.add_argument(
        "--dask",
        metavar="local|tcp://HOST:PORT",
        help="run on Dask: a LocalCluster started here, or a running scheduler",
    )
    p.add_argument("--workers", type=int, metavar="N", help="local pool or LocalCluster size (default: the cores)")
    p.add_argument("--batch", type=int, metavar="N", help="points per task (default: up to 64, 4 tasks per worker)")
    p.add_argument("--report", metavar="HTML", help="also write a self-contained HTML summary of the sweep")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from latitude import sweep
    from latitude.report import console, print_json

    spec = sweep.read_spec(args.spec)
    options = sweep.RunOptions(workers=args.workers, dask=args.dask, batch=args.batch, resume=args.resume)
    summary = sweep.run(spec, args.output, options)
    written = [args.output]
    if args.report:
        from latitude.sweep_report import write_sweep_report

        write_sweep_report(spec, args.output, args.report)
        written.append(args.report)
    if args.json:
        out = summary.to_dict()
        out["written"] = written
        print_json(out)
        return 0
    con = console()
    s = summary
    con.print(
        f"{s.points:,} points: {s.evaluated:,} evaluated ({s.failed:,} failed), {s.skipped:,} already done; "
        f"{s.batches:,} batches, {s.graph_loads:,} graph loads on {s.workers} workers ({s.engine}); "
        f"{s.seconds:.3g} s, {s.points_per_second:,.1f} points/s"
    )
    for path in written:
        con.print(f"wrote {path}")
    return 0
