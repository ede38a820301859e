"""A first facts file for a system of a site's ReFrame configuration: what the configuration already
says is named in comments, what Slurm knows is filled in (scalebench.site.slurm_facts, each partition's
Slurm partition and constraint read from its access options), and each fact still missing is a
commented line saying where to find it. The file loads as it is; loading it names what is missing.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import yaml

from scalebench import schema
from scalebench.errors import InputError
from scalebench.site_plan import check_features
from scalebench.site.reframe_config import LAUNCHERS, REQUIRED, SCHEDULERS, slurm_option
from scalebench.site.slurm_facts import SlurmCluster, FactsDumper, partition_facts

# What the configuration's own `processor` gives, when it has one.
_FROM_PROCESSOR = ("cores_per_node", "microarch")


def _slurm_block(part: Mapping[str, Any], cluster: SlurmCluster | None) -> tuple[dict[str, Any], str]:
    """(facts, comment) Slurm holds of the configuration's partition."""
    if cluster is None:
        return {}, "Slurm not read (scalebench facts template --slurm, or --slurm-from DIR)"
    access = part.get("access") or ()
    name = slurm_option(access, "partition", "p") or next((p.name for p in cluster.partitions.values() if p.default),
                                                          None)
    if name is None or name not in cluster.partitions:
        return {}, f"Slurm has no partition {name!r} (its access options name it)" if name else \
            "its access options name no Slurm partition and Slurm has no default one"
    constraint = slurm_option(access, "constraint", "C")
    try:
        found = partition_facts(cluster.partitions[name], constraint)
    except InputError as err:
        return {}, f"Slurm partition {name}: {err}"
    held = f" --constraint={constraint}" if constraint else ""
    return found, f"from Slurm: partition {name}{held}"


def _processor_gives(part: Mapping[str, Any]) -> dict[str, Any]:
    processor = part.get("processor") or {}
    gives = {}
    if processor.get("num_cpus"):
        gives["cores_per_node"] = processor["num_cpus"] // (processor.get("num_cpus_per_core") or 1)
    if processor.get("arch"):
        gives["microarch"] = processor["arch"]
    return gives


def _partition_lines(part: Mapping[str, Any], cluster: SlurmCluster | None) -> list[str]:
    name = part["name"]
    if part.get("scheduler") not in SCHEDULERS or part.get("launcher") not in LAUNCHERS or \
            part.get("launcher") == "local":  # a login node's: one process, no MPI job
        return [f"  # {name}: scheduler {part.get('scheduler')}, launcher {part.get('launcher')}: scalebench plans "
                "no job there (left to other checks)"]
    gives = _processor_gives(part)
    found, whence = _slurm_block(part, cluster)
    facts = {key: value for key, value in found.items() if not (key in gives and key in _FROM_PROCESSOR)}
    lines = [f"  {name}:", f"    # {whence}"]
    if gives:
        lines.append("    # from the configuration's processor: " + ", ".join(f"{k} {v}" for k, v in gives.items()))
    if facts:
        block = yaml.dump(facts, Dumper=FactsDumper, sort_keys=False, default_flow_style=None, width=2**16)
        lines += [f"    {line}" for line in block.splitlines()]

    slurm_partition = slurm_option(part.get("access") or (), "partition", "p") or "PARTITION"
    for key in (*REQUIRED, "microarch"):
        if key not in facts and key not in gives:
            find = (schema.site_key_note("partition", key, "x-find") or "").replace("{slurm_partition}", slurm_partition)
            lines.append(f"    # {key}:   {find}")
    gpus = [d for d in part.get("devices") or () if d.get("type") == "gpu"]
    if gpus or "gpus" in facts:
        for key in ("memory", "fp64_tflops"):
            find = schema.site_key_note("partition", f"gpus.{key}", "x-find") or ""
            lines.append(f"    # gpus.{key}:   {find}")
    return lines


def template(system: Mapping[str, Any], environments: Sequence[Mapping[str, Any]],
             cluster: SlurmCluster | None, source: str) -> str:
    """The facts file's text for `system` (ReFrame's picked configuration) of the configuration `source`."""
    used = list(dict.fromkeys(e for part in system["partitions"] for e in part.get("environs", ())))
    known = {str(env["name"]) for env in environments}
    lines = [f"# What the ReFrame configuration {source} has no place for, of its system {system['name']}",
             "# (scalebench facts template). Fill in each commented fact of a partition scalebench should",
             "# run on; a partition without facts is left to other checks. An environment's `features` say",
             f"# which benchmarks it has ({', '.join(check_features())}) and its",
             "# programs' keys where they are not on its PATH (hpl_binary, osu_dir, ...): docs/at-a-site.md.",
             f"system: {system['name']}", "partitions:"]
    for part in system["partitions"]:
        lines += _partition_lines(part, cluster)
    lines.append("environments:" + ("" if any(e in known for e in used) else " {}"))
    for env in (e for e in used if e in known):
        features = ", ".join(str(f) for f in next(x for x in environments if x["name"] == env).get("features", ()))
        lines += [f"  {env}:", f"    # its ReFrame features: {features or 'none'}", "    # features: [hpl]"]
    return "\n".join(lines) + "\n"
