"""Values from site files, thresholds files and the command line never reach a shell as code: each is
rejected with a one-line error naming it, or reaches the job script quoted, so a canary command in
it (`touch <canary>`) never runs. Input decks and application inputs take validated numbers and
names only.

ReFrame itself runs $(...) and `...` (through a shell) in environment values and in the directory
paths of its configuration, so those are refused before ReFrame sees them.
"""
import os
import shlex
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from conftest import REPO, VENV_BIN, run_reframe
from reframe_reports import hpl, write_run
from scalebench.errors import DeckError, InputError, ResultsError
from scalebench.hpl import deck
from scalebench.benchmarks.lammps import inputs as lammps
from scalebench.benchmarks.openfoam import cases as openfoam
from scalebench.site import thresholds
from scalebench.site import rundir, siteconf
from app_cases import CAVITY, DECOMPOSE, LJ, TEMPLATE, TEXTS
from site_files import SITE, run_dir, write  # noqa: F401 (run_dir: autouse, run directories in tmp_path)

# {c}: the canary file; a payload that runs anywhere creates it.
PAYLOADS = {
    "space": "x touch {c}",
    "semicolon": "x;touch {c}",
    "command substitution": "$(touch {c})",
    "backticks": "`touch {c}`",
    "single quotes": "x';touch {c};'",
    "double quotes": 'x"$(touch {c})"',
    "newline": "x\ntouch {c}",
}
# Site-file values that go into job scripts unquoted -> (how to set it, what the error names).
SITE_FIELDS = {
    "system name": (lambda site, v: site.update(system=v), "system"),
    "partition name": (lambda site, v: site["partitions"][0].update(name=v), "partitions.name"),
    "stack name": (lambda site, v: site["stacks"][0].update(name=v), "stacks.name"),
    "env_vars value": (lambda site, v: site["stacks"][0]["env_vars"].update(OMPI_MCA_pml=v),
                       "env_vars.OMPI_MCA_pml"),
    "launcher option": (lambda site, v: site["stacks"][0].update(launcher_options=["--bind-to", v]),
                        "launcher_options[1]"),
    "module": (lambda site, v: site["stacks"][0].update(modules=["gcc", v]), "modules[1]"),
    "program path": (lambda site, v: site["stacks"][0].update(hpl_binary=v), "hpl_binary"),
    "spack_view": (lambda site, v: site["stacks"][0].update(spack_view=v), "spack_view"),
}
TESTCLUSTER = REPO / "site_configs" / "sites" / "testcluster.yaml"


@pytest.fixture
def canary(tmp_path):
    directory = tmp_path / "canary"
    directory.mkdir()
    return directory / "pwned"


def site_file(tmp_path: Path, edit, base: str | Path = SITE) -> Path:
    site = yaml.safe_load(base.read_text() if isinstance(base, Path) else base)
    edit(site)
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(site))
    return path


def one_line(err: pytest.ExceptionInfo, *names: str) -> str:
    message = str(err.value)
    assert "\n" not in message and all(name in message for name in names), message
    return message


# --- site files: refused when loaded ---------------------------------------------------------------

@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("field", SITE_FIELDS)
def test_site_value_with_shell_syntax_is_refused_naming_it(tmp_path, canary, field, payload):
    set_value, named = SITE_FIELDS[field]
    path = site_file(tmp_path, lambda site: set_value(site, PAYLOADS[payload].format(c=canary)))
    with pytest.raises(InputError) as err:
        siteconf.load_site(path)
    one_line(err, str(path), *named.split("."))


@pytest.mark.parametrize("value", ["--partition=debug\ntouch {c}", "--partition=debug\rx", "--qos=a\x00b"])
def test_access_option_with_a_line_break_is_refused(tmp_path, canary, value):
    path = site_file(tmp_path, lambda site: site["partitions"][0].update(access=[value.format(c=canary)]))
    with pytest.raises(InputError) as err:
        siteconf.load_site(path)
    one_line(err, "access[0]", "#SBATCH")


@pytest.mark.parametrize("option", ["--cpus={0.__class__}", "--cpus=${SLURM_CPUS}", "--x={", "--x={}"])
def test_launcher_option_placeholders_other_than_threads_per_rank_are_refused(tmp_path, option):
    path = site_file(tmp_path, lambda site: site["stacks"][0].update(launcher_options=[option]))
    with pytest.raises(InputError) as err:
        siteconf.load_site(path)
    one_line(err, "launcher_options[0]")


def test_plain_values_still_load(tmp_path):
    def edit(site):
        stack = site["stacks"][0]
        stack.update(launcher_options=["--map-by", "slot:PE={threads_per_rank}", "--mca", "btl", "^openib"],
                     modules=["gcc/12.2.0", "openmpi@4.1"], hpl_binary="/opt/hpl-2.3/bin/xhpl",
                     spack_view="/opt/view")
        stack["env_vars"].update(UCX_TLS="rc_x,sm,self", MY_HOME="${HOME}/x")
        site["partitions"][0]["access"] = ["--constraint=a&b|c", "--comment=it's a \"test\" $(not run)"]
        site["modules_system"] = "lmod"
    config = siteconf.site_systems(site_file(tmp_path, edit))  # load_site also asks Lmod for the modules
    env, part = config["environments"][0], config["systems"][0]["partitions"][0]
    assert ["PATH", "/opt/view/bin:$PATH"] in env["env_vars"] and ["MY_HOME", "${HOME}/x"] in env["env_vars"]
    assert env["modules"] == ["gcc/12.2.0", "openmpi@4.1"]
    assert part["access"][1] == "--comment=it's a \"test\" $(not run)"  # an #SBATCH line: no shell reads it


# --- through ReFrame: the job script, run, runs no payload ------------------------------------------

# Stubs for what a job script calls, so it runs here without Slurm, modules or the program; srun
# keeps its last argument (the program) in a file.
JOB_STUBS = "srun() { printf %s \"${@: -1}\" > srun.program; }\nmodule() { :; }\ncommand() { :; }\n"


def reframe_env(tmp_path: Path, **extra: str) -> dict:
    """ReFrame writes its log to TMPDIR when the configuration fails: keep it in tmp_path."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return dict(os.environ, TMPDIR=str(tmp_path / "tmp"), **extra)


def dry_run_job_script(tmp_path: Path, site: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path | None]:
    env = reframe_env(tmp_path, SCALEBENCH_SITE=str(site))
    proc = run_reframe(tmp_path / "run", "--dry-run", "-n", "HPLCheck%scale=1_node$", *args, config="slurm.py",
                       env=env, timeout=120)
    scripts = list((tmp_path / "run" / "stage").rglob("rfm_job.sh")) if (tmp_path / "run").is_dir() else []
    return proc, scripts[0] if scripts else None


def test_access_options_and_hpl_binary_from_the_command_line_run_nothing(tmp_path, canary):
    payloads = [p.format(c=canary) for name, p in PAYLOADS.items() if name != "newline"]
    site = site_file(tmp_path, lambda s: s["partitions"][0].update(access=["--partition=debug", *payloads]),
                     base=TESTCLUSTER)
    binary = "\n".join(p.format(c=canary) for p in PAYLOADS.values())  # every payload in one value
    proc, script = dry_run_job_script(tmp_path, site, "-S", f"hpl_binary={binary}")
    assert script is not None, proc.stdout[-3000:] + proc.stderr[-2000:]
    text = script.read_text()
    assert f" {shlex.quote(binary)}\n" in text  # the launch line ends with it, quoted
    stubs = tmp_path / "stubs.sh"
    stubs.write_text(JOB_STUBS)
    ran = subprocess.run(["bash", str(script)], env=dict(os.environ, BASH_ENV=str(stubs)), cwd=script.parent,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert (script.parent / "srun.program").read_text() == binary  # launched, as one word
    assert not canary.exists()


def test_env_value_with_command_substitution_never_reaches_reframe(tmp_path, canary):
    # Before it was refused, ReFrame ran this on the login node while loading the configuration.
    site = site_file(tmp_path, lambda s: s["stacks"][0]["env_vars"].update(CANARY=f"$(touch {canary})"),
                     base=TESTCLUSTER)
    proc, script = dry_run_job_script(tmp_path, site)
    assert proc.returncode != 0 and script is None
    assert "env_vars.CANARY" in proc.stdout + proc.stderr
    assert not canary.exists()


def test_run_directory_with_command_substitution_is_refused(tmp_path, canary):
    run_dir = tmp_path / f"run-$(touch {canary})"
    proc = run_reframe(run_dir, "--dry-run", "-n", "HPLCheck%scale=1_core$", env=reframe_env(tmp_path), timeout=120)
    assert proc.returncode != 0
    assert "SCALEBENCH_RUN_DIR" in proc.stdout + proc.stderr
    assert not canary.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["canary", "tmp"]  # no run directory made


def test_results_root_with_backticks_is_refused_by_scalebench_run(tmp_path, canary):
    results = tmp_path / f"results-`touch {canary}`"
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "run", "--results", str(results), "--", "--dry-run"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert len(proc.stderr.splitlines()) == 1 and "results directory" in proc.stderr, proc.stderr
    assert not canary.exists() and not results.exists()


def test_run_dir_check_in_the_library(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALEBENCH_RUN_DIR", str(tmp_path / "a$HOME"))
    with pytest.raises(ResultsError) as err:
        rundir.claim_run_dir()
    one_line(err, "SCALEBENCH_RUN_DIR", "'$'")
    with pytest.raises(ResultsError):
        rundir.new_run_dir(tmp_path / "x\ny")


# --- thresholds files: data, never commands ---------------------------------------------------------

def test_thresholds_payloads_are_text_or_refused(tmp_path, canary):
    results = tmp_path / "results"
    write_run(results, "20260101T000000Z-vm-1", hpl("openmpi-sm", {1: 900.0}))
    payload = f"$(touch {canary});`touch {canary}`"
    criteria = {"criteria": [{"name": payload, "benchmark": "HPLCheck", "figure": "efficiency", "min": 1,
                              "system": payload, "stack": payload, "optional": True}]}
    path = tmp_path / "thresholds.yaml"
    path.write_text(yaml.safe_dump(criteria))
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "accept", str(results), "--thresholds", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr  # read and judged: no system is named the payload, nothing passed
    assert payload in proc.stdout  # the name, shown as it is
    criteria["criteria"][0]["min"] = f"75%; touch {canary}"
    path.write_text(yaml.safe_dump(criteria))
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "accept", str(results), "--thresholds", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and len(proc.stderr.splitlines()) == 1 and "min" in proc.stderr, proc.stderr
    assert not canary.exists()


@pytest.mark.parametrize("floor", ["0.5; touch x", "$(touch x)", True, None])
def test_efficiency_floor_must_be_a_number(tmp_path, floor):
    path = tmp_path / "floors.yaml"
    path.write_text(yaml.safe_dump({"*": floor}))
    with pytest.raises(InputError) as err:
        thresholds.efficiency_floor("x", "y", path)
    one_line(err, str(path), "efficiency floor")


# --- decks and application inputs: validated numbers and names only -----------------------------------

NOT_NUMBERS = ["1000", "1000\nshell touch x", 1000.0, True, None, -1]
DECK = deck.make_deck(deck.DeckRequest(nodes=1, ranks_per_node=2, threads_per_rank=1, memory_per_node=2**30))


@pytest.mark.parametrize("writer", [deck.hpl_dat, deck.hpccinf_txt])
@pytest.mark.parametrize("value", NOT_NUMBERS, ids=repr)
@pytest.mark.parametrize("field, label", [("n", "Ns"), ("nb", "NBs"), ("p", "Ps"), ("q", "Qs")])
def test_deck_fields_must_be_integers(writer, field, label, value):
    with pytest.raises(DeckError) as err:
        writer(replace(DECK, **{field: value}))
    one_line(err, label)


@pytest.mark.parametrize("field", ["threshold", "swap_threshold", "alignment", "pfact", "bcast"])
@pytest.mark.parametrize("value", ["16\n1", "x", None])
def test_deck_algorithm_fields_are_validated(field, value):
    with pytest.raises(InputError) as err:
        replace(DECK.algorithm, **{field: value})
    one_line(err, field)


@pytest.mark.parametrize("kwargs, named", [
    ({"output_file": "HPL.out\n7"}, "output file"), ({"output_file": "my out"}, "output file"),
    ({"output_file": ""}, "output file"), ({"device": "6\n1"}, "device"), ({"device": -1}, "device"),
    ({"trials": "2"}, "trials"), ({"trials": 0}, "trials")])
def test_deck_output_lines_take_one_word_or_number(kwargs, named):
    with pytest.raises((DeckError, InputError)) as err:
        deck.hpl_dat(DECK, **kwargs)
    one_line(err, named)


@pytest.mark.parametrize("field", ["atoms", "steps", "ranks"])
@pytest.mark.parametrize("value", NOT_NUMBERS[:-1], ids=repr)
def test_lammps_input_sizes_must_be_integers(field, value):
    sizes = {"atoms": 32000, "steps": 100, "ranks": 2, field: value}
    with pytest.raises(InputError) as err:
        lammps.lammps_input(LJ, TEMPLATE, sizes["atoms"], sizes["steps"], sizes["ranks"], "strong")
    one_line(err, field)


def test_lammps_scaling_and_workload_names_are_validated():
    with pytest.raises(InputError) as err:
        lammps.lammps_input(LJ, TEMPLATE, 32000, 100, 2, "strong\nshell touch x")
    one_line(err, "scaling")
    with pytest.raises(InputError) as err:
        replace(LJ, name="lj\nshell touch x")
    one_line(err, "workload name")
    with pytest.raises(InputError) as err:
        replace(LJ, atoms_per_cell="4\nshell touch x")
    one_line(err, "atoms_per_cell")


@pytest.mark.parametrize("field", ["cells", "steps", "ranks"])
@pytest.mark.parametrize("value", NOT_NUMBERS[:-1], ids=repr)
def test_openfoam_case_sizes_must_be_integers(field, value):
    sizes = {"cells": 400, "steps": 50, "ranks": 2, field: value}
    with pytest.raises(InputError) as err:
        openfoam.openfoam_case(CAVITY, TEXTS, DECOMPOSE, sizes["cells"], sizes["steps"], sizes["ranks"], "strong")
    one_line(err, field)


@pytest.mark.parametrize("field, value, named", [
    ("solver", "icoFoam;touch x", "solver"), ("solver", "icoFoam\ntouch x", "solver"),
    ("name", "cavity x", "case name"), ("deltaT", "0.005\nx", "deltaT"), ("cells", "400", "cells")])
def test_openfoam_case_spec_is_validated(field, value, named):
    with pytest.raises(InputError) as err:
        replace(CAVITY, **{field: value})
    one_line(err, named)


def test_shipped_specs_still_load():
    assert set(lammps.load_lammps_workloads()) >= {"lj", "eam"}
    assert "cavity" in openfoam.load_openfoam_cases()
