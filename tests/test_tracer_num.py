"""The tracer's number formatting (`_tracer/lt_num.c`), alone: integers, addresses and
timestamps are written as Python writes them, whatever order they come in (the formatter keeps
recent large numbers and the high digits of timestamps formatted, and must never reuse them
wrongly). Compiled here with a small driver that formats the values it reads from stdin."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from tracetools import build_c_driver

DRIVER = r"""
#include "lt_num.h"
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    char kind, buf[64];
    unsigned long long v;
    while (scanf(" %c %llu", &kind, &v) == 2) {
        char *p = buf;
        if (kind == 'u')
            p = lt_u64(p, v);
        else if (kind == 'i')
            p = lt_i64(p, (int64_t)v);
        else
            p = lt_time(p, v);
        *p = 0;
        puts(buf);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def formatter(tmp_path_factory) -> Path:
    return build_c_driver(tmp_path_factory.mktemp("num"), "formatter", DRIVER, ["lt_num.c"])


def expected(kind: str, v: int) -> str:
    if kind == "u":
        return str(v)
    if kind == "i":
        return str(v - (1 << 64) if v >= 1 << 63 else v)
    return f"{v // 1000}.{v % 1000:03d}"


def test_numbers_as_python_writes_them(formatter):
    """Addresses that repeat and collide in the formatter's table, timestamps that advance by
    ns to hours (crossing the 10 ms boundaries of their high digits, and going back), every
    width from 1 to 20 digits, negative integers."""
    rng = random.Random(5)
    addresses = [rng.randrange(10**8, 1 << 64) for _ in range(300)]
    values, t = [], 1_098_343_437_073_000
    for _ in range(20_000):
        k = rng.randrange(6)
        if k == 0:
            values.append(("u", rng.choice(addresses)))
        elif k == 1:
            values.append(("u", rng.randrange(min(10 ** rng.randrange(1, 21), 1 << 64))))
        elif k == 2:
            values.append(("i", rng.randrange(1 << 64)))
        elif k == 3:
            t = max(0, t + rng.choice([1, 1000, 10**6, 10**7 - 1, 10**10, -(10**7)]) * rng.randrange(1, 5))
            values.append(("t", t))
        elif k == 4:
            values.append(("t", rng.randrange(10 ** rng.randrange(1, 20))))
        else:
            values.append(("u", (1 << 64) - 1 - rng.randrange(3)))
    text = "".join(f"{k} {v}\n" for k, v in values)
    out = subprocess.run([formatter], input=text, capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[: len(values)] == [expected(k, v) for k, v in values]
