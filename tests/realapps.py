"""Real MPI applications from Debian packages, ready to run with 2 ranks in a directory:
HPCC (a small hpccinf.txt), Quantum ESPRESSO pw.x (Si, 2 atoms, the pseudopotential Debian
ships in quantum-espresso-data), NetPIPE (netpipe-openmpi) and LAMMPS (lmp, the LJ melt of
bench/lammps). Each `App` knows its command and writes its inputs; `available()` says what
is installed."""

from __future__ import annotations

import gzip
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SI_PSEUDO = Path("/usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz")

SI_SCF = """\
 &control
    calculation = 'scf'
    prefix = 'si'
    pseudo_dir = './pseudo'
    outdir = './tmp'
    disk_io = 'none'
 /
 &system
    ibrav = 2, celldm(1) = 10.20, nat = 2, ntyp = 1, ecutwfc = 18.0
 /
 &electrons
    conv_thr = 1.0d-8
 /
ATOMIC_SPECIES
 Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 4 4 4 1 1 1
"""


def hpccinf(n: int = 1000, nb: int = 80, p: int = 1, q: int = 2) -> str:
    """HPCC's input: one problem size N, block NB, one P×Q grid (HPL's format; the other
    benchmarks size themselves from N)."""
    return f"""HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}         Ns
1            # of NBs
{nb}           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}            Ps
{q}            Qs
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
0                               Number of additional problem sizes for PTRANS
1200 10000 30000                values of N
0                               number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64        values of NB
"""


@dataclass(frozen=True)
class App:
    name: str
    program: str  # executable on PATH
    args: tuple = ()
    # lines of its stdout that legitimately change from run to run (besides timing lines)
    varying: tuple = ()

    def available(self) -> bool:
        if not shutil.which(self.program):
            return False
        return self.name != "qe" or SI_PSEUDO.exists()

    def prepare(self, d: Path) -> list[str]:
        """Write the inputs into `d` (the run's working directory); the program's argv."""
        d.mkdir(parents=True, exist_ok=True)
        if self.name == "hpcc":
            (d / "hpccinf.txt").write_text(hpccinf())
        elif self.name == "qe":
            (d / "pseudo").mkdir(exist_ok=True)
            (d / "pseudo" / "Si.pz-vbc.UPF").write_bytes(gzip.decompress(SI_PSEUDO.read_bytes()))
            (d / "si.scf.in").write_text(SI_SCF)
        return [shutil.which(self.program), *(a.format(dir=d, root=ROOT) for a in self.args)]


APPS = {
    "hpcc": App("hpcc", "hpcc"),
    "qe": App(
        "qe",
        "pw.x",
        ("-in", "si.scf.in"),
        varying=(r"^\s*(Program PWSCF|This run was terminated|Parallel version|Message from routine|Threads)",),
    ),
    "netpipe": App("netpipe", "NPopenmpi", ("-u", "2048", "-n", "100", "-p", "0", "-o", "{dir}/np.out")),
    "lammps": App(
        "lammps",
        "lmp",
        ("-in", "{root}/bench/lammps/in.lj", "-log", "none", "-var", "x", "0.5", "-var", "steps", "100"),
    ),
}
