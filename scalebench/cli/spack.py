"""`scalebench spack validate [DIR]`: the offline validator of spack_envs/ on the command line.

Wire it with:
    sub = spack_subparsers.add_parser("validate", help="check spack_envs/ offline")
    scalebench.cli.spack.add_arguments(sub)
    sub.set_defaults(func=scalebench.cli.spack.cmd_spack_validate)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scalebench import paths
from scalebench.cli.common import EXIT_FAILED, EXIT_OK, path_arg
from scalebench.errors import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=None, metavar="DIR", type=path_arg,
                        help="a directory of environments, an environment directory or a spack.yaml "
                             "(default: the repository's spack_envs/)")


def cmd_spack_validate(args: argparse.Namespace) -> int:
    """Print one finding a line (`file: key: message`); 1 if any, 0 if none (2: no such target)."""
    from scalebench.spack.validate import find_envs, validate_env, validate_tree

    target = Path(args.dir) if getattr(args, "dir", None) else paths.REPO_ROOT / "spack_envs"
    if not target.exists():
        raise InputError(f"{target} does not exist")
    if not target.is_dir() and target.name != "spack.yaml":
        raise InputError(f"{target} is not a directory of environments, an environment directory or a spack.yaml")
    if target.name == "spack.yaml" or (target / "spack.yaml").is_file():
        findings, count = validate_env(target), 1
    else:
        findings = validate_tree(target)
        count = len(find_envs(target)) if target.is_dir() else 0
    for finding in findings:
        print(finding)
    plural = "s" if count != 1 else ""
    if findings:
        print(f"{target}: {len(findings)} finding(s) in {count} environment{plural}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{target}: {count} environment{plural}, no findings", file=sys.stderr)
    return EXIT_OK
