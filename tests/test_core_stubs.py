"""The binding's errors and stubs: InputError is one class defined in Rust (latitude._core),
re-exported by latitude and latitude.errors, raised by the core and by Python alike; _core.pyi
names exactly what the built module has."""

from __future__ import annotations

import ast
import os
import pickle

import latitude
import latitude.errors
import pytest
from conftest import PYDIR, run_cli
from latitude import _core


def test_input_error_is_one_class_defined_in_rust():
    assert latitude.InputError is latitude.errors.InputError is _core.InputError
    assert latitude.errors.LatitudeError is _core.LatitudeError
    assert _core.InputError.__module__ == "latitude._core"
    assert issubclass(_core.InputError, _core.LatitudeError)
    assert issubclass(latitude.errors.ToolError, _core.LatitudeError)
    assert not issubclass(latitude.errors.ToolError, _core.InputError)


def test_input_error_prints_where_and_what():
    e = latitude.InputError("app.goal:3", "expected a rank")
    assert (str(e), e.where, e.what, e.args) == (
        "app.goal:3: expected a rank",
        "app.goal:3",
        "expected a rank",
        (str(e),),
    )
    e = latitude.InputError(None, "nothing to do")
    assert (str(e), e.where, e.what) == ("nothing to do", None, "nothing to do")
    with pytest.raises(latitude.errors.LatitudeError, match="^-L: bad$"):
        raise latitude.InputError("-L", "bad")
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is latitude.InputError and str(again) == str(e)


def test_input_error_escapes_control_characters():
    """Input shown in a message (a file name, a token) cannot break the line or drive the
    terminal: the same escapes as latitude.errors.printable."""
    e = latitude.InputError("a\nb.goal:1", "bad token '\x1b[31m\t\0\x85'")
    assert e.where == "a\\nb.goal:1" == latitude.errors.printable("a\nb.goal:1")
    assert e.what == "bad token '\\x1b[31m\\t\\0\\x85'" == latitude.errors.printable("bad token '\x1b[31m\t\0\x85'")
    assert str(e) == f"{e.where}: {e.what}" and "\n" not in str(e)


def test_the_core_raises_the_same_class(tmp_path):
    bad = tmp_path / "bad.goal"
    bad.write_text("num_ranks 1\nrank 0 {\nl1: nonsense\n}\n")
    with pytest.raises(latitude.InputError) as err:
        latitude.load(str(bad))
    assert err.value.where.startswith(f"{bad}:") and err.value.what
    assert str(err.value) == f"{err.value.where}: {err.value.what}"
    proc = run_cli("predict", bad, check=False)
    assert proc.returncode == 2 and proc.stderr == f"latitude: {err.value}\n"


def _stub() -> ast.Module:
    path = os.path.join(PYDIR, "latitude", "_core.pyi")
    return ast.parse(open(path, encoding="utf-8").read(), path)


def _public(names) -> set[str]:
    return {n for n in names if not n.startswith("_")}


def test_stubs_name_what_the_module_has():
    tree = _stub()
    top = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
    aliases = {"Progress"}
    assert _public(top) - aliases == _public(dir(_core)), "update python/latitude/_core.pyi"
    graph = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Graph")
    stubbed = {n.name for n in graph.body if isinstance(n, ast.FunctionDef)}
    assert stubbed == _public(dir(_core.Graph)), "update class Graph in python/latitude/_core.pyi"


def test_stub_signatures_match_the_built_functions():
    """Parameter names and order of every stubbed function equal the binding's signature."""
    import inspect

    tree = _stub()
    graph = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Graph")
    funcs = [(n, getattr(_core, n.name)) for n in tree.body if isinstance(n, ast.FunctionDef)]
    funcs += [(n, getattr(_core.Graph, n.name)) for n in graph.body if isinstance(n, ast.FunctionDef)]
    for node, obj in funcs:
        want = [a.arg for a in node.args.args if a.arg != "self"]
        got = [p for p in inspect.signature(obj).parameters if p != "self"]
        assert want == got, node.name
