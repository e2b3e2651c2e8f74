"""Machine-readable output is ours alone: nothing a dependency prints (HiGHS's banner, C
printf, raw writes to descriptor 1) reaches stdout in --json / CSV modes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import EXAMPLES, cli_env, run_cli

GOAL = os.path.join(EXAMPLES, "llamp-fig4b.goal")


def test_stdout_silenced_catches_c_level_output(tmp_path):
    # What HiGHS does, minus HiGHS: printf (buffered in the C library) and write(1, ...).
    code = (
        "import ctypes, os, sys\n"
        "from latitude.silence import stdout_silenced\n"
        "libc = ctypes.CDLL(None)\n"
        "with stdout_silenced():\n"
        "    libc.printf(b'printf banner\\n')\n"
        "    os.write(1, b'raw banner\\n')\n"
        "    print('python banner')\n"
        "print('{}')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=cli_env()).stdout
    assert out == "{}\n"


def test_highs_constructed_silently():
    # highspy >= 1.16 prints its banner when Highs() is constructed: new_highs must not.
    code = "from latitude.silence import new_highs\nh = new_highs()\nprint('{}')\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=cli_env()).stdout
    assert out == "{}\n"


@pytest.mark.parametrize(
    "argv",
    [
        ("lp", GOAL, "--solve", "--json"),
        ("tolerance", GOAL, "--method", "lp", "--json"),
        ("sensitivity", GOAL, "--method", "lp", "--range", "0:10us", "--json"),
    ],
    ids=["lp", "tolerance", "sensitivity"],
)
def test_json_commands_print_only_json(argv):
    out = run_cli(*argv).stdout
    assert out.startswith("{"), out[:200]
    json.loads(out)  # the whole of stdout is one JSON document


def test_lp_csv_is_only_csv():
    # --csv /dev/stdout is written in place (not renamed over the device), before the JSON
    out = run_cli("tolerance", GOAL, "--method", "lp", "--csv", "/dev/stdout", "--json").stdout
    head, _, rest = out.partition("\n{")
    assert head.splitlines()[0].startswith("pct,") and len(head.splitlines()) == 4, out[:300]
    json.loads("{" + rest)
