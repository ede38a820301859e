"""A report as a list of blocks (headings, paragraphs, tables, lists, charts), rendered to a terminal,
Markdown or one self-contained HTML page. Sections build blocks once; each format is one renderer,
so the three outputs cannot drift apart.

Charts are plain data here (lines, marks, axes); scalebench.reporting.plots draws them with matplotlib only
when a format needs pictures, so terminal output never imports it.
"""
from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from scalebench.validation import printable


# --- charts as data -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Line:
    label: str  # ideal lines: what they model ("linear scaling"); one legend entry stands for all of them
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    group: str  # lines of one group (a stack) share a colour
    style: str = "measured"  # measured | ideal (grey, dashed, no markers) | model (dashed, in the group's colour)
    low: tuple[float, ...] = ()  # a band from low to high around the line (the spread of its runs)
    high: tuple[float, ...] = ()


@dataclass(frozen=True)
class Mark:
    x: float
    y: float
    text: str
    group: str
    vertical: bool = False  # also draw a vertical line at x (n1/2)


@dataclass(frozen=True)
class Panel:
    title: str
    xlabel: str
    ylabel: str
    lines: tuple[Line, ...]
    marks: tuple[Mark, ...] = ()
    xlog: bool = False  # log2 axis
    ylog: bool = False  # log10 axis
    y_from_zero: bool = False  # rates and efficiencies: a cropped axis exaggerates differences


@dataclass(frozen=True)
class Chart:
    name: str  # file stem for Markdown's image files
    caption: str
    panels: tuple[Panel, ...]


# --- blocks ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Text:
    text: str  # `code` spans allowed


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Figure:
    chart: Chart


Block = Heading | Text | Table | Bullets | Figure


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> Table:
    return Table(tuple(header), tuple(tuple(str(c) for c in row) for row in rows))


def bullets(items: Sequence[str]) -> Bullets:
    return Bullets(tuple(items))


# --- plain text (terminals) ----------------------------------------------------------------------

def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Aligned plain-text table for terminals; control characters escaped, so a row stays a line."""
    header = [printable(str(c)) for c in header]
    rows = [[printable(str(c)) for c in row] for row in rows]
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    rule = "  ".join("-" * w for w in widths)
    return "\n".join(line.rstrip() for line in [fmt.format(*header), rule, *(fmt.format(*row) for row in rows)])


def render_text(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out += [block.text, ("=" if block.level <= 2 else "-") * len(block.text)]
        elif isinstance(block, Text):
            out.append(block.text)
        elif isinstance(block, Table):
            out.append(text_table(block.header, block.rows))
        elif isinstance(block, Bullets):
            out += [f"- {item}" for item in block.items]
        elif isinstance(block, Figure):
            out.append(f"[plot: {block.chart.caption}]")
        out.append("")
    return "\n".join(out)


# --- Markdown --------------------------------------------------------------------------------------

_CODE = re.compile(r"`([^`]+)`")  # a code span, in Markdown and in the HTML renderer

_MD_OUTSIDE_CODE = str.maketrans({"\\": "\\\\", "<": "&lt;", ">": "&gt;", "&": "&amp;"})


def _md(text: str, cell: bool = False) -> str:
    """Text from the results as Markdown that shows it and does nothing else: one line (control
    characters escaped), no raw HTML (<script> shows as text), backslashes kept, and in a table cell
    no '|' that would end the cell. `code` spans stay code spans: their content is shown as written."""
    parts = _CODE.split(printable(str(text)))  # odd items: the content of code spans
    out = "".join(f"`{part}`" if i % 2 else part.translate(_MD_OUTSIDE_CODE) for i, part in enumerate(parts))
    return out.replace("|", "\\|") if cell else out


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_md(h, cell=True) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_md(c, cell=True) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(blocks: Sequence[Block], image_link: Callable[[Chart], str]) -> str:
    """`image_link(chart)` gives the relative path of the chart's image file."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {_md(block.text)}")
        elif isinstance(block, Text):
            out.append(_md(block.text))
        elif isinstance(block, Table):
            out.append(markdown_table(block.header, block.rows))
        elif isinstance(block, Bullets):
            out.append("\n".join(f"- {_md(item)}" for item in block.items))
        elif isinstance(block, Figure):
            caption = _md(block.chart.caption).replace("[", "\\[").replace("]", "\\]")
            out.append(f"![{caption}]({image_link(block.chart)})")
        out.append("")
    return "\n".join(out)


# --- HTML ------------------------------------------------------------------------------------------

_CSS = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;
color:#1b1b1b;line-height:1.45}
h1{border-bottom:2px solid #345;padding-bottom:.2em}h2{border-bottom:1px solid #99a;margin-top:2em}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}
th,td{border:1px solid #bbc;padding:.25em .6em;text-align:left;vertical-align:top}
td{white-space:nowrap}td.long{white-space:normal;overflow-wrap:anywhere}
th{background:#e8ecf2}tbody tr:nth-child(even){background:#f6f7f9}
td.pass{background:#d9f2dc;font-weight:bold}td.fail{background:#f8d4d4;font-weight:bold}
td.nodata{background:#fbeecb;font-weight:bold}
code{background:#eef;padding:0 .2em;font-size:.95em}figure{margin:1em 0}
figure img{max-width:100%;height:auto;border:1px solid #dde}figcaption{font-size:.9em;color:#445}
nav{background:#f3f5f8;padding:.5em 1em;border:1px solid #dde}nav ul{margin:.2em 0}
""".strip()
_STATUS_CLASS = {"PASS": "pass", "FAIL": "fail", "NO DATA": "nodata"}
_SHORT = 24  # characters: a table cell up to this long is kept on one line


def _inline(text: str) -> str:
    return _CODE.sub(r"<code>\1</code>", html.escape(text, quote=False))


def _anchor(text: str, used: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    anchor, n = base, 1
    while anchor in used:
        n += 1
        anchor = f"{base}-{n}"
    used.add(anchor)
    return anchor


def _status(text: str) -> str | None:
    """The CSS class of a verdict cell ('PASS', 'FAIL 2/3', 'NO DATA'), None for other cells."""
    return next((css for word, css in _STATUS_CLASS.items() if text == word or text.startswith(word + " ")), None)


def _cell(tag: str, text: str) -> str:
    # Short cells (numbers, "1 x 2") never wrap; long ones (paths, command lines) may.
    css = (_status(text) or ("long" if len(text) > _SHORT else None)) if tag == "td" else None
    attribute = f' class="{css}"' if css else ""
    return f"<{tag}{attribute}>{_inline(text)}</{tag}>"


def _html_table(block: Table) -> str:
    head = "".join(_cell("th", h) for h in block.header)
    body = "".join("<tr>" + "".join(_cell("td", c) for c in row) + "</tr>" for row in block.rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(blocks: Sequence[Block], title: str, images: Mapping[Chart, bytes]) -> str:
    """One self-contained page: styles inline, charts as PNG data URIs (`images` by chart),
    no scripts and no external resources."""
    used: set[str] = set()
    toc: list[str] = []
    body: list[str] = []
    contents_at = 0  # the table of contents goes after the title and its first paragraph
    for block in blocks:
        if isinstance(block, Heading):
            anchor = _anchor(block.text, used)
            if block.level == 2:
                toc.append(f'<li><a href="#{anchor}">{_inline(block.text)}</a></li>')
                contents_at = contents_at or len(body)
            body.append(f'<h{block.level} id="{anchor}">{_inline(block.text)}</h{block.level}>')
        elif isinstance(block, Text):
            body.append(f"<p>{_inline(block.text)}</p>")
        elif isinstance(block, Table):
            body.append(_html_table(block))
        elif isinstance(block, Bullets):
            body.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, Figure):
            data = base64.b64encode(images[block.chart]).decode("ascii")
            caption = html.escape(block.chart.caption)
            body.append(f'<figure><img src="data:image/png;base64,{data}" alt="{caption}">'
                        f"<figcaption>{caption}</figcaption></figure>")
    if toc:
        body.insert(contents_at, f"<nav><strong>Contents</strong><ul>{''.join(toc)}</ul></nav>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title>"
            '<link rel="icon" href="data:,">'  # no favicon request: nothing leaves the file
            f"<style>{_CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")


def charts_of(blocks: Sequence[Block]) -> list[Chart]:
    return [b.chart for b in blocks if isinstance(b, Figure)]


__all__ = ["Block", "Bullets", "Chart", "Figure", "Heading", "Line", "Mark", "Panel", "Table", "Text",
           "bullets", "charts_of", "markdown_table", "render_html", "render_markdown", "render_text",
           "table", "text_table"]
