"""`scalebench references freeze`: performance references learned from accepted runs."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from scalebench import paths
from scalebench.cli.common import EXIT_FAILED, EXIT_OK, float_arg, path_arg, positive_int_arg


def _warn(warnings: list[str], notes: list[str]) -> None:
    """Printed once the command has an answer: an error stays one line."""
    for line in [f"warning: {w}" for w in warnings] + [f"note: {n}" for n in notes]:
        print(line, file=sys.stderr)


def cmd_references_freeze(args: argparse.Namespace) -> int:
    """Refuse unless the runs pass acceptance; then write the system's reference file."""
    import polars as pl

    from scalebench.reporting import acceptance, references
    from scalebench.reporting.document import render_text
    from scalebench.reporting.hpl_table import model_expectations
    from scalebench.reporting.store import load
    from scalebench.reporting.table import figure_units

    loaded = load(args.results)
    warnings = loaded.warnings
    criteria = acceptance.load(Path(args.thresholds), figure_units(loaded.table))
    expectations = model_expectations(loaded.table) if acceptance.uses_model(criteria) else None
    verdicts = acceptance.judge(criteria, loaded.table, expectations=expectations, cut_short=loaded.cut_short)
    summary = acceptance.counts(verdicts)
    if not acceptance.passed(verdicts):
        _warn(warnings, loaded.notes)
        print(render_text([acceptance.verdict_table(verdicts)]).rstrip())
        print(f"\nacceptance {acceptance.outcome(verdicts)}: {summary}; no references frozen (they are learned "
              "from accepted runs only)")
        return EXIT_FAILED
    method = references.Method(k=args.k, floor=args.floor, min_runs=args.min_runs)
    sessions = loaded.sessions(pl.col("system") == args.system)
    path, learned, notes = references.freeze(
        sessions, args.system, method=method, sources=args.results, directory=Path(args.references_dir),
        accepted=f"PASSED against {args.thresholds}: {summary}", force=args.force)
    _warn(warnings, loaded.notes)
    figures = sum(len(f) for cases in learned.values() for f in cases.values())
    cases = sum(len(cases) for cases in learned.values())
    print(f"references of {args.system}: {figures} figures of {cases} cases, {method.describe()}")
    for note in notes:
        print(f"  left out: {note}")
    print(f"Written: {path}")
    return EXIT_OK


def add_references_arguments(subparsers: Any) -> None:
    refs = subparsers.add_parser("references", help="performance references learned from accepted runs")
    sub = refs.add_subparsers(dest="references_command", required=True, parser_class=type(refs))
    p = sub.add_parser("freeze", help="after an acceptance PASS, freeze every figure's reference for a system")
    p.add_argument("results", nargs="+", type=path_arg, help="run directories, report files or results/")
    p.add_argument("--system", required=True, help="the ReFrame system whose runs to learn from")
    p.add_argument("--thresholds", default=str(paths.SITE_CONFIGS / "acceptance.yaml"), type=path_arg,
                   help="acceptance thresholds the runs must pass (default site_configs/acceptance.yaml)")
    p.add_argument("--k", type=float_arg(0, math.inf, "a positive number"), default=3.0, help="bound = max(k x 1.4826 x MAD / median, floor); default 3")
    p.add_argument("--floor", type=float_arg(0, 1, "a share in [0, 1), e.g. 0.03 for 3%", low_included=True), default=0.03, help="the smallest bound, a share (default 0.03)")
    p.add_argument("--min-runs", type=positive_int_arg, default=3, help="runs a figure needs (default 3)")
    p.add_argument("--references-dir", default=str(paths.REFERENCES), type=path_arg,
                   help="where <system>.yaml goes (default site_configs/references; the checks read it)")
    p.add_argument("--force", action="store_true", help="replace an existing file (kept as <name>.<UTC time>)")
    p.set_defaults(func=cmd_references_freeze)
