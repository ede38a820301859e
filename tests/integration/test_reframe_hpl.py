"""The real ReFrame HPL check on this machine (the built xhpl, or hpcc, OpenMPI, OpenBLAS), at a small N."""
import json
import os

import pytest
import yaml

from conftest import LOCAL_SITE, local_scales, ranks_at, require_tools, require_xhpl, run_reframe
from scalebench.registry import provenance
from scalebench.reporting.document import Chart, Table
from scalebench.reporting.hpl_table import NOISY, hpl_lines
from scalebench.report import build_document
from scalebench.reporting.store import ingest, load

pytestmark = pytest.mark.integration

SMALL_N = ["-S", "time_budget_s=0.3"]  # N of a few thousand: seconds per case


@pytest.fixture(scope="module")
def hpl_run(tmp_path_factory):
    require_xhpl()
    run_dir = tmp_path_factory.mktemp("hpl") / "run"
    proc = run_reframe(run_dir, "-r", *SMALL_N, "-S", "efficiency_floor=0")
    return run_dir, proc


def test_hpl_cases_pass_with_positive_rmax(hpl_run):
    run_dir, proc = hpl_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    sessions, warnings = ingest([run_dir])
    assert warnings == []
    ran = {c.params["scale"]: c for c in sessions[0].cases
           if c.result != "skip" and c.benchmark == "HPLCheck"}
    # The embedded default scales over this machine's cores: 1 core, powers of two below them, the node.
    assert set(ran) == set(local_scales())
    for case in ran.values():
        assert case.result == "pass", case.fail_reason
        assert case.figure("rmax") > 0
        assert case.figure("efficiency") == pytest.approx(100 * case.figure("rmax") / case.figure("rpeak_gflops"))
        assert case.provenance["hpl_deck"]["p"] * case.provenance["hpl_deck"]["q"] == case.num_tasks
        # the embedded default solves each deck 3 times (hpl_trials); Rmax is the best solve
        solves = [float(g) for g in case.provenance["trial_gflops"].split()]
        assert case.provenance["trials"] == 3 and len(solves) == 3
        assert case.figure("rmax") == pytest.approx(max(solves), abs=0.01)
        # the DGEMM ceiling of the same job: the best of its repeats, timed before and after the solves
        repeats = case.provenance["dgemm_repeats"]
        assert repeats["before"] and repeats["after"]
        assert case.figure("dgemm_ceiling") == pytest.approx(max(repeats["before"] + repeats["after"]), abs=0.01)
        assert case.provenance["executable"].endswith("/build/bin/xhpl")
    # The clock each case's ceiling implies is its rate per core over one flop/cycle, whatever the load did
    # to the rates (a shared machine: a ceiling may even fall as ranks are added).
    per_cycle = [c.figure("dgemm_ceiling") / (c.cores * c.figure("dgemm_clock")) for c in ran.values()]
    assert per_cycle == pytest.approx([per_cycle[0]] * len(per_cycle), rel=1e-6)


def test_raw_outputs_and_perflog_kept(hpl_run):
    run_dir, _ = hpl_run
    outputs = [p for p in (run_dir / "output").rglob("rfm_job.out") if "HPLCheck" in str(p)]
    assert len(outputs) == len(local_scales())
    assert all("End of Tests." in p.read_text() and "StarDGEMM_Gflops=" in p.read_text() for p in outputs)
    assert len(list((run_dir / "output").rglob("HPL.dat"))) == len(outputs)
    perflog = next((run_dir / "perflogs").rglob("HPLCheck.log")).read_text().splitlines()
    header = perflog[0].split("|")
    assert {"num_nodes", "stack", "job_nodelist", "perf_var", "perf_value"} <= set(header)
    assert header == list(provenance().perflog_columns())  # ReFrame's header is the registry's columns
    figures = {line.split("|")[header.index("perf_var")] for line in perflog[1:]}
    assert {"rmax", "efficiency", "n", "time", "dgemm_ceiling"} <= figures


def test_hpcc_as_the_hpl_binary_keeps_working(tmp_path):
    require_tools("mpirun", "hpcc")
    run_dir = tmp_path / "run"
    scale = local_scales()[-1]
    proc = run_reframe(run_dir, "-r", "-n", f"HPLCheck%scale={scale}$", *SMALL_N, "-S", "hpl_binary=hpcc",
                       "-S", "efficiency_floor=0")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    sessions, _ = ingest([run_dir])
    case = next(c for c in sessions[0].cases if c.benchmark == "HPLCheck")
    assert case.result == "pass" and case.figure("rmax") > 0 and case.figure("dgemm_ceiling") > 0
    assert case.provenance["hpl_deck"]["p"] * case.provenance["hpl_deck"]["q"] == ranks_at(scale)
    assert [p.name for p in (run_dir / "output").rglob("hpccoutf.txt")] == ["hpccoutf.txt"]


def test_an_hpl_binary_of_the_repository_not_built_skips_naming_it(tmp_path):
    site = yaml.safe_load(LOCAL_SITE.read_text())
    next(s for s in site["stacks"] if s["name"] == "openmpi-sm")["hpl_binary"] = "build/bin/no-such-xhpl"
    (tmp_path / "local.yaml").write_text(yaml.safe_dump(site))
    run_dir = tmp_path / "run"
    proc = run_reframe(run_dir, "-r", "-n", f"HPLCheck%scale={local_scales()[0]}$",
                       env={**os.environ, "SCALEBENCH_SITE": str(tmp_path / "local.yaml")})
    sessions, _ = ingest([run_dir])  # ReFrame keeps a skip's reason in its log
    (case,) = sessions[0].cases
    assert case.result == "skip", proc.stdout[-3000:]
    assert "HPL binary build/bin/no-such-xhpl: no executable file" in case.fail_reason
    assert "scripts/install.sh" in case.fail_reason


def test_a_missing_hpl_program_fails_naming_it(tmp_path):
    run_dir = tmp_path / "run"
    proc = run_reframe(run_dir, "-r", "-n", f"HPLCheck%scale={local_scales()[0]}$",
                       "-S", f"hpl_binary={tmp_path}/no such/xhpl")
    assert proc.returncode != 0
    case = json.loads((run_dir / "report.json").read_text())["runs"][-1]["testcases"][0]
    assert case["fail_phase"] == "sanity"
    assert case["fail_reason"].endswith(f"benchmark program not found: {tmp_path}/no such/xhpl")


def test_efficiency_floor_fails_the_performance_stage(hpl_run, tmp_path):
    # A floor of 100% is no floor where the clock under load runs above nominal (113% seen on a
    # 2.0 GHz EPYC): ten times this machine's own efficiency at that scale fails by construction.
    scale = local_scales()[0]
    sessions, _ = ingest([hpl_run[0]])
    measured = next(c.figure("efficiency") for c in sessions[0].cases
                    if c.benchmark == "HPLCheck" and c.params["scale"] == scale)
    run_dir = tmp_path / "run"
    proc = run_reframe(run_dir, "-r", "-n", f"HPLCheck%scale={scale}$", *SMALL_N,
                       "-S", f"efficiency_floor={10 * measured / 100:.3f}")
    assert proc.returncode != 0
    report = json.loads((run_dir / "report.json").read_text())
    case = next(tc for tc in report["runs"][-1]["testcases"] if tc["result"] != "skip")
    assert case["fail_phase"] == "performance"
    assert "efficiency" in case["fail_reason"]


def test_existing_run_directory_is_not_overwritten(hpl_run):
    run_dir, _ = hpl_run
    before = (run_dir / "report.json").read_bytes()
    proc = run_reframe(run_dir, "-l")
    assert proc.returncode != 0
    assert "already holds a run report" in proc.stdout + proc.stderr
    assert (run_dir / "report.json").read_bytes() == before


def test_scaling_check_compares_the_scales_of_this_machine(hpl_run):
    run_dir, _ = hpl_run
    scales = local_scales()
    if len(scales) < 2:
        pytest.skip("one scale on a one-core machine: nothing to compare")
    sessions, _ = ingest([run_dir])
    scaling = next(c for c in sessions[0].cases if c.benchmark == "HPLScalingCheck")
    assert scaling.result == "pass", scaling.fail_reason
    # This machine scales over its cores (weak scaling by default): one figure per scale above the first.
    assert set(scaling.figures) == {f"weak_efficiency_p{ranks_at(s)}" for s in scales[1:]}
    assert all(unit == "%" and value > 0 for value, unit in scaling.figures.values())


def test_the_report_sets_the_models_expectation_beside_each_measured_scale(hpl_run, tmp_path):
    """Expected against measured on a real run of the embedded default: calibrated on its 1-core HPL and
    the HPL stack's own ping-pong within the node (a small NetPIPE run: seconds), the whole node gets
    an expected efficiency beside its measured one and the efficiency plot the model's dashed curve."""
    run_dir, _ = hpl_run
    if len(local_scales()) < 2:
        pytest.skip("one scale on a one-core machine: nothing to expect beyond the calibration")
    sessions, _ = ingest([run_dir])
    stack = next(c.stack for c in sessions[0].cases if c.benchmark == "HPLCheck")
    netpipe_dir = tmp_path / "netpipe"
    proc = run_reframe(netpipe_dir, "-r", "-n", "^NetPIPECheck%placement=intra_node$", "-p", f"^{stack}$",
                       "-S", "max_bytes=65536", checks="microbench.py")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    loaded = load([run_dir, netpipe_dir], index=False)
    lines = {line.scale: line for line in hpl_lines(loaded.table) if line.stack == stack}
    one, node = lines[local_scales()[0]], lines[local_scales()[-1]]
    noisy = [line for line in (one, node) if line.noise.startswith(NOISY)]
    if noisy:  # the model neither calibrates on nor judges a configuration only noisy runs measured
        assert all(line.expected is None for line in noisy)
        pytest.skip(f"this machine was not quiet during the run: {'; '.join(line.noise for line in noisy)}")
    assert one.expected.status == "calibration"
    assert node.expected.status in ("ok", "below") and node.expected.efficiency > 0, node.expected
    blocks = build_document(loaded.table, loaded.warnings)
    table = next(b for b in blocks if isinstance(b, Table) and "Expected" in b.header)
    assert table.header.index("Model") == table.header.index("Expected") + 1 == table.header.index("Efficiency") + 2
    row = next(r for r in table.rows if r[table.header.index("Scale")] == node.scale
               and r[table.header.index("Stack")] == stack)
    assert row[table.header.index("Expected")] == f"{node.expected.efficiency:.1f}%"
    assert row[table.header.index("Model")] in ("as expected", node.expected.flag)
    efficiency = next(panel for b in blocks if isinstance(getattr(b, "chart", None), Chart)
                      for panel in b.chart.panels if panel.title.startswith("Efficiency"))
    model_line = next(line for line in efficiency.lines if line.style == "model")
    assert model_line.label == f"{stack} (model)"
    assert model_line.ys[-1] == pytest.approx(node.expected.efficiency)
