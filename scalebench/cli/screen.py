"""`scalebench screen RESULTS`: the nodes to drain or exclude, from NodeHealthCheck run on every node."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from scalebench.cli.common import EXIT_FAILED, EXIT_OK, path_arg
from scalebench.errors import InputError


def cmd_screen(args: argparse.Namespace) -> int:
    """The ranking table and the flagged nodes as a Slurm node list; exit 1 when any node is flagged."""
    import polars as pl

    from scalebench.results import screening
    from scalebench.results.document import render_text
    from scalebench.results.store import load

    loaded = load(args.results)
    warnings = loaded.warnings
    found, notes = screening.screens(loaded.sessions(pl.col("benchmark") == screening.SCREENING_CHECK))
    if not found:
        raise InputError(f"no {screening.SCREENING_CHECK} results of {screening.SCREEN_MIN_NODES} or more nodes "
                         f"under the given paths: run "
                         f"`reframe ... -n {screening.SCREENING_CHECK} --distribute=all -r` first")
    for line in [f"warning: {w}" for w in warnings] + [f"note: {n}" for n in notes + loaded.notes]:
        print(line, file=sys.stderr)
    nodes = screening.flagged_nodes(found)
    if args.hostlist:
        print(screening.hostlist(nodes))
    else:
        print(render_text([screening.screen_table(found)]).rstrip())
        print(f"\nnodes to drain or exclude: {screening.hostlist(nodes) if nodes else 'none'}")
    return EXIT_FAILED if nodes else EXIT_OK


def add_screen_arguments(subparsers: Any) -> None:
    p = subparsers.add_parser("screen", help="rank nodes by NodeHealthCheck figures; print the stragglers "
                                             "(exit 1 when there are any)")
    p.add_argument("results", nargs="+", type=path_arg, help="run directories, report files or results/")
    p.add_argument("--hostlist", action="store_true",
                   help="print only the flagged nodes as a Slurm node list (e.g. for sbatch --exclude)")
    p.set_defaults(func=cmd_screen)
