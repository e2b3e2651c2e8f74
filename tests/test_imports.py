"""Every import arrow in python/latitude points down: the modules' imports (at module level and
inside functions alike) form no cycle. Read with the standard library's ast, nothing imported."""

from __future__ import annotations

import ast
import os

from conftest import PYDIR

PACKAGE = os.path.join(PYDIR, "latitude")


def module_names() -> dict[str, str | None]:
    """Dotted module name -> source file for every .py file of the package; the Rust
    extension (latitude._core, no source to walk) -> None."""
    out = {"latitude._core": None}
    for root, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(root, f), PYDIR)[: -len(".py")].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                out[".".join(rel)] = os.path.join(root, f)
    return out


def imports_of(name: str, path: str, modules: dict) -> set[str]:
    """The package modules `name` imports anywhere in its source. `from latitude.x import y`
    imports latitude.x.y when that is a module, else latitude.x."""
    is_package = path.endswith("__init__.py")
    out = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        out.update(t for t in targets if t in modules and t != name)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first = last), or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                return stack[stack.index(n) :] + [n]
            if n not in state and (cycle := visit(n)):
                return cycle
        state[m] = "done"
        stack.pop()
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            return cycle
    return None


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, modules) if path else set() for name, path in modules.items()}


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_walk_sees_lazy_and_package_imports():
    """The checker itself: imports inside functions and `from latitude import x` count."""
    graph = import_graph()
    assert "latitude.api" in graph["latitude"]  # inside __getattr__
    assert "latitude.graph" in graph["latitude.api"]
    assert "latitude.analysis" in graph["latitude.graph"]  # from latitude import analysis
    assert "latitude._core" in graph["latitude.graph"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for n in graph[todo.pop()] - seen:
            seen.add(n)
            todo.append(n)
    return seen


def test_the_library_sits_below_the_loader_and_the_commands():
    """Graph and the library modules never reach up to api (the loader), the commands or the CLI."""
    graph = import_graph()
    for name in graph:
        if name.startswith(("latitude.commands", "latitude.cli", "latitude.__main__")) or name in (
            "latitude",
            "latitude.api",
        ):
            continue
        up = {
            m for m in reachable(graph, name) if m.startswith(("latitude.commands", "latitude.cli")) or m == "latitude"
        }
        assert not up, f"{name} imports {sorted(up)}"


def source_files(*parts):
    for root, dirs, files in os.walk(os.path.join(PYDIR, "..", *parts)):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        yield from (os.path.join(root, f) for f in files if f.endswith(".py"))


def test_only_graph_py_touches_the_core_handle_and_only_commands_parse_arguments():
    """Commands and tests use Graph's public methods; argparse lives in the CLI layer."""
    for path in [*source_files("python", "latitude"), *source_files("tests"), *source_files("bench")]:
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        rel = os.path.relpath(path, os.path.join(PYDIR, ".."))
        if not rel.endswith(os.path.join("latitude", "graph.py")):
            assert not any(isinstance(n, ast.Attribute) and n.attr == "_h" for n in ast.walk(tree)), rel
        if rel.startswith(os.path.join("python", "latitude")) and os.sep + "commands" + os.sep not in rel:
            names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            assert "argparse" not in names or rel.endswith("cli.py"), rel


def test_the_everyday_commands_start_without_numpy(examples):
    """predict, tolerance and sensitivity on a GOAL file never load numpy (~60 ms of start-up
    for every small command): the commands whose work needs it import it where used."""
    import subprocess
    import sys

    goal = os.path.join(examples, "halo2d-16.goal")
    for args in (
        ["predict", goal, "--json"],
        ["tolerance", goal, "--json"],
        ["sensitivity", goal, "--range", "0:10us"],
    ):
        code = (
            "import sys; from latitude.cli import main; rc = main(sys.argv[1:]); "
            "assert 'numpy' not in sys.modules, 'numpy was imported'; sys.exit(rc)"
        )
        env = dict(os.environ, PYTHONPATH=PYDIR)
        proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, (args, proc.stderr[-2000:])


def test_a_command_imports_no_other_command(examples):
    """`latitude predict` registers only its own subparser and loads no trace converter:
    importing every command module and the OTF2/DUMPI readers was ~0.15 s of each start-up."""
    import subprocess
    import sys

    code = (
        "import sys; from latitude.cli import main; rc = main(sys.argv[1:]); "
        "others = [m for m in sys.modules if m.startswith('latitude.commands.') and m.split('.')[-1] not in "
        "('predict', 'model_args', 'schedule_args', 'launch_args')]; "
        "assert not others, others; "
        "assert 'latitude.formats.otf2_archive' not in sys.modules; "
        "assert 'latitude.formats.dumpi_run' not in sys.modules; sys.exit(rc)"
    )
    env = dict(os.environ, PYTHONPATH=PYDIR)
    goal = os.path.join(examples, "halo2d-16.goal")
    proc = subprocess.run(
        [sys.executable, "-c", code, "predict", goal, "--json"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
