"""`latitude lp GRAPH --export x.mps | --solve`: the LLAMP LP (Algorithm 1) with HiGHS."""

from __future__ import annotations

from latitude.commands.model_args import add_model_args, params_from_args
from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph


def register(sub) -> None:
    p = sub.add_parser(
        "lp",
        help="build the LLAMP linear program; export it or solve it with HiGHS",
        description="Build the LP of LLAMP's Algorithm 1 (parameters as variables with lower "
        "bounds) and export it (.mps/.lp) or solve it with HiGHS.",
    )
    p.add_argument("graph", help="GOAL or .lgraph file, a trace (directory or rank-0 file) or a job file")
    add_schedule_args(p)
    add_cache_arg(p)
    add_model_args(p)
    p.add_argument("--export", metavar="FILE", help="write the LP (.mps or .lp, by extension)")
    p.add_argument(
        "--solve", action="store_true", help="solve with HiGHS and report T and the parameters' reduced costs"
    )
    p.add_argument(
        "--pairwise",
        action="store_true",
        help="one latency and one gap column per pair of ranks that talk (l_i_j, g_i_j: the paper's App. I); "
        "their reduced costs are the pairwise sensitivities",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> int:
    from latitude.errors import InputError
    from latitude.report import console, print_json
    from latitude.units import fmt_time

    if not args.export and not args.solve:
        raise InputError("latitude lp", "nothing to do: give --export FILE and/or --solve")
    graph = load_graph(args)
    params = params_from_args(args)
    lp = graph.lp(params, pairwise=args.pairwise)
    if args.export:
        lp.export(args.export)
    out = {"columns": lp.num_cols, "rows": lp.num_rows, "nonzeros": lp.num_nonzeros}
    if args.solve:
        out.update(lp.solve())
    if args.export:
        out["exported"] = args.export
    if args.json:
        print_json(out)
        return 0 if out.get("status", "optimal") == "optimal" else 1
    con = console()
    con.print(f"LP: {out['columns']:,} columns, {out['rows']:,} rows, {out['nonzeros']:,} nonzeros")
    if args.export:
        con.print(f"written to {args.export}")
    if args.solve:
        if out["status"] != "optimal":
            con.print(f"HiGHS status: {out['status']}")
            return 1
        con.print(
            f"HiGHS: optimal, T = {fmt_time(out['runtime_ns'])} ({out['runtime_ns']:,.3f} ns), "
            f"reduced cost of l = {out['reduced_cost_l']:g}"
        )
        if params.machine:
            rc = out["reduced_costs"]
            con.print("reduced costs: " + ", ".join(f"{k} = {v:g}" for k, v in rc.items() if k not in ("l",)))
        if args.pairwise:
            top = sorted(out["pair_reduced_costs"], key=lambda r: -r["l"])[:10]
            con.print(
                f"{len(out['pair_reduced_costs'])} pair columns; largest latency reduced costs: "
                + ", ".join(f"l_{r['a']}_{r['b']} = {r['l']:g}" for r in top)
            )
    return 0
