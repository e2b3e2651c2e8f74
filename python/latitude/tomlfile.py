"""Reading TOML files a user gives (machine files): one-line errors naming the file and the
line, and typed values that refuse what TOML would silently turn into something else.

* the file: a directory, a device that never ends (``/proc/self/mem``, ``/dev/zero``), a
  file that is not UTF-8 or not TOML is one line, ``<file>[:<line>]: <what>``;
* values: a TOML boolean is an ``int`` to Python (``O = true`` would become 1 ns/B), so
  numbers are checked with :func:`number`; tables a reader does not know are refused with
  :func:`check_tables` (an unknown table is as wrong as an unknown key);
* :func:`line_of` finds the line of a key, so a value error names it too.
"""

from __future__ import annotations

import os
import re
import sys

from latitude.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_BYTES = 1 << 20  # machine files are short; more is not one
_HEADER = re.compile(r"^\s*\[\[?([^\[\]]+)\]\]?")  # [table] or [[array of tables]]


def read(path: str, what: str = "machine file") -> tuple[dict, str]:
    """(data, text) of the TOML file at `path`."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise InputError(path, f"is a directory, expected a {what} (TOML)")
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise InputError(path, f"no such {what}") from None
    except OSError as err:
        raise InputError(path, f"cannot read the {what}: {err.strerror or err}") from None
    if len(raw) > MAX_BYTES:
        raise InputError(path, f"larger than {MAX_BYTES >> 20} MiB: not a {what}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}", f"not UTF-8 text, expected a {what}") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column \d+\)", str(err))
        where = f"{path}:{m.group(1)}" if m else path
        raise InputError(where, f"not valid TOML: {str(err).split(' (at line')[0]}") from None
    except ValueError:  # an integer past Python's digit limit: tomllib says neither so nor where
        return _too_many_digits(path, text, what)


def _too_many_digits(path: str, text: str, what: str):
    limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()  # Python ≥ 3.10.7
    run = re.compile(rf"\d{{{limit + 1},}}")
    line = next((n for n, s in enumerate(text.splitlines(), start=1) if run.search(s.replace("_", ""))), None)
    where = f"{path}:{line}" if line else path
    raise InputError(where, f"a number of more than {limit} digits: no value of a {what} is that long")


def line_of(text: str, key: str, table: str | None = None) -> int | None:
    """The line defining `key` (in `[table]`, or at the top level), if it can be found."""
    section = None
    pattern = re.compile(rf"""^\s*(?:"{re.escape(key)}"|'{re.escape(key)}'|{re.escape(key)})\s*=""")
    for n, line in enumerate(text.splitlines(), start=1):
        head = _HEADER.match(line)
        if head:
            section = head.group(1).strip()
            continue
        if section == table and pattern.match(line):
            return n
    return None


def table_line(text: str, name: str) -> int | None:
    """The line of the header `[name]`, if there is one."""
    for n, line in enumerate(text.splitlines(), start=1):
        head = _HEADER.match(line)
        if head and head.group(1).strip() == name:
            return n
    return None


def where(path: str, text: str, key: str, table: str | None = None) -> str:
    """`path:line` of a key (or `path` when it cannot be found)."""
    n = line_of(text, key, table)
    return f"{path}:{n}" if n else path


def number(value, where: str, what: str):
    """`value` as given if it is a number or a string (units are parsed by the caller); a
    boolean, list or table is an error."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(where, f"expected {what}, got {_shown(value)}")
    return value


def string(value, where: str, what: str) -> str:
    if not isinstance(value, str):
        raise InputError(where, f"expected {what} (a string), got {_shown(value)}")
    return value


def boolean(value, where: str, what: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(where, f"expected {what}, got {_shown(value)}")
    return value


def check_tables(data: dict, path: str, text: str, known: tuple[str, ...]) -> None:
    """Every table of the file is one of `known`."""
    for name, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            value = value[0]  # an array of tables, [[name]]
        if isinstance(value, dict) and name not in known:
            expected = ", ".join(f"[{t}]" for t in known) or "none"
            n = table_line(text, name)
            raise InputError(f"{path}:{n}" if n else path, f"unknown table [{name}] (expected {expected})")


def _shown(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return repr(value)
