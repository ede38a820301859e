"""The real ReFrame LAMMPS and OpenFOAM checks on this machine (Debian's lmp and OpenFOAM v1912, OpenMPI),
at 1 rank and the whole node, strong and weak scaling, small sizes."""
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import local_scales, ranks_at, require_cores, require_tools, run_reframe

pytestmark = pytest.mark.integration

# The smallest scale of this machine and the whole node (1_core and 1_node on two or more cores).
SMALLEST, NODE = local_scales()[0], "1_node"
SCALES = f"%scale=({SMALLEST}|{NODE})"


def _cases(run_dir, check):
    report = json.loads((run_dir / "report.json").read_text())
    return [tc for run in report["runs"] for tc in run["testcases"] if tc["name"].startswith(check)]


def _figures(case):
    return {key.split(":")[-1]: (value[0], value[4]) for key, value in case["perfvalues"].items()}


def _ran(cases):
    return {(c["scale"], c.get("workload") or c.get("case"), c["scaling"]): c
            for c in cases if c["result"] != "skip"}


@pytest.fixture(scope="module")
def lammps_run(tmp_path_factory):
    require_tools("mpirun", "lmp")
    run_dir = tmp_path_factory.mktemp("lammps") / "run"
    proc = run_reframe(run_dir, "-r", "-n", f"LAMMPSCheck{SCALES}", "-S", "atoms=2000", "-S", "steps=20",
                       checks="lammps.py")
    return run_dir, proc


@pytest.fixture(scope="module")
def openfoam_run(tmp_path_factory):
    require_tools("mpirun", "blockMesh", "decomposePar", "icoFoam", "simpleFoam")
    run_dir = tmp_path_factory.mktemp("openfoam") / "run"
    proc = run_reframe(run_dir, "-r", "-n", f"OpenFOAMCheck{SCALES}", "-S", "cells=2000", "-S", "steps=20",
                       checks="openfoam.py")
    return run_dir, proc


def test_lammps_cases_pass_with_positive_figures(lammps_run):
    run_dir, proc = lammps_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    ran = _ran(_cases(run_dir, "LAMMPSCheck"))
    workloads = ("lj", "eam", "spce_pppm")  # Debian's lmp has KSPACE: the PPPM case runs
    assert set(ran) == {(s, w, m) for s in {SMALLEST, NODE} for w in workloads for m in ("strong", "weak")}
    for (scale, workload, _), case in ran.items():
        assert case["result"] == "pass", case["fail_reason"]
        assert case["stack"] == "openmpi-sm" and case["num_nodes"] == 1
        figures = _figures(case)
        for name, unit in (("timesteps_per_s", "timesteps/s"), ("atom_steps_per_s", "atom-steps/s"),
                           ("loop_time", "s")):
            assert figures[name][0] > 0 and figures[name][1] == unit, (name, figures)
        assert 0 <= figures["comm_share"][0] <= 100 and figures["comm_share"][1] == "%"
        per_day = "tau_per_day" if workload == "lj" else "ns_per_day"
        assert figures[per_day][0] > 0 and figures[per_day][1] == per_day.replace("_per_", "/")
        assert ("kspace_share" in figures) == (workload == "spce_pppm")
        assert figures["atom_steps_per_s"][0] == pytest.approx(
            case["expected_atoms"] * figures["timesteps_per_s"][0], rel=1e-3)


def test_lammps_atoms_follow_the_scaling(lammps_run):
    run_dir, _ = lammps_run
    ran = _ran(_cases(run_dir, "LAMMPSCheck"))
    for workload in ("lj", "eam", "spce_pppm"):
        one = ran[(SMALLEST, workload, "strong")]["expected_atoms"]
        assert ran[(SMALLEST, workload, "weak")]["expected_atoms"] == one * ranks_at(SMALLEST)
        assert ran[(NODE, workload, "strong")]["expected_atoms"] == one
        assert ran[(NODE, workload, "weak")]["expected_atoms"] == one * ranks_at(NODE)
    for case in ran.values():  # what LAMMPS itself says, in the kept log
        log = Path(case["outputdir"]) / "log.lammps"
        loop = re.search(r"Loop time of \S+ on (\d+) procs for (\d+) steps with (\d+) atoms", log.read_text())
        assert loop.groups() == (str(case["num_tasks"]), "20", str(case["expected_atoms"]))


def test_openfoam_cases_pass_with_positive_figures(openfoam_run):
    run_dir, proc = openfoam_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    cases = _cases(run_dir, "OpenFOAMCheck")
    ran = _ran(cases)
    assert set(ran) == {(s, c, m) for s in {SMALLEST, NODE} for c in ("cavity", "pitzDaily")
                        for m in ("strong", "weak")}
    for case in ran.values():
        assert case["result"] == "pass", case["fail_reason"]
        assert case["stack"] == "openmpi-sm" and case["num_nodes"] == 1 and case["steps"] == 20
        figures = _figures(case)
        for name, unit in (("time_per_step", "s/step"), ("execution_time", "s"), ("wall_time", "s"),
                           ("wall_time_per_step", "s/step")):
            assert figures[name][0] > 0 and figures[name][1] == unit, (name, figures)
        assert figures["clock_time"][0] >= 0
    # a heavy case is not generated unless asked for (-S heavy_cases=true): nothing is skipped
    assert [c for c in cases if c["result"] == "skip" or c["case"] == "motorBike"] == []


def test_openfoam_cells_follow_the_scaling_and_the_solver_runs_in_parallel(openfoam_run):
    run_dir, _ = openfoam_run
    ran = _ran(_cases(run_dir, "OpenFOAMCheck"))
    for name in ("cavity", "pitzDaily"):
        one = ran[(SMALLEST, name, "strong")]["mesh_cells"]
        assert ran[(NODE, name, "strong")]["mesh_cells"] == one
        assert ran[(NODE, name, "weak")]["mesh_cells"] == one * ranks_at(NODE)
        text = (Path(ran[(NODE, name, "weak")]["outputdir"]) / "rfm_job.out").read_text()
        if ranks_at(NODE) > 1:
            assert f"nProcs : {ranks_at(NODE)}" in text and "Finalising parallel run" in text
        assert len(re.findall(r"^Time = ", text, re.MULTILINE)) == 20


FOREIGN_LAUNCHER = """#!/bin/sh
# lmp as if started by a foreign launcher: each rank initialises MPI as a 1-process job.
for v in $(env | grep -E '^(OMPI_|PMIX_)' | grep -v '^OMPI_ALLOW_RUN_AS_ROOT' | cut -d= -f1); do unset "$v"; done
exec "{lmp}" "$@"
"""
NO_KSPACE = """#!/bin/sh
# lmp whose build lacks the KSPACE package
if [ "$1" = -h ]; then "{lmp}" -h | sed 's/KSPACE //'; else exec "{lmp}" "$@"; fi
"""


def _wrapper(tmp_path, text):
    path = tmp_path / "lmp"
    path.write_text(text.format(lmp=shutil.which("lmp")))
    path.chmod(0o755)
    return path


def test_lammps_under_a_foreign_launcher_fails_sanity(tmp_path):
    require_tools("mpirun", "lmp")
    require_cores(2)  # a foreign launcher shows as 1 process where several were asked
    lmp = _wrapper(tmp_path, FOREIGN_LAUNCHER)
    proc = run_reframe(tmp_path / "run", "-r", "-n", "LAMMPSCheck%scale=1_node%workload=lj%scaling=strong",
                       "-S", "atoms=2000", "-S", "steps=20", "-S", f"lmp_binary={lmp}", checks="lammps.py")
    assert proc.returncode != 0
    assert f"LAMMPS ran on 1 procs, {ranks_at('1_node')} requested (wrong MPI launcher?)" in proc.stdout


def test_lammps_without_kspace_fails_the_pppm_workload_naming_the_package(tmp_path):
    """The job asks the binary it runs (lmp -h, where modules and views set PATH), not the login node."""
    require_tools("lmp")
    lmp = _wrapper(tmp_path, NO_KSPACE)
    proc = run_reframe(tmp_path / "run", "-r", "-n", f"LAMMPSCheck%scale={SMALLEST}%workload=spce_pppm",
                       "-S", f"lmp_binary={lmp}", checks="lammps.py")
    assert proc.returncode != 0
    cases = _cases(tmp_path / "run", "LAMMPSCheck")
    assert len(cases) == 2 and all(c["result"] == "fail" and c["fail_phase"] == "sanity" for c in cases)
    assert all("the LAMMPS binary lacks package(s) KSPACE needed by workload spce_pppm" in c["fail_reason"]
               for c in cases)
