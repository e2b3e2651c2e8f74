"""The wrapper generator (python/latitude/_tracer/lt_gen.py): the shipped table generates, and a
table with a mistake stops the build with a message naming the line (the traces themselves are
checked by test_trace_golden.py and the app tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TRACER = Path(__file__).resolve().parent.parent / "python" / "latitude" / "_tracer"
sys.path.insert(0, str(TRACER))
import lt_gen  # noqa: E402


def test_shipped_table_generates():
    funcs = lt_gen.parse_table((TRACER / "wrappers.tbl").read_text())
    names = [f.name for f in funcs]
    assert len(names) == len(set(names)) > 170
    text = lt_gen.generate(funcs)
    for f in funcs:
        assert f" {f.name}(" in text
        if f.has("fortran"):
            assert f"mpi_{f.name[4:].lower()}_(" in text
    assert text.count("F_ALIASES(") == sum(f.has("fortran") for f in funcs)


def test_record_follows_the_parameter_order():
    (f,) = lt_gen.parse_table("MPI_Foo(const void *buf, int n, MPI_Datatype t:dtype?n > 0, MPI_Comm c, MPI_Group g)")
    code = lt_gen.c_wrapper(f)
    order = [
        code.index(s)
        for s in ("lt_ptr(lt_p, buf)", "lt_int(lt_p, n)", "(n > 0) ? lt_dtype", "lt_comm(lt_p, c)", "lt_hdl(lt_p, g)")
    ]
    assert order == sorted(order)
    assert "PMPI_Foo(buf, n, t, c, g)" in code


@pytest.mark.parametrize(
    "table,message",
    [
        ("MPI_Foo(int n) sometimes", "unknown hook 'sometimes'"),
        ("MPI_Foo(int n:dtype?x > 1)", "'x' in 'x > 1' is not a parameter"),
        ("MPI_Foo(int n:weird)", "unknown recording 'weird'"),
        ("MPI_Foo(float x)", "no default recording for type 'float'"),
        ("MPI_Foo(int n)\nMPI_Foo(int n)", "listed twice"),
        ("  MPI_Foo(int n)", "continuation line without an entry"),
        ("MPI_Foo(int n", "unbalanced parentheses"),
    ],
)
def test_table_mistakes_name_the_line(tmp_path, table, message):
    tbl = tmp_path / "bad.tbl"
    tbl.write_text("# a table\n" + table + "\n")
    proc = subprocess.run(
        [sys.executable, str(TRACER / "lt_gen.py"), str(tbl), str(tmp_path / "out.c")], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert message in proc.stderr and proc.stderr.startswith(str(tbl))
    assert not (tmp_path / "out.c").exists()
