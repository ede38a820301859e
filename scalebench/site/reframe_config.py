"""A site's ReFrame configuration as scalebench reads it: the system ReFrame runs on, its partitions and
environments as the configuration has them, and the facts no configuration holds (scalebench.site.facts).

Both ways of describing a system meet here. A partition whose extras scalebench's own site file wrote
(`load_site`) is read as it is. Any other partition is described by its facts: the configuration gives
its scheduler, launcher, environments, time limit, `processor` (cores, microarchitecture) and `devices`
(GPUs); the facts give the rest, in the site file's keys, and the site file's own rules turn them into
the same partition and stack a site file would give. A partition without facts is not described: the
checks leave it alone and `plan` says so. A system none of whose partitions is described is an error
(NotDescribed), never a silent empty run.
"""
from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from scalebench import loaders, schema
from scalebench.errors import InputError
from scalebench.validation import excerpt
from scalebench.site import facts as site_facts, siteconf
from scalebench.site.partition import SLURM_SCHEDULERS, PartitionSpec, StackSpec

# What scalebench plans jobs for (the site schema's scheduler and launcher).
SCHEDULERS = (*SLURM_SCHEDULERS, "local")
LAUNCHERS = ("srun", "mpirun", "mpiexec", "local")
# Facts every described partition needs, unless the configuration's processor gives them.
REQUIRED = ("max_nodes", "memory_per_node", "cores_per_node", "clock_ghz")


class NotDescribed(InputError):
    """The system ReFrame runs on has no partition scalebench can plan for (the message says what to pass)."""


@dataclass(frozen=True)
class Described:
    """A system as scalebench's checks and `plan` see it."""

    system: str
    partitions: tuple[PartitionSpec, ...]
    stacks: Mapping[str, StackSpec]  # by ReFrame environment name
    environs: Mapping[str, tuple[str, ...]]  # partition name -> its environments
    not_described: Mapping[str, str] = field(default_factory=dict)  # partition name -> why it is not used
    facts_source: str = ""
    by_facts: bool = False  # some partition is the configuration's own with facts (not a site file's)

    def partition(self, name: str) -> PartitionSpec:
        return next(p for p in self.partitions if p.name == name)

    def stacks_with(self, features: Sequence[str]) -> list[str]:
        """The environments that have every feature (the checks' valid_prog_environs, by name)."""
        return [name for name, stack in self.stacks.items() if set(features) <= set(stack.features)]


def slurm_option(access: Sequence[str], long: str, short: str) -> str | None:
    """The value of an sbatch option in a partition's access options (--partition=normal, -p normal,
    -pnormal), the last one given; None without it."""
    words = [word for option in access for word in shlex.split(str(option))]
    found = None
    for i, word in enumerate(words):
        if word.startswith(f"--{long}="):
            found = word.split("=", 1)[1]
        elif word in (f"--{long}", f"-{short}") and i + 1 < len(words):
            found = words[i + 1]
        elif word.startswith(f"-{short}") and len(word) > 2 and not word.startswith("--"):
            found = word[2:]
    return found


def _derived(part: Mapping[str, Any], given: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """What the configuration's own `processor` and `devices` say of the facts (given facts win), and
    where each came from."""
    found: dict[str, Any] = {}
    whence: dict[str, str] = {}
    processor = part.get("processor") or {}
    cpus, per_core = processor.get("num_cpus"), processor.get("num_cpus_per_core") or 1
    if "cores_per_node" not in given and isinstance(cpus, int) and isinstance(per_core, int) and cpus > 0 < per_core:
        found["cores_per_node"] = cpus // per_core
        whence["cores_per_node"] = f"ReFrame's processor: {cpus} CPUs, {per_core} per core"
    if "microarch" not in given and processor.get("arch"):
        found["microarch"] = str(processor["arch"])
        whence["microarch"] = "ReFrame's processor.arch"
    gpus = [d for d in part.get("devices") or () if d.get("type") == "gpu"]
    if gpus or given.get("gpus"):
        device = {"count": gpus[0].get("num_devices", 1), **({"arch": gpus[0]["arch"]} if gpus[0].get("arch") else {})} \
            if gpus else {}
        found["gpus"] = {**device, **_gpu_request(part), **(given.get("gpus") or {})}
    return found, whence


_GPU_OPTIONS = ("--gres=gpu", "--gpus", "--gpus-per-node", "-G")


def _gpu_request(part: Mapping[str, Any]) -> dict[str, str]:
    """How the configuration's jobs ask for GPUs: its _rfm_gpu resource (ReFrame fills it from a check's
    num_gpus_per_node), another resource taking {num_gpus_per_node}, or access options that ask already;
    and EESSI's partition feature always_request_gpus."""
    resources = {str(r.get("name")): " ".join(map(str, r.get("options", ()))) for r in part.get("resources") or ()}
    named = "_rfm_gpu" if "_rfm_gpu" in resources else next(
        (name for name, options in resources.items() if "{num_gpus_per_node}" in options), None)
    asks = any(str(option).startswith(_GPU_OPTIONS) for option in part.get("access") or ())
    found = {"resource": named if named else "access" if asks else ""}
    if "always_request_gpus" in (part.get("features") or ()):
        found["policy"] = "every-job"
    return found


def _missing(system: str, part: Mapping[str, Any], known: Mapping[str, Any], source: str) -> InputError | None:
    """The error naming each fact the partition still lacks, a line each with where to find it."""
    slurm_partition = slurm_option(part.get("access") or (), "partition", "p") or "PARTITION"
    missing = [key for key in REQUIRED if key not in known]
    if "microarch" not in known and "flops_per_cycle" not in known:  # Rpeak's flop rate comes from one of them
        missing.append("microarch")
    if "gpus" in known:
        missing += [f"gpus.{key}" for key in ("count", "memory", "fp64_tflops") if key not in known["gpus"]]
    if not missing:
        return None
    lines = []
    for key in missing:
        find = (schema.site_key_note("partition", key, "x-find") or "").replace("{slurm_partition}", slurm_partition)
        lines.append(f"{key}: {find}")
    return InputError(f"system {system}: partition {part['name']} lacks what no ReFrame configuration holds: "
                      f"{', '.join(missing)}; give them in {source or 'a facts file (' + site_facts.FACTS_VARIABLE + ')'}",
                      tuple(lines))


def _site_partition(system: str, part: Mapping[str, Any], given: Mapping[str, Any], where: str,
                    environs: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The site file's partition that says what the configuration's partition and its facts say."""
    name = part["name"]
    for key, allowed in (("scheduler", SCHEDULERS), ("launcher", LAUNCHERS)):
        if part.get(key) not in allowed:
            raise InputError(f"system {system}: partition {name} ({where}): {key} {part.get(key)!r}: scalebench plans "
                             f"jobs for the {key}s {', '.join(allowed)}; remove its facts to leave it to other checks")
    derived, whence = _derived(part, given)
    site_part = {"name": name, "scheduler": part["scheduler"], "launcher": part["launcher"],
                 "environs": list(environs), **derived, **given, **({"gpus": derived["gpus"]} if "gpus" in derived else {})}
    if part.get("max_jobs") is not None:
        site_part["max_jobs"] = part["max_jobs"]
    if part.get("time_limit"):
        site_part["time_limit"] = str(part["time_limit"])
    problem = _missing(system, part, site_part, where)
    if problem:
        raise problem
    return site_part, whence


def _site_stack(name: str, given: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": name, **given}


def describe(system: Mapping[str, Any], environments: Sequence[Mapping[str, Any]],
             facts: site_facts.SystemFacts | None = None) -> Described:
    """The system of a ReFrame configuration (its picked form: one system, its environments) with its
    facts, as partition and stack specs. InputError for facts that are wrong or incomplete."""
    name = system["name"]
    envs = {str(env["name"]): env for env in environments}
    own = [p for p in system["partitions"] if "max_nodes" in (p.get("extras") or {})]
    partitions: list[PartitionSpec] = [PartitionSpec.from_config(name, p["name"], p["scheduler"], p["launcher"],
                                                                 p["extras"], tuple(p.get("features", ())))
                                       for p in own]
    stacks = {e: StackSpec.from_config(e, tuple(envs[e].get("features", ())), envs[e].get("extras", {}),
                                       envs[e].get("env_vars", ()))
              for p in own for e in p["environs"] if e in envs}
    environs = {p["name"]: tuple(e for e in p["environs"] if e in envs) for p in own}
    not_described: dict[str, str] = {}
    site_parts, whence_of, sources = [], {}, []
    for part in system["partitions"]:
        if part in own:
            continue
        given, where = site_facts.merged("partitions", part["name"], facts, part.get("extras") or {})
        if not where:
            not_described[part["name"]] = "no facts"
            continue
        usable = [e for e in part.get("environs", ()) if e in envs and site_facts.merged(
            "environments", e, facts, envs[e].get("extras") or {})[1]]
        site_part, whence_of[part["name"]] = _site_partition(name, part, given, where, usable)
        if not usable:
            raise InputError(f"system {name}: partition {part['name']} has facts ({where}) but none of its environments "
                             f"({', '.join(part.get('environs', ())) or 'none'}) has: give the facts of the one(s) "
                             "that hold the benchmarks, under environments: (e.g. features: [hpl], hpl_binary: xhpl)")
        site_parts.append(site_part)
        sources.append(where)
    if site_parts:
        partitions_config, site_stacks = _described_by_facts(name, site_parts, envs, facts, sources)
        for part, config in zip(site_parts, partitions_config):
            extras = config["extras"]
            extras["rpeak_derivation"] = _derivation(extras["rpeak_derivation"], whence_of[part["name"]])
            original = next(p for p in system["partitions"] if p["name"] == part["name"])
            partitions.append(PartitionSpec.from_config(name, part["name"], part["scheduler"], part["launcher"], extras,
                                                        ("hpl", *original.get("features", ()))))
            environs[part["name"]] = tuple(part["environs"])
        stacks.update(site_stacks)
    order = [p["name"] for p in system["partitions"]]
    partitions.sort(key=lambda p: order.index(p.name))
    return Described(name, tuple(partitions), stacks, environs, not_described,
                     facts.source if facts else "", bool(site_parts))


def _described_by_facts(system: str, site_parts: list[dict[str, Any]], envs: Mapping[str, Mapping[str, Any]],
                        facts: site_facts.SystemFacts | None,
                        sources: list[str]) -> tuple[list[dict[str, Any]], dict[str, StackSpec]]:
    """The partitions' ReFrame configurations (extras computed as a site file's) and their stacks."""
    used = list(dict.fromkeys(e for part in site_parts for e in part["environs"]))
    given = {e: site_facts.merged("environments", e, facts, envs[e].get("extras") or {})[0] for e in used}
    site = {"system": system, "partitions": site_parts, "stacks": [_site_stack(e, given[e]) for e in used]}
    source = facts.source if facts else sources[0]
    for part in site_parts:
        _check_site_partition(part, source)
    # The environment's own features join its facts' (an mpirun launcher's binding reads the MPI's name there).
    for stack in site["stacks"]:
        stack["features"] = list(dict.fromkeys([*stack.get("features", ()),
                                                *(str(f) for f in envs[stack["name"]].get("features", ()))]))
    config = siteconf.systems_config(site, source)
    stacks = {}
    for env in config["environments"]:
        own = envs[env["name"]]
        stacks[env["name"]] = StackSpec.from_config(env["name"], tuple(dict.fromkeys(env["features"])), env["extras"],
                                                    _env_vars(own.get("env_vars", ())))
    return config["systems"][0]["partitions"], stacks


def _check_site_partition(part: Mapping[str, Any], source: str) -> None:
    """The site schema's check of what a partition's facts and its configuration make together (the
    facts were checked alone). The configuration's names are its ReFrame's, whose rules may be older
    than scalebench's: they stand aside while the rest is checked."""
    named = {**part, "name": "p", "environs": ["e"]}
    try:
        schema.check({"system": "s", "partitions": [named], "stacks": [{"name": "e"}]}, "site.yaml", source)
    except InputError as err:
        raise InputError(str(err).replace(f"{source}: partitions[p]", f"{source}: partitions.{part['name']}"),
                         err.details) from None


def _env_vars(pairs: Any) -> dict[str, str]:
    """ReFrame's env_vars: a mapping, or [name, value] pairs as the configuration writes them."""
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    return {str(k): str(v) for k, v in items}


def _derivation(lines: Sequence[str], whence: Mapping[str, str]) -> list[str]:
    """Rpeak's derivation, saying which inputs the configuration's processor gave."""
    out = []
    for line in lines:
        key = line.split(" = ", 1)[0]
        out.append(line.replace("(site config)", f"({whence[key]})") if key in whence else
                   line.replace("(site config)", "(facts)"))
    return out


def check_nothing_to_run(described: Described, features: Sequence[str], facts_given: bool,
                         systems_in_facts: Sequence[str]) -> None:
    """NotDescribed when no partition is described, or no stack has a feature any check runs on."""
    if not described.partitions:
        raise NotDescribed(not_described_error(described.system, described, facts_given, systems_in_facts))
    if not described.stacks:
        raise NotDescribed(f"system {described.system}: its partitions ({', '.join(p.name for p in described.partitions)})"
                           " have no environment left to run in (does ReFrame's -p select none of theirs?)")
    if not any(set(stack.features) & set(features) for stack in described.stacks.values()):
        raise NotDescribed(f"system {described.system}: no environment ({', '.join(described.stacks)}) has a benchmark "
                           f"to run: say which it has in its `features` ({', '.join(sorted(features))})")


def not_described_error(system: str, described: Described, facts_given: bool, systems_in_facts: Sequence[str]) -> str:
    """Why a run would have nothing to run on `system`, and what to pass, in one line."""
    if system == "generic":
        return ("ReFrame picked its built-in system 'generic': no system of the configuration matches this host; "
                "pass --system NAME[:PARTITION] (the system scalebench's facts describe)")
    if not facts_given:
        return (f"system {system} is not described for scalebench: set {site_facts.FACTS_VARIABLE} to its facts "
                f"file (docs/at-a-site.md; `scalebench facts template` writes one), or load a scalebench site file "
                "with -C site_configs/slurm.py")
    if not described.partitions and described.not_described:
        others = f" (the facts describe {', '.join(systems_in_facts)})" if systems_in_facts else ""
        return (f"system {system}: no partition has facts in {site_facts.FACTS_VARIABLE}{others}; its partitions are "
                f"{', '.join(described.not_described)}")
    return f"system {system}: no partition scalebench can plan for"


# ReFrame's default directory of detected topologies (its configuration's general/topology_prefix).
TOPOLOGY_PREFIX = "${HOME}/.reframe/topology"
_SHOW_CONFIG_TIMEOUT_S = 300


def show_config(config: Path, system: str | None, reframe: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    """The configuration ReFrame picks for `system` (default: the one matching this host), as
    `reframe -C CONFIG --show-config` prints it: the site's file is read by the ReFrame the site runs,
    never by scalebench. Partitions without a `processor` get the one ReFrame detected into its
    topology directory, as a run would."""
    command = [str(reframe), "-C", str(config), *(["--system", system] if system else []), "--show-config"]
    # Reading the configuration loads no module: the site's module system need not be on this host.
    quiet = {"RFM_RESOLVE_MODULE_CONFLICTS": "n", "RFM_COLORIZE": "n"}
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=_SHOW_CONFIG_TIMEOUT_S,
                              env={**environ, **quiet}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise InputError(f"{config}: `{shlex.join(command)}` did not answer: {err}") from None
    text = proc.stdout
    start = text.find("\n{")
    start = 0 if text.startswith("{") else start + 1 if start >= 0 else -1
    if proc.returncode or start < 0:
        why = (proc.stderr.strip() or text.strip()).splitlines()
        raise InputError(f"{config}: ReFrame cannot load it ({excerpt(why[-1] if why else f'exit {proc.returncode}')})")
    try:
        picked = json.JSONDecoder().raw_decode(text[start:])[0]
        system_config = picked["systems"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        raise InputError(f"{config}: ReFrame's --show-config printed no configuration") from None
    general = (picked.get("general") or [{}])[0] or {}
    prefix = Path(os.path.expandvars(general.get("topology_prefix") or TOPOLOGY_PREFIX))
    for part in system_config.get("partitions", ()):
        topology = prefix / f"{system_config['name']}-{part['name']}" / "processor.json"
        if not part.get("processor") and topology.is_file():
            with contextlib.suppress(InputError):
                detected = loaders.load_json(topology, "ReFrame topology file", limit=2**20)
                part["processor"] = detected if isinstance(detected, dict) else {}
    return picked
