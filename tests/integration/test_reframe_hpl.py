"""The real ReFrame HPL check on this machine (hpcc, OpenMPI, OpenBLAS), at a small N."""
import json

import pytest

from conftest import local_scales, ranks_at, require_tools, run_reframe
from scalebench.benchmarks import provenance
from scalebench.results.store import ingest

pytestmark = pytest.mark.integration

SMALL_N = ["-S", "time_budget_s=0.3"]  # N of a few thousand: seconds per case


@pytest.fixture(scope="module")
def hpl_run(tmp_path_factory):
    require_tools("mpirun", "hpcc")
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


def test_raw_outputs_and_perflog_kept(hpl_run):
    run_dir, _ = hpl_run
    outputs = list((run_dir / "output").rglob("hpccoutf.txt"))
    assert len(outputs) == len(local_scales())  # one kept output per case
    assert all("End of HPL section." in p.read_text() for p in outputs)
    perflog = next((run_dir / "perflogs").rglob("HPLCheck.log")).read_text().splitlines()
    header = perflog[0].split("|")
    assert {"num_nodes", "stack", "job_nodelist", "perf_var", "perf_value"} <= set(header)
    assert header == list(provenance().perflog_columns())  # ReFrame's header is the registry's columns
    figures = {line.split("|")[header.index("perf_var")] for line in perflog[1:]}
    assert {"rmax", "efficiency", "n", "time"} <= figures


def test_a_missing_hpl_program_fails_naming_it(tmp_path):
    run_dir = tmp_path / "run"
    proc = run_reframe(run_dir, "-r", "-n", f"HPLCheck%scale={local_scales()[0]}$",
                       "-S", f"hpl_binary={tmp_path}/no such/xhpl")
    assert proc.returncode != 0
    case = json.loads((run_dir / "report.json").read_text())["runs"][-1]["testcases"][0]
    assert case["fail_phase"] == "sanity"
    assert case["fail_reason"].endswith(f"benchmark program not found: {tmp_path}/no such/xhpl")


def test_efficiency_floor_fails_the_performance_stage(tmp_path):
    require_tools("mpirun", "hpcc")
    run_dir = tmp_path / "run"
    proc = run_reframe(run_dir, "-r", "-n", f"%scale={local_scales()[0]}$", *SMALL_N, "-S", "efficiency_floor=1.0")
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
