"""The knobs of a plan are declared once, as settings fields: plan's -S names and types are theirs."""
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from conftest import REPO, run_reframe
from scalebench.check import Settings
from scalebench.cli.cases import settings_of
from scalebench.errors import InputError
from scalebench.hpl.case_plan import HplSettings, plan_hpl
from scalebench.knobs import knob, knobs
from scalebench.benchmarks import SETTINGS
from scalebench.benchmarks.openfoam.rules import OpenFOAMSettings
from scalebench.benchmarks.osu.rules import OsuSettings
from scalebench.site.siteconf import site_systems
from scalebench.site_plan import Filters, plan_cases, site_specs
from wrapped_site import install_wrappers, site_file


def test_every_hpl_knob_is_a_plan_name_of_its_type():
    values = {bool: "true", int: "3", float: "0.5", str: "strong", Path: "decks"}
    for k in knobs(HplSettings):
        text = "strong" if k.name == "scaling" else values[k.kind]
        assert getattr(settings_of([f"{k.name}={text}"]).of(HplSettings), k.name) == k.kind(text), k.name


def test_a_benchmarks_knobs_are_plan_names_its_rules_read_through_the_settings():
    """HPL's, OSU's, OpenFOAM's and STREAM's benchmarks declare their knobs (scalebench.benchmarks.SETTINGS),
    each name once (HPL's settings and the central ones share threads_per_rank and ranks_per_node on purpose:
    one -S sets both)."""
    central = {k.name for k in knobs(Settings)}
    names = [k.name for kind in SETTINGS for k in knobs(kind)]
    assert len(names) == len(set(names)) and central & set(names) == {"threads_per_rank", "ranks_per_node"}
    assert {"osu_buffers", "heavy_cases", "array_elements", "hpl_binary"} <= set(names)
    assert HplSettings in SETTINGS
    assert settings_of(["threads_per_rank=2"]).threads_per_rank == 2
    assert settings_of(["threads_per_rank=2"]).of(HplSettings).threads_per_rank == 2
    assert "osu_buffers" not in {k.name for k in knobs(Settings)}  # the benchmark's, not the central settings'
    assert settings_of(["osu_buffers=device"]).of(OsuSettings) == OsuSettings("device")
    assert settings_of([]).of(OsuSettings) == OsuSettings() and Settings().of(OpenFOAMSettings).heavy_cases is False
    with pytest.raises(InputError, match="heavy_cases='maybe': must be true or false"):
        settings_of(["heavy_cases=maybe"])
    partitions, stacks, environs = site_specs(site_systems(REPO / "site_configs" / "sites" / "archetypes"
                                                          / "gpu-h100.yaml"))

    def osu_args(*assignments):
        cases = plan_cases(partitions, stacks, environs, settings_of(assignments), Filters(("OSULatencyCheck",)))
        return {(case.partition.name, case.plan.args, case.plan.job.gpus_per_node) for case in cases
                if case.plan and case.plan.job}

    assert {args for _, args, _ in osu_args()} == {()}
    device = osu_args("osu_buffers=device")
    assert {args[:2] for _, args, _ in device} == {("-d", "cuda")} and all(gpus > 0 for _, _, gpus in device)
    with pytest.raises(InputError, match="osu_buffers: 'gpu' is not one of host, device"):
        osu_args("osu_buffers=gpu")


def test_a_knob_is_typed_by_its_field():
    threads = {k.name: k for k in knobs(Settings)}["threads_per_rank"]
    assert (threads.kind, threads.optional, threads.default, threads.recorded) == (int, True, None, True)
    with pytest.raises(InputError, match="threads_per_rank='x': not a int"):
        threads.parse("x")

    @dataclass(frozen=True)
    class Odd:
        nodes: tuple[str, ...] = knob(())

    with pytest.raises(TypeError, match="Odd.nodes"):
        knobs(Odd)


def test_a_site_asking_more_trials_than_hpl_dat_lists_is_refused_naming_the_key(tmp_path):
    data = yaml.safe_load((REPO / "site_configs" / "sites" / "local.yaml").read_text())
    data["partitions"][0]["hpl_trials"] = 21
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump(data))
    partitions, stacks, _ = site_specs(site_systems(site))
    with pytest.raises(InputError, match="hpl_trials: 21 solves; HPL.dat lists at most 20"):
        plan_hpl(partitions[0], next(iter(stacks.values())), "1_core", HplSettings())


def test_every_boolean_variable_of_every_check_takes_false_and_true_from_the_command_line(tmp_path):
    """ReFrame reads -S name=false into a variable of plain bool as bool('false'), True: -S node_probe=false
    probed anyway, and its foreign-load record made prepared outputs noisy on a loaded machine."""
    env = dict(os.environ, SCALEBENCH_SITE=str(site_file(tmp_path, install_wrappers(tmp_path))))

    def described(*settings):
        proc = run_reframe(tmp_path / "run", "-R", *settings, "--describe", checks=".", env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout)

    checks = described()
    flags = sorted({name for check in checks for name, value in check.items() if isinstance(value, bool)})
    assert {"node_probe", "heavy_cases", "freeze", "force"} <= set(flags)  # the checks' own, besides ReFrame's
    for text, expected in (("false", False), ("true", True)):
        for check in described(*(f"-S{name}={text}" for name in flags)):
            assert {name: check[name] for name in flags if name in check} == \
                {name: expected for name in flags if name in check}, check["name"]
