"""`scalebench screen RESULTS`: the nodes to drain and the links to check, from ScreeningCheck (every
node and link of a job at once) or NodeHealthCheck (one case per node) results."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from scalebench.cli.common import EXIT_FAILED, EXIT_OK, path_arg
from scalebench.errors import InputError


def cmd_screen(args: argparse.Namespace) -> int:
    """The tables, then the nodes to drain as a Slurm node list; exit 1 when a node or a link is flagged.
    Nodes and links 'not decided' (interference recorded on them could explain them) are never drained
    nor flagged: they are named with the cause and the command that screens them again.
    --hostlist: only the node list on stdout, and on stderr the commands that re-screen those nodes
    (printed, never run), and the undecided ones."""
    import polars as pl

    from scalebench.reporting import screening
    from scalebench.reporting.document import Text, render_text
    from scalebench.reporting.store import load
    from scalebench.site.thresholds import report_flags

    flags = report_flags(args.flags)
    loaded = load(args.results)
    sessions = loaded.sessions(pl.col("benchmark").is_in(screening.CHECKS))
    jobs, job_notes = screening.screened_jobs(sessions, flags)
    found, notes = screening.screens(sessions, flags=flags)
    if not jobs and not found:
        raise InputError(f"no {screening.SCREENING_CHECK} result, nor {screening.HEALTH_CHECK} results of "
                         f"{screening.SCREEN_MIN_NODES} or more nodes, under the given paths: run "
                         f"`reframe ... -n {screening.SCREENING_CHECK} -r` first"
                         + (f" ({'; '.join(job_notes)})" if job_notes else ""))
    for line in ([f"warning: {w}" for w in loaded.warnings]
                 + [f"note: {n}" for n in job_notes + notes + loaded.notes]):
        print(line, file=sys.stderr)
    drain = sorted({*screening.to_drain(jobs), *screening.flagged_nodes(found)}, key=screening.natural)
    links = screening.links_to_check(jobs)
    undecided = screening.not_decided(jobs) + screening.health_not_decided(found)
    again = screening.rescreen_commands(jobs, sorted({n for u in undecided for n in u.nodes}, key=screening.natural))
    undecided_lines = ([f"not decided: {u.name}: {u.why}" for u in undecided]
                       + [f"not decided: re-screen (with SCALEBENCH_SITE as for the screening): {command}"
                          for command in again])
    if args.hostlist:
        print(screening.hostlist(drain))
        for command in screening.rescreen_commands(jobs, drain):
            print(f"re-screen after the repair (with SCALEBENCH_SITE as for the screening): {command}", file=sys.stderr)
        for line in undecided_lines:
            print(line, file=sys.stderr)
        return EXIT_FAILED if drain or links else EXIT_OK
    blocks = []
    for index, job in enumerate(jobs, start=1):
        blocks += screening.job_blocks(job, index, figure=False)
    if found:
        blocks += [Text(f"{screening.HEALTH_CHECK}, one case per node:"), screening.screen_table(found)]
    print(render_text(blocks).rstrip())
    print(f"\nnodes to drain: {screening.hostlist(drain) or 'none'}")
    print(f"links to check: {', '.join(links) or 'none'}")
    print(f"not decided (interference; re-screen, never drained): {', '.join(u.name for u in undecided) or 'none'}")
    for line in undecided_lines:
        print(line)
    return EXIT_FAILED if drain or links else EXIT_OK


def add_screen_arguments(subparsers: Any) -> None:
    p = subparsers.add_parser("screen", help="the nodes to drain and links to check, from ScreeningCheck or "
                                             "NodeHealthCheck results (exit 1 when there are any)")
    p.add_argument("results", nargs="+", type=path_arg, help="run directories, report files or results/")
    p.add_argument("--hostlist", action="store_true",
                   help="print only the nodes to drain as a Slurm node list (e.g. for sbatch --exclude or "
                        "scontrol update State=DRAIN), and on stderr the command that re-screens them")
    p.add_argument("--flags", type=Path, default=None,
                   help="thresholds file (default site_configs/report_flags.yaml)")
    p.set_defaults(func=cmd_screen)
