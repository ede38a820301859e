"""A report as a list of blocks (headings, paragraphs, tables, lists, charts), rendered to a terminal,
Markdown or one self-contained HTML page. Sections build blocks once; each format is one renderer,
so the three outputs cannot drift apart.

Tables hold short cells: what does not fit a column (a note, a reason, a path) is a line under its row
(Table.notes), which HTML shows under the row across the table and Markdown and text as numbered notes
under the table. Columns of numbers are right-aligned in every format. Text may lead to a heading
(Ref): a link in HTML and Markdown.

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
class Ref:
    """Text that leads to a heading of the same report: a link in HTML and Markdown, the text alone in a
    terminal. A heading that is not in the report leaves the text alone."""
    text: str
    heading: str  # the heading's text (its first occurrence)


@dataclass(frozen=True)
class Span:
    """Text and Refs one after the other."""
    parts: tuple[str | Ref, ...]


def span(*parts: str | Ref) -> Span:
    return Span(parts)


Inline = str | Ref | Span  # a paragraph, a list item, a cell or a note; `code` spans allowed in text


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Text:
    text: Inline


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str | Ref, ...], ...]
    notes: tuple[tuple[Inline, ...], ...] = ()  # per row (or none at all): the lines shown under it


@dataclass(frozen=True)
class Bullets:
    items: tuple[Inline, ...]


@dataclass(frozen=True)
class Figure:
    chart: Chart


@dataclass(frozen=True)
class Contents:
    """Where the HTML page's table of contents (its level-2 headings from here on) goes."""


Block = Heading | Text | Table | Bullets | Figure | Contents


def table(header: Sequence[str], rows: Sequence[Sequence[object]],
          notes: Sequence[Inline | Sequence[Inline]] | None = None) -> Table:
    """`notes`: per row, a line or lines to show under it ("" or () for none)."""
    lines = tuple((n,) if isinstance(n, (str, Ref, Span)) else tuple(n) for n in (notes or ()))
    lines = tuple(tuple(line for line in row if line) for row in lines)
    return Table(tuple(header), tuple(tuple(c if isinstance(c, Ref) else str(c) for c in row) for row in rows),
                 lines if any(lines) else ())


def bullets(items: Sequence[Inline]) -> Bullets:
    return Bullets(tuple(items))


def plain(text: Inline) -> str:
    """The text alone, links left out."""
    if isinstance(text, Span):
        return "".join(map(plain, text.parts))
    return text.text if isinstance(text, Ref) else text


def row_notes(block: Table) -> list[tuple[Inline, ...]]:
    """The lines under each row (none where it has none)."""
    return list(block.notes) if block.notes else [() for _ in block.rows]


# A number as a cell shows it: 1234, -0.5, 1.2e+03, 87.5%, +2.5 pp, 1.97x, optionally "(+3.3%)" after it.
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?( ?(%|pp|x))?( \([-+]?[\d.]+%?\))?")
_NOTHING = ("", "-")


def numeric_columns(block: Table) -> tuple[bool, ...]:
    """Per column, whether it holds numbers (every cell a number or nothing): those are right-aligned."""
    columns = zip(*block.rows) if block.rows else ((),) * len(block.header)
    return tuple(bool(found) and all(_NUMBER.fullmatch(c) for c in found)
                 for found in ([plain(c) for c in column if plain(c) not in _NOTHING] for column in columns))


# --- plain text (terminals) ----------------------------------------------------------------------

def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] = ()) -> str:
    """Aligned plain-text table for terminals; control characters escaped, so a row stays a line.
    `right`: per column, whether it is right-aligned (numbers)."""
    header = [printable(str(c)) for c in header]
    rows = [[printable(str(c)) for c in row] for row in rows]
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    right = tuple(right) or (False,) * len(widths)
    fmt = "  ".join(f"{{:{'>' if r else '<'}{w}}}" for w, r in zip(widths, right))
    rule = "  ".join("-" * w for w in widths)
    return "\n".join(line.rstrip() for line in [fmt.format(*header), rule, *(fmt.format(*row) for row in rows)])


def _noted(block: Table, cell: Callable[[Inline], str]) -> tuple[list[list[str]], list[str]]:
    """Rows with a note marker [n] after their first cell, and the notes as '[n] line' (Markdown, text),
    each cell and note as `cell` renders it."""
    rows, lines, marks = [], [], 0
    for row, notes in zip(block.rows, row_notes(block)):
        cells = [cell(c) for c in row]
        if notes:
            marks += 1
            cells[0] = f"{cells[0]} [{marks}]"
            lines += [f"[{marks}] {cell(line)}" for line in notes]
        rows.append(cells)
    return rows, lines


def render_text(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out += [block.text, ("=" if block.level <= 2 else "-") * len(block.text)]
        elif isinstance(block, Text):
            out.append(plain(block.text))
        elif isinstance(block, Table):
            rows, notes = _noted(block, plain)
            out.append(text_table(block.header, rows, numeric_columns(block)))
            out += [printable(line) for line in notes]
        elif isinstance(block, Bullets):
            out += [f"- {plain(item)}" for item in block.items]
        elif isinstance(block, Figure):
            out.append(f"[plot: {block.chart.caption}]")
        elif isinstance(block, Contents):
            continue
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


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] = (),
                   escaped: bool = False) -> str:
    """`right`: per column, right-aligned (numbers); `escaped`: the cells are Markdown already."""
    right = tuple(right) or (False,) * len(header)
    cell = (lambda c: c) if escaped else (lambda c: _md(c, cell=True))
    lines = ["| " + " | ".join(_md(h, cell=True) for h in header) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def github_anchor(text: str, used: dict[str, int]) -> str:
    """The fragment a Markdown viewer (GitHub, GitLab, Pandoc's gfm) gives a heading: lower case,
    punctuation dropped, spaces as '-', a repeated one numbered."""
    base = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
    n = used.get(base, 0)
    used[base] = n + 1
    return f"{base}-{n}" if n else base


def _targets(blocks: Sequence[Block], anchor: Callable[[str], str]) -> list[str]:
    """Each heading's anchor, in order (`anchor` numbers the repeated ones)."""
    return [anchor(block.text) for block in blocks if isinstance(block, Heading)]


def _first(blocks: Sequence[Block], anchors: Sequence[str]) -> dict[str, str]:
    """Heading text -> the anchor of its first occurrence."""
    found: dict[str, str] = {}
    for heading, anchor in zip((b for b in blocks if isinstance(b, Heading)), anchors):
        found.setdefault(heading.text, anchor)
    return found


def _md_inline(text: Inline, links: Mapping[str, str], cell: bool = False) -> str:
    if isinstance(text, Span):
        return "".join(_md_inline(part, links, cell) for part in text.parts)
    if isinstance(text, Ref):
        shown = _md(text.text, cell).replace("[", "\\[").replace("]", "\\]")
        return f"[{shown}](#{links[text.heading]})" if text.heading in links else _md(text.text, cell)
    return _md(text, cell)


def render_markdown(blocks: Sequence[Block], image_link: Callable[[Chart], str]) -> str:
    """`image_link(chart)` gives the relative path of the chart's image file."""
    used: dict[str, int] = {}
    links = _first(blocks, _targets(blocks, lambda text: github_anchor(text, used)))
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {_md(block.text)}")
        elif isinstance(block, Text):
            out.append(_md_inline(block.text, links))
        elif isinstance(block, Table):
            rows, notes = _noted(block, lambda c: _md_inline(c, links, cell=True))
            out.append(markdown_table(block.header, rows, numeric_columns(block), escaped=True))
            if notes:  # Markdown already: a note's '|' escaped as in a cell, which a list item shows alike
                out += ["", "\n".join(f"- {line}" for line in notes)]
        elif isinstance(block, Bullets):
            out.append("\n".join(f"- {_md_inline(item, links)}" for item in block.items))
        elif isinstance(block, Figure):
            caption = _md(block.chart.caption).replace("[", "\\[").replace("]", "\\]")
            out.append(f"![{caption}]({image_link(block.chart)})")
        elif isinstance(block, Contents):
            continue
        out.append("")
    return "\n".join(out)


# --- HTML ------------------------------------------------------------------------------------------

# On screen, every table fits the body (72em) from a 1280 px window up: cells wrap at spaces when a table
# needs the room (numbers never), long ones anywhere but not narrower than a readable width, and notes
# sit under their rows across the table. Printed (A4), rows, the lines under them and figures
# are never cut at a page's edge, a table's header repeats on each page it spans, and what comes before
# the table of contents (the answer) is a page of its own.
_CSS = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;
color:#1b1b1b;line-height:1.45}
h1{border-bottom:2px solid #345;padding-bottom:.2em}h2{border-bottom:1px solid #99a;margin-top:2em}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em;max-width:100%}table.noted{width:100%}
th,td{border:1px solid #bbc;padding:.25em .6em;text-align:left;vertical-align:top}
td.word{white-space:nowrap}td.long{overflow-wrap:anywhere;min-width:12em}
th.num,td.num{text-align:right;font-variant-numeric:tabular-nums}td.num{white-space:nowrap}
th{background:#e8ecf2}tbody:nth-of-type(even){background:#f6f7f9}
tr.note td{white-space:normal;overflow-wrap:anywhere;border-top:1px dotted #dde;padding-left:1.6em;color:#333}
td.pass{background:#d9f2dc;font-weight:bold}td.fail{background:#f8d4d4;font-weight:bold}
td.nodata{background:#fbeecb;font-weight:bold}
code{background:#eef;padding:0 .2em;font-size:.95em}figure{margin:1em 0}
figure img{display:block;box-sizing:border-box;max-width:100%;height:auto;border:1px solid #dde}
figcaption{font-size:.9em;color:#445}
nav{background:#f3f5f8;padding:.5em 1em;border:1px solid #dde}nav ul{margin:.2em 0}
@page{size:A4;margin:10mm}
@media print{
body{max-width:none;margin:0;padding:0;font-size:9pt;line-height:1.3}
h2{margin-top:1.2em}h2,h3{break-after:avoid;page-break-after:avoid}
table{font-size:7.5pt}td,th{padding:.15em .3em}td.word{white-space:normal}td.long{min-width:8em}
thead{display:table-header-group}
tbody,tr,figure{break-inside:avoid;page-break-inside:avoid}
a{color:inherit;text-decoration:none}nav{break-before:page}
}
""".strip()
_STATUS_CLASS = {"PASS": "pass", "PASSED": "pass", "FAIL": "fail", "FAILED": "fail", "NO DATA": "nodata",
                 "NOT DECIDED": "nodata", "NOISY": "nodata"}
_WORD = 16  # characters: a cell up to this long ("openmpi-sm", "1 x 2") stays on one line
_SHORT = 24  # characters: a longer table cell (a path, a command line) may wrap anywhere


def _inline(text: Inline, links: Mapping[str, str] | None = None) -> str:
    if isinstance(text, Span):
        return "".join(_inline(part, links) for part in text.parts)
    if isinstance(text, Ref):
        shown = html.escape(text.text, quote=False)
        anchor = (links or {}).get(text.heading)
        return f'<a href="#{anchor}">{shown}</a>' if anchor else shown
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
    """The CSS class of a verdict cell ('PASS', 'FAIL 2/3', 'NO DATA', 'PASSED: 3 PASS'), None for other cells."""
    return next((css for word, css in _STATUS_CLASS.items()
                 if text == word or text.startswith((word + " ", word + ":"))), None)


def _cell(tag: str, text: str | Ref, links: Mapping[str, str], numeric: bool = False) -> str:
    shown = plain(text)
    size = "long" if len(shown) > _SHORT else "word" if len(shown) <= _WORD else ""
    css = [(_status(shown) or size) if tag == "td" else "", "num" if numeric else ""]
    attribute = f' class="{" ".join(c for c in css if c)}"' if any(css) else ""
    return f"<{tag}{attribute}>{_inline(text, links)}</{tag}>"


def _html_table(block: Table, links: Mapping[str, str]) -> str:
    """A row and the lines under it are a row group (tbody) of their own: striped as one, and never
    parted by a page break."""
    numeric = numeric_columns(block)
    head = "".join(_cell("th", h, links, right) for h, right in zip(block.header, numeric))
    columns = len(block.header)
    body = "".join(
        "<tbody><tr>" + "".join(_cell("td", c, links, right) for c, right in zip(row, numeric)) + "</tr>"
        + "".join(f'<tr class="note"><td colspan="{columns}">{_inline(line, links)}</td></tr>' for line in notes)
        + "</tbody>"
        for row, notes in zip(block.rows, row_notes(block)))
    css = ' class="noted"' if block.notes else ""
    return f"<table{css}><thead><tr>{head}</tr></thead>{body}</table>"


def render_html(blocks: Sequence[Block], title: str, images: Mapping[Chart, bytes]) -> str:
    """One self-contained page: styles inline, charts as PNG data URIs (`images` by chart),
    no scripts and no external resources. The table of contents goes where a Contents block is, else
    after the title and its first paragraph."""
    used: set[str] = set()
    anchors = _targets(blocks, lambda text: _anchor(text, used))
    links = _first(blocks, anchors)
    headings = iter(anchors)
    toc: list[str] = []
    body: list[str] = []
    contents_at: int | None = None
    for block in blocks:
        if isinstance(block, Heading):
            anchor = next(headings)
            if block.level == 2 and (contents_at is not None or not any(isinstance(b, Contents) for b in blocks)):
                toc.append(f'<li><a href="#{anchor}">{_inline(block.text)}</a></li>')
                contents_at = len(body) if contents_at is None else contents_at
            body.append(f'<h{block.level} id="{anchor}">{_inline(block.text)}</h{block.level}>')
        elif isinstance(block, Contents):
            contents_at = len(body)
        elif isinstance(block, Text):
            body.append(f"<p>{_inline(block.text, links)}</p>")
        elif isinstance(block, Table):
            body.append(_html_table(block, links))
        elif isinstance(block, Bullets):
            body.append("<ul>" + "".join(f"<li>{_inline(i, links)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, Figure):
            data = base64.b64encode(images[block.chart]).decode("ascii")
            caption = html.escape(block.chart.caption)
            body.append(f'<figure><img src="data:image/png;base64,{data}" alt="{caption}">'
                        f"<figcaption>{caption}</figcaption></figure>")
    if toc and contents_at is not None:
        body.insert(contents_at, f"<nav><strong>Contents</strong><ul>{''.join(toc)}</ul></nav>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title>"
            '<link rel="icon" href="data:,">'  # no favicon request: nothing leaves the file
            f"<style>{_CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")


def charts_of(blocks: Sequence[Block]) -> list[Chart]:
    return [b.chart for b in blocks if isinstance(b, Figure)]


__all__ = ["Block", "Bullets", "Chart", "Contents", "Figure", "Heading", "Inline", "Line", "Mark", "Panel", "Ref",
           "Span", "Table", "Text", "span", "bullets", "charts_of", "github_anchor", "markdown_table",
           "numeric_columns", "plain", "render_html", "render_markdown", "render_text", "row_notes", "table",
           "text_table"]
