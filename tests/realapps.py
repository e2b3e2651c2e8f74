"""Inputs for the real applications the tests run (Debian's packages, 2 ranks, small):
HPCC (`hpcc`, HPL N = 1000 on P x Q = 1 x 2), Quantum ESPRESSO (`pw.x`, an SCF of bulk
silicon, 2 atoms, with a pseudopotential Debian ships), NetPIPE (`NPopenmpi`, netpipe-openmpi)
and LAMMPS (`lmp`, the LJ melt of bench/lammps). Each `*_case(dir)` writes the input into
`dir` and returns the command line (without the launcher) and the working directory; `APPS`
names them with what is installed and which output lines legitimately vary."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HPCC = shutil.which("hpcc")
PW = shutil.which("pw.x")
NETPIPE = shutil.which("NPopenmpi")
LAMMPS = shutil.which("lmp")
ROOT = Path(__file__).resolve().parent.parent
PSEUDO_DIR = Path("/usr/share/espresso/pseudo")
SI_PSEUDO = "Si.pz-vbc.UPF"  # quantum-espresso-data, installed with quantum-espresso

# HPL's input with everything HPCC needs; N = 1000 keeps a run to about a second on 2 cores
HPCCINF = """HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}         Ns
1            # of NBs
80           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"""

SI_SCF = """&control
  calculation = 'scf'
  prefix = 'si'
  outdir = './out'
  pseudo_dir = '{pseudo}'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1,
  ecutwfc = 12.0
/
&electrons
  conv_thr = 1.0d-8
/
ATOMIC_SPECIES
 Si 28.086 {si}
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 4 4 4 1 1 1
"""


def hpcc_case(d: Path, n: int = 1000) -> tuple[list[str], Path]:
    """hpcc reads hpccinf.txt from its working directory and writes hpccoutf.txt there."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "hpccinf.txt").write_text(HPCCINF.format(n=n))
    return [HPCC], d


def qe_case(d: Path) -> tuple[list[str], Path]:
    d.mkdir(parents=True, exist_ok=True)
    (d / "si.in").write_text(SI_SCF.format(pseudo=PSEUDO_DIR, si=SI_PSEUDO))
    return [PW, "-in", "si.in"], d


def have_hpcc() -> bool:
    return HPCC is not None


def have_qe() -> bool:
    return PW is not None and (PSEUDO_DIR / SI_PSEUDO).is_file()


def netpipe_case(d: Path) -> tuple[list[str], Path]:
    """Ping-pong up to 2 KiB, 100 round trips per size, no perturbation."""
    d.mkdir(parents=True, exist_ok=True)
    return [NETPIPE, "-u", "2048", "-n", "100", "-p", "0", "-o", str(d / "np.out")], d


def lammps_case(d: Path) -> tuple[list[str], Path]:
    """The LJ melt on a 10 x 20 x 20 fcc box (16,000 atoms), 100 steps, no log file."""
    d.mkdir(parents=True, exist_ok=True)
    return [LAMMPS, "-in", str(ROOT / "bench/lammps/in.lj"), "-log", "none", "-var", "x", "0.5"], d


@dataclass(frozen=True)
class App:
    name: str
    case: Callable[[Path], tuple[list[str], Path]]
    available: Callable[[], bool]
    # stdout lines that legitimately change from run to run (besides lines reporting times)
    varying: tuple = ()
    # a results file the program appends to in its working directory (HPCC's hpccoutf.txt holds
    # measurements only): the verdicts of its checks (PASSED/FAILED) are the run's results
    results_file: str | None = None
    # how far the ΔL = 0 prediction may be from the app's own traced run, and the prediction at
    # L₀ + ΔL from the injected run (20 %: a loaded machine); None: not yet a claim for this
    # app (the pipeline is still checked end to end and the error printed)
    predict_bound: float | None = 0.10
    inject_bound: float | None = 0.20

    def results(self, cwd: Path) -> str:
        """The verdicts in the results file, which is removed (the next run starts afresh)."""
        if not self.results_file or not (cwd / self.results_file).exists():
            return ""
        f = cwd / self.results_file
        # PTRANS adds a "CPU" line to each "WALL" line only when the process clock ticked
        # during the transpose: how many appear depends on timing, not on the results
        text = "\n".join(line for line in f.read_text(errors="replace").splitlines() if not line.startswith("CPU "))
        verdicts = re.findall(r"\b(PASSED|FAILED)\b", text)
        f.unlink()
        return "".join(f"{self.results_file}: {v}\n" for v in verdicts)


APPS = {
    # HPCC N = 1000: on an idle 2-core machine the model predicted 15-27 % below the traced run
    # (-15.6, -17.6, -27.3 %) before two fixes that both raise the prediction against the traced
    # run: RandomAccess's work-loop polls stay computation (they had made its two sections run
    # 24-26 % fast, ~9 % of the whole run) and the traced run counts from the last MPI_Init end;
    # the suite also predicts the traced run with a machine calibrated under the tracer
    # (docs/validation.md, "Where HPCC's and NetPIPE's predictions missed"). Measured after
    # them on the idle machine, 6 runs: -5.0, -7.1, -8.2, -11.3, -6.8, -14.3 % at ΔL = 0 and
    # -16 to -36 % against the run injected at ΔL = 20 µs (the injected HPCC runs longer than
    # the prediction: the injector's own cost per poll, since cut from 183 to 109 ns per
    # unsuccessful MPI_Test against MPI's 80, and a poll interval per polled message the model
    # loses at ΔL > 0, since moved past the Test that ends the loop; docs/validation.md, "Where
    # an injected run's time goes"). Most of the growth the model does not predict is b_eff's:
    # the injector holds 1-2 MiB rendezvous messages ~0.6 ms too long (same page, "HPCC at
    # ΔL = 20 µs, section by section"). On 2026-12-06, with compressed traces deflated at the
    # end of the run instead of inside the calls that filled a buffer: -7.2, -7.6, -7.1 % at
    # ΔL = 0 in three suite runs on the idle machine. The bounds keep a margin over these
    # spreads; 15 % rather than the 10 %, because one calibration's machine state
    # moves HPCC's prediction by up to 17 % (docs/validation.md). 2026-12-07, after the
    # calibration fixes beside NetPIPE's below (they lower every prediction of a traced run
    # by the tracer's ~50 ns per call): -10.4, -4.5, -9.1, -9.9, -12.0 % (the last with its
    # probe 2.12x the machine's, warned). Later on 2026-12-07, with the suite calibrated up to
    # 2 MiB (b_eff's messages) and two messages in flight at once priced one after the other
    # (nic_serialization, measured: 1.9x one here; docs/calibration.md), the 10 %:
    # -6.6, -4.3, -8.5 (warned), and -15.0 (warned, 0.82x) then +12.1 then +4.1 % in four suite
    # runs; three tries keep a run of the machine's other states from failing it. Later that
    # day, with the calibration's protocol classes (docs/calibration.md): -7.2 (warned, 2.18x),
    # +2.4, -4.2, -0.4, -7.8 (warned, 2.07x), -4.1 % at ΔL = 0 (one more run, disturbed by other
    # work on the machine, warned three times and skipped), and at ΔL = 20 µs +8.1, +3.2,
    # +0.1, -4.2, -0.3, +0.3 % (it had been -7 to +22 %): 25 % there, down from 45 %.
    "hpcc": App("hpcc", hpcc_case, have_hpcc, results_file="hpccoutf.txt", predict_bound=0.10, inject_bound=0.25),
    # QE pw.x: until 2026-12-06 anywhere from -3.1 to -14.0 % at ΔL = 0 (20 % bound). The
    # traced run's MPI time exceeded the model's in small collectives, but in rare 2 ms stalls,
    # not per call: the tracer deflated each full 1 MiB buffer inside the call that filled it
    # (~2 ms, in the traced run and in no graph). `latitude calibrate` measures the call cost K
    # at 0 here. With the deflate moved to the end of the run: -1.0, -0.7, -3.1 % in three
    # suite runs (and -3.2 to -3.9 % in three traces priced by another machine file), so the
    # issue's 10 %. 2026-12-07 after the calibration fixes: -4.4, -7.5, -2.8, -6.6, -6.8 %.
    "qe": App(
        "qe",
        qe_case,
        have_qe,
        (r"^\s*(Program PWSCF|This run was terminated|Parallel version|Message from routine|Threads)",),
        predict_bound=0.10,
    ),
    # NetPIPE with -n 100 repeats a fixed number of times (27,032 calls in every run): ~10 ms of
    # back-to-back ping-pongs, all small messages, so its prediction moves by the whole factor
    # (~2x) between the machine states a traced run can land in (probe 2.0-2.2x the
    # calibration's: warned, and a run of only such traces is skipped). Until 2026-12-06 its
    # traced runs also lost ~2 ms per deflated buffer; until 2026-12-07 the calibration priced
    # the tracer's own work twice (+12 to +27 %). Then, with the probe agreeing, it was -8 to
    # -23 % (12 traces, two calibrations): Open MPI's shared memory sends up to 256 B inline
    # and copies larger payloads into a fragment (the traced MPI_Send: 230-280 ns up to 256 B,
    # 620-880 ns from 384 B), a step the calibration's sizes straddled and its class fit
    # refused whenever one run of five came out in the other machine state. With 128-768 B
    # measured and the step judged by its own spread over the runs (docs/calibration.md):
    # -7.2, -9.5, -9.8, -2.3, +0.3 % in five suite runs whose probe agreed (two more suite
    # runs had every trace at 2.0-2.2x: skipped), and -2.1 to +1.5 % on nine of the twelve
    # earlier traces re-priced (the other three -5.9 to -15.8 %: stretches of 0.1-0.4 ms inside
    # MPI that no message explains). 15 %, not the 10 %: -9.5 and -9.8 % are too
    # close to it, and their cause is not found yet (the run whose files were kept, in the
    # slow state, had its eager messages priced within 5 % of their measured round trips).
    "netpipe": App("netpipe", netpipe_case, lambda: NETPIPE is not None, predict_bound=0.15, inject_bound=0.20),
    "lammps": App("lammps", lammps_case, lambda: LAMMPS is not None),
}
