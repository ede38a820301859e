"""The cases a command means, as `plan` and `predict` take them: the site file, ReFrame's filters
(-n, -x, -p, --system) and the checks' variables (-S)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from scalebench import paths
from scalebench.check import Settings
from scalebench.cli.common import path_arg
from scalebench.errors import InputError
from scalebench.knobs import knobs
from scalebench.benchmarks import SETTINGS
from scalebench.site_plan import (Filters, PlannedCase, Unplanned, asked_reservation, plan_cases, check_features,
                                  unplanned_checks)
from scalebench.screening.jobs import expand_hostlist
from scalebench.site import reframe_config
from scalebench.site.facts import FACTS_VARIABLE, described_systems, system_facts
from scalebench.site.siteconf import site_systems
from scalebench.validation import excerpt

# -S names: the knobs of the benchmarks' settings (HPL's among them) and of the others', and variables read into
# other forms.
_BENCHMARK_KNOBS = {k.name: (kind, k) for kind in SETTINGS for k in knobs(kind)}
_KNOBS = {k.name: k for k in knobs(Settings)}
_OTHER_VARIABLES = ("reservation", "reservation_time_limit", "screen_nodes")


def settings_of(assignments: Sequence[str]) -> Settings:
    """-S name=value for the checks' variables that change a plan, as ReFrame's -S sets them on
    every check that has them."""
    apps: dict[str, Any] = {}
    benchmarks: dict[type, dict[str, Any]] = {kind: {} for kind in SETTINGS}
    others: dict[str, str] = {}
    for text in assignments:
        name, sep, value = text.partition("=")
        if not sep or name not in {*_BENCHMARK_KNOBS, *_KNOBS, *_OTHER_VARIABLES}:
            known = ", ".join(sorted({*_BENCHMARK_KNOBS, *_KNOBS, *_OTHER_VARIABLES}))
            raise InputError(f"-S {excerpt(text)}: expected name=value with a variable the plan uses ({known})")
        if name in _BENCHMARK_KNOBS:
            kind, benchmark_knob = _BENCHMARK_KNOBS[name]
            benchmarks[kind][name] = benchmark_knob.parse(value)
        if name in _KNOBS:
            apps[name] = _KNOBS[name].parse(value)
        if name in _OTHER_VARIABLES:
            others[name] = value
    screen = tuple(expand_hostlist(others["screen_nodes"], "-S screen_nodes")) if "screen_nodes" in others else ()
    reservation = asked_reservation(others.get("reservation", ""), others.get("reservation_time_limit", ""))
    return Settings(**apps, screen_nodes=screen, environ=dict(os.environ),
                    reservation=reservation, benchmarks=tuple(kind(**values) for kind, values in benchmarks.items()))


@dataclass(frozen=True)
class Planned:
    site: Path  # the site file or ReFrame configuration
    cases: list[PlannedCase]
    unplanned: list[Unplanned]  # the selected checks with no case at all
    not_described: Mapping[str, str]  # partitions of a ReFrame configuration without facts, and why


def planned_cases(args: argparse.Namespace, checks: Sequence[str] | None = None) -> Planned:
    """The site file, its cases as the filter arguments select them, and the selected checks with no
    case at all, with what they need (InputError naming that when there is no case)."""
    site = Path(args.site or os.environ.get("SCALEBENCH_SITE") or paths.SITE_CONFIGS / "sites" / "local.yaml")
    described = describe_site(site, args.system, args.facts)
    partitions, stacks = list(described.partitions), dict(described.stacks)
    environs = {name: list(found) for name, found in described.environs.items()}
    filters = Filters(tuple(args.name), tuple(args.exclude), tuple(args.environ), args.system)
    settings = settings_of(args.setvar)
    cases = plan_cases(partitions, stacks, environs, settings, filters, checks)
    unplanned = unplanned_checks(partitions, stacks, environs, cases, settings, filters, checks)
    if not cases:
        reasons = "; ".join(f"{u.check} needs {u.needs}; the site has {u.site_has}" for u in unplanned)
        raise InputError("no case matches the filters" + (f": {reasons}" if reasons else ""))
    return Planned(site, cases, unplanned, described.not_described)


def describe_site(site: Path, system: str | None, facts_given: str | None) -> reframe_config.Described:
    """The system a command plans for: a scalebench site file's, or a site's own ReFrame configuration
    (a .py file, read by ReFrame's --show-config) with its facts (--facts, else $SCALEBENCH_FACTS)."""
    if site.suffix != ".py":
        config = site_systems(site)
        described = reframe_config.describe(config["systems"][0], config["environments"])
        reframe_config.check_nothing_to_run(described, check_features(), True, ())
        return described
    with tempfile.TemporaryDirectory(prefix="scalebench-plan-") as scratch:
        # a scalebench configuration (site_configs/*.py) claims a run directory as it loads: a scratch one
        environ = dict(os.environ, SCALEBENCH_RUN_DIR=str(Path(scratch) / "run"))
        picked = reframe_config.show_config(site, system, reframe_executable(), environ)
    chosen = picked["systems"][0]
    given = os.environ.get(FACTS_VARIABLE, "") if facts_given is None else facts_given
    described = reframe_config.describe(chosen, picked.get("environments", []),
                                        system_facts(chosen["name"], given, "--facts" if facts_given else FACTS_VARIABLE))
    reframe_config.check_nothing_to_run(described, check_features(), bool(given), described_systems(given))
    return described


def reframe_executable() -> Path:
    """The reframe beside this Python (the environment scalebench is installed in), else on PATH."""
    beside = Path(sys.executable).with_name("reframe")
    return beside if os.access(beside, os.X_OK) else Path(shutil.which("reframe") or beside)


def add_filter_arguments(p: argparse.ArgumentParser) -> None:
    """The site and the filters `plan` and `predict` share (ReFrame's -n, -x, -p, --system, -S)."""
    p.add_argument("site", nargs="?", default=None, type=path_arg,
                   help="site file, or the site's own ReFrame configuration (.py) with --facts (default "
                        "$SCALEBENCH_SITE, else site_configs/sites/local.yaml)")
    p.add_argument("--facts", default=None, type=path_arg,
                   help="facts of a ReFrame configuration's system: file(s) or directory (default $SCALEBENCH_FACTS)")
    p.add_argument("-n", "--name", action="append", default=[], help="only checks whose name matches (ReFrame's -n)")
    p.add_argument("-x", "--exclude", action="append", default=[], help="leave out checks whose name matches")
    p.add_argument("-p", "--prgenv", dest="environ", action="append", default=[], help="only stacks matching")
    p.add_argument("--system", default=None, help="system[:partition]")
    p.add_argument("-S", "--setvar", action="append", default=[], help="a check variable, name=value")
