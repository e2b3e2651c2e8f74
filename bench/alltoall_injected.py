#!/usr/bin/env python3
"""What the latency injector adds to MPI_Alltoall of 2 MiB blocks at ΔL = 0 (docs/validation.md,
"alltoall's injected runs at ΔL = 0").

    flock -x /work/.quiet.lock python3 bench/alltoall_injected.py [--blocks 10] [--per 10] [--lib SO]

One program, run plain and under the injector (ΔL = 0, eager limit 4040 B as `latitude
validate` calibrates it), with caches cold (a 16 MiB sweep before each call) and warm. In one
process it times, in interleaved blocks of --per calls (order reversed every other block):

  MPI_Alltoall          through the injector when it is preloaded (its own point-to-point
                        schedule: a copy of the own block, then a Sendrecv with the peer)
  PMPI_Alltoall         Open MPI's own, which the injector does not wrap
  PMPI_exch+memcpy      PMPI_Irecv + PMPI_Isend + memcpy of the own block + PMPI_Waitall
  MPI_exch+memcpy       the same exchange through the injector
  MPI_Sendrecv+memcpy   memcpy of the own block, then MPI_Sendrecv through the injector
  memcpy                the own block's copy alone

Per variant the fastest call and the median (of the slower rank). Plain, the MPI_ and PMPI_
rows are the same calls. --lib runs another build of the injector (e.g. an older one) in
place of the current one.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
BLOCK = 262144  # doubles per destination: apps/alltoall --n 1024 on 2 ranks (2 MiB)
HARNESS_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static int rank, cold;
static size_t blk, nscr = 2u << 20;
static double *s, *r, *scr;
static void mkcold(void) { if (!cold) return; for (size_t q = 0; q < nscr; q += 8) scr[q] += 1; for (size_t q = 0; q < 2 * blk; q += 8) s[q] += 1; }
static void v_mpi(void) { MPI_Alltoall(s, blk, MPI_DOUBLE, r, blk, MPI_DOUBLE, MPI_COMM_WORLD); }
static void v_pmpi(void) { PMPI_Alltoall(s, blk, MPI_DOUBLE, r, blk, MPI_DOUBLE, MPI_COMM_WORLD); }
static void v_pex(void) { MPI_Request q[2]; int p = 1 - rank;
    PMPI_Irecv(r + blk * p, blk, MPI_DOUBLE, p, 5, MPI_COMM_WORLD, &q[0]);
    PMPI_Isend(s + blk * p, blk, MPI_DOUBLE, p, 5, MPI_COMM_WORLD, &q[1]);
    memcpy(r + blk * rank, s + blk * rank, blk * 8);
    PMPI_Waitall(2, q, MPI_STATUSES_IGNORE); }
static void v_iex(void) { MPI_Request q[2]; int p = 1 - rank;
    memcpy(r + blk * rank, s + blk * rank, blk * 8);
    MPI_Irecv(r + blk * p, blk, MPI_DOUBLE, p, 5, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(s + blk * p, blk, MPI_DOUBLE, p, 5, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE); }
static void v_isr(void) { int p = 1 - rank;
    memcpy(r + blk * rank, s + blk * rank, blk * 8);
    MPI_Sendrecv(s + blk * p, blk, MPI_DOUBLE, p, 6, r + blk * p, blk, MPI_DOUBLE, p, 6, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE); }
static void v_mem(void) { memcpy(r + blk * rank, s + blk * rank, blk * 8); }
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    blk = (size_t)atol(argv[1]); cold = atoi(argv[2]);
    int blocks = atoi(argv[3]), per = atoi(argv[4]);
    s = malloc(2 * blk * 8); r = malloc(2 * blk * 8); scr = malloc(nscr * 8);
    memset(s, 1, 2 * blk * 8); memset(r, 0, 2 * blk * 8); memset(scr, 0, nscr * 8);
    struct { const char *n; void (*f)(void); } v[] = {{"MPI_Alltoall", v_mpi}, {"PMPI_Alltoall", v_pmpi},
        {"PMPI_exch+memcpy", v_pex}, {"MPI_exch+memcpy", v_iex}, {"MPI_Sendrecv+memcpy", v_isr}, {"memcpy", v_mem}};
    int nv = 6;
    double *t = malloc(sizeof(double) * nv * blocks * per);
    for (int b = 0; b < blocks; b++)
        for (int k = 0; k < nv; k++) {
            int kk = b % 2 ? nv - 1 - k : k;
            for (int i = 0; i < per; i++) {
                mkcold(); PMPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime(); v[kk].f(); t[(kk * blocks + b) * per + i] = MPI_Wtime() - t0;
            }
        }
    for (int k = 0; k < nv; k++) {
        double *x = t + k * blocks * per, mine[2], mx[2];
        int n = blocks * per;
        qsort(x, n, sizeof *x, cmp);
        mine[0] = x[0]; mine[1] = x[n / 2];
        PMPI_Reduce(mine, mx, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) printf("%s %.1f %.1f\n", v[k].n, 1e6 * mx[0], 1e6 * mx[1]);
    }
    MPI_Finalize();
    return 0;
}
"""


def run(cmd: list, env: dict) -> dict:
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return {w[0]: (float(w[1]), float(w[2])) for w in (ln.split() for ln in out.splitlines()) if len(w) == 3}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--per", type=int, default=10, help="calls per variant and block")
    ap.add_argument("--lib", help="the injector library to preload (default: this checkout's, built and cached)")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--mpicc", default="mpicc")
    a = ap.parse_args()
    from latitude import inject

    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    launch = inject.Launch.resolve([a.mpirun, "-np", "2"])
    lib = a.lib or str(launch.build(inject.INJECT_LIB))
    with tempfile.TemporaryDirectory(prefix="a2a-inj-") as tmp:
        with open(os.path.join(tmp, "h.c"), "w") as f:
            f.write(HARNESS_C)
        subprocess.run([a.mpicc, "-O2", "-o", f"{tmp}/h", f"{tmp}/h.c"], check=True)
        inj = ["-x", f"LD_PRELOAD={lib}", "-x", "LATITUDE_INJECT_DELTA_L=0", "-x", "LATITUDE_INJECT_EAGER_LIMIT=4040"]
        with open("/proc/loadavg") as f:
            print(f"load average before: {f.read().split()[0]}")
        for cold in (1, 0):
            args = [f"{tmp}/h", str(BLOCK), str(cold), str(a.blocks), str(a.per)]
            plain = run([a.mpirun, "-np", "2", *args], env)
            injected = run([a.mpirun, *inj, "-np", "2", *args], env)
            print(f"\n{'cold' if cold else 'warm'} caches, 2 MiB blocks, µs per call: fastest / median")
            print("| variant | plain | injected, ΔL = 0 |\n|---|---:|---:|")
            for k in plain:
                print(f"| {k} | {plain[k][0]:.0f} / {plain[k][1]:.0f} | {injected[k][0]:.0f} / {injected[k][1]:.0f} |")
        with open("/proc/loadavg") as f:
            print(f"\nload average after: {f.read().split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
