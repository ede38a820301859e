"""The real ReFrame GROMACS check on this machine (Debian's gromacs 2022: gmx_mpi under Open MPI's mpirun) at
1 core, a short run: the job builds its water box with GROMACS's own tools and mdrun's figures pass; and a
site's subclass of it, dry-run."""
import json
import re
from pathlib import Path

import pytest

from conftest import require_tools, run_reframe

pytestmark = pytest.mark.integration

STEPS = 200


@pytest.fixture(scope="module")
def gromacs_run(tmp_path_factory):
    require_tools("mpirun", "gmx_mpi")
    run_dir = tmp_path_factory.mktemp("gromacs") / "run"
    proc = run_reframe(run_dir, "-r", "-n", "GROMACSCheck%scale=1_core%workload=water%scaling=strong",
                       "-S", f"steps={STEPS}", checks="gromacs.py")
    report = json.loads((run_dir / "report.json").read_text())
    return proc, [tc for run in report["runs"] for tc in run["testcases"]]


def test_one_core_passes_with_its_figures_in_their_units(gromacs_run):
    proc, cases = gromacs_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    [case] = cases
    assert case["result"] == "pass", case["fail_reason"]
    assert (case["num_tasks"], case["num_cpus_per_task"], case["steps"]) == (1, 1, STEPS)
    figures = {key.split(":")[-1]: (value[0], value[4]) for key, value in case["perfvalues"].items()}
    assert {name: unit for name, (_, unit) in figures.items()} == {
        "ns_per_day": "ns/day", "hours_per_ns": "hours/ns", "wall_time": "s", "comm_share": "%"}
    assert figures["ns_per_day"][0] > 0 and figures["wall_time"][0] > 0 and figures["comm_share"][0] == 0
    assert figures["ns_per_day"][0] * figures["hours_per_ns"][0] == pytest.approx(24, rel=0.01)


def test_what_it_records_is_what_gromacs_says_in_the_kept_files(gromacs_run):
    _, [case] = gromacs_run
    out = Path(case["outputdir"])
    log, topology = (out / "md.log").read_text(), (out / "topol.top").read_text()
    assert case["gromacs_version"].startswith("2022.") and f"GROMACS version:    {case['gromacs_version']}" in log
    molecules = int(re.search(r"^SOL\s+(\d+)$", topology, re.M).group(1))
    assert case["gromacs_atoms"] == 3 * molecules and f"There are: {3 * molecules} Atoms" in log
    assert case["gromacs_input"].startswith(f"{3 * molecules} atoms of SPC/E water (2x2x2 spc216 boxes")
    assert "Using 1 MPI process" in log and f"step {STEPS // 2}: resetting all time and cycle counters" in log
    assert re.search(rf"^nsteps\s+= {STEPS}$", (out / "md.mdp").read_text(), re.M)


SITE_CHECK = '''
import reframe as rfm
from reframe.core.builtins import variable

from scalebench_checks.gromacs import GROMACSCheck


@rfm.simple_test
class SiteGROMACS(GROMACSCheck):
    """A site's GROMACS: scalebench's check with its own sizes and records."""

    cells = 3
    steps = 400
    acceptance_round = variable(str, value='2026-12', loggable=True)
'''


def test_a_site_s_subclass_plans_as_the_check_with_its_own_sizes(tmp_path):
    checks = tmp_path / "site_gromacs.py"
    checks.write_text(SITE_CHECK)
    proc = run_reframe(tmp_path / "run", "--dry-run", "-n", "SiteGROMACS%scale=1_core%workload=water%scaling=strong",
                       checks=str(checks))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    [case] = [tc for run in report["runs"] for tc in run["testcases"]]
    assert case["result"] == "pass" and case["acceptance_round"] == "2026-12"
    script = (Path(case["stagedir"]) / "rfm_job.sh").read_text()
    assert "gmx_mpi solvate -cs spc216.gro -box 5.58618 5.58618 5.58618" in script
    assert "gmx_mpi mdrun -s topol.tpr -deffnm md -ntomp 1 -resetstep 200" in script
    assert re.search(r"^nsteps\s+= 400$", (Path(case["stagedir"]) / "md.mdp").read_text(), re.M)
