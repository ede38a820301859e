"""`scalebench prepare openfoam ...`: run inside a job, where the application is installed."""
from __future__ import annotations

import argparse
import os
from typing import Any

from scalebench.cli.common import path_arg, positive_int_arg
from scalebench.errors import InputError
from scalebench.benchmarks.openfoam.cases import load_openfoam_cases, prepare_case
from scalebench.site.scales import SCALING_MODES
from scalebench.validation import excerpt


def cmd_prepare_openfoam(args: argparse.Namespace) -> int:
    cases = load_openfoam_cases()
    if args.case not in cases:
        raise InputError(f"--case: {excerpt(args.case)} is not one of {', '.join(cases)}")
    tutorials = args.tutorials or os.environ.get("FOAM_TUTORIALS")
    if not tutorials:
        raise InputError("--tutorials: not given and FOAM_TUTORIALS is not set (load the OpenFOAM environment)")
    setup = prepare_case(cases[args.case], tutorials, args.dir, args.cells, args.steps, args.ranks, args.scaling)
    print(f"scalebench prepare: {args.case}: {setup.summary}")
    return 0


def add_prepare_arguments(subparsers: Any, parser_class: type) -> None:
    prepare = subparsers.add_parser("prepare", help="prepare an application case inside a job")
    sub = prepare.add_subparsers(dest="prepare_command", required=True, parser_class=parser_class)
    p = sub.add_parser("openfoam", help="copy and size an OpenFOAM tutorial case (writes case.json)")
    p.add_argument("--case", required=True)
    p.add_argument("--cells", type=positive_int_arg, required=True)
    p.add_argument("--steps", type=positive_int_arg, required=True)
    p.add_argument("--ranks", type=positive_int_arg, required=True)
    p.add_argument("--scaling", choices=SCALING_MODES, required=True)
    p.add_argument("--tutorials", default=None, type=path_arg, help="default $FOAM_TUTORIALS")
    p.add_argument("--dir", default=".", type=path_arg, help="where to write the case (default: here)")
    p.set_defaults(func=cmd_prepare_openfoam)
