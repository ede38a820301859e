"""The knobs of a plan are declared once, as settings fields: plan's -S names and types are theirs."""
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from scalebench.cli.cases import settings_of
from scalebench.errors import InputError
from scalebench.hpl.plan import HplSettings, plan_hpl
from scalebench.knobs import knob, knobs
from scalebench.plan import Settings, site_specs
from scalebench.site.siteconf import site_systems


def test_every_hpl_knob_is_a_plan_name_of_its_type():
    values = {bool: "true", int: "3", float: "0.5", str: "strong", Path: "decks"}
    for k in knobs(HplSettings):
        text = "strong" if k.name == "scaling" else values[k.kind]
        assert getattr(settings_of([f"{k.name}={text}"]).hpl, k.name) == k.kind(text), k.name


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
