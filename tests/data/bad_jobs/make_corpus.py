#!/usr/bin/env python3
"""Write the job-file error corpus: one file per case and expected.txt (`NAME LINE: message`,
LINE `-` for errors about the whole file). `latitude generate` must report exactly these
(tests/test_generate.py). Run from anywhere: python3 make_corpus.py"""

import os

J = "[JOB] a\n[RANKS] 0-3\n"  # a valid job head: motif lines then sit on line 3

CASES = [
    (
        "no_job",
        b"# only a comment\n\n",
        "-",
        "no [JOB] in the file; expected [JOB] name, [RANKS] list and [MOTIF] lines",
    ),
    ("not_utf8", b"[JOB] a\xff\n", "-", "not UTF-8 text; expected a job file"),
    ("text_line", "[JOB] a\nhello world\n", 2, "expected a [JOB], [RANKS], [ITERATIONS] or [MOTIF] line, got 'hello'"),
    ("unclosed_tag", "[JOB a\n", 1, "expected a [JOB], [RANKS], [ITERATIONS] or [MOTIF] line, got '[JOB'"),
    (
        "unknown_section",
        "[JOB] a\n[NODES] 0-3\n",
        2,
        "unknown section '[NODES]' (expected [JOB], [RANKS], [ITERATIONS] or [MOTIF])",
    ),
    ("lowercase_section", "[job] a\n", 1, "unknown section '[job]' (expected [JOB], [RANKS], [ITERATIONS] or [MOTIF])"),
    ("ranks_before_job", "[NID_LIST] 0-3\n", 1, "[NID_LIST] before the first [JOB]"),
    ("motif_before_job", "# x\n[MOTIF] barrier\n", 2, "[MOTIF] before the first [JOB]"),
    ("iterations_before_job", "[ITERATIONS] 3\n", 1, "[ITERATIONS] before the first [JOB]"),
    ("job_no_name", "[JOB]\n", 1, "expected a job name after [JOB]"),
    ("job_two_words", "[JOB_NAME] my job\n", 1, "expected only a job name after [JOB_NAME], got 2 words"),
    ("job_bad_name", "[JOB] a/b\n", 1, "a job name is letters, digits, '_', '.' and '-', got 'a/b'"),
    ("job_duplicate", J + "[MOTIF] barrier\n[JOB] a\n", 4, "job 'a' is already defined on line 1"),
    ("job_no_ranks", "[JOB] a\n[JOB] b\n", 1, "job 'a' has no [RANKS] line"),
    ("job_no_motifs", "\n" + J, 2, "job 'a' has no [MOTIF] lines"),
    ("ranks_twice", J + "[RANKS] 4-7\n", 3, "job 'a' already has a rank list"),
    ("ranks_missing", "[JOB] a\n[RANKS]\n", 2, "expected a rank list such as 0-15,32-47 after [RANKS]"),
    (
        "ranks_spaces",
        "[JOB] a\n[RANKS] 0-3, 8\n",
        2,
        "expected only a rank list such as 0-15,32-47 after [RANKS], got 2 words",
    ),
    ("ranks_bad_item", "[JOB] a\n[RANKS] 0-3,x\n", 2, "expected a rank list such as 0-15,32-47, got 'x' in '0-3,x'"),
    ("ranks_empty_item", "[JOB] a\n[RANKS] 0-3,,5\n", 2, "expected a rank list such as 0-15,32-47, got '' in '0-3,,5'"),
    ("ranks_reversed", "[JOB] a\n[RANKS] 5-3\n", 2, "empty rank range '5-3' (the end is below the start)"),
    ("ranks_duplicate", "[JOB] a\n[RANKS] 0-3,2,9,9\n", 2, "rank 2 is listed twice in '0-3,2,9,9'"),
    (
        "ranks_too_large",
        "[JOB] a\n[RANKS] 16777216\n",
        2,
        "expected a rank list such as 0-15,32-47, got '16777216' in '16777216'",
    ),
    (
        "ranks_overlap",
        J + "[MOTIF] barrier\n[JOB] b\n[RANKS] 8,3\n",
        5,
        "rank 3 is already in job 'a' (line 1); jobs use disjoint ranks",
    ),
    ("iterations_zero", "[JOB] a\n[ITERATIONS] 00\n", 2, "[ITERATIONS]: must be at least 1, got '00'"),
    ("iterations_float", "[JOB] a\n[ITERATIONS] 1e3\n", 2, "[ITERATIONS]: expected a whole number, got '1e3'"),
    (
        "iterations_huge",
        "[JOB] a\n[ITERATIONS] 1000000001\n",
        2,
        "[ITERATIONS]: '1000000001' is larger than 1000000000",
    ),
    ("iterations_twice", "[JOB] a\n[ITERATIONS] 2\n[ITERATIONS] 3\n", 3, "job 'a' already has [ITERATIONS]"),
    ("motif_before_ranks", "[JOB] a\n[MOTIF] barrier\n[RANKS] 0-3\n", 2, "[MOTIF] before the [RANKS] line of job 'a'"),
    ("motif_no_name", J + "[MOTIF]\n", 3, "expected a motif name after [MOTIF]"),
    (
        "motif_unknown",
        J + "[MOTIF] Stencil x=1\n",
        3,
        "unknown motif 'stencil' (known: compute, pingpong, halo2d, halo3d, sweep3d, allreduce, bcast, reduce, alltoall, barrier, incast)",
    ),
    ("param_not_kv", J + "[MOTIF] halo2d px\n", 3, "halo2d: expected key=value, got 'px'"),
    ("param_empty_value", J + "[MOTIF] halo2d px=\n", 3, "halo2d: expected key=value, got 'px='"),
    ("param_uppercase_key", J + "[MOTIF] halo2d PX=2\n", 3, "halo2d: expected key=value, got 'PX=2'"),
    (
        "param_unknown",
        J + "[MOTIF] halo2d z=8\n",
        3,
        "halo2d: unknown parameter 'z' (known: px, py, x, y, periodic, compute, iterations, every)",
    ),
    (
        "param_twice",
        J + "[MOTIF] barrier iterations=2 iterations=3\n",
        3,
        "barrier: parameter 'iterations' given twice",
    ),
    ("count_word", J + "[MOTIF] halo3d px=two\n", 3, "halo3d: px: expected a whole number, got 'two'"),
    ("count_zero", J + "[MOTIF] halo3d px=0\n", 3, "halo3d: px: must be at least 1, got '0'"),
    ("every_zero", J + "[MOTIF] barrier every=0\n", 3, "barrier: every: must be at least 1, got '0'"),
    ("generic_first", J + "[MOTIF] halo2d px=x iterations=0\n", 3, "halo2d: iterations: must be at least 1, got '0'"),
    (
        "size_unit",
        J + "[MOTIF] pingpong bytes=8XB\n",
        3,
        "pingpong: bytes: unknown size unit 'XB' in '8XB' (use B, KiB, MiB, GiB, KB, MB, GB)",
    ),
    ("size_fraction", J + "[MOTIF] pingpong bytes=1.3\n", 3, "pingpong: bytes: '1.3' is not a whole number of bytes"),
    ("size_too_big", J + "[MOTIF] alltoall bytes=2GiB\n", 3, "alltoall: bytes: '2GiB' is larger than 1GiB"),
    (
        "size_negative",
        J + "[MOTIF] alltoall bytes=-8\n",
        3,
        "alltoall: bytes: expected a size such as 64KiB or 4096, got '-8'",
    ),
    (
        "size_two_dots",
        J + "[MOTIF] alltoall bytes=1.2.3KiB\n",
        3,
        "alltoall: bytes: expected a size such as 64KiB or 4096, got '1.2.3KiB'",
    ),
    (
        "duration_unit",
        J + "[MOTIF] compute time=5h\n",
        3,
        "compute: time: unknown time unit 'h' in '5h' (use ns, us, ms, s)",
    ),
    (
        "duration_too_long",
        J + "[MOTIF] barrier compute=2000000s\n",
        3,
        "barrier: compute: '2000000s' is longer than 1000000s",
    ),
    ("compute_no_time", J + "[MOTIF] compute dist=gaussian sd=1us\n", 3, "compute: missing time=DURATION"),
    (
        "compute_dist",
        J + "[MOTIF] compute time=1us dist=poisson\n",
        3,
        "compute: dist: expected const, gaussian, uniform or lognormal, got 'poisson'",
    ),
    ("compute_no_sd", J + "[MOTIF] compute time=1us dist=gaussian\n", 3, "compute: dist=gaussian needs sd="),
    (
        "compute_sd_uniform",
        J + "[MOTIF] compute time=1us dist=uniform sd=1us spread=1us\n",
        3,
        "compute: sd applies only to dist=gaussian",
    ),
    (
        "compute_spread",
        J + "[MOTIF] compute time=1us dist=uniform spread=2us\n",
        3,
        "compute: spread must not exceed time (durations are not negative)",
    ),
    (
        "compute_sigma_range",
        J + "[MOTIF] compute time=1us dist=lognormal sigma=20\n",
        3,
        "compute: sigma: '20' is outside (0, 10]",
    ),
    (
        "compute_sigma_word",
        J + "[MOTIF] compute time=1us dist=lognormal sigma=1us\n",
        3,
        "compute: sigma: expected a number such as 0.25, got '1us'",
    ),
    (
        "compute_lognormal_zero",
        J + "[MOTIF] compute time=0 dist=lognormal sigma=1\n",
        3,
        "compute: dist=lognormal needs time > 0",
    ),
    (
        "compute_vary",
        J + "[MOTIF] compute time=1us vary=always\n",
        3,
        "compute: vary: expected call or rank, got 'always'",
    ),
    ("halo_periodic", J + "[MOTIF] halo2d periodic=yes\n", 3, "halo2d: periodic: expected 0 or 1, got 'yes'"),
    (
        "halo_grid",
        J + "[MOTIF] halo2d px=4 py=2\n",
        3,
        "halo2d: the given grid dimensions need more ranks than the job has (4)",
    ),
    (
        "halo_grid_huge",
        J + "[MOTIF] halo3d px=1000000000 py=1000000000 pz=1000000000\n",
        3,
        "halo3d: the given grid dimensions need more ranks than the job has (4)",
    ),
    ("sweep_kba", J + "[MOTIF] sweep3d kba=5\n", 3, "sweep3d: kba=5 does not divide nz=64"),
    ("sweep_mmi", J + "[MOTIF] sweep3d angles=6 mmi=4\n", 3, "sweep3d: mmi=4 does not divide angles=6"),
    (
        "sweep_grid",
        J + "[MOTIF] sweep3d px=5\n",
        3,
        "sweep3d: the given grid dimensions need more ranks than the job has (4)",
    ),
    (
        "alg_unknown",
        J + "[MOTIF] allreduce alg=ring2\n",
        3,
        "allreduce: alg: unknown algorithm 'ring2' for allreduce (choose from recdoub, ring, rabenseifner, reduce_bcast, dissemination, schedgen)",
    ),
    (
        "alg_other_collective",
        J + "[MOTIF] bcast alg=ring\n",
        3,
        "bcast: alg: unknown algorithm 'ring' for bcast (choose from binomial, binary, linear, chain, scatter_allgather, schedgen)",
    ),
    (
        "alg_none",
        J + "[MOTIF] barrier alg=none\n",
        3,
        "barrier: alg: unknown algorithm 'none' for barrier (choose from dissemination, recdoub, linear, schedgen)",
    ),
    (
        "alg_segment",
        J + "[MOTIF] allreduce alg=ring:1KiB\n",
        3,
        "allreduce: alg: only chain takes a segment size, got 'ring:1KiB'",
    ),
    ("alg_chain_zero", J + "[MOTIF] reduce alg=chain:0\n", 3, "reduce: alg: the chain segment must be at least 1 byte"),
    (
        "alg_chain_size",
        J + "[MOTIF] reduce alg=chain:1x\n",
        3,
        "reduce: alg: unknown size unit 'x' in '1x' (use B, KiB, MiB, GiB, KB, MB, GB)",
    ),
    (
        "barrier_bytes",
        J + "[MOTIF] barrier bytes=8\n",
        3,
        "barrier: unknown parameter 'bytes' (known: alg, compute, iterations, every)",
    ),
    ("root_range", J + "[MOTIF] bcast root=4\n", 3, "bcast: root 4 is outside the job's 4 ranks"),
    ("incast_root", J + "[MOTIF] incast root=9\n", 3, "incast: root 9 is outside the job's 4 ranks"),
    ("pingpong_alone", "[JOB] a\n[RANKS] 7\n[MOTIF] pingpong\n", 3, "pingpong: needs at least 2 ranks, the job has 1"),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for f in os.listdir(here):
        if f.endswith(".job"):
            os.remove(os.path.join(here, f))
    lines = []
    for name, text, line, msg in CASES:
        data = text if isinstance(text, bytes) else text.encode()
        with open(os.path.join(here, f"{name}.job"), "wb") as f:
            f.write(data)
        lines.append(f"{name} {line}: {msg}")
    with open(os.path.join(here, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
