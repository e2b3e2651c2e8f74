"""The JSON Schemas of every `--json` output (python/latitude/data/schema, docs/json.md), for tests."""

from __future__ import annotations

import json
import os

import jsonschema
from conftest import PYDIR

SCHEMA_DIR = os.path.join(PYDIR, "latitude", "data", "schema")


def schema(name: str) -> dict:
    with open(os.path.join(SCHEMA_DIR, f"{name}.json"), encoding="utf-8") as f:
        return json.load(f)


def check(name: str, out: dict) -> dict:
    """Fail unless `out` (a command's parsed --json output) follows the schema `name`."""
    jsonschema.Draft202012Validator(schema(name)).validate(out)
    return out
