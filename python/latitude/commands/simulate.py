"""`latitude simulate GRAPH`: LogGOPS discrete-event simulation — per-rank end times, noise,
Monte Carlo variability, Chrome-trace timelines. Semantics: docs/simulator.md."""

from __future__ import annotations

from latitude.commands.model_args import add_model_args, params_from_args
from latitude.commands.schedule_args import add_cache_arg, add_schedule_args, load_graph


def register(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="discrete-event LogGOPS simulation (CPU/NIC contention, matching, noise, timelines)",
        description="Simulate an execution graph event by event: per-rank CPUs and NICs, dynamic message "
        "matching (ANY_SOURCE/ANY_TAG), eager and rendezvous protocols, noise. By default the "
        "the cost rules of docs/model.md (equal to `latitude predict` when a rank runs one op at a time and g = 0); "
        "--loggopsim-compat reproduces LogGOPSim's per-rank end times.",
    )
    p.add_argument("graph", help="GOAL or .lgraph file, a trace (directory or rank-0 file) or a job file")
    add_schedule_args(p)
    add_cache_arg(p)
    add_model_args(p)
    sem = p.add_argument_group("semantics")
    sem.add_argument(
        "--loggopsim-compat",
        action="store_true",
        help="LogGOPSim v1's rules and quirks, integer ns (parameters rounded to whole ns, with a note)",
    )
    sem.add_argument(
        "--no-cpu-serialization",
        action="store_true",
        help="let a rank's operations overlap on its CPU (the engine's max-plus model)",
    )
    noise = p.add_argument_group("noise and variability")
    noise.add_argument(
        "--noise",
        action="append",
        metavar="SPEC",
        help="calc:gaussian:sigma=5%% | calc:lognormal:sigma=0.2 | calc:uniform:0:2us | "
        "latency:gaussian:sigma=200ns | os:period=1ms,duration=20us[,sync] | trace:FILE | "
        "coll:SAMPLES (every collective call of a traced graph delayed by a draw from measure-coll's "
        "samples minus the model's own time of that call: docs/collectives.md) (repeatable)",
    )
    noise.add_argument(
        "--noise-cosched", action="store_true", help="one noise phase for all ranks (trace and os noise)"
    )
    noise.add_argument("--seed", type=int, default=0, help="seed of the noise (default 0; runs are deterministic)")
    noise.add_argument("--samples", type=int, metavar="N", help="N Monte Carlo runs: runtime percentiles")
    noise.add_argument("--threads", type=int, metavar="N", help="threads for --samples (default: all cores)")
    noise.add_argument("--hist", metavar="OUT.png|svg", help="histogram of the sampled runtimes")
    noise.add_argument("--csv", metavar="OUT.csv", help="one row per sample (sample, seed, runtime_us, slowest_rank)")
    out = p.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="machine-readable output (times in ns)")
    out.add_argument("--timeline", metavar="OUT.json", help="Chrome trace / Perfetto timeline of the run")
    out.add_argument(
        "--timeline-window", metavar="START:END", help="only events overlapping this time window, e.g. 0:200us"
    )
    out.add_argument(
        "--timeline-max-events",
        type=int,
        default=2_000_000,
        metavar="N",
        help="refuse timelines with more trace events than this (default 2000000)",
    )
    p.set_defaults(func=run)


def _options(args):
    from latitude.errors import InputError
    from latitude.simulation import SimOptions

    if args.loggopsim_compat and args.rendezvous:
        raise InputError("--rendezvous", "does not apply with --loggopsim-compat (LogGOPSim has its own rendezvous)")
    if args.loggopsim_compat and args.no_cpu_serialization:
        raise InputError("--no-cpu-serialization", "does not apply with --loggopsim-compat")
    if args.samples is not None and args.samples < 1:
        raise InputError("--samples", f"expected a positive number of samples, got {args.samples}")
    if args.threads is not None and args.threads < 1:
        raise InputError("--threads", f"expected a positive number of threads, got {args.threads}")
    for flag in ("hist", "csv"):
        if getattr(args, flag) and not args.samples:
            raise InputError(f"--{flag}", "needs --samples N")
    return SimOptions(
        semantics="loggopsim" if args.loggopsim_compat else "design",
        cpu_serialization=not args.no_cpu_serialization,
        noise=tuple(args.noise or ()),
        noise_cosched=args.noise_cosched,
        seed=args.seed,
    )


def run(args) -> int:

    params = params_from_args(args)
    opts = _options(args)
    for d in opts.noise_dicts():  # validate before loading a large graph
        if d["target"] == "coll":
            from latitude.variability import read_samples

            read_samples(d["path"])
    window = None
    if args.timeline:
        from latitude.timeline import check_output, parse_window

        window = parse_window(args.timeline_window)
        check_output(args.timeline)
    graph = load_graph(args)
    if args.timeline:
        from latitude.timeline import check_size

        check_size(graph.info, window, args.timeline_max_events)
    sim = graph.simulate(params, opts, record=bool(args.timeline))
    baseline = graph.simulate(params, _quiet(opts)) if opts.noise else None
    samples = _samples(graph, params, opts, args) if args.samples else None
    timeline = None
    if args.timeline:
        from latitude.timeline import write_chrome_trace

        timeline = write_chrome_trace(args.timeline, sim.timeline, graph, sim, window, args.timeline_max_events)
    if samples is not None and args.hist:
        from latitude.plot_variability import runtime_histogram

        runtime_histogram(
            samples,
            args.hist,
            title=_title(graph, opts),
            baseline_ns=baseline.runtime_ns if baseline is not None else None,
        )
    if samples is not None and args.csv:
        samples.write_csv(args.csv)
    if args.json:
        _print_json(sim, baseline, samples, timeline)
    else:
        _print_tables(graph, sim, baseline, samples, timeline, args)
    return 0


def _quiet(opts):
    import dataclasses

    return dataclasses.replace(opts, noise=())


def _samples(graph, params, opts, args):
    import sys

    from latitude.progress import progress

    if not sys.stderr.isatty():
        return graph.simulate_samples(args.samples, params, opts, args.threads)
    with progress(f"simulating {args.samples} samples", total=args.samples) as update:
        return graph.simulate_samples(args.samples, params, opts, args.threads, progress=update)


def _title(graph, opts) -> str:
    import os

    from latitude.noise import describe, parse_all

    name = os.path.basename(graph.path or "graph")
    noise = "; ".join(describe(d) for d in parse_all(list(opts.noise), opts.noise_cosched)) or "no noise"
    return f"{name}: {noise}"


def _print_json(sim, baseline, samples, timeline) -> None:
    from latitude.report import print_json

    out = sim.to_dict()
    if baseline is not None:
        out["baseline_runtime_ns"] = baseline.to_dict()["runtime_ns"]
    if samples is not None:
        out["samples"] = samples.stats()
    if timeline is not None:
        out["timeline"] = timeline
    print_json(out)


def _print_tables(graph, sim, baseline, samples, timeline, args) -> None:
    from rich.table import Table

    from latitude.noise import describe
    from latitude.report import console
    from latitude.units import fmt_time

    con = console()
    info = graph.info
    head = Table(title="Simulation", show_header=False, box=None, pad_edge=False)
    head.add_column(style="bold")
    head.add_column()
    head.add_row("graph", f"{info['ranks']} ranks, {info['vertices']:,} ops, {info['messages']:,} messages")
    sem = (
        "LogGOPSim-compatible (integer ns)"
        if sim.options.semantics == "loggopsim"
        else "Latitude's model" + (", CPU serialization" if sim.options.cpu_serialization else ", no CPU serialization")
    )
    head.add_row("semantics", sem)
    head.add_row("parameters", sim.describe_params())
    for note in sim.notes:
        head.add_row("note", note)
    for d in sim.options.noise_dicts():
        head.add_row("noise", describe(d) + f"  (seed {sim.options.seed})")
    head.add_row("runtime", f"{fmt_time(sim.runtime_ns)}  ({_exact(sim.runtime_ns, sim)} ns)")
    if baseline is not None:
        head.add_row(
            "without noise",
            f"{fmt_time(baseline.runtime_ns)}  (noise adds {_pct(sim.runtime_ns, baseline.runtime_ns)})",
        )
    rate = sim.events / sim.raw["elapsed_s"] if sim.raw["elapsed_s"] > 0 else 0
    head.add_row("events", f"{sim.events:,}  ({rate / 1e6:.1f} M events/s)")
    if sim.raw["static_mismatches"]:
        head.add_row(
            "matching", f"{sim.raw['static_mismatches']:,} messages matched a different receive than in trace order"
        )
    if sim.raw["unfinished"]:
        head.add_row(
            "warning", f"{sim.raw['unfinished']:,} operations never completed (LogGOPSim reports the times anyway)"
        )
    if timeline:
        head.add_row(
            "timeline",
            f"{timeline['path']} ({timeline['events']:,} trace events, "
            f"critical path: {timeline['critical_slices']} phases, {timeline['critical_messages']} messages)",
        )
    con.print(head)
    con.print()
    con.print(_rank_table(sim))
    if samples is not None:
        con.print()
        con.print(_samples_table(samples, baseline or sim, args))


def _exact(t, sim) -> str:
    return f"{int(t):,}" if sim.integer_ns else f"{t:,.3f}"


def _pct(x, base) -> str:
    return f"{100.0 * (x - base) / base:+.2f} %" if base else "–"


def _rank_table(sim, limit: int = 16):
    from rich.table import Table

    from latitude.units import fmt_time

    ends = sim.rank_end_exact()
    order = sorted(range(len(ends)), key=lambda r: -ends[r])
    shown = range(len(ends)) if len(ends) <= limit else order[:limit]
    title = "End time per rank" if len(ends) <= limit else f"Latest {limit} of {len(ends)} ranks"
    t = Table(title=title)
    t.add_column("rank", justify="right")
    t.add_column("end", justify="right")
    t.add_column("ns", justify="right")
    for r in shown:
        t.add_row(str(r), fmt_time(ends[r]), _exact(ends[r], sim))
    return t


def _samples_table(samples, reference, args):
    from rich.table import Table

    from latitude.units import fmt_time

    st = samples.stats()
    t = Table(title=f"Runtime over {st['n']:,} samples (seed {samples.seed})")
    for col in ("statistic", "runtime", "vs. noise-free"):
        t.add_column(col, justify="right")
    base = reference.runtime_ns
    for key in ("p50", "p90", "p99", "max", "mean", "min"):
        v = st[f"{key}_ns"]
        t.add_row(key, fmt_time(v), _pct(v, base))
    t.add_row(
        "std", fmt_time(st["std_ns"]), f"{100 * st['std_ns'] / st['mean_ns']:.2f} % of mean" if st["mean_ns"] else "–"
    )
    return t
