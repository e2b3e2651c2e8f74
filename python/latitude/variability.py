"""Latency distributions of measured collectives (`latitude variability SAMPLES`).

Per configuration (collective, algorithm, P, message size, and run when several runs are
compared) from every sample, not a mean alone, because these distributions are skewed and
can be bimodal (Salimi Beni et al.):

* mean, median, p90, p99 (linear interpolation between order statistics);
* tail_share: the share of the configuration's total time spent in the calls beyond p90
  (10 % of the calls by definition; how much of the time they take is the tail's weight);
* the bimodality coefficient BC = (g² + 1) / (κ + 3(n−1)²/((n−2)(n−3))) with g the sample
  skewness and κ the sample excess kurtosis (both bias-corrected, as SAS defines BC).
  BC > 5/9 (the value of a uniform distribution) suggests two modes;
* with the background metric b recorded by several runs of the same configuration, the
  Pearson and Spearman correlation of b with the runs' mean latency.

Samples: the CSV or Parquet `latitude measure-coll` writes (columns coll, algorithm, procs,
bytes, run, time_us, and b when Slurm was present); any table with those columns works.
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import asdict, dataclass

import numpy as np

from latitude.errors import InputError

KEY = ("coll", "algorithm", "procs", "bytes")
NEEDED = (*KEY, "run", "time_us")
BIMODAL = 5 / 9
# placement columns (text, empty when absent): the ranks' hosts, their emulated nodes
OPTIONAL = ("hosts", "nodes")


@dataclass
class Stats:
    coll: str
    algorithm: str
    procs: int
    bytes: int
    runs: int
    n: int
    mean_us: float
    median_us: float
    p90_us: float
    p99_us: float
    tail_share: float
    bimodality: float
    b: float | None

    def to_dict(self) -> dict:
        return asdict(self)


def bimodality_coefficient(x: np.ndarray) -> float:
    """SAS's bimodality coefficient of the sample (NaN below 4 values or with no spread)."""
    n = len(x)
    if n < 4:
        return math.nan
    d = x - x.mean()
    m2 = float(np.mean(d**2))
    if m2 == 0:
        return math.nan
    g1 = float(np.mean(d**3)) / m2**1.5
    g2 = float(np.mean(d**4)) / m2**2 - 3
    skew = g1 * math.sqrt(n * (n - 1)) / (n - 2)
    kurt = ((n + 1) * g2 + 6) * (n - 1) / ((n - 2) * (n - 3))
    return (skew**2 + 1) / (kurt + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))


def describe(x: np.ndarray) -> dict:
    """The distribution statistics of one configuration's samples (µs)."""
    p90, p99 = np.percentile(x, [90, 99])
    total = float(x.sum())
    return {
        "n": len(x),
        "mean_us": float(x.mean()),
        "median_us": float(np.median(x)),
        "p90_us": float(p90),
        "p99_us": float(p99),
        "tail_share": float(x[x > p90].sum()) / total if total > 0 else 0.0,
        "bimodality": bimodality_coefficient(x),
    }


# ---- reading samples ----
def read_samples(path: str) -> dict:
    """The samples table as columns of numpy arrays / lists; one-line errors naming the
    file (and the line, for CSV)."""
    if not os.path.isfile(path):
        raise InputError(path, "no such samples file (expected the CSV or Parquet of latitude measure-coll)")
    cols = _read_parquet(path) if path.endswith(".parquet") else _read_csv(path)
    n = len(cols["time_us"])
    if n == 0:
        raise InputError(path, "no samples")
    return cols


def read_many(paths: list[str]) -> dict:
    """Several samples files as one table; runs renamed `FILE#RUN` when there are several
    files (run numbers restart in each)."""
    if len(paths) == 1:
        return read_samples(paths[0])
    parts = [read_samples(p) for p in paths]
    cols: dict = {}
    for path, part in zip(paths, parts):
        part["run"] = [f"{path}#{r}" for r in part["run"]]
        for k, v in part.items():
            cols.setdefault(k, []).extend(list(v))
    return _arrays(cols)


def _read_csv(path: str) -> dict:
    try:
        f = open(path, newline="", encoding="utf-8", errors="strict")
    except OSError as err:
        raise InputError(path, f"cannot read the samples file ({err.strerror})") from None
    with f:
        try:
            reader = csv.reader(f)
            header = next(reader, None)
            missing = [c for c in NEEDED if not header or c not in header]
            if missing:
                raise InputError(
                    f"{path}:1",
                    f"expected a header with the columns {', '.join(NEEDED)} (missing {', '.join(missing)})",
                )
            idx = {c: header.index(c) for c in header}
            cols: dict[str, list] = {c: [] for c in (*NEEDED, "b", *OPTIONAL)}
            for n, row in enumerate(reader, start=2):
                if not row:
                    continue
                if len(row) != len(header):
                    raise InputError(f"{path}:{n}", f"expected {len(header)} fields, got {len(row)}")
                try:
                    _append_row(cols, row, idx)
                except ValueError as err:
                    raise InputError(f"{path}:{n}", str(err)) from None
        except UnicodeDecodeError:
            raise InputError(
                path, "not a text CSV file (expected the CSV or Parquet of latitude measure-coll)"
            ) from None
        except csv.Error as err:
            raise InputError(f"{path}:{reader.line_num}", f"malformed CSV ({err})") from None
    return _arrays(cols)


def _append_row(cols: dict, row: list[str], idx: dict) -> None:
    def number(name: str, kind=float):
        text = row[idx[name]]
        try:
            v = kind(text)
        except ValueError:
            raise ValueError(
                f"expected {'an integer' if kind is int else 'a number'} in {name}, got {text[:40]!r}"
            ) from None
        if kind is float and not math.isfinite(v):
            raise ValueError(f"expected a finite number in {name}, got {text[:40]!r}")
        return v

    t = number("time_us")
    if t < 0:
        raise ValueError(f"expected a time ≥ 0 in time_us, got {row[idx['time_us']]!r}")
    procs, size = number("procs", int), number("bytes", int)
    if procs < 1 or size < 0:
        raise ValueError("expected procs ≥ 1 and bytes ≥ 0")
    cols["time_us"].append(t)
    cols["procs"].append(procs)
    cols["bytes"].append(size)
    cols["run"].append(row[idx["run"]])
    cols["coll"].append(row[idx["coll"]])
    cols["algorithm"].append(row[idx["algorithm"]])
    for name in OPTIONAL:
        cols[name].append(row[idx[name]] if name in idx else "")
    b = row[idx["b"]] if "b" in idx else ""
    cols["b"].append(number("b") if b.strip() else math.nan)


def _read_parquet(path: str) -> dict:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(path, "reading Parquet needs pyarrow (pip install pyarrow), or give the CSV") from None
    try:
        table = pq.read_table(path)
    except Exception as err:  # pyarrow raises several types for damaged files
        raise InputError(path, f"not a readable Parquet file ({str(err).splitlines()[0][:120]})") from None
    missing = [c for c in NEEDED if c not in table.column_names]
    if missing:
        raise InputError(path, f"expected the columns {', '.join(NEEDED)} (missing {', '.join(missing)})")
    cols = {c: table.column(c).to_pylist() for c in NEEDED}
    cols["b"] = table.column("b").to_pylist() if "b" in table.column_names else [None] * table.num_rows
    cols["b"] = [math.nan if v is None else float(v) for v in cols["b"]]
    cols["run"] = [str(v) for v in cols["run"]]
    for name in OPTIONAL:
        cols[name] = (
            [str(v or "") for v in table.column(name).to_pylist()]
            if name in table.column_names
            else [""] * table.num_rows
        )
    t = np.asarray(cols["time_us"], dtype=float)
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise InputError(path, "expected finite times ≥ 0 in time_us")
    return _arrays(cols)


def _arrays(cols: dict) -> dict:
    cols["time_us"] = np.asarray(cols["time_us"], dtype=float)
    cols["b"] = np.asarray(cols["b"], dtype=float)
    return cols


# ---- analysis ----
def groups(cols: dict, per_run: bool = False) -> dict[tuple, np.ndarray]:
    """Row indices per configuration (KEY, plus the run when `per_run`)."""
    out: dict[tuple, list[int]] = {}
    key_cols = [cols[k] for k in KEY] + ([cols["run"]] if per_run else [])
    for i, key in enumerate(zip(*key_cols)):
        out.setdefault(key, []).append(i)
    return {k: np.asarray(v) for k, v in out.items()}


def table(cols: dict) -> list[Stats]:
    """Statistics per configuration, over all runs together."""
    rows = []
    for key, idx in sorted(groups(cols).items()):
        x = cols["time_us"][idx]
        b = cols["b"][idx]
        b_mean = float(np.nanmean(b)) if np.any(np.isfinite(b)) else None
        runs = len(set(cols["run"][i] for i in idx))
        rows.append(Stats(*key, runs=runs, **describe(x), b=b_mean))
    return rows


def b_correlation(cols: dict) -> list[dict]:
    """Per configuration with ≥ 3 runs that recorded b: Pearson and Spearman correlation of
    b with the runs' mean latency."""
    per_run: dict[tuple, list[tuple[float, float]]] = {}
    for key, idx in groups(cols, per_run=True).items():
        b = cols["b"][idx]
        if np.all(np.isfinite(b)):
            per_run.setdefault(key[:-1], []).append((float(b.mean()), float(cols["time_us"][idx].mean())))
    out = []
    for key, pts in sorted(per_run.items()):
        if len(pts) < 3:
            continue
        b, t = np.array(pts).T
        out.append(
            dict(zip(KEY, key)) | {"runs": len(pts), "pearson": _corr(b, t), "spearman": _corr(_ranks(b), _ranks(t))}
        )
    return out


def _corr(x: np.ndarray, y: np.ndarray) -> float:
    if np.std(x) == 0 or np.std(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank), for Spearman's ρ."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x), dtype=float)
    for v in np.unique(x):
        tie = x == v
        ranks[tie] = ranks[tie].mean()
    return ranks
