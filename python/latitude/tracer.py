"""Build, cache and launch the PMPI tracer (C sources in ``tracer/``).

A PMPI library must be compiled against the MPI it wraps, so the tracer is built on first
use with that MPI's ``mpicc`` into a cache keyed by the compiler wrapper, the MPI library
and the tracer sources. Launching passes the library to every rank through the launcher's
own environment options (Open MPI ``-x``, MPICH/Intel Hydra ``-genv``, Slurm
``--export``) rather than to the launcher process itself. Reusable by the latency injector.

    info = probe_mpi(find_mpicc(["mpirun", "-np", "4", "./app"]))
    lib = build_tracer(info)
    argv, env = launch_command(["mpirun", "-np", "4", "./app"], lib, {"LATITUDE_TRACE_PREFIX": ...})
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from latitude.errors import InputError, ToolError
from latitude.outputs import cache_dir

LIB_NAME = "liblatitude_trace.so"
# The rank files `latitude trace` writes, and only those (not `pmpi-trace-rank-0-backup.txt`):
# gzip-compressed by default (`pmpi-trace-rank-0.txt.gz`), plain text with `--plain` or when
# the library is preloaded by hand without LATITUDE_TRACE_COMPRESS (`pmpi-trace-rank-0.txt`).
TRACE_NAME = re.compile(r"pmpi-trace-rank-(\d+)\.txt(?:\.gz)?")
GZIP_MAGIC = b"\x1f\x8b"
FAMILIES = ("openmpi", "mpich", "intel")


@dataclass
class MPIInfo:
    """What `mpicc` says about the MPI it compiles for."""

    family: str  # "openmpi", "mpich", "intel" or "unknown"
    mpicc: str  # absolute path of the compiler wrapper
    show: str  # its `-show` output: the real compile/link line
    library: str | None  # the MPI shared library it links (resolved path)


# ---- sources ----
def tracer_sources() -> Path:
    """The tracer's C sources: shipped inside the package, or the checkout's ``tracer/``."""
    here = Path(__file__).resolve().parent
    for cand in (here / "_tracer", here.parent.parent / "tracer"):
        if (cand / "Makefile").is_file() and (cand / "lt.h").is_file():
            return cand
    raise ToolError(
        "the tracer's C sources are missing from this installation "
        f"(looked in {here / '_tracer'} and {here.parent.parent / 'tracer'})"
    )


def build_inputs(src: Path) -> list[Path]:
    """Everything the build reads: C sources, the wrapper table and its generator, Makefile."""
    return sorted(f for f in src.iterdir() if f.suffix in (".c", ".h", ".tbl", ".py") or f.name == "Makefile")


def source_hash(src: Path) -> str:
    h = hashlib.sha256()
    for f in build_inputs(src):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


# ---- which MPI ----
def _run(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise InputError(cmd[0], "not found (is it on PATH?)") from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"`{' '.join(cmd)}` did not answer within {timeout:.0f} s") from None


def _symlink_names(path: str) -> list[Path]:
    """path, then every name its symlink chain passes through (Debian alternatives)."""
    out, p = [], Path(path)
    for _ in range(16):
        out.append(p)
        if not p.is_symlink():
            break
        p = (p.parent / os.readlink(p)).absolute()
    return out


def find_mpicc(launcher_argv: list[str], explicit: str | None = None) -> str:
    """The mpicc that belongs to the launcher: `mpiexec.mpich` -> `mpicc.mpich`,
    `/opt/mpi/bin/mpirun` -> `/opt/mpi/bin/mpicc`; else `mpicc` on PATH."""
    if explicit:
        found = shutil.which(explicit)
        if not found:
            raise InputError("--mpicc", f"{explicit} not found")
        return found
    launcher = shutil.which(launcher_argv[0]) if launcher_argv else None
    if launcher and Path(launcher_argv[0]).name != "srun":
        for name in _symlink_names(launcher):
            m = re.fullmatch(r"(?:mpirun|mpiexec)(\..+)?", name.name)
            if m:
                cand = name.parent / f"mpicc{m.group(1) or ''}"
                if cand.exists():
                    return str(cand)
    found = shutil.which("mpicc")
    if not found:
        raise InputError("--mpicc", "no mpicc on PATH; install an MPI or give --mpicc PATH")
    return found


def family_of(text: str) -> str:
    """MPI family from `mpicc -show` or `<launcher> --version` output."""
    t = text.lower()
    if "intel(r) mpi" in t or "i_mpi" in t or "-lmpifort" in t:
        return "intel"
    if "open mpi" in t or "openmpi" in t or "open-rte" in t or "orterun" in t:
        return "openmpi"
    if "mpich" in t or "hydra" in t:
        return "mpich"
    return "unknown"


def _mpi_library(show: str) -> str | None:
    """The shared MPI library a `mpicc -show` line links (for the cache key)."""
    words = show.split()
    dirs = [w[2:] for w in words if w.startswith("-L")]
    dirs += ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"]
    for lib in (w[2:] for w in words if w.startswith("-l")):
        if lib.startswith("mpi"):
            for d in dirs:
                f = Path(d) / f"lib{lib}.so"
                if f.exists():
                    return str(f.resolve())
    return None


def probe_mpi(mpicc: str) -> MPIInfo:
    proc = _run([mpicc, "-show"])
    if proc.returncode != 0:  # Open MPI before 1.x only knows -showme
        proc = _run([mpicc, "-showme"])
    if proc.returncode != 0:
        raise ToolError(f"`{mpicc} -show` failed: {proc.stderr.strip()[:300]}")
    show = proc.stdout.strip()
    return MPIInfo(family_of(show + " " + mpicc), mpicc, show, _mpi_library(show))


def launcher_family(argv: list[str]) -> str:
    """ "openmpi", "mpich", "intel" (both Hydra), "srun" or "unknown" (run as is)."""
    if not argv:
        raise InputError("trace", "no launcher given (use: latitude trace -- mpirun -np 4 ./app)")
    name = Path(argv[0]).name
    if name == "srun":
        return "srun"
    if not re.fullmatch(r"(mpirun|mpiexec|orterun|prterun)(\..+)?|mpiexec\.hydra", name):
        return "unknown"
    path = shutil.which(argv[0])
    if not path:
        raise InputError(argv[0], "launcher not found (is it on PATH?)")
    names = " ".join(p.name for p in _symlink_names(path))
    fam = family_of(names)
    if fam == "unknown":
        proc = _run([path, "--version"], timeout=30)
        fam = family_of(proc.stdout + proc.stderr)
    return fam


def resolve_launch(argv: list[str], mpicc: str | None) -> tuple[str, MPIInfo]:
    """The launcher's MPI family and the mpicc that builds for it, refusing a pair that cannot
    meet (a library preloaded into the wrong MPI): Hydra's MPICH and Intel MPI mix."""
    family = launcher_family(argv)
    info = probe_mpi(find_mpicc(argv, mpicc))
    hydra = {"mpich", "intel"}
    if family in FAMILIES and info.family in FAMILIES and family != info.family and not {family, info.family} <= hydra:
        raise InputError(
            "--mpicc",
            f"{info.mpicc} builds for {info.family} but {argv[0]} launches {family}; pass the matching --mpicc",
        )
    return family, info


# ---- build ----
def cache_root() -> Path:
    return Path(cache_dir("tracer"))


def cache_key(info: MPIInfo, src: Path) -> str:
    h = hashlib.sha256()
    h.update(info.show.encode() + b"\0" + info.mpicc.encode() + b"\0")
    if info.library:
        st = os.stat(info.library)
        h.update(f"{info.library}:{st.st_size}:{int(st.st_mtime)}".encode())
    h.update(source_hash(src).encode())
    return h.hexdigest()[:20]


def build_tracer(info: MPIInfo, root: Path | None = None, force: bool = False, log=None, name: str = LIB_NAME) -> Path:
    """Compile the tracer for this MPI once; returns the cached library's path. `name` picks
    another artifact of the same sources (the latency injector, the calibration program)."""
    src = tracer_sources()
    target_dir = (root or cache_root()) / cache_key(info, src)
    lib = target_dir / name
    if name.endswith(".so") and any(c in str(lib) for c in " :\t\n"):
        raise InputError(
            str(target_dir.parent),
            "LD_PRELOAD cannot carry a library path with spaces or ':' (this build cache's); "
            "set LATITUDE_CACHE_DIR to a directory without them",
        )
    if lib.is_file() and not force:
        return lib
    if log:
        what = "the tracer" if name == LIB_NAME else name
        log(f"building {what} for {info.family} with {info.mpicc} (once, cached in {target_dir})")
    try:
        target_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(
            str(target_dir.parent), f"cannot create the build cache: {err.strerror} (set LATITUDE_CACHE_DIR)"
        ) from None
    with tempfile.TemporaryDirectory(dir=target_dir.parent, prefix=".build-") as tmp:
        # make sees relative paths only (the sources are copied next to the output), so a
        # cache or install path with spaces, '$(...)' or ':' is never parsed by make or a shell
        for f in build_inputs(src):
            shutil.copy(f, tmp)
        proc = subprocess.run(
            # PYTHON runs lt_gen.py, which writes the wrappers (standard library only)
            [
                "make",
                "-s",
                f"MPICC={make_word(info.mpicc)}",
                f"PYTHON={make_word(sys.executable)}",
                "OUT=.",
                f"./{name}",
            ],
            cwd=tmp,
            capture_output=True,
            text=True,
            errors="replace",
        )
        if proc.returncode != 0:
            raise ToolError(f"building {name} with {info.mpicc} failed:\n{proc.stdout}{proc.stderr}".rstrip())
        target_dir.mkdir(exist_ok=True)
        os.replace(Path(tmp) / name, lib)  # atomic: concurrent builds do not collide
    return lib


def make_word(path: str) -> str:
    """`path` as one word of a make recipe: quoted for the shell, `$` doubled for make (so
    `/opt/my mpi/$(evil)/mpicc` is run as that file, never expanded)."""
    if "\n" in path or "\0" in path:
        raise InputError("--mpicc", f"a compiler path cannot contain a newline: {path!r}")
    return shlex.quote(path).replace("$", "$$")


# ---- launch ----
def launch_command(argv: list[str], family: str, env: dict[str, str]) -> tuple[list[str], dict]:
    """The launcher command with `env` (LD_PRELOAD, LATITUDE_TRACE_*) passed to every rank,
    and the environment to run it in. An unknown launcher (or the program itself, run as a
    singleton) gets the variables in its own environment."""
    run_env = dict(os.environ)
    if family == "openmpi":
        opts = [x for k, v in env.items() for x in ("-x", f"{k}={v}")]
        return [argv[0], *opts, *argv[1:]], run_env
    if family in ("mpich", "intel"):
        opts = [x for k, v in env.items() for x in ("-genv", k, v)]
        return [argv[0], *opts, *argv[1:]], run_env
    if family == "srun":
        if any("," in v for v in env.values()):
            raise InputError("-o", "paths containing ',' cannot be passed through srun --export")
        exports = ",".join(f"{k}={v}" for k, v in env.items())
        return [argv[0], f"--export=ALL,{exports}", *argv[1:]], run_env
    run_env.update(env)
    return list(argv), run_env


def preload_value(lib: Path) -> str:
    """LD_PRELOAD for the ranks: our library first, keeping one the user already set."""
    prev = os.environ.get("LD_PRELOAD", "").strip()
    return f"{lib}:{prev}" if prev else str(lib)


def trace_env(lib: Path, outdir: Path, compress: bool = True, probe: bool = True) -> dict[str, str]:
    """The ranks' environment for tracing with `lib` into `outdir` (one file per rank),
    compressed (`.txt.gz`, what Latitude's tools write by default) or plain text. The library
    itself writes plain text unless LATITUDE_TRACE_COMPRESS says otherwise: it is set either way,
    so a value in the user's own environment does not decide. `probe`: ranks 0 and 1 take the
    machine-state probe in MPI_Init (tracer/lt_probe.h; it needs both ranks traced, which a
    launch through here guarantees and a library preloaded by hand may not)."""
    return {
        "LD_PRELOAD": preload_value(lib),
        "LATITUDE_TRACE_PREFIX": str(Path(outdir) / "pmpi-trace-rank-"),
        "LATITUDE_TRACE_COMPRESS": "1" if compress else "0",
        "LATITUDE_TRACE_PROBE": "1" if probe else "0",
    }


# ---- results ----
@dataclass
class TraceSummary:
    files: list[Path]
    ranks: int
    calls: int  # MPI calls made, the polls folded into "#@ polls" records included
    bytes: int
    endings: dict[str, int]  # "#@ end" reason -> number of ranks ("missing" if none)
    folded_polls: int = 0  # unsuccessful polls written as "#@ polls" records


def rank_of(path: Path) -> int:
    m = re.search(r"(\d+)\.txt(?:\.gz)?$", path.name)
    return int(m.group(1)) if m else -1


def trace_files(outdir: Path) -> list[Path]:
    """The rank files of the trace in `outdir`, by rank."""
    try:
        names = os.listdir(outdir)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted((Path(outdir) / n for n in names if TRACE_NAME.fullmatch(n)), key=rank_of)


def staging_dir(outdir: Path) -> Path:
    """A fresh directory inside `outdir` to trace into: the previous trace stays untouched
    until the new one is complete (same file system, so installing it is a rename)."""
    return Path(tempfile.mkdtemp(dir=outdir, prefix=".latitude-trace-"))


def install(staging: Path, outdir: Path) -> list[Path]:
    """Move the rank files traced into `staging` to `outdir`, removing the rank files of the
    trace they replace (a smaller run must not inherit old ranks); other files are not
    touched. Returns the installed files."""
    new = trace_files(staging)
    names = {f.name for f in new}
    for old in trace_files(outdir):
        if old.name not in names:
            old.unlink()
    for f in new:
        os.replace(f, Path(outdir) / f.name)
    return trace_files(outdir)


def is_compressed(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


class _Gunzip(io.RawIOBase):
    """The text of a gzip-compressed rank file, read in chunks. A stream that stops short (a
    rank killed outright: the tracer flushes whole blocks) ends where its data ends, as the
    tracer's plain files end at their zero bytes; `consumed` counts the compressed bytes read."""

    def __init__(self, path: Path):
        self._f = open(path, "rb")
        self._z = zlib.decompressobj(wbits=31)
        self._out = b""
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not self._out:
            if self._z.eof:  # the next gzip member starts after this one
                chunk, self._z = self._z.unused_data, zlib.decompressobj(wbits=31)
            else:
                chunk = self._z.unconsumed_tail  # output held back by the size limit
            if not chunk:
                chunk = self._f.read(1 << 20)
                if not chunk:
                    return 0
                self.consumed += len(chunk)
            try:
                self._out = self._z.decompress(chunk, 1 << 20)
            except zlib.error:
                return 0  # a damaged stream ends here; the reader says what it misses
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def close(self) -> None:
        self._f.close()
        super().close()


def open_trace(path: Path):
    """A rank file's text as a binary file object, compressed or not (told by its first
    bytes, not its name)."""
    return io.BufferedReader(_Gunzip(path), 1 << 20) if is_compressed(path) else open(path, "rb")


POLLS = re.compile(rb"\n#@ polls n=(\d+)")


def _scan(path: Path, progress=None) -> tuple[int, int, str]:
    """(MPI calls, polls folded into "#@ polls" records, end reason) of one rank file, read in
    large chunks; progress(bytes) after each. A "#@ polls n=N" record stands for N calls."""
    calls, polls, prev, tail = 0, 0, b"\n", b""

    def count(text: bytes) -> tuple[int, int]:
        folded = [int(n) for n in POLLS.findall(text)]
        return text.count(b"\nMPI_") + sum(folded) - len(folded), sum(folded)

    with open_trace(path) as f:
        raw, seen = getattr(f, "raw", f), 0
        while chunk := f.read(1 << 24):
            text = prev + chunk
            cut = text.rfind(b"\n")
            c, p = count(text[:cut])  # whole lines; the rest is counted with the next chunk
            calls, polls, prev = calls + c, polls + p, text[cut:]
            tail = (tail + chunk)[-256:]
            if progress:  # in bytes of the file (compressed ones for a compressed trace)
                at = getattr(raw, "consumed", None)
                at = seen + len(chunk) if at is None else at
                progress(at - seen)
                seen = at
    c, p = count(prev)
    m = re.search(rb"\n#@ end ([^\n]*)\n?$", b"\n" + tail)
    return calls + c, polls + p, m.group(1).decode() if m else "missing"


def traced_runtime_ns(outdir: Path) -> float | None:
    """The traced run's runtime as the model's T counts it. The graph starts every rank at its
    own MPI_Init end, as if all left MPI_Init at once; in a real run they leave it apart (14 ms
    for NetPIPE on a loaded 2-core machine), and the first rank out then waits for the last at
    its first synchronisation, which no graph can show. So on one clock (all ranks on one host)
    the run counts from the last MPI_Init end to the last MPI_Finalize start; across hosts
    (clocks not comparable) it is the longest rank's MPI_Init end → MPI_Finalize start. None if
    a rank file lacks either."""
    files = trace_files(outdir)
    spans = [_init_and_finalize_us(f) for f in files]
    if not spans or None in spans:
        return None
    hosts = {trace_host(f) for f in files}
    if len(hosts) == 1 and None not in hosts:
        return (max(fin for _, fin in spans) - max(init for init, _ in spans)) * 1e3
    return max(fin - init for init, fin in spans) * 1e3


def header_line(path: Path, prefix: bytes) -> bytes | None:
    """A rank file's first header line that starts with `prefix` (the header is the lines
    before the first MPI call; a file without it is not read past 64 lines)."""
    with open_trace(path) as f:
        for n, line in enumerate(f):
            if line.startswith(prefix):
                return line
            if n > 64 or line.startswith(b"MPI_"):
                return None
    return None


def trace_host(path: Path) -> str | None:
    """The host a rank file was written on (its "#@ world ... host=" line), None if unknown."""
    line = header_line(path, b"#@ world")
    words = [w for w in (line or b"").split() if w.startswith(b"host=")]
    return words[0][5:].decode(errors="replace") if words else None


def _init_and_finalize_us(path: Path) -> tuple[float, float] | None:
    """MPI_Init(_thread)'s end and MPI_Finalize's start (µs). MPI_Init is among the first lines
    and MPI_Finalize the last call: read the head and the tail only (traces of long runs are
    large)."""
    init = fin = None
    with open_trace(path) as f:
        for n, line in enumerate(f):
            if line.startswith((b"MPI_Init:", b"MPI_Init_thread:")):
                init = line.rstrip().rsplit(b":", 1)[-1]
                break
            if n > 1000:
                return None
        for line in _tail(f).split(b"\n"):
            if line.startswith(b"MPI_Finalize:"):
                fin = line.split(b":")[1]
    try:
        return (float(init), float(fin)) if init is not None and fin is not None else None
    except ValueError:
        return None


def _tail(f, n: int = 1 << 16) -> bytes:
    """The last n bytes of a rank file's text (a compressed one is read to its end)."""
    if not isinstance(getattr(f, "raw", None), _Gunzip):
        f.seek(max(0, f.seek(0, 2) - n))
        return f.read()
    tail = b""
    while chunk := f.read(1 << 20):
        tail = (tail + chunk)[-n:]
    return tail


def repair(path: Path) -> bool:
    """Close the file of a rank that was killed outright (SIGKILL): drop the zero bytes after
    its last record (the tracer maps the file ahead of the data) and the unfinished record
    after the last complete line, however long either is, and append "#@ end killed".
    A compressed rank's text is in its ".raw" sibling until the run ends (lt_buf.c): when one
    is left, that text is closed so and compressed into the rank file. Returns True if the
    file needed it."""
    raw = path.with_name(path.name + ".raw")
    if raw.exists():
        return _compress_raw(raw, path)
    if is_compressed(path):
        return _repair_compressed(path)
    return _repair_plain(path)


def _compress_raw(raw: Path, path: Path) -> bool:
    """The ".raw" text a killed compressed rank left, repaired as a plain file and compressed
    over its (empty or partly written) rank file; the ".raw" file is removed."""
    _repair_plain(raw)
    tmp = path.with_name(path.name + ".repair")
    with open(raw, "rb") as f, open(tmp, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", compresslevel=1) as g:
        shutil.copyfileobj(f, g, 1 << 20)
    os.replace(tmp, path)
    raw.unlink()
    return True


def _repair_plain(path: Path) -> bool:
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.seek(max(0, size - 4096))
        if re.search(rb"\n#@ end [^\n]*\n$", b"\n" + f.read()):
            return False
        end = _scan_back(f, size, lambda block: len(block.rstrip(b"\0")))  # last data byte
        keep = _scan_back(f, end, lambda block: block.rfind(b"\n") + 1)  # after the last newline
        f.truncate(keep)
        f.seek(keep)
        f.write(b"#@ end killed\n")
    return True


def _repair_compressed(path: Path) -> bool:
    """repair() for a compressed rank file: its stream stops after the last block the tracer
    flushed; its text up to the last complete line is compressed again, closed by "#@ end
    killed", into a temporary file renamed over it (the old file stays until the new is whole)."""
    with open_trace(path) as f:
        if re.search(rb"\n#@ end [^\n]*\n$", b"\n" + _tail(f, 4096)):
            return False
    tmp = path.with_name(path.name + ".repair")
    with open_trace(path) as f, open(tmp, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", compresslevel=1) as g:
        held = b""
        while chunk := f.read(1 << 20):
            held += chunk
            cut = held.rfind(b"\n") + 1
            g.write(held[:cut])
            held = held[cut:]
        g.write(b"#@ end killed\n")
    os.replace(tmp, path)
    return True


def _scan_back(f, end: int, find) -> int:
    """Scan [0, end) backwards in blocks: the offset `find(block)` gives in the first block
    (from the end) where it is positive, else 0."""
    pos = end
    while pos > 0:
        start = max(0, pos - (1 << 20))
        f.seek(start)
        k = find(f.read(pos - start))
        if k > 0:
            return start + k
        pos = start
    return 0


def summarize(outdir: Path, progress=None) -> TraceSummary:
    """Ranks, calls, bytes and endings of a trace directory; `progress(done, total)` (bytes)
    is called as the files are read."""
    files = trace_files(outdir)
    total = sum(f.stat().st_size for f in files)
    calls, polls, endings, done = 0, 0, {}, 0

    def step(n):
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    for f in files:
        n, p, end = _scan(f, step)
        calls += n
        polls += p
        key = end.split()[0] if end != "missing" else end
        endings[key] = endings.get(key, 0) + 1
    return TraceSummary(files, len(files), calls, total, endings, polls)
