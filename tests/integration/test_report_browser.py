"""The HTML report in a real headless browser (Debian's chromium, scripts/debian-packages-report.txt):
it renders its sections, every image decodes, nothing is logged as an error, and a screenshot is not
blank. Chromium is driven over the DevTools pipe (tests/headless_chromium.py); a deliberately broken
page shows that errors and broken images are caught, so a clean result means something.

A committee's report (a real multi-stack run beside a study with a noisy case, a cut-short run, energy
and acceptance thresholds: reframe_reports.committee_study) fits the window at 1280 and 1920 px, no
table cell is taller than a few lines, and printed to PDF (Chromium's --print-to-pdf, every page
rendered by poppler's pdftoppm) no table row or figure is cut at a page's edge."""
import json
import subprocess
from pathlib import Path

import pytest

import headless_chromium
import reframe_reports as rr
from conftest import REPO, require_tools
from png_check import png_colours
from scalebench import report

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    require_tools("chromium")
    root = tmp_path_factory.mktemp("results")
    for stack, cases in rr.two_stack_study().items():
        rr.write_run(root, f"run-{stack}", cases)
    return report.write_report([root], root / "report", formats=("html",)).files["html"]


def test_report_renders_with_images_and_no_console_errors(report_page):
    page = headless_chromium.load(report_page)
    assert page.errors == []
    assert page.headings[:4] == ["Summary", "HPL", "Applications", "Microbenchmarks"] and "Provenance" in page.headings
    assert len(page.images) == 4  # HPL, LAMMPS, OpenFOAM, interconnect
    assert all(complete and width > 100 and height > 100 for complete, width, height in page.images)
    assert png_colours(page.screenshot) > 10  # text, tables and plots, not a blank page


def test_the_check_catches_a_broken_page(tmp_path):
    require_tools("chromium")
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title></head><body>'
                   '<img src="missing.png"><img src="data:image/png;base64,AAAA">'
                   '<script>console.error("boom"); no_such_function();</script></body></html>')
    page = headless_chromium.load(bad)
    assert any("ERR_FILE_NOT_FOUND" in e for e in page.errors)
    assert any("boom" in e for e in page.errors) and any("no_such_function" in e for e in page.errors)
    assert [width for _, width, _ in page.images] == [0, 0]


# --- tables that fit, a print that holds ------------------------------------------------------------

LINES = 4  # a table cell may hold this many lines of text, no more: beyond, a note has been squeezed into it


@pytest.fixture(scope="module")
def committee_page(tmp_path_factory):
    require_tools("chromium")
    root = rr.committee_study(tmp_path_factory.mktemp("results"))
    return report.write_report([root], root / "report", formats=("html",),
                               thresholds=REPO / "site_configs" / "acceptance.yaml").files["html"]


# What a reader meets at a width: the page's width against the window's, each table's right edge against
# the body's, and every cell taller than LINES lines of its own line height (padding left out).
FIT_JS = """(() => {
  const body = document.body.getBoundingClientRect();
  const tables = Array.from(document.querySelectorAll('table'));
  const text = (node) => node.textContent.replace(/\\s+/g, ' ').trim().slice(0, 70);
  const tall = [];
  for (const cell of document.querySelectorAll('td, th')) {
    const style = getComputedStyle(cell);
    const line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
    const inner = cell.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    if (inner > %d * line + 1) tall.push([Math.round(inner / line), text(cell)]);
  }
  return {page: document.documentElement.scrollWidth, window: window.innerWidth,
          wide: tables.filter(t => t.getBoundingClientRect().right > body.right + 1)
                      .map(t => [Math.round(t.getBoundingClientRect().width), text(t.querySelector('tr'))]),
          tall: tall, tables: tables.length};
})()""" % LINES


@pytest.mark.parametrize("width", [1280, 1920])
def test_committee_report_fits_the_window(committee_page, width):
    with headless_chromium.opened(committee_page, width=width) as page:
        found = page.evaluate(FIT_JS)
        assert page.errors() == []
    assert found["tables"] > 10
    assert found["wide"] == [], f"tables wider than the page body at {width} px"
    assert found["page"] <= found["window"], f"the page scrolls sideways at {width} px"
    assert found["tall"] == [], f"cells taller than {LINES} lines at {width} px"


def test_committee_report_opens_with_the_answer_and_its_links_lead_to_sections(committee_page):
    with headless_chromium.opened(committee_page, width=1400) as page:
        found = page.evaluate("""(() => {
          const links = Array.from(document.querySelectorAll('a[href^="#"]'), a => a.getAttribute('href').slice(1));
          const first = document.querySelector('h2');
          const nav = document.querySelector('nav');
          return {first: first.textContent, nav_after: !!(first.compareDocumentPosition(nav) & 4),
                  summary_links: Array.from(document.querySelectorAll('h2 ~ *'))
                                      .filter(e => nav.compareDocumentPosition(e) & 2)
                                      .flatMap(e => Array.from(e.querySelectorAll('a'), a => a.getAttribute('href'))),
                  broken: links.filter(id => !document.getElementById(id))};
        })()""")
    assert found["first"] == "Summary" and found["nav_after"]  # the answer, then the table of contents
    assert found["broken"] == []
    assert {"#hpl", "#acceptance", "#energy-to-solution", "#what-to-re-run", "#interference-and-noise",
            "#failures-and-skipped-cases", "#bake-off-stacks-against-tcp"} <= set(found["summary_links"])


# Printed: rows (with the lines under them) and figures painted in colours no report uses, so that each
# shows in the rendered pages as one band of its colour. A row or figure cut at a page's edge shows as
# two bands, one at the foot of a page and one at the head of the next: more bands than the page has.
PRINT_MARKS = """<style>
tbody:nth-of-type(odd) td{background:#ff00ff !important}tbody:nth-of-type(even) td{background:#00ffff !important}
th{background:#00ff00 !important}figure{outline:16px solid #ffff00 !important;outline-offset:-16px}
</style></head>"""
BANDS = {"row": ((255, 0, 255), (0, 255, 255)), "figure": ((255, 255, 0),)}
PRINTED_WIDTH = 718  # CSS px: an A4 page's width less the report's print margins (10 mm each side: 190 mm)


def _ppm(data: bytes) -> tuple[int, int, bytes]:
    """(width, height, RGB bytes) of a binary PPM (P6, 8 bits), as pdftoppm writes it."""
    fields, rest = [], data
    while len(fields) < 4:
        rest = rest.lstrip()
        while rest.startswith(b"#"):
            rest = rest.split(b"\n", 1)[1].lstrip()
        field, rest = rest.split(maxsplit=1) if len(fields) < 3 else (rest.split(b"\n", 1)[0], b"")
        fields.append(field)
    if fields[0] != b"P6" or fields[3] != b"255":
        raise ValueError("not an 8-bit binary PPM")
    width, height = int(fields[1]), int(fields[2])
    return width, height, data[len(data) - 3 * width * height:]


def _bands(width: int, height: int, pixels: bytes) -> dict[str, int]:
    """Per kind (row, figure), the bands of its colours down the page: a pixel line belongs to the
    colour most of its marked pixels have (at least 8 of them), and a band is a run of lines of one
    colour, gaps of up to 3 lines (a border between a row and the line under it) included."""
    colours = {colour: kind for kind, found in BANDS.items() for colour in found}
    counts = dict.fromkeys(BANDS, 0)
    last, gap = None, 0
    for y in range(height):
        line = pixels[3 * width * y: 3 * width * (y + 1)]
        seen: dict[tuple[int, int, int], int] = {}
        for x in range(0, 3 * width, 3):
            pixel = (line[x], line[x + 1], line[x + 2])
            near = next((c for c in colours if all(abs(a - b) < 40 for a, b in zip(pixel, c))), None)
            if near is not None:
                seen[near] = seen.get(near, 0) + 1
        colour = max(seen, key=seen.get) if seen and max(seen.values()) >= 8 else None
        if colour is None:
            gap += 1
            if gap > 3:
                last = None
            continue
        if colour != last:
            counts[colours[colour]] += 1
        last, gap = colour, 0
    return counts


def test_committee_report_prints_on_a4_with_no_row_or_figure_cut(committee_page, tmp_path):
    require_tools("pdftoppm")
    marked = tmp_path / "marked.html"
    marked.write_text(committee_page.read_text().replace("</head>", PRINT_MARKS, 1))
    with headless_chromium.opened(marked, width=PRINTED_WIDTH) as page:
        page.media("print")
        laid_out = page.evaluate("""(() => ({page: document.documentElement.scrollWidth, window: innerWidth,
            rows: document.querySelectorAll('tbody').length,
            figures: document.querySelectorAll('figure').length}))()""")
    assert laid_out["page"] <= laid_out["window"], "printed, the report is wider than an A4 page"
    pdf = headless_chromium.print_to_pdf(marked, tmp_path / "report.pdf")
    subprocess.run(["pdftoppm", "-r", "40", str(pdf), str(tmp_path / "page")], check=True, timeout=300)
    pages = sorted(tmp_path.glob("page-*.ppm"))
    assert len(pages) > 3
    bands = {"row": 0, "figure": 0}
    for path in pages:
        width, height, pixels = _ppm(path.read_bytes())
        assert width < height  # portrait A4
        for kind, n in _bands(width, height, pixels).items():
            bands[kind] += n
    assert bands == {"row": laid_out["rows"], "figure": laid_out["figures"]}, \
        "a row or figure cut at a page edge shows as two bands"
