"""Every command's --help renders (argparse formats help strings with %, so a stray % in one
of them turns `latitude --help` into a traceback)."""

import pytest
from conftest import run_cli

COMMANDS = [
    "demo",
    "trace",
    "schedule",
    "predict",
    "sensitivity",
    "tolerance",
    "lp",
    "pairs",
    "place",
    "simulate",
    "generate",
    "calibrate",
    "measure-coll",
    "variability",
    "inject",
    "validate",
]


def test_top_level_help_lists_every_command():
    out = run_cli("--help").stdout
    for c in COMMANDS:
        assert f"    {c}" in out, c


@pytest.mark.parametrize("command", COMMANDS)
def test_command_help(command):
    proc = run_cli(command, "--help")
    assert proc.stdout.startswith(f"usage: latitude {command}") and not proc.stderr
