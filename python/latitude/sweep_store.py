"""Where a sweep's rows go: the output table (Parquet or CSV, by extension) and its journal.

Rows are appended to a journal next to the output (`OUT.journal`, one JSON object a line,
flushed and synced after every batch), and the output itself is written atomically (a
temporary file in the same directory, renamed over it) when the sweep ends or is
interrupted. A sweep killed outright therefore loses at most the batches in flight: the
journal holds the rest, and `--resume` reads output and journal, skips the points they hold
and writes them all into the new output. A journal left by a killed sweep is never
discarded silently: without --resume the sweep refuses to start.

Parquet goes through pyarrow; CSV through the standard library (read back with the column
types below, so a resumed CSV sweep recognises its points exactly: floats are written with
repr, which round-trips).
"""

from __future__ import annotations

import csv
import json
import os

from latitude.errors import InputError
from latitude.outputs import atomic

FORMATS = (".parquet", ".csv")
STR_COLUMNS = ("input", "kind", "coll", "machine", "placement", "protocol", "error")
INT_COLUMNS = ("seed", "S", "messages_on_path")
BOOL_COLUMNS = ("nic_serialization",)


def output_format(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise InputError("-o", f"expected an output ending in .parquet or .csv, got {path!r}")
    if ext == ".parquet":
        _pyarrow()
    return ext


class Store:
    """The rows of one sweep output: those already there (with --resume) and the new ones."""

    def __init__(self, path: str, resume: bool, key_of):
        self.path = path
        self.key_of = key_of
        self.format = output_format(path)
        self.journal = path + ".journal"
        self.rows: list = []
        if os.path.exists(self.journal) and not resume:
            raise InputError(
                self.journal,
                "a killed sweep left its results here: continue it with --resume, or remove the file",
            )
        if resume:
            if os.path.exists(path):
                self.rows = read_table(path)
            if os.path.exists(self.journal):
                self.rows += _read_journal(self.journal)
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise InputError("-o", f"no such directory: {directory}")
        self._journal = None  # opened with the first new rows

    def keys(self) -> set:
        """The keys of the points held."""
        return {self.key_of(r) for r in self.rows}

    def append(self, rows: list) -> None:
        self.rows += rows
        self._append_journal(rows)

    def _append_journal(self, rows: list) -> None:
        if self._journal is None:
            self._journal = open(self.journal, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        for r in rows:
            self._journal.write(json.dumps(r) + "\n")
        self._journal.flush()
        os.fsync(self._journal.fileno())

    def close(self, columns: list, order: dict) -> None:
        """Write every row to the output (atomically), in the order `order` gives their keys
        (rows of points it does not know, from an earlier spec, last), then drop the journal."""
        if self._journal is not None:
            self._journal.close()
        # A kill between the rename and the journal's removal leaves rows in both: last wins.
        by_key = {self.key_of(r): r for r in self.rows}
        keys = sorted(by_key, key=lambda k: order.get(k, len(order)))
        write_table(self.path, [by_key[k] for k in keys], columns)
        if os.path.exists(self.journal):
            os.remove(self.journal)


def _read_journal(path: str) -> list:
    """The journal's complete lines (a line cut by a kill is the batch in flight: dropped)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return rows


def read_table(path: str) -> list:
    """The rows of a sweep output (Parquet or CSV) as dicts."""
    if output_format(path) == ".parquet":
        pq = _pyarrow()
        try:
            return pq.read_table(path).to_pylist()
        except Exception as err:  # noqa: BLE001 - pyarrow raises several kinds for a bad file
            raise InputError(path, f"not a readable Parquet file ({' '.join(str(err).split())})") from None
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = []
        for line, r in enumerate(reader, start=2):
            try:
                rows.append({k: _typed(k, v) for k, v in r.items()})
            except (ValueError, AttributeError):
                raise InputError(f"{path}:{line}", "expected a row written by latitude sweep") from None
        return rows


def _is_int(column: str) -> bool:
    """Seeds, sizes, counts and the exact derivatives (integers)."""
    return column in INT_COLUMNS or column.startswith("lambda_")


def _typed(column: str, text: str):
    if text == "" or text is None:
        return None
    if column in STR_COLUMNS:
        return text
    if _is_int(column):
        return int(text)
    if column in BOOL_COLUMNS:
        return {"True": True, "False": False}[text]
    return float(text)


def write_table(path: str, rows: list, columns: list) -> None:
    """All rows, with `columns` first (then any other columns the rows have), atomically."""
    cols = list(dict.fromkeys(list(columns) + [k for r in rows for k in r]))
    with atomic(path, "sweep table") as tmp:
        if output_format(path) == ".parquet":
            _write_parquet(tmp, rows, cols)
        else:
            with open(tmp, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=cols)
                w.writeheader()
                for r in rows:
                    w.writerow({k: _csv_value(r.get(k)) for k in cols})


def _csv_value(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return v


def _write_parquet(path: str, rows: list, cols: list) -> None:
    import pyarrow as pa

    pq = _pyarrow()
    arrays = {}
    for c in cols:
        values = [r.get(c) for r in rows]
        arrays[c] = pa.array(values, type=_arrow_type(c, values))
    pq.write_table(pa.table(arrays), path)


def _arrow_type(column: str, values: list):
    import pyarrow as pa

    if column in STR_COLUMNS:
        return pa.string()
    if _is_int(column):
        return pa.int64()
    if column in BOOL_COLUMNS:
        return pa.bool_()
    return pa.float64()


def _pyarrow():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("-o", "Parquet output needs pyarrow (pip install pyarrow); or write .csv") from None
    return pq
