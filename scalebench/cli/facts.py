"""`scalebench facts slurm [--from DIR] [--partition P ...] [--constraint EXPR] [--json]`: what Slurm
already knows about its partitions (node count, cores, memory, GPUs, features, MaxTime, MaxMemPerNode,
node states), as YAML a site engineer pastes into a facts file (a comment above each partition says
where each fact came from), or as JSON.

Without --from it runs, with the SLURM_CONF of the environment:

    scontrol --all --oneliner show partition
    scontrol --all --oneliner show node
    sinfo --all --noheader --Node --format='%N|%P|%T|%c|%m|%G|%f'

--from DIR reads their saved outputs instead (from a login node to a laptop, or for the record):

    scontrol --all --oneliner show partition > DIR/scontrol-partition.txt
    scontrol --all --oneliner show node > DIR/scontrol-node.txt
    sinfo --all --noheader --Node --format='%N|%P|%T|%c|%m|%G|%f' > DIR/sinfo.txt   # optional: node states

scontrol's default multi-line form (without --oneliner) reads the same. Exit 2 with one line on bad
input: an unknown partition (the known ones listed), a constraint no node satisfies, a garbled or cut
output (its file and line).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from scalebench.cli.common import EXIT_OK, path_arg, print_json
from scalebench.errors import InputError


def cmd_facts_slurm(args: argparse.Namespace) -> int:
    from scalebench.site import slurm_facts as sf

    rule = sf.parse_constraint(args.constraint) if args.constraint else None
    cluster = sf.read_dir(args.source) if args.source else sf.live()
    chosen = [cluster.partition(name) for name in dict.fromkeys(args.partitions or [])]
    entries, notes = [], []
    for partition in chosen or cluster.partitions.values():
        try:
            facts = sf.partition_facts(partition, rule)
        except InputError as err:
            if chosen:
                raise
            notes.append(f"{partition.name}: left out: {err}")  # not asked for by name: the others still count
            continue
        entries.append((partition.name, facts, sf.facts_sources(cluster, partition, facts, rule)))
    if not entries and rule:
        features = sorted({f for p in cluster.partitions.values() for f in p.features})
        raise InputError(f"--constraint: no node of any partition satisfies {rule.text!r} (their features: "
                         f"{', '.join(features) or 'none'})")
    if not entries:
        more = f" (and {len(notes) - 1} more)" if notes[1:] else ""
        raise InputError(f"no partition to describe: {notes[0]}{more}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        document: dict[str, Any] = {"partitions": {name: facts for name, facts, _ in entries},
                                    "sources": {name: comment for name, _, comment in entries}}
        print_json(document)
        return EXIT_OK
    read = f"read from {args.source}" if args.source else "as Slurm's clients say now"
    sys.stdout.write(sf.facts_yaml(entries, [f"Slurm's facts, {read} (scalebench facts slurm)"]))
    return EXIT_OK


def cmd_facts_template(args: argparse.Namespace) -> int:
    """A first facts file for a system of a site's ReFrame configuration (scalebench.cli.facts_template)."""
    from scalebench.cli.cases import reframe_executable
    from scalebench.site import slurm_facts as sf
    from scalebench.cli.facts_template import template
    from scalebench.site.reframe_config import show_config

    if args.slurm_from and args.slurm:
        raise InputError("--slurm-from DIR reads saved outputs, --slurm asks Slurm now: give one")
    picked = show_config(Path(args.config), args.system, reframe_executable(), dict(os.environ))
    system = picked["systems"][0]
    if system["name"] == "generic" and args.system != "generic":
        raise InputError("ReFrame picked its built-in system 'generic' (no system of the configuration matches this "
                         "host): pass --system NAME")
    cluster = sf.read_dir(args.slurm_from) if args.slurm_from else sf.live() if args.slurm else None
    sys.stdout.write(template(system, picked.get("environments", []), cluster, args.config))
    return EXIT_OK


def add_facts_arguments(subparsers: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """`facts slurm` and `facts template`, as sub-commands of `facts`."""
    facts = subparsers.add_parser("facts", help="what the scheduler already knows about the partitions")
    facts_sub = facts.add_subparsers(dest="facts_command", required=True, parser_class=parser_class)
    p = facts_sub.add_parser(
        "template", help="a first facts file for a system of the site's own ReFrame configuration",
        description="A facts file for --system of CONFIG (the site's ReFrame configuration, read by ReFrame's "
                    "--show-config): what the configuration says named in comments, what Slurm knows filled in "
                    "(--slurm asks it now, --slurm-from DIR reads the saved outputs `facts slurm` reads), each "
                    "fact still missing a commented line saying where to find it.")
    p.add_argument("config", type=path_arg, help="the site's ReFrame configuration (.py)")
    p.add_argument("--system", default=None, help="its system (default: the one matching this host)")
    p.add_argument("--slurm", action="store_true", help="read Slurm's facts now (scontrol, sinfo)")
    p.add_argument("--slurm-from", default=None, type=path_arg, metavar="DIR",
                   help="read Slurm's saved outputs (as `facts slurm --from` does)")
    p.set_defaults(func=cmd_facts_template)
    p = facts_sub.add_parser(
        "slurm", help="partitions' nodes, cores, memory, GPUs, features and limits from scontrol and sinfo",
        description="Partitions' facts from Slurm's own outputs, as YAML for a facts file (or --json). Without "
                    "--from, runs `scontrol --all --oneliner show partition`, `scontrol --all --oneliner show "
                    "node` and `sinfo --all --noheader --Node --format='%N|%P|%T|%c|%m|%G|%f'` (SLURM_CONF "
                    "as set).")
    p.add_argument("--from", dest="source", default=None, type=path_arg, metavar="DIR",
                   help="read saved outputs instead: DIR/scontrol-partition.txt (scontrol --all --oneliner show "
                        "partition), DIR/scontrol-node.txt (scontrol --all --oneliner show node) and, optional, "
                        "DIR/sinfo.txt (sinfo --all --noheader --Node --format='%%N|%%P|%%T|%%c|%%m|%%G|%%f')")
    p.add_argument("--partition", dest="partitions", action="extend", nargs="+", default=None, metavar="P",
                   help="only these partitions (default: every partition)")
    p.add_argument("--constraint", default=None, metavar="EXPR",
                   help="only the nodes whose features satisfy a Slurm --constraint: a, a&b, a|b, [a|b]")
    p.add_argument("--json", action="store_true", help="JSON instead of YAML")
    p.set_defaults(func=cmd_facts_slurm)
