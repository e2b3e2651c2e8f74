"""Self-contained HTML pages: one file, no network access needed to view it.

The CSS is inline, every figure is an inline SVG written by matplotlib (latitude.plots),
nothing is loaded from anywhere: a report can be mailed, archived with the results, or
opened on a cluster's login node. Built with the standard library (html.escape) instead of
a template engine: the pages are a handful of tables and figures.
"""

from __future__ import annotations

import html
import os
import re
import tempfile
from dataclasses import dataclass

from latitude.errors import InputError
from latitude.outputs import write_text

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0; color: #222;
       background: #fafafa; }
header { background: #1f3b57; color: #fff; padding: 18px 32px; }
header h1 { margin: 0 0 4px 0; font-size: 22px; }
header p { margin: 0; opacity: 0.85; font-size: 14px; }
nav { padding: 8px 32px; background: #e8edf2; font-size: 13px; }
nav a { margin-right: 14px; color: #1f3b57; text-decoration: none; }
main { padding: 8px 32px 32px 32px; max-width: 1100px; }
section { background: #fff; border: 1px solid #dde3ea; border-radius: 6px; padding: 12px 20px; margin: 16px 0; }
h2 { font-size: 18px; margin: 6px 0 10px 0; color: #1f3b57; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border-bottom: 1px solid #e3e7ec; padding: 4px 10px; text-align: right; }
th { background: #f1f4f7; }
td.l, th.l { text-align: left; }
.kv td:first-child { text-align: left; font-weight: 600; }
.kv td { text-align: left; }
.big { font-size: 26px; font-weight: 600; color: #1f3b57; }
.note { color: #666; font-size: 12px; }
.err { color: #b00020; }
pre { background: #f1f4f7; padding: 8px 12px; overflow-x: auto; font-size: 12px; white-space: pre-wrap; }
figure { margin: 8px 0; }
figure svg { max-width: 100%; height: auto; }
#heatmaps figure { display: inline-block; vertical-align: top; margin-right: 12px; }
.scroll { max-height: 420px; overflow-y: auto; }
"""


@dataclass
class Section:
    id: str
    title: str
    body: str  # HTML


def esc(x) -> str:
    return html.escape(str(x), quote=True)


def page(title: str, subtitle: str, sections: list) -> str:
    """The whole page: header, a table of contents, the sections."""
    nav = "".join(f'<a href="#{esc(s.id)}">{esc(s.title)}</a>' for s in sections)
    body = "\n".join(f'<section id="{esc(s.id)}">\n<h2>{esc(s.title)}</h2>\n{s.body}\n</section>' for s in sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>\n"
        f"<nav>{nav}</nav>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def table(headers: list, rows: list, cls: str = "", left: int = 1) -> str:
    """A table; the first `left` columns are left-aligned. Cells are escaped."""

    def cell(tag, i, v):
        return f'<{tag} class="l">{esc(v)}</{tag}>' if i < left else f"<{tag}>{esc(v)}</{tag}>"

    head = "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(headers)) + "</tr>" if headers else ""
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>" for r in rows)
    return f'<table class="{esc(cls)}">{head}{body}</table>'


def key_values(pairs: list) -> str:
    return table([], [list(p) for p in pairs], cls="kv", left=2)


def figure(plot, *args, caption: str = "", **kw) -> str:
    """An inline SVG of `plot(*args, path, **kw)` (a latitude.plots function that writes the
    file named by `path`)."""
    with tempfile.TemporaryDirectory(prefix="latitude-fig-") as tmp:
        path = os.path.join(tmp, "figure.svg")
        plot(*args, path, **kw)
        with open(path, encoding="utf-8") as f:
            svg = f.read()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and DOCTYPE
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    cap = f"<figcaption class='note'>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure class="plot">{_unique_ids(svg)}{cap}</figure>'


_figures = 0


def _unique_ids(svg: str) -> str:
    """Prefix the SVG's ids (and references to them) so several figures share a page."""
    global _figures
    _figures += 1
    prefix = f"f{_figures}-"
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    if not ids:
        return svg
    pattern = re.compile(r'(\bid="|#)(' + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: m.group(1) + prefix + m.group(2), svg)


def write(path: str, text: str) -> None:
    """Write the page atomically (into an existing directory: a page is not a tree of files)."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError("-o", f"no such directory: {directory}")
    write_text(path, text, "report")
