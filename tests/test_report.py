"""latitude report without a browser: the page's content against the API's numbers, its
self-containment, and bad input as one line (the browser tests are test_report_browser.py)."""

from __future__ import annotations

import json
import os
import re

import latitude
import pytest
from latitude.units import fmt_time


def test_report_holds_the_numbers_and_nothing_external(tmp_path, examples, cli):
    goal = os.path.join(examples, "llamp-fig4c.goal")
    out = tmp_path / "r.html"
    cli("report", goal, "-o", out, "-L", "2us", "--overhead", "0.5us", "--pct", "1,10")
    html = out.read_text()
    g = latitude.load(goal, progress=False)
    pred = g.predict(L="2us", o="0.5us")
    assert f"T = {fmt_time(pred.runtime_ns)}" in html
    tol = g.tolerance(["1", "10"], params=pred.params)
    for pct in ("1", "10"):
        m = tol.max(pct)
        assert ("unbounded" if m is None else fmt_time(m)) in html
    assert html.count("<svg") == 3 and "<script" not in html and not re.search(r'(src|href)="(?!#)', html)
    assert oct(out.stat().st_mode & 0o777) != oct(0o600)  # a normal file, not mkstemp's private mode
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".latitude-")]


def test_report_compares_topologies(tmp_path, examples, cli):
    """--compare: the table holds each machine's T, λ_wire and largest wire at 1 %, as `compare`
    computes them; the comparison's figure is one more inline SVG."""
    goal = os.path.join(examples, "halo2d-16.goal")
    ft, df = (os.path.join(examples, "machines", f) for f in ("fat-tree-k16.toml", "dragonfly-g8.toml"))
    out = tmp_path / "r.html"
    cli("report", goal, "-o", out, "--pct", "1", "--compare", ft, "--compare", df)
    html = out.read_text()
    section = html[html.index('id="comparison"') :]
    section = section[: section.index("</section>")]
    g = latitude.load(goal, progress=False)
    for name, m in (("fat-tree-k16", ft), ("dragonfly-g8", df)):
        params = latitude.Params.from_machine(m)
        pred = g.predict(params)
        top = g.tolerance(["1"], param="wire", params=params).max("1")
        row = section[section.index(f'<td class="l">{name}</td>') :].split("</tr>")[0]
        assert fmt_time(pred.runtime_ns) in row and f"<td>{pred.lambda_['wire']:,}</td>" in row
        assert fmt_time(top) in row, row
    assert html.count("<svg") == 4 and "Topology comparison" in section


def test_report_shows_where_the_time_goes(tmp_path, cli):
    """The decomposition section: totals over ranks as `decompose` computes them, and a trace's
    MPI functions with their measured time."""
    from conftest import ROOT

    trace = os.path.join(ROOT, "tests", "data", "liballprof-bcast")
    out = tmp_path / "r.html"
    cli("report", trace, "-o", out, "-L", "2us")
    html = out.read_text()
    section = html[html.index('id="decomposition"') :]
    section = section[: section.index("</section>")]
    d = json.loads(cli("decompose", trace, "-L", "2us", "--json").stdout)
    for key in ("compute_ns", "network_ns", "stack_ns", "sync_ns"):
        assert f"<td>{fmt_time(d['total'][key])}</td>" in section, key
    bcast = next(c for c in d["per_call"] if c["call"] == "MPI_Bcast")
    row = section[section.index('<td class="l">MPI_Bcast</td>') :].split("</tr>")[0]
    assert f"<td>{bcast['count']:,}</td>" in row and f"<td>{fmt_time(bcast['measured_ns'])}</td>" in row
    assert "measured" in section and section.count("<svg") == 1


@pytest.mark.parametrize(
    "args, what",
    [
        (["-o", "{tmp}/no/r.html"], "no such directory"),
        (["-o", "{tmp}/r.html", "--map", "L=0:1us"], "--map"),
        (["-o", "{tmp}/r.html", "--pct", "x"], "--pct"),
        (["-o", "{tmp}/r.html", "--range", "5us:1us"], "--range"),
        (["-o", "{tmp}/r.html", "--compare", "{tmp}/a.toml"], "--compare: give two or more"),
    ],
)
def test_bad_report_input_is_one_line(tmp_path, examples, cli, args, what):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = cli("report", os.path.join(examples, "llamp-fig4c.goal"), *args, check=False)
    assert proc.returncode == 2 and what in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_report_of_a_missing_input(tmp_path, cli):
    proc = cli("report", tmp_path / "nope.goal", "-o", tmp_path / "r.html", check=False)
    assert proc.returncode == 2 and "nope.goal" in proc.stderr and proc.stderr.count("\n") == 1
