"""The report's first page (scalebench.reporting.first_page): for each system and stack the best Rmax, the
efficiency at the largest scale, Gflop/s per watt, the acceptance verdict with its counts and what to
re-run, a bake-off's ranking; every figure the one its section shows, every link a heading of the report."""
import re
from pathlib import Path

import pytest

import reframe_reports as rr
from scalebench import report
from scalebench.reporting import acceptance, document, first_page, noise, store
from scalebench.reporting.sections import appendix, interference
from scalebench.reporting.document import Heading, Ref, Table, plain
from scalebench.reporting.hpl_table import model_expectations
from scalebench.reporting.table import figure_units

REPO = Path(__file__).resolve().parents[3]
THRESHOLDS = REPO / "site_configs" / "acceptance.yaml"


@pytest.fixture(scope="module")
def committee(tmp_path_factory):
    """The committee study's blocks, with the acceptance verdicts of the example thresholds."""
    root = rr.committee_study(tmp_path_factory.mktemp("results"))
    loaded = store.load([root], index=False)
    table = loaded.table
    verdicts = acceptance.judge(acceptance.load(THRESHOLDS, figure_units(table)), table,
                                expectations=model_expectations(table))
    return report.build_document(table, loaded.warnings, verdicts, THRESHOLDS), verdicts


def _section(blocks, title, level=2):
    start = next(i for i, b in enumerate(blocks) if isinstance(b, Heading) and b.text == title and b.level == level)
    end = next((i for i, b in enumerate(blocks[start + 1:], start + 1)
                if isinstance(b, Heading) and b.level <= level), len(blocks))
    return blocks[start:end]


def _rows(block: Table) -> list[dict[str, str]]:
    return [dict(zip(block.header, map(plain, row))) for row in block.rows]


def _glance_table(blocks) -> Table:
    return next(b for b in _section(blocks, first_page.TITLE)
                if isinstance(b, Table) and "Best Rmax (Gflop/s)" in b.header)


def _glance(blocks) -> dict[tuple[str, str], dict[str, str]]:
    return {(row["System"], row["Stack"]): row for row in _rows(_glance_table(blocks))}


def test_the_answer_comes_first_then_the_contents(committee):
    blocks, _ = committee
    headings = [b.text for b in blocks if isinstance(b, Heading) and b.level == 2]
    assert headings[:3] == ["Summary", "Acceptance", "HPL"]
    assert blocks[2] == Heading(2, first_page.TITLE)  # after the title and its line
    assert isinstance(_section(blocks, first_page.TITLE)[-1], document.Contents)  # the answer, then the contents


def test_each_system_and_stack_has_the_figures_its_sections_show(committee):
    blocks, _ = committee
    glance = _glance(blocks)
    assert set(glance) == {("cluster:cpu", "tcp"), ("cluster:cpu", "ucx"), ("local:default", "openmpi-sm"),
                           ("local:default", "openmpi-tcp"), ("local:default", "mpich")}
    hpl = _section(blocks, "HPL")
    core, detail = [_rows(b) for b in hpl if isinstance(b, Table)][:2]
    for (where, stack), row in glance.items():
        mine = [r for r in core if (r["System"], r["Stack"]) == (where, stack)]
        if not mine:  # the real run's openmpi-tcp and mpich ran the interconnect checks only
            assert row["Best Rmax (Gflop/s)"] == row["Efficiency at the largest scale"] == "-"
            continue
        best = next(r for r in mine if r["Scale"] == row["At"])
        assert row["Best Rmax (Gflop/s)"] == best["Rmax (Gflop/s)"]
        largest = next(r for r in mine if r["Scale"] == row["Largest scale"])
        assert row["Efficiency at the largest scale"] == largest["Efficiency"]
        assert largest is max(mine, key=lambda r: (int(r["Nodes"]), int(r["Ranks"])))
    # ucx's 4-node line is NOISY: its Rmax is not the best counted one, its efficiency is the largest scale's
    ucx = glance[("cluster:cpu", "ucx")]
    assert (ucx["Best Rmax (Gflop/s)"], ucx["At"]) == ("1790.00", "2_nodes")
    assert (ucx["Efficiency at the largest scale"], ucx["Largest scale"]) == ("87.5%", "4_nodes")
    tcp = glance[("cluster:cpu", "tcp")]
    assert (tcp["Best Rmax (Gflop/s)"], tcp["Efficiency at the largest scale"]) == ("3100.00", "77.5%")
    # Gflop/s per watt: the detail table's cell of the line it names
    watt = next(r for r in detail
                if (r["System"], r["Stack"], r["Scale"]) == ("cluster:cpu", "ucx", ucx["Gflop/s/W at"]))
    assert ucx["Best Gflop/s/W"] == watt["Gflop/s/W"] == f"{rr.HPL_RMAX['ucx'][1] / 500:.3g}"
    assert tcp["Best Gflop/s/W"] == "-"


def test_a_noisy_pick_says_so_under_its_row(committee):
    blocks, _ = committee
    table = _glance_table(blocks)
    notes = dict(zip((row[1] for row in table.rows), document.row_notes(table)))
    assert [plain(n) for n in notes["ucx"]] == ["4_nodes: only noisy runs measured it, not counted until re-run "
                                                "(What to re-run)"]
    assert notes["tcp"] == ()


def test_acceptance_verdicts_and_counts_are_those_of_the_acceptance_section(committee):
    blocks, verdicts = committee
    summary = _section(blocks, first_page.TITLE)
    said = plain(summary[1].text)
    assert said == (f"Acceptance against `{THRESHOLDS}`: {acceptance.decision(verdicts)} "
                    f"({acceptance.counts(verdicts)}).")
    assert acceptance.decision(verdicts) == "NOT DECIDED"
    section = next(b for b in _section(blocks, "Acceptance") if isinstance(b, Table))
    shown = _rows(section)
    for (where, stack), row in _glance(blocks).items():
        mine = [r for r in shown if (r["System"], r["Stack"]) == (where, stack)]
        counted = {status: sum(r["Verdict"].startswith(status) for r in mine)
                   for status in ("PASS", "FAIL", "NO DATA", "NOISY")}
        if not mine:
            assert row["Acceptance"] == "-"
            continue
        expected = ", ".join(f"{n} {status}" for status, n in counted.items() if n or status != "NOISY")
        assert row["Acceptance"].endswith(": " + expected)
    assert _glance(blocks)[("cluster:cpu", "ucx")]["Acceptance"] == "NOT DECIDED: 3 PASS, 0 FAIL, 1 NO DATA, 2 NOISY"
    assert _glance(blocks)[("cluster:cpu", "tcp")]["Acceptance"].startswith("PASSED: 4 PASS, 0 FAIL")


def test_what_to_rerun_is_what_the_noise_and_failure_sections_list(committee):
    blocks, _ = committee
    rerun = next(b for b in _section(blocks, first_page.RERUN, level=3) if isinstance(b, document.Bullets))
    items = [plain(item) for item in rerun.items]
    noisy = next(b for b in _section(blocks, "Interference and noise") if isinstance(b, Table))
    (case,) = noisy.rows
    (why,) = [plain(n) for n in document.row_notes(noisy)[0] if plain(n).startswith("Noisy because: ")]
    assert items[0] == f"{case[0]}: {why.removeprefix('Noisy because: ')} (see Interference and noise)"
    assert "DGEMM repeats disagree by 18%" in items[0] and "foreign load 0.59 cores on n002" in items[0]
    failures = _section(blocks, "Failures and skipped cases")
    (failed,) = next(b for b in failures if isinstance(b, document.Bullets)).items
    assert items[1] == f"{failed} (see Failures and skipped cases)" and rr.CUT_SHORT in items[1]
    counts = {key: row["Re-runs"] for key, row in _glance(blocks).items()}
    assert counts[("cluster:cpu", "ucx")] == counts[("cluster:cpu", "tcp")] == "1"
    assert counts[("local:default", "openmpi-sm")] == "0"


def test_the_ranking_is_the_bakeoffs(committee):
    blocks, _ = committee
    summary = _section(blocks, first_page.TITLE)
    ranking = next(_rows(b) for b in summary if isinstance(b, Table) and "Rank" in b.header)
    bakeoff = next(_rows(b) for b in _section(blocks, "Bake-off: stacks against tcp") if isinstance(b, Table))
    geomean = {row["Configuration"]: row["Geomean ratio"] for row in bakeoff}
    assert [(row["Stack"], row["Geomean ratio to tcp"]) for row in ranking] == [("ucx", geomean["ucx"]),
                                                                                ("tcp", geomean["tcp"])]
    ahead = float(geomean["ucx"]) / float(geomean["tcp"]) - 1
    assert ranking[0]["Ahead of the next by"] == f"{ahead:+.1%}" and ranking[1]["Ahead of the next by"] == "-"
    # and the systems, each with its best stack
    assert any(isinstance(b, Table) and "System" in b.header and "Rank" in b.header for b in summary)


def test_every_format_leads_with_it_and_links_to_its_sections(committee):
    blocks, _ = committee
    text = document.render_text(blocks)
    assert text.index("Summary\n=======") < text.index("What to re-run") < text.index("\nHPL\n===")
    md = document.render_markdown(blocks, lambda chart: "x.png")
    used: dict[str, int] = {}
    anchors = {document.github_anchor(line.lstrip("#").strip(), used)
               for line in md.splitlines() if re.match(r"#+ ", line)}
    links = set(re.findall(r"\]\(#([^)]+)\)", md))
    assert {"hpl", "acceptance", "energy-to-solution", "what-to-re-run", "interference-and-noise",
            "failures-and-skipped-cases", "bake-off-stacks-against-tcp"} <= links <= anchors
    page = document.render_html(blocks, "t", {chart: b"" for chart in document.charts_of(blocks)})
    ids = set(re.findall(r' id="([^"]+)"', page))
    assert set(re.findall(r'href="#([^"]+)"', page)) <= ids
    assert page.index("<h2 id=\"summary\">") < page.index("<nav>") < page.index("<h2 id=\"acceptance\">")


def test_refs_to_a_heading_the_report_lacks_are_text():
    blocks = [document.Text(document.span("see ", Ref("nowhere", "Missing")))]
    assert document.render_markdown(blocks, lambda c: "") == "see nowhere\n"
    assert "<p>see nowhere</p>" in document.render_html(blocks, "t", {})


def test_nothing_to_say_is_no_first_page(tmp_path):
    bandwidth, latency = rr.hockney(1.2, 12000.0)
    rr.write_run(tmp_path, "osu", rr.osu("ucx", bandwidth, latency))
    loaded = store.load([tmp_path], index=False)
    blocks = report.build_document(loaded.table, loaded.warnings)
    assert not any(isinstance(b, Heading) and b.text == first_page.TITLE for b in blocks)


def test_a_long_list_to_rerun_shows_the_first_and_counts_the_rest():
    """The noise section lists the first 200 of its noisy cases and counts them all: so does the page."""
    failures = [appendix.Failure("s:p", "x", f"case {i}: why", 1) for i in range(first_page.SHOWN + 3)]
    noisy = [interference.NoisyCase("s:p", "y", f"noisy {i}", "run", noise.Noise(("why",), None))
             for i in range(interference.ROW_LIMIT)]
    found = interference.Findings(1000, 1000, tuple(noisy), (), ((("s:p", "y"), 1000),))
    todo = first_page.reruns(found, failures)
    blocks = first_page.blocks([("s:p", "x"), ("s:p", "y")], [], None, None, [], todo)
    items = [plain(i) for i in blocks[-1].items]
    assert len(items) == 2 * first_page.SHOWN + 2
    assert items[first_page.SHOWN] == f"... and {1000 - first_page.SHOWN} more: Interference and noise"
    assert items[-1] == "... and 3 more: Failures and skipped cases"
    assert todo.by_place == {("s:p", "y"): 1000, ("s:p", "x"): first_page.SHOWN + 3}


def test_a_case_not_run_because_its_dependency_failed_says_so(tmp_path):
    """ReFrame records no phase and no reason for a fail_deps case: the line to re-run says what it was."""
    cases = [rr.testcase("HPLCheck", {"rmax": (10.0, "Gflop/s")}, params={"scale": "1_core"}, result="fail",
                         fail_phase="performance"),
             rr.testcase("HPLScalingCheck", {}, params={}, result="fail_deps")]
    sessions, _ = store.ingest([rr.write_run(tmp_path, "run", cases)])
    lines = [f.line for f in appendix.failures(sessions)]
    assert any(line.startswith("HPLScalingCheck on local:default (openmpi-sm): not run: a check it depends on failed")
               for line in lines), lines
    assert not any("None" in line for line in lines), lines
