"""The HTML report in a real headless browser (Debian's chromium, scripts/debian-packages-report.txt):
it renders its sections, every image decodes, nothing is logged as an error, and a screenshot is not
blank. Chromium is driven over the DevTools pipe (tests/headless_chromium.py); a deliberately broken
page shows that errors and broken images are caught, so a clean result means something."""
import pytest

import headless_chromium
import reframe_reports as rr
from conftest import require_tools
from png_check import png_colours
from scalebench.reporting import report

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
    assert page.headings[:3] == ["HPL", "Applications", "Microbenchmarks"] and "Provenance" in page.headings
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
