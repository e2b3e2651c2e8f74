"""The repository stands alone: nothing in it points at design notes, references or fixtures
outside the checkout, and every relative link in the docs names a file that exists."""

from __future__ import annotations

import os
import re

from conftest import ROOT

TREES = ("crates", "python", "tests", "docs", "bench", "apps", "examples", "scripts")
SUFFIXES = (".rs", ".py", ".pyi", ".c", ".h", ".md", ".toml", ".job", ".sh", ".txt", "")
# Spelled in pieces so that this file does not match itself.
OUTSIDE = re.compile("DESIGN" + r"(\.md| §)|" + "shared" + r"/(reference|fixtures|papers|hooks)|/work/" + "shared")


def text_files():
    yield os.path.join(ROOT, "README.md")
    for tree in TREES:
        for root, dirs, files in os.walk(os.path.join(ROOT, tree)):
            dirs[:] = [d for d in dirs if d not in ("target", "__pycache__")]
            for f in files:
                path = os.path.join(root, f)
                if f.endswith(SUFFIXES) and os.path.getsize(path) < 4 << 20:
                    yield path


def test_nothing_points_outside_the_repository():
    found = []
    for path in text_files():
        try:
            text = open(path, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{os.path.relpath(path, ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_relative_links_in_the_docs_exist():
    docs = [os.path.join(ROOT, "README.md")]
    for root, _, files in os.walk(os.path.join(ROOT, "docs")):
        docs += [os.path.join(root, f) for f in files if f.endswith(".md")]
    broken = []
    for path in docs:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", open(path, encoding="utf-8").read()):
            if "://" not in target and not os.path.exists(os.path.join(os.path.dirname(path), target)):
                broken.append(f"{os.path.relpath(path, ROOT)}: {target}")
    assert not broken, "\n".join(broken)
