"""Report sections from synthetic ReFrame reports (tests/reframe_reports.py: the real report's structure):
HPL, applications and microbenchmarks for two stacks, the charts as data, and the written files."""
import base64
import csv
import re
from pathlib import Path

import pytest

import reframe_reports as rr
from png_check import png_colours
from scalebench import registry
from scalebench.analysis import scaling
from scalebench.hpl.hpcc_output import parse_hpcc
from scalebench.hpl.output import parse_hpl
from scalebench.interconnect import curves
from scalebench import report
from scalebench.reporting import document, series, store as results
from scalebench.benchmarks import KINDS, BENCHMARKS
from scalebench.site_plan import CHECKS

REAL_REPORT = rr.REAL_REPORT


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Two runs, one per stack, each running HPL, LAMMPS, OpenFOAM and OSU on cluster:cpu."""
    root = tmp_path_factory.mktemp("results")
    for i, (stack, cases) in enumerate(rr.two_stack_study().items()):
        rr.write_run(root, f"2026010{i + 1}T000000Z-head-{i}", cases, start=f"2026010{i + 1}T000000+0000",
                     provenance={"git_describe": f"v0.1-{i}-g0000{i}"})
    return root


def _document(paths):
    loaded = results.load(paths, index=False)
    return report.build_document(loaded.table, loaded.warnings), loaded.table


def _section(blocks, title):
    """The blocks from the level-2 heading `title` to the next level-2 heading."""
    start = next(i for i, b in enumerate(blocks) if isinstance(b, document.Heading) and b.level == 2
                 and b.text == title)
    end = next((i for i, b in enumerate(blocks[start + 1:], start + 1)
                if isinstance(b, document.Heading) and b.level <= 2), len(blocks))
    return blocks[start:end]


def _tables(blocks):
    return [b for b in blocks if isinstance(b, document.Table)]


def _charts(blocks):
    return document.charts_of(blocks)


def test_registry_maps_checks_to_sections_and_directions():
    reg = registry.registry()
    assert reg["HPLCheck"].section == "hpl" and reg["HPLCheck"].fom == "rmax"
    assert reg["LAMMPSCheck"].figure("timesteps_per_s").direction == "higher"
    assert reg["OSULatencyCheck"].kind == "latency" and reg["OSULatencyCheck"].x == "msg_size"
    assert registry.split_sized(reg["OSUBandwidthCheck"], "bandwidth_1024") == ("bandwidth", 1024)
    assert registry.split_sized(reg["OSUBandwidthCheck"], "peak_1024") is None
    assert registry.lookup("NoSuchCheck").section == "other"


def test_hpl_and_hpcc_are_benchmarks_and_hpl_leads_the_plan_and_the_report(study):
    """HPL's and hpcc's benchmarks are listed like any other (scalebench.benchmarks), their parsers the HPL library's;
    HPL's leads: its checks open CHECKS, its section the report, before the shared sections."""
    found = {r.name: r for r in BENCHMARKS}
    hpl, hpcc = found["hpl"], found["hpcc"]
    assert hpl.leads and not hpcc.leads and KINDS["hpl"] == hpl.parse and KINDS["hpcc"] == hpcc.parse
    for kind, parse, vector in (("hpl", parse_hpl, "mnt_reform_hpl23.txt"),
                                ("hpcc", parse_hpcc, "hpcc150_8procs_full.txt")):
        text = (Path(__file__).parents[2] / "data" / kind / vector).read_text()
        assert KINDS[kind](text) == parse(text).to_dict()
    checks = [spec.name for spec in hpl.checks]
    assert list(CHECKS)[:len(checks)] == checks == ["HPLCheck", "HPLTuneCheck", "HPLScalingCheck"]
    assert [spec.name for spec in hpcc.checks] == ["NodeHealthCheck", "HPCCNetworkCheck"]
    assert registry.SECTIONS[0] == "hpl" and "hpl" not in registry.SECTIONS[1:]
    blocks, _ = _document([study])
    titles = [b.text for b in blocks if isinstance(b, document.Heading) and b.level == 2]
    assert titles.index("HPL") < titles.index("Applications") < titles.index("Microbenchmarks")


def test_sized_figures_become_one_row_per_message_size(study):
    rows = results.load([study], index=False).table.with_cases().filter(benchmark="OSUBandwidthCheck", stack="ucx")
    assert rows.height == len(rr.MESSAGE_SIZES) and set(rows["figure"]) == {"bandwidth"}
    assert sorted(rows["msg_size"]) == sorted(rr.MESSAGE_SIZES)


def test_hpl_section_scales_over_nodes_with_the_linear_line(study):
    blocks, _ = _document([study])
    hpl = _section(blocks, "HPL")
    scaling = next(t for t in _tables(hpl) if t.header[1] == "Nodes")
    ucx = [row for row in scaling.rows if row[0] == "ucx"]
    assert [row[1] for row in ucx] == ["1", "2", "4"]
    assert ucx[2][2:6] == ("3500.00", "3640.00", "3.85", "96.2%")  # Rmax, linear, speedup, parallel efficiency
    chart = _charts(hpl)[0]
    rmax_panel, eff_panel = chart.panels
    assert {(l.label, l.group, l.style) for l in rmax_panel.lines} >= {("ucx", "ucx", "measured"),
                                                                     ("linear scaling", "ucx", "ideal")}
    assert next(l for l in eff_panel.lines if l.label == "tcp").ys == pytest.approx((90.0, 85.0, 77.5))


def test_hpl_on_one_node_scales_over_cores(tmp_path):
    blocks, _ = _document([REAL_REPORT])
    hpl = _section(blocks, "HPL")
    scaling = next(t for t in _tables(hpl) if t.header[1] == "Cores")
    assert [row[:3] for row in scaling.rows] == [("openmpi-sm", "1", "45.74"), ("openmpi-sm", "2", "66.23")]
    assert _charts(hpl)[0].panels[0].xlabel == "Cores"
    assert document.Text("No application results.") in _section(blocks, "Applications")
    assert document.Text("No microbenchmark results.") in _section(blocks, "Microbenchmarks")


def test_application_section_marks_speedup_peaks_per_stack(study):
    blocks, _ = _document([study])
    apps = _section(blocks, "Applications")
    lammps = next(c for c in _charts(apps) if "LAMMPS" in c.caption)
    speedup_panel = lammps.panels[0]
    marks = {m.group: (m.x, round(m.y, 3)) for m in speedup_panel.marks}
    assert marks == {"tcp": (8, 5.2), "ucx": (8, round(720 / 104, 3))}  # peaks, then degrades at 16
    ideal = next(l for l in speedup_panel.lines if l.style == "ideal")
    assert ideal.xs == (1, 2, 4, 8, 16) and ideal.ys == (1, 2, 4, 8, 16)
    stacks = next(t for t in _tables(apps) if t.header[0] == "Stack" and t.header[1] == "Peak speedup")
    expected = scaling.stack_improvement(rr.LAMMPS_RATES["tcp"], rr.LAMMPS_RATES["ucx"], higher_is_better=True)
    ucx = next(row for row in stacks.rows if row[0] == "ucx")
    assert ucx[3] == f"{expected.at_peak:+.1%}" and ucx[4] == f"{expected.mean_to_peak:+.1%}"
    assert ucx[5] == f"{expected.average_to_peak:+.1%}" and "Average %" in stacks.header[5]
    # Interconnect value: processes ucx needs for tcp's peak speedup (5.2 at 8), from the metric.
    speedups = {stack: scaling.speedup(rates, higher_is_better=True) for stack, rates in rr.LAMMPS_RATES.items()}
    value = scaling.interconnect_value(speedups["tcp"], speedups["ucx"], 8)
    assert ucx[6] == f"{value.fewer_procs:g} ({value.p_other:.3g} instead of 8)" and value.fewer_procs > 0
    # OpenFOAM: a time per step, lower is better; speedup T(1)/T(4)
    openfoam = next(t for t in _tables(apps) if "Time per step (s/step)" in t.header)
    assert ("ucx", "4", "2.05", f"{7.9 / 2.05:.2f}") == next(r for r in openfoam.rows if r[:2] == ("ucx", "4"))[:4]


def test_weak_scaling_shows_efficiency_against_a_flat_ideal(tmp_path):
    rr.write_run(tmp_path, "weak", [*rr.lammps("ucx", {1: 100.0, 2: 98.0, 4: 90.0}, scaling="weak"),
                                    *rr.lammps("ucx", {1: 100.0, 2: 190.0, 4: 300.0})])
    blocks, rows = _document([tmp_path])
    apps = _section(blocks, "Applications")
    titles = [b.text for b in apps if isinstance(b, document.Heading) and b.level == 3]
    assert titles == ["LAMMPS scaling=strong workload=lj on cluster:cpu", "LAMMPS scaling=weak workload=lj on cluster:cpu"]
    weak_chart = next(c for c in _charts(apps) if "weak" in c.caption)
    panel = weak_chart.panels[0]
    assert panel.title.startswith("Weak-scaling efficiency")
    assert next(l for l in panel.lines if l.group == "ucx").ys == pytest.approx((1.0, 0.98, 0.90))
    assert next(l for l in panel.lines if l.style == "ideal").ys == (1.0, 1.0, 1.0)
    weak = next(t for t in _tables(apps) if "Weak-scaling efficiency" in t.header)
    assert "Speedup" not in weak.header  # the problem grows with the processes: no speedup
    assert [r[3] for r in weak.rows] == ["100.0%", "98.0%", "90.0%"]


def test_microbenchmark_section_n_half_surprise_and_summaries(study):
    blocks, _ = _document([study])
    micro = _section(blocks, "Microbenchmarks")
    stacks = next(t for t in _tables(micro) if t.header[1] == "Peak bandwidth (MB/s)")
    tcp = next(r for r in stacks.rows if r[0] == "tcp")
    bandwidth, _ = rr.hockney(*rr.INTERCONNECT["tcp"])
    half = curves.half_power_point(sorted(bandwidth.items()))
    assert tcp[1] == f"{half.peak_bandwidth:.1f}" and tcp[3].endswith(f"({half.method})")
    assert tcp[5] == "1.50x at 8.0 KiB"  # the synthetic rendezvous bump
    chart = _charts(micro)[0]
    assert [p.title for p in chart.panels] == ["Bandwidth (cluster:cpu)", "Latency (cluster:cpu)"]
    assert {m.group for m in chart.panels[0].marks} == {"tcp", "ucx"} and all(m.vertical for m in chart.panels[0].marks)
    summaries = [t for t in _tables(micro) if t.header[2] == "Min ratio"]
    assert len(summaries) == 2  # bandwidth and latency
    ucx = next(r for r in summaries[1].rows if r[0] == "ucx")
    assert float(ucx[3]) > 1  # ucx is better than the tcp baseline
    health = [i for b in micro if isinstance(b, document.Bullets) for i in b.items]
    assert any(re.match(r"health: tcp is [\d.]+x to [\d.]+x worse than ucx at \d+ sizes", i) for i in health)


def test_unregistered_checks_land_in_other_results(tmp_path):
    case = rr.testcase("SiteMemoryCheck", {"triad": (52000.0, "MB/s")}, params={"scale": "1_node"}, stack="s")
    rr.write_run(tmp_path, "run", [case])
    blocks, _ = _document([tmp_path])
    other = _section(blocks, "Other results")
    assert _tables(other)[0].rows == (("local:default", "SiteMemoryCheck", "-", "s", "triad", "1", "5.2e+04", "MB/s",
                                       "1"),)


def test_repeats_are_summarised_by_their_median(tmp_path):
    for i, rate in enumerate((100.0, 130.0, 90.0)):
        rr.write_run(tmp_path, f"run{i}", rr.lammps("ucx", {1: rate, 2: 2 * rate}))
    (one,) = series.select(series.build(results.load([tmp_path]).table), figure="timesteps_per_s")
    assert one.points == {1: 100.0, 2: 200.0} and one.runs == {1: 3, 2: 3}


def test_bake_off_section_appears_when_a_system_ran_two_stacks(study):
    blocks, _ = _document([study])
    assert any(isinstance(b, document.Heading) and b.text == "Bake-off: stacks against tcp" for b in blocks)
    provenance = _section(blocks, "Provenance")
    runs = _tables(provenance)[0]
    assert [row[5] for row in runs.rows] == ["v0.1-0-g00000", "v0.1-1-g00001"]


def test_written_files_md_html_and_csv_when_asked(study, tmp_path):
    assert set(report.write_report([study], tmp_path / "default").files) == {"md", "html"}  # no CSV unasked
    written = report.write_report([study], tmp_path / "out", formats=("md", "html", "csv"))
    md, html, table = (written.files[f] for f in ("md", "html", "csv"))
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md.read_text())
    assert len(images) == 4 and all((md.parent / image).read_bytes()[:4] == b"\x89PNG" for image in images)
    page = html.read_text()
    assert "<script" not in page and not re.search(r"(src|href)=\"(?!data:|#)", page)  # self-contained
    uris = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(uris) == 4 and all(png_colours(base64.b64decode(u)) > 2 for u in uris)
    for heading in ("HPL", "Applications", "Microbenchmarks", "Provenance"):
        assert f">{heading}</h2>" in page
    with table.open() as handle:
        lines = list(csv.DictReader(handle))
    assert len(lines) == written.table.record_count
    assert all(None not in line for line in lines)  # as many cells as columns on every line
    openfoam = next(line for line in lines if line["benchmark"] == "OpenFOAMCheck")
    assert openfoam["param_case"] == "cavity" and openfoam["case"].startswith("OpenFOAMCheck %scale=")


def test_format_option_is_checked():
    assert report.parse_formats("html, md") == ("html", "md")
    with pytest.raises(Exception, match="--format: pdf not one of md, html, csv, txt"):
        report.parse_formats("md,pdf")


def test_text_renderer_aligns_tables():
    text = document.render_text([document.Heading(2, "T"), document.table(("a", "bb"), [("xxx", "y")])])
    assert text.splitlines()[:6] == ["T", "=", "", "a    bb", "---  --", "xxx  y"]


def test_chart_rendering_is_deterministic_and_non_blank():
    from scalebench.reporting import plots

    chart = document.Chart("c", "caption", (document.Panel("p", "x", "y", (
        document.Line("s", (1, 2, 4), (1.0, 1.9, 3.5), "s"),
        document.Line("ideal", (1, 2, 4), (1, 2, 4), "ideal", style="ideal")),
        (document.Mark(4, 3.5, "peak", "s"),), xlog=True),))
    png = plots.render(chart)
    assert png == plots.render(chart) and png_colours(png) > 2


def test_markdown_paths_are_relative(study, tmp_path):
    written = report.write_report([study], tmp_path / "o", formats=("md",))
    assert "](report_files/01-" in written.files["md"].read_text()


def _performance_functions() -> dict[str, set[str]]:
    """Check class -> the figure names its figures() method names (its perf variables), read from
    reframe_tests/ without ReFrame."""
    import ast

    def named(method: ast.FunctionDef) -> set[str]:
        names = set()
        for node in ast.walk(method):
            if isinstance(node, ast.Dict):  # {'rmax': ..., **more}
                names |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):  # found['solve_cv'] = ...
                if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                    names.add(node.slice.value)
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "update":  # found.update(a=...)
                names |= {k.arg for k in node.keywords if k.arg}
        return names

    checks: dict[str, set[str]] = {}
    for path in (Path(__file__).resolve().parents[3] / "reframe_tests").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                checks[node.name] = set().union(*(named(f) for f in node.body
                                                  if isinstance(f, ast.FunctionDef) and f.name == "figures"))
    return {name: figures for name, figures in checks.items() if figures}


def test_registry_knows_every_figure_of_every_check():
    checks = _performance_functions()
    assert "HPLCheck" in checks
    for name, figures in checks.items():
        bench = registry.registry().get(name)
        assert bench is not None, f"{name} is missing from scalebench/data/benchmarks.yaml"
        assert figures <= set(bench.figures), f"{name}: {sorted(figures - set(bench.figures))} not registered"


@pytest.mark.parametrize("text, message", [
    ("X: {section: hpl, figures: {a: {direction: up}}}", "X.figures.a.direction: 'up' is not one of"),
    ("X: {section: hpc, figures: {a: {direction: higher}}}", "X.section: 'hpc' is not one of hpl, application, "
                                                               "microbenchmark, screening, other, stream (did you mean 'hpl'?)"),
    ("X: {section: hpl, fom: b, figures: {a: {direction: higher}}}", "X.fom: 'b' is not one of a"),
    ("X: {section: hpl, figres: {}}", "X.figres: unknown key (did you mean 'figures'?)"),
])
def test_registry_mistakes_are_named(tmp_path, text, message):
    path = tmp_path / "benchmarks.yaml"
    path.write_text(text)
    with pytest.raises(Exception, match=re.escape(message)):
        registry.load(path)


def test_big_reports_draw_charts_in_a_worker_process(study, tmp_path, monkeypatch):
    """The same pictures from the worker process (used from WORKER_FROM_BYTES of run reports)."""
    here = report.write_report([study], tmp_path / "here", formats=("html",)).files["html"].read_text()
    monkeypatch.setattr(report, "WORKER_FROM_BYTES", 0)
    written = report.write_report([study], tmp_path / "worker", formats=("html",))
    assert written.warnings == []
    page = written.files["html"].read_text()
    assert re.findall(r'src="(data:[^"]+)"', page) == re.findall(r'src="(data:[^"]+)"', here)


def test_a_failing_worker_leaves_the_charts_to_this_process(study, tmp_path, monkeypatch):
    from scalebench.reporting import chart_worker

    monkeypatch.setattr(report, "WORKER_FROM_BYTES", 0)
    monkeypatch.setattr(chart_worker, "_COMMAND", "import sys; sys.exit(3)")
    written = report.write_report([study], tmp_path / "out", formats=("md",))
    assert any("chart worker failed (it ended without its charts)" in w for w in written.warnings)
    assert len(list((tmp_path / "out" / "report_files").glob("*.png"))) == 4


def test_a_worker_that_cannot_start_leaves_the_charts_to_this_process(study, tmp_path, monkeypatch):
    from scalebench.reporting import chart_worker

    def no_processes(*args, **kwargs):
        raise OSError("no processes here")

    monkeypatch.setattr(report, "WORKER_FROM_BYTES", 0)
    monkeypatch.setattr(chart_worker.subprocess, "Popen", no_processes)
    written = report.write_report([study], tmp_path / "out", formats=("md",))
    assert any("chart worker failed (OSError: no processes here)" in w for w in written.warnings)
    assert len(list((tmp_path / "out" / "report_files").glob("*.png"))) == 4


def test_a_hung_worker_is_stopped(monkeypatch):
    """Past its time limit the worker is killed and the charts are drawn here."""
    import time as clock

    from scalebench.reporting import chart_worker

    monkeypatch.setattr(chart_worker, "_TIMEOUT_S", 0.5)
    monkeypatch.setattr(chart_worker, "_COMMAND", "import time; time.sleep(60)")
    chart = document.Chart("c", "caption", (document.Panel("p", "x", "y", (
        document.Line("s", (1, 2), (1.0, 2.0), "s"),)),))
    worker = chart_worker.ChartWorker()
    process = worker._proc
    worker.submit([chart])
    monkeypatch.setattr(chart_worker, "draw_here", lambda charts, everything=None: {c: b"png" for c in charts})
    start = clock.monotonic()
    assert worker.result() == {chart: b"png"}
    assert "TimeoutError" in worker.failure and clock.monotonic() - start < 20
    assert process.poll() is not None


def _sleep_then_draw(charts, everything=None):
    import time as clock

    clock.sleep(60)


def _netpipe_case(stack: str, t0_us: float, peak_MBps: float, environ: str):
    bandwidth, latency = rr.hockney(t0_us, peak_MBps)
    figures = {**{f"latency_{s}": (v, "us") for s, v in latency.items() if s},
               **{f"bandwidth_{s}": (v, "MB/s") for s, v in bandwidth.items() if s},
               "min_latency": (latency[1], "us")}
    return rr.testcase("NetPIPECheck", figures, params={"placement": "intra_node"}, stack=stack, environ=environ,
                       num_tasks=2)


def test_one_check_gives_both_curves_and_the_stack_that_ran_most_is_the_baseline(tmp_path):
    hpcc = {"pingpong_latency_avg": (0.44, "us"), "random_ring_latency": (0.36, "us"),
            "random_ring_bandwidth": (6.2, "GB/s")}
    cases = [_netpipe_case("openmpi-sm", 0.4, 6000.0, "openmpi"), _netpipe_case("mpich", 0.5, 7000.0, "mpich"),
             _netpipe_case("openmpi-tcp", 6.0, 1500.0, "openmpi-tcp"),
             *rr.hpl("openmpi-sm", {1: 80.0}, system="local", partition="default"),
             rr.testcase("HPCCNetworkCheck", hpcc, params={}, stack="openmpi-sm", num_tasks=2),
             rr.testcase("HPCCNetworkCheck", {k: (v * 10, u) for k, (v, u) in hpcc.items()}, params={},
                         stack="openmpi-tcp", environ="openmpi-tcp", num_tasks=2)]
    rr.write_run(tmp_path, "run", cases)
    blocks, _ = _document([tmp_path])
    micro = _section(blocks, "Microbenchmarks")
    titles = [b.text for b in micro if isinstance(b, document.Heading)]
    assert "NetPIPE ping-pong on local:default" in titles
    curves = next(t for t in _tables(micro) if t.header[1] == "Peak bandwidth (MB/s)")
    assert [r[0] for r in curves.rows] == ["mpich", "openmpi-sm", "openmpi-tcp"]
    assert all(r[3] != "-" and r[5] != "-" for r in curves.rows)  # n1/2 and surprise from one check
    assert "NetPIPE ping-pong on local:default: stacks against openmpi-sm" in titles  # it also ran HPL
    summary = next(t for t in _tables(micro) if t.header[2] == "Min ratio")
    assert next(r for r in summary.rows if r[0] == "openmpi-sm")[3] == "1.000"
    assert float(next(r for r in summary.rows if r[0] == "openmpi-tcp")[3]) < 1
    rings = next(t for t in _tables(micro) if t.header[0] == "Figure")
    assert rings.header == ("Figure", "At", "openmpi-sm", "openmpi-tcp", "Unit")
    # registry order, one column per stack
    assert [r[0] for r in rings.rows] == ["Ping-pong latency (mean over pairs)", "Randomly ordered ring latency",
                                          "Randomly ordered ring bandwidth"]
    assert rings.rows[0][2:] == ("0.44", "4.4", "us")


def test_multi_pair_bandwidth_gets_a_curve_and_n_half_per_pair_count(tmp_path):
    cases = []
    for pairs, scale in ((1, 1.0), (2, 1.8), (4, 3.0)):
        bandwidth, _ = rr.hockney(1.0, 10000.0 * scale)
        cases.append(rr.testcase("OSUMultiBandwidthCheck",
                                 {f"bandwidth_{s}": (v, "MB/s") for s, v in bandwidth.items() if s},
                                 params={"placement": "inter_node", "pairs": pairs}, num_nodes=2,
                                 num_tasks=2 * pairs))
    rr.write_run(tmp_path, "run", cases)
    blocks, _ = _document([tmp_path])
    micro = _section(blocks, "Microbenchmarks")
    assert "OSU multi-pair bandwidth and message rate on local:default" in [
        b.text for b in micro if isinstance(b, document.Heading)]
    rows = next(t for t in _tables(micro) if t.header[:2] == ("Stack", "Variant")).rows
    assert [r[1] for r in rows] == ["pairs=1 placement=inter_node", "pairs=2 placement=inter_node",
                                    "pairs=4 placement=inter_node"]
    peaks = [float(r[2]) for r in rows]
    assert peaks == sorted(peaks) and all(r[4] != "-" for r in rows)  # more pairs, more bandwidth; n1/2 each
    assert len(_charts(micro)[0].panels[0].lines) == 3


def test_skipped_cases_are_one_line_per_reason(tmp_path):
    skip = dict(result="skip", stack="openmpi")
    cases = [rr.testcase("HPLCheck", {}, params={"scale": "2_nodes"}, **skip),
             *[rr.testcase("LAMMPSCheck", {}, params={"scale": "2_nodes", "workload": w}, **skip) for w in ("lj", "eam")],
             rr.testcase("HPLCheck", {}, params={"scale": "4_nodes"}, **skip)]
    run = rr.write_run(tmp_path, "run", cases)
    (run / "reframe.log").write_text("".join(
        f"[ SKIP ] (1/4) {c['name']} /0123abcd @local:default+openmpi [scale {c['scale']} needs "
        f"{c['scale'][0]} nodes; the partition has 1]\n" for c in cases))
    blocks, _ = _document([tmp_path])
    items = [i for b in _section(blocks, "Failures and skipped cases") if isinstance(b, document.Bullets)
             for i in b.items]
    assert items == [
        "local:default: scale 2_nodes needs 2 nodes; the partition has 1: HPLCheck %scale=2_nodes, "
        "LAMMPSCheck (2 variants) [openmpi]",
        "local:default: scale 4_nodes needs 4 nodes; the partition has 1: HPLCheck %scale=4_nodes [openmpi]"]


def test_nightly_results_are_one_point_per_day_with_the_spread_of_its_runs(tmp_path):
    """Over time: each day's median and its runs' lowest and highest, relative to the median of all runs at
    that scale; three days of six runs are three points, whatever the number of runs."""
    rates = {"20260101": (100.0, 110.0), "20260102": (90.0, 100.0, 95.0), "20260105": (120.0,)}
    for day, values in rates.items():
        for i, rate in enumerate(values):
            rr.write_run(tmp_path, f"{day}T0{i}0000Z-n-{i}", rr.lammps("ucx", {1: rate, 4: 3 * rate}),
                         start=f"{day}T0{i}0000+0000")
    blocks, _ = _document([tmp_path])
    section = _section(blocks, "Over time")
    (chart,) = _charts(section)
    assert [p.title for p in chart.panels] == ["Timesteps/s at 1 process(es) (cluster:cpu)",
                                               "Timesteps/s at 4 process(es) (cluster:cpu)"]
    for panel in chart.panels:
        (line,) = panel.lines
        assert line.xs == (0, 1, 4) and line.ys == pytest.approx((1.05, 0.95, 1.2))
        assert line.low == pytest.approx((1.0, 0.9, 1.2)) and line.high == pytest.approx((1.1, 1.0, 1.2))
    (summary,) = _tables(section)
    assert summary.rows[0][3:] == ("ucx", "1 process(es)", "3", "1.050", "1.200", "+14.3%", "10.0%")
    one_day = tmp_path / "one"
    rr.write_run(one_day, "a", rr.lammps("ucx", {1: 100.0}), start="20260101T000000+0000")
    rr.write_run(one_day, "b", rr.lammps("ucx", {1: 101.0}), start="20260101T010000+0000")
    blocks, _ = _document([one_day])
    assert not any(isinstance(b, document.Heading) and b.text == "Over time" for b in blocks)
