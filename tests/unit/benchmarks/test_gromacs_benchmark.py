"""The GROMACS benchmark (scalebench.benchmarks.gromacs): listed in BENCHMARKS and registered from its own folder,
its inputs sized for a job, its outcome against what was asked, and its ns/day scaling in the applications section."""
import re
import shutil
from pathlib import Path

import pytest

import reframe_reports as rr
from scalebench import benchmark, registry, report
from scalebench.benchmarks import BENCHMARKS, KINDS
from scalebench.check import Settings
from scalebench.errors import InputError
from scalebench.reporting import document, store as results
from scalebench.benchmarks.gromacs import inputs, rules
from scalebench.benchmarks.gromacs.outcome import gromacs_outcome
from scalebench.site import siteconf
from scalebench.site_plan import CHECKS, Filters, plan_cases, site_specs, unplanned_checks
from vectors import read_vector

REPO = Path(__file__).resolve().parents[3]
WATER = inputs.load_workloads()["water"]
ONE_RANK = read_vector("gromacs", "gromacs2022_water_1rank")
TWO_RANKS = read_vector("gromacs", "gromacs2022_water_2ranks")


# --- one folder: found, registered, planned ---------------------------------------------------------

def test_the_benchmark_is_listed_and_registered_from_its_own_folder():
    [gromacs] = [found for found in BENCHMARKS if found.name == "gromacs"]
    assert KINDS["gromacs"] == gromacs.parse and CHECKS["GROMACSCheck"] == rules.CHECKS[0]
    assert gromacs.site_keys() == {"stack": {"gmx_binary": {"$ref": "common.yaml#/$defs/word"}}, "partition": {}}
    bench = registry.registry()["GROMACSCheck"]
    assert (bench.section, bench.fom, bench.time, bench.weak) == ("application", "ns_per_day", "wall_time",
                                                                  ("scaling", "weak"))
    assert {name: f.unit for name, f in bench.figures.items()} == {
        "ns_per_day": "ns/day", "hours_per_ns": "hours/ns", "wall_time": "s", "comm_share": "%"}
    recorded = {f.name: f.type for f in registry.provenance().recorded_by("GROMACSCheck")}
    assert recorded == {"gromacs_version": "str", "gromacs_atoms": "int", "gromacs_input": "str"}
    # the packaged registry files do not name it, and its fields are no perflog column
    for name in ("benchmarks.yaml", "provenance.yaml"):
        assert "GROMACS" not in (REPO / "scalebench" / "data" / name).read_text()
    assert not any(column.startswith("gromacs") for column in registry.provenance().perflog_columns())


def _fake_folder(tmp_path, monkeypatch, text):
    """A benchmark folder beside the real ones whose benchmark.yaml is `text`, as the registry reads folders."""
    path = tmp_path / "fake" / registry.FOLDER_REGISTRY
    path.parent.mkdir()
    path.write_text(text)
    real = benchmark.folder_files
    monkeypatch.setattr(benchmark, "folder_files",
                        lambda name: [*real(name), path] if name == registry.FOLDER_REGISTRY else real(name))
    return path


@pytest.mark.parametrize("text, message", [
    ("checks: {HPLCheck: {section: hpl, figures: {a: {direction: higher}}}}", "checks.HPLCheck: HPLCheck is "
                                                                              "registered already"),
    ("checks: {GROMACSCheck: {section: application, figures: {a: {direction: higher}}}}",  # another folder's
     "checks.GROMACSCheck: GROMACSCheck is registered already"),
    ("provenance: {mine: {label: Mine, type: str, perflog: case}}", "provenance.mine.perflog: a benchmark's own "
                                                                    "field is no perflog column"),
    ("figures: {}", "figures: unknown key (a benchmark's registry has checks, provenance)"),
    ("checks: {X: {section: nowhere, figures: {a: {direction: higher}}}}", "checks.X.section: 'nowhere' is not"),
])
def test_a_folder_registry_mistake_is_named_with_its_file(tmp_path, monkeypatch, text, message):
    path = _fake_folder(tmp_path, monkeypatch, text)
    with pytest.raises(InputError, match=re.escape(message)) as raised:
        registry.load_provenance() if "provenance" in text else registry.load()
    assert str(raised.value).startswith(f"{path}: ")


def test_the_embedded_default_plans_it_at_one_core_and_the_whole_node():
    partitions, stacks, environs = site_specs(siteconf.site_systems(REPO / "site_configs" / "sites" / "local.yaml"))
    cases = plan_cases(partitions, stacks, environs, Settings(), Filters(names=("GROMACSCheck",)))
    cores = partitions[0].cores_per_node
    strong = {c.params["scale"]: c.plan.job for c in cases if c.params["scaling"] == "strong"}
    assert strong["1_core"].tasks == 1 and strong["1_core"].threads_per_rank == 1
    node = strong.get("1_node") or strong["1_core"]  # a 1-core machine has one scale
    assert node.tasks == cores and {c.stack.name for c in cases} == {"openmpi-sm"}
    assert stacks["openmpi-sm"].extras["gmx_binary"] == "gmx_mpi"


SITES = sorted((REPO / "site_configs" / "sites").rglob("*.yaml"))


@pytest.mark.parametrize("site", SITES, ids=lambda path: path.stem)
def test_every_shipped_site_plans_it_or_says_why_not(site):
    partitions, stacks, environs = site_specs(siteconf.site_systems(site))
    cases = plan_cases(partitions, stacks, environs, Settings(), checks=["GROMACSCheck"])
    why = unplanned_checks(partitions, stacks, environs, cases, Settings(), checks=["GROMACSCheck"])
    if cases:
        assert why == [] and all(case.plan is not None for case in cases)
        assert all("gromacs" in stacks[case.stack.name].features for case in cases)
    else:
        assert [(w.check, w.needs) for w in why] == [("GROMACSCheck", "a stack with the feature(s) gromacs")]


# --- the inputs ---------------------------------------------------------------------------------------

def test_strong_scaling_keeps_the_box_and_weak_scaling_grows_it_with_the_ranks():
    assert inputs.water_box(2, 1000, 1, "strong") == inputs.water_box(2, 1000, 64, "strong")
    assert inputs.water_box(2, 1000, 1, "strong").box_nm == (3.72412, 3.72412, 3.72412)
    assert inputs.water_box(2, 1000, 6, "weak").cells == (6, 4, 2)  # 2 x (3, 2, 1): 6 times the water
    box = inputs.water_box(3, 1001, 2, "weak")
    assert box.cells == (6, 3, 3) and box.reset_step == 500
    with pytest.raises(InputError):
        inputs.water_box(0, 1000, 1, "strong")


def test_the_job_builds_its_input_with_gromacs_s_own_tools():
    box = inputs.water_box(6, 200, 1, "strong")
    solvate, grompp = inputs.prepare_commands("/opt/my gmx/gmx_mpi", box)
    assert solvate == ("'/opt/my gmx/gmx_mpi' solvate -cs spc216.gro -box 11.17236 11.17236 11.17236 -p topol.top "
                       "-o conf.gro > solvate.log 2>&1")  # every digit: whole copies of spc216.gro
    assert grompp == "'/opt/my gmx/gmx_mpi' grompp -f md.mdp -c conf.gro -p topol.top -o topol.tpr > grompp.log 2>&1"
    assert inputs.mdrun_args(4, box) == ["mdrun", "-s", "topol.tpr", "-deffnm", "md", "-ntomp", "4",
                                         "-resetstep", "100"]


def test_the_templates_fill_and_the_topology_counts_the_water():
    parameters = inputs.fill(inputs.read_template(WATER.parameters), steps=250)
    assert re.search(r"^nsteps\s+= 250$", parameters, re.M) and "@" not in parameters
    topology = inputs.read_template(WATER.topology)
    assert inputs.molecules(topology, "SOL") is None
    assert inputs.molecules(topology + "SOL              1696\n", "SOL") == 1696
    assert inputs.molecules("[ system ]\nSOL 5\n[ molecules ]\nSOL 3 ; x\n", "SOL") == 3
    with pytest.raises(InputError, match="no value for @steps@"):
        inputs.fill("nsteps = @steps@\n")


def test_the_box_edge_is_spc216_s_own():
    gmx = shutil.which("gmx_mpi")
    gro = Path(gmx).resolve().parents[1] / "share" / "gromacs" / "top" / "spc216.gro" if gmx else None
    if not gro or not gro.is_file():
        pytest.skip("GROMACS's spc216.gro is not installed here")
    assert gro.read_text().splitlines()[-1].split() == [f"{inputs.SPC216_NM:.5f}"] * 3


@pytest.mark.parametrize("entry, message", [
    ("water: {topology: water.top, parameters: water.mdp, molecule: {name: SOL}, cells: 2, steps: 10}",
     "molecule: expected"),
    ("water: {topology: water.top, parameters: water.mdp, molecule: {name: SOL, atoms: 3}, cells: 0, steps: 10}",
     "cells"),
    ("'a;b': {topology: water.top, parameters: water.mdp, molecule: {name: SOL, atoms: 3}, cells: 1, steps: 1}",
     "workload name"),
])
def test_a_workload_that_cannot_be_is_named(tmp_path, entry, message):
    (tmp_path / "workloads.yaml").write_text(entry + "\n")
    with pytest.raises(InputError, match=message):
        inputs.load_workloads(tmp_path)


# --- the outcome --------------------------------------------------------------------------------------

def _files(log=ONE_RANK, molecules=1696, **others):
    files = {inputs.SOLVATE_LOG: "Adding line for 1696 solvent molecules with resname (SOL) to topology file\n",
             inputs.GROMPP_LOG: "This run will generate roughly 0 Mb of data\n",
             inputs.TOPOLOGY: inputs.read_template(WATER.topology) + f"SOL {molecules:>17}\n", inputs.LOG: log}
    files.update(others)

    def read(name):
        if files.get(name) is None:
            raise InputError(f"{name}: no such file")
        return files[name]
    return read


def _outcome(read, tasks=1, threads=1, steps=1000):
    return gromacs_outcome(read, WATER.molecule, tasks=tasks, threads=threads, steps=steps,
                           streams=("rfm_job.out", "rfm_job.err"))


def test_a_finished_run_of_what_was_asked_has_no_problem_and_its_figures():
    one, two = _outcome(_files()), _outcome(_files(TWO_RANKS), tasks=2)
    assert one.problems == () and two.problems == () and one.atoms == 5088
    assert one.figures == {"ns_per_day": (20.017, "ns/day"), "hours_per_ns": (1.199, "hours/ns"),
                           "wall_time": (4.325, "s"), "comm_share": (0.0, "%")}
    assert two.figures["comm_share"] == (40.2, "%")
    for outcome in (one, two):  # each figure in the registry's unit, positive and finite
        values = registry.lookup("GROMACSCheck").in_units(outcome.figures)
        assert all(value >= 0 for value in values.values()) and values["ns_per_day"] > 0


@pytest.mark.parametrize("files, asked, named", [
    ({}, {"tasks": 2}, "GROMACS ran on 1 MPI rank(s), 2 requested (wrong MPI launcher?)"),
    ({}, {"threads": 2}, "GROMACS ran 1 OpenMP thread(s) per rank, 2 requested"),
    ({}, {"steps": 2000}, "GROMACS ran to step 1000, 2000 steps requested"),
    ({"molecules": 1700}, {}, "GROMACS ran 5088 atoms, the topology has 5100"),
    ({"log": ONE_RANK.replace("MPI library:        MPI", "MPI library:        thread_mpi")}, {"tasks": 2},
     "the GROMACS binary is a thread-MPI build (MPI library: thread_mpi)"),
    ({"log": ONE_RANK.replace("Performance:       20.017", "Performance:       40.017")}, {},
     "md.log: 40.017 ns/day contradicts 1.199 hour/ns"),
    ({"log": ONE_RANK[:ONE_RANK.index("Finished mdrun")]}, {}, "GROMACS run did not finish: no 'Finished mdrun' line"),
    ({"log": ONE_RANK.replace("Core t (s)", "Core (s)")}, {}, "md.log has no wall time"),
    ({"log": read_vector("gromacs", "gromacs2021_fep_8ranks_crashed")}, {"tasks": 8, "threads": 6},
     "GROMACS run did not finish"),
    ({inputs.GROMPP_LOG: "Fatal error:\nNo such moleculetype SOL\n"}, {},
     "input preparation failed: gmx grompp: No such moleculetype SOL"),
    ({inputs.SOLVATE_LOG: None}, {}, "input preparation did not run: no solvate.log"),
    ({inputs.GROMPP_LOG: "ERROR 1 [file topol.top, line 10]:\n  ERROR: The cut-off length is longer than half the\n"
                         "  shortest box vector.\n\nFatal error:\nThere was 1 error in input file(s)\n"}, {},
     "gmx grompp: The cut-off length is longer than half the shortest box vector."),
    ({inputs.LOG: None, "rfm_job.err": "Error in user input:\nInvalid command-line options\n\nFor more\n"}, {},
     "GROMACS run did not finish: Invalid command-line options"),
    ({inputs.LOG: None}, {}, "GROMACS run did not finish: no md.log"),
    ({inputs.TOPOLOGY: "[ molecules ]\n"}, {}, "input preparation failed: gmx solvate wrote no SOL line"),
])
def test_a_run_unlike_what_was_asked_fails_naming_why(files, asked, named):
    outcome = _outcome(_files(**files), **asked)
    assert any(named in problem for problem in outcome.problems), outcome.problems


# --- the report ---------------------------------------------------------------------------------------

def _gromacs(stack, ns_per_day, scaling="strong"):
    return [rr.testcase("GROMACSCheck", {"ns_per_day": (rate, "ns/day"), "hours_per_ns": (24 / rate, "hours/ns"),
                                         "wall_time": (501 * 0.002 * 86.4 / rate, "s"), "comm_share": (procs, "%")},
                        params={"scale": f"{procs}_core{'s' if procs > 1 else ''}", "workload": "water",
                                "scaling": scaling}, system="cluster", partition="cpu", stack=stack, num_tasks=procs,
                        extra={"executable": "gmx_mpi", "gromacs_version": "2025.3", "gromacs_atoms": 5088})
            for procs, rate in ns_per_day.items()]


def test_ns_per_day_speedup_and_efficiency_in_the_applications_section(tmp_path):
    rr.write_run(tmp_path, "gmx", [*_gromacs("ucx", {1: 20.0, 2: 38.0, 4: 70.0}),
                                   *_gromacs("ucx", {1: 20.0, 2: 19.0}, scaling="weak")])
    loaded = results.load([tmp_path], index=False)
    blocks = report.build_document(loaded.table, loaded.warnings)
    start = next(i for i, b in enumerate(blocks) if isinstance(b, document.Heading) and b.text == "Applications")
    apps = blocks[start:]
    titles = [b.text for b in apps if isinstance(b, document.Heading) and b.level == 3]
    assert titles[:2] == ["GROMACS scaling=strong workload=water on cluster:cpu",
                          "GROMACS scaling=weak workload=water on cluster:cpu"]
    strong = next(b for b in apps if isinstance(b, document.Table) and "ns/day" in b.header and "Speedup" in b.header)
    assert [row[2:5] for row in strong.rows] == [("20", "1.00", "100.0%"), ("38", "1.90", "95.0%"),
                                                 ("70", "3.50", "87.5%")]
    weak = next(b for b in apps if isinstance(b, document.Table) and "Weak-scaling efficiency" in b.header)
    assert [row[3] for row in weak.rows] == ["100.0%", "95.0%"]
    (session,), _ = results.ingest([tmp_path])  # what the check records, kept with each case
    kept = {(c.provenance["gromacs_version"], c.provenance["gromacs_atoms"]) for c in session.cases}
    assert kept == {("2025.3", 5088)}

