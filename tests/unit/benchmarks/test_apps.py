"""scalebench.app_inputs, scalebench.benchmarks.lammps and scalebench.benchmarks.openfoam: LAMMPS inputs and
OpenFOAM cases sized for strong and weak scaling, and the figures a LAMMPS run reports."""
import gzip
import re

import pytest

from scalebench import app_inputs as common, registry
from scalebench.benchmarks.lammps import inputs as lammps
from scalebench.benchmarks.lammps.outcome import lammps_outcome, lammps_packages
from scalebench.benchmarks.lammps.output import parse_lammps
from scalebench.benchmarks.openfoam import cases as openfoam
from scalebench.benchmarks.openfoam.outcome import snapped_cells
from app_cases import CAVITY, CAVITY_MESH, CONTROL, DECOMPOSE, LJ, SOLUTION, TEMPLATE, TEXTS
from vectors import read_vector
from scalebench.errors import InputError

# --- split_factors -------------------------------------------------------------------------------


@pytest.mark.parametrize("n, expected", [
    (1, (1, 1, 1)), (2, (2, 1, 1)), (4, (2, 2, 1)), (6, (3, 2, 1)), (8, (2, 2, 2)),
    (12, (3, 2, 2)), (7, (7, 1, 1)), (64, (4, 4, 4)),
])
def test_split_factors_even_weights_like_mpi_dims_create(n, expected):
    assert common.split_factors(n, (1, 1, 1)) == expected


def test_split_factors_follow_the_weights():
    assert common.split_factors(4, (300, 50)) == (4, 1)  # long domain: cut it along its length
    assert common.split_factors(8, (300, 50)) == (8, 1)
    assert common.split_factors(16, (300, 50)) == (8, 2)
    assert common.split_factors(2, (1, 5)) == (1, 2)


@pytest.mark.parametrize("n, weights", [(0, (1,)), (2, ()), (2, (1, 0)), (True, (1,))])
def test_split_factors_rejects_bad_input(n, weights):
    with pytest.raises(InputError):
        common.split_factors(n, weights)


# --- LAMMPS --------------------------------------------------------------------------------------


def test_lammps_cells_cube_nearest_the_target():
    assert lammps.lammps_cells(32000, 4) == (20, 20, 20)
    assert lammps.lammps_cells(8000, 3) == (14, 14, 14)
    assert lammps.lammps_cells(1, 4) == (1, 1, 1)


def test_lammps_input_strong_keeps_the_atoms():
    for ranks in (1, 2, 6):
        made = lammps.lammps_input(LJ, TEMPLATE, 32000, 100, ranks, "strong")
        assert made.atoms == 32000 and made.replicate == (1, 1, 1) and made.steps == 100


def test_lammps_input_weak_replicates_per_rank():
    made = lammps.lammps_input(LJ, TEMPLATE, 32000, 100, 6, "weak")
    assert made.replicate == (3, 2, 1)
    assert made.atoms == 6 * 32000
    assert made.summary == "192000 atoms (20x20x20 cells, replicated 3x2x1), 100 steps"
    assert lammps.lammps_input(LJ, TEMPLATE, 32000, 100, 1, "weak").atoms == 32000


def test_lammps_input_variables_come_before_the_templates_defaults():
    text = lammps.lammps_input(LJ, TEMPLATE, 4000, 50, 2, "weak").text
    declared = re.findall(r"^variable (\w+) index (\S+)$", text, re.MULTILINE)
    # LAMMPS keeps the first definition of an index variable: ours, then the template's default.
    assert declared[:7] == [("nx", "10"), ("ny", "10"), ("nz", "10"), ("rx", "2"), ("ry", "1"),
                            ("rz", "1"), ("steps", "50")]
    assert text.endswith(TEMPLATE)


@pytest.mark.parametrize("atoms, steps, ranks, scaling", [
    (0, 10, 1, "strong"), (100, 0, 1, "strong"), (100, 10, 0, "weak"), (100, 10, 1, "sideways"),
])
def test_lammps_input_rejects_bad_sizes(atoms, steps, ranks, scaling):
    with pytest.raises(InputError):
        lammps.lammps_input(LJ, TEMPLATE, atoms, steps, ranks, scaling)


HELP = """Large-scale Atomic/Molecular Massively Parallel Simulator - 29 Sep 2021 - Update 2

Installed packages:

ASPHERE BODY KSPACE MANYBODY
MOLECULE RIGID

List of individual style options included in this LAMMPS executable
"""


def test_lammps_packages_from_help():
    assert lammps_packages(HELP) == {"ASPHERE", "BODY", "KSPACE", "MANYBODY", "MOLECULE", "RIGID"}
    assert lammps_packages("no such section\n") == set()


def test_shipped_workloads_and_templates_agree():
    workloads = lammps.load_lammps_workloads()
    assert {"lj", "eam", "spce_pppm"} <= set(workloads)
    assert "KSPACE" in workloads["spce_pppm"].packages
    for spec in workloads.values():
        text = (common.INPUTS / "lammps" / spec.input).read_text()
        for name in ("nx", "ny", "nz", "rx", "ry", "rz", "steps"):
            assert f"variable {name} index" in text and f"${{{name}}}" in text, (spec.name, name)
        for extra in spec.files:
            assert (common.INPUTS / "lammps" / extra).is_file()
        assert spec.time_unit in ("ns/day", "tau/day")


def test_lammps_figures_in_the_workloads_time_unit_and_kspace_only_where_timed():
    protein = parse_lammps(read_vector("lammps", "lammps2018_protein_nsday_no_katom_4procs"))
    outcome = lammps_outcome(LJ, "", protein, tasks=4, atoms=32000, steps=100)
    assert outcome.problems == ()
    # no katom-step/s printed: atoms x timesteps/s, as LAMMPS computes it
    assert outcome.figures("ns/day") == {
        "timesteps_per_s": (15.626, "timesteps/s"), "atom_steps_per_s": (32000 * 15.626, "atom-steps/s"),
        "ns_per_day": (2.7, "ns/day"), "loop_time": (6.39977, "s"), "comm_share": (1.08, "%"),
        "kspace_share": (9.54, "%")}
    lj = parse_lammps(read_vector("lammps", "lammps2024_kokkos_gpu_lj_tauday_katom"))
    figures = lammps_outcome(LJ, "", lj, tasks=1, atoms=500, steps=1000).figures("tau/day")
    assert {name: value for name, (value, _) in figures.items()} == {
        "timesteps_per_s": 1432.166, "atom_steps_per_s": 716083.0, "tau_per_day": 618695.793, "loop_time": 0.698243,
        "comm_share": 23.02}
    registered = registry.lookup("LAMMPSCheck")
    assert all(registered.unit_of(name) == unit for name, (_, unit) in figures.items())


# --- OpenFOAM dictionaries -----------------------------------------------------------------------


def test_block_cells_with_zone_names_and_grading():
    text = "blocks\n(\n hex (0 1 2 3 4 5 6 7) fluid (18 30 1) simpleGrading (0.5 $posY 1)\n" \
           " hex (2 5 6 3 13 16 17 14)\n (180 27 1)\n edgeGrading (4 4 4 4 1 1 1 1 1 1 1 1)\n);"
    assert openfoam.block_cells(text) == [(18, 30, 1), (180, 27, 1)]
    assert openfoam.count_cells(openfoam.block_cells(text)) == 18 * 30 + 180 * 27
    assert openfoam.active_dims(openfoam.block_cells(text)) == (True, True, False)
    scaled = openfoam.scale_blocks(text, (2, 1.5, 1))
    assert openfoam.block_cells(scaled) == [(36, 45, 1), (360, 40, 1)]
    assert "simpleGrading (0.5 $posY 1)" in scaled
    with pytest.raises(InputError):
        openfoam.block_cells("vertices ();")


def test_vertex_extents_and_stretch():
    assert openfoam.vertex_extents(CAVITY_MESH) == (1.0, 1.0, 0.1)
    stretched = openfoam.stretch_vertices(CAVITY_MESH, (2, 1, 1))
    assert openfoam.vertex_extents(stretched) == (2.0, 1.0, 0.1)
    assert "(2 1 0.1)" in stretched and "scale 0.1;" in stretched
    macro = CAVITY_MESH.replace("(1 1 0)", "($x 1 0)")
    assert openfoam.vertex_extents(macro) is None
    with pytest.raises(InputError):
        openfoam.stretch_vertices(macro, (2, 1, 1))


def test_set_entries_replaces_or_appends():
    edited = openfoam.set_entries(CONTROL, {"endTime": 1, "timePrecision": 12})
    assert "endTime 1;" in re.sub(r"\s+", " ", edited) and "0.5" not in edited
    assert edited.rstrip().endswith("timePrecision 12;")


def test_remove_subdict_matches_nested_braces():
    without = openfoam.remove_subdict(CONTROL, "functions")
    assert "functions" not in without and "probes" not in without and "writeInterval" in without
    solution = openfoam.remove_subdict(SOLUTION, "residualControl")
    assert "residualControl" not in solution and "nNonOrthogonalCorrectors 0;" in solution
    assert solution.count("{") == solution.count("}")
    assert openfoam.remove_subdict(SOLUTION, "absent") == SOLUTION
    with pytest.raises(InputError):
        openfoam.remove_subdict("functions { a { }", "functions")


def test_fill_placeholders():
    assert openfoam.fill(DECOMPOSE, ranks=2, nx=2, ny=1, nz=1).startswith("numberOfSubdomains 2;")
    with pytest.raises(InputError, match="@nz@"):
        openfoam.fill(DECOMPOSE, ranks=2, nx=2, ny=1)


# --- openfoam_case -------------------------------------------------------------------------------


def _entry(text, key):
    return re.search(rf"^\s*{key}\s+([^;]+);", text, re.MULTILINE).group(1)


def test_openfoam_case_strong_refines_and_fixes_the_steps():
    case = openfoam.openfoam_case(CAVITY, TEXTS, DECOMPOSE, 16384, 50, 2, "strong")
    assert case.cells == 16384 and case.steps == 50
    assert openfoam.block_cells(case.files["system/blockMeshDict"]) == [(128, 128, 1)]
    control = case.files["system/controlDict"]
    # The time step follows the cell size (20 -> 128 cells: 0.0025 x 20/128), endTime = 50 steps.
    assert float(_entry(control, "deltaT")) == pytest.approx(0.0025 * 20 / 128)
    assert float(_entry(control, "endTime")) == pytest.approx(50 * 0.0025 * 20 / 128)
    assert _entry(control, "writeInterval") == "50" and _entry(control, "stopAt") == "endTime"
    assert "functions" not in control
    assert "residualControl" not in case.files["system/fvSolution"]
    assert case.files["system/decomposeParDict"] == "numberOfSubdomains 2;\nmethod simple;\nn (2 1 1);\n"
    assert case.decomposition == (2, 1, 1)


def test_openfoam_case_weak_stretch_keeps_cell_size_and_time_step():
    one = openfoam.openfoam_case(CAVITY, TEXTS, DECOMPOSE, 1600, 10, 1, "weak")
    four = openfoam.openfoam_case(CAVITY, TEXTS, DECOMPOSE, 1600, 10, 4, "weak")
    assert one.cells == 1600 and four.cells == 4 * 1600
    assert openfoam.block_cells(four.files["system/blockMeshDict"]) == [(80, 80, 1)]
    assert openfoam.vertex_extents(four.files["system/blockMeshDict"]) == (2.0, 2.0, 0.1)
    assert four.delta_t == pytest.approx(one.delta_t)
    assert four.decomposition == (2, 2, 1)


def test_openfoam_case_weak_refine_keeps_geometry_and_steady_time_step():
    steady = openfoam.OpenfoamCase(name="pitz", tutorial="x", solver="simpleFoam", cells=400, steps=100)
    texts = dict(TEXTS, **{"system/controlDict": CONTROL.replace("0.005", "1")})
    case = openfoam.openfoam_case(steady, texts, DECOMPOSE, 400, 100, 2, "weak")
    assert case.cells == 800 and case.delta_t is None
    assert openfoam.vertex_extents(case.files["system/blockMeshDict"]) == (1.0, 1.0, 0.1)
    assert float(_entry(case.files["system/controlDict"], "endTime")) == 100


def test_openfoam_case_rejects_bad_sizes():
    with pytest.raises(InputError):
        openfoam.openfoam_case(CAVITY, TEXTS, DECOMPOSE, 0, 10, 1, "strong")
    with pytest.raises(InputError):
        openfoam.openfoam_case(CAVITY, TEXTS, DECOMPOSE, 400, 10, 1, "diagonal")


def test_openfoam_commands_serial_and_parallel():
    bike = openfoam.OpenfoamCase(name="b", tutorial="x", solver="simpleFoam", cells=1, steps=1, steps_before=(
        {"serial": "blockMesh"}, "decompose", {"parallel": "snappyHexMesh -overwrite"}, "restore0"))
    assert openfoam.openfoam_commands(bike, 1, "mpirun -np 1") == [
        "blockMesh > log.blockMesh 2>&1",
        "mpirun -np 1 snappyHexMesh -overwrite > log.snappyHexMesh 2>&1",
        "rm -rf 0 && cp -r 0.orig 0"]
    two = openfoam.openfoam_commands(bike, 2, "srun")
    assert two[1] == "decomposePar -force > log.decomposePar 2>&1"
    assert two[2] == "srun snappyHexMesh -overwrite -parallel > log.snappyHexMesh 2>&1"
    assert "processor*" in two[3]
    assert openfoam.openfoam_logs(bike, 1) == ["log.blockMesh", "log.snappyHexMesh"]
    assert openfoam.openfoam_logs(bike, 2) == ["log.blockMesh", "log.decomposePar", "log.snappyHexMesh"]
    with pytest.raises(InputError):
        openfoam.openfoam_commands(openfoam.OpenfoamCase(name="b", tutorial="x", solver="s", cells=1, steps=1,
                                                 steps_before=({"twice": "x"},)), 1, "mpirun")


def test_shipped_cases():
    cases = openfoam.load_openfoam_cases()
    assert {"cavity", "pitzDaily", "motorBike"} <= set(cases)
    assert cases["cavity"].solver == "icoFoam" and cases["pitzDaily"].solver == "simpleFoam"
    assert cases["motorBike"].heavy and not cases["cavity"].heavy
    template = (common.INPUTS / "openfoam" / "decomposeParDict").read_text()
    assert "numberOfSubdomains 3;" in openfoam.fill(template, ranks=3, nx=3, ny=1, nz=1)


def test_copy_tutorial_unpacks_dictionaries_and_adds_files(tmp_path):
    tutorials = tmp_path / "tutorials"
    case_dir = tutorials / "incompressible" / "bike"
    (case_dir / "system").mkdir(parents=True)
    (case_dir / "constant" / "triSurface").mkdir(parents=True)
    (case_dir / "system" / "snappyHexMeshDict.gz").write_bytes(gzip.compress(b"castellatedMesh true;\n"))
    (case_dir / "constant" / "triSurface" / "keep.eMesh.gz").write_bytes(gzip.compress(b"mesh"))
    (tutorials / "resources").mkdir()
    (tutorials / "resources" / "bike.obj.gz").write_bytes(gzip.compress(b"v 0 0 0\n"))
    spec = openfoam.OpenfoamCase(name="bike", tutorial="incompressible/bike", solver="simpleFoam", cells=1,
                             steps=1, files={"constant/triSurface/bike.obj.gz": "resources/bike.obj.gz"})
    target = tmp_path / "stage"
    openfoam.copy_tutorial(tutorials, spec, target)
    assert (target / "system" / "snappyHexMeshDict").read_text() == "castellatedMesh true;\n"
    assert not (target / "system" / "snappyHexMeshDict.gz").exists()
    assert (target / "constant" / "triSurface" / "keep.eMesh.gz").exists()
    assert gzip.decompress((target / "constant" / "triSurface" / "bike.obj.gz").read_bytes()) == b"v 0 0 0\n"
    with pytest.raises(InputError, match="no case directory"):
        openfoam.copy_tutorial(tutorials, openfoam.OpenfoamCase(name="n", tutorial="none", solver="s", cells=1,
                                                        steps=1), target)


def test_snapped_cells_is_the_last_mesh():
    log = ("Refined mesh : cells:36000  faces:110000  points:40000\n"
           "Snapped mesh : cells:61591  faces:198377  points:76163\n"
           "Layer mesh : cells:65995  faces:210647  points:79916\nFinished meshing without any errors\n")
    assert snapped_cells(log) == 65995
    assert snapped_cells("End\n") is None


def test_openfoam_environment_is_sourced_only_when_not_set(tmp_path):
    """A Spack view has OpenFOAM's etc/bashrc, not its solvers in bin/: the job sources it first (a
    solver name no system has: Debian's OpenFOAM puts icoFoam in /usr/bin)."""
    import subprocess
    solver_dir = tmp_path / "platforms" / "linux64GccDPInt32Opt" / "bin"
    solver_dir.mkdir(parents=True)
    (solver_dir / "stubFoamSolver").write_text("#!/bin/sh\n")
    (solver_dir / "stubFoamSolver").chmod(0o755)
    bashrc = tmp_path / "view dir" / "etc" / "bashrc"
    bashrc.parent.mkdir(parents=True)
    bashrc.write_text(f"export WM_PROJECT_DIR={tmp_path}\nexport PATH={solver_dir}:$PATH\n")
    script = "; ".join([*openfoam.source_environment(str(bashrc)), "command -v stubFoamSolver || echo none"])

    def run(**env):
        return subprocess.run(["bash", "-c", script], env={"PATH": "/usr/bin:/bin", **env},
                              capture_output=True, text=True, check=True).stdout.strip()

    assert run() == str(solver_dir / "stubFoamSolver")
    assert run(WM_PROJECT_DIR="/opt/openfoam") == "none"  # already set up (a module, an activated env)
    bashrc.unlink()
    assert run() == "none"  # no bashrc: the job's program guard names the missing solver
    assert openfoam.source_environment(None) == []
