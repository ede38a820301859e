"""`scalebench spack validate [DIR]`: the offline validator of spack_envs/ on the command line.

Wire it with:
    sub = spack_subparsers.add_parser("validate", help="check spack_envs/ offline")
    scalebench.cli.spack.add_arguments(sub)
    sub.set_defaults(func=scalebench.cli.spack.cmd_spack_validate)
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from scalebench import paths
from scalebench.cli.common import EXIT_FAILED, EXIT_OK, path_arg
from scalebench.errors import InputError
from scalebench.validation import did_you_mean, excerpt


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=None, metavar="DIR", type=path_arg,
                        help="a directory of environments, an environment directory or a spack.yaml "
                             "(default: the repository's spack_envs/)")


def _check_named_site(target: Path) -> None:
    """SCALEBENCH_SPACK_SITE names a site of the tree: a misspelt one is no site, and 'no findings' about
    the others would read as a pass for it. A tree that cannot be read is left to the validator's
    findings."""
    from scalebench.spack.validate import DIRECTORY, FILE, SITE_VAR, path_state, subdirectories

    site = os.environ.get(SITE_VAR)
    if not site:
        return
    tree = target if path_state(target) == DIRECTORY and path_state(target / "spack.yaml") != FILE else target.parent
    if target.name == "spack.yaml":
        tree = target.parent.parent
    sites = tree / "sites"
    known = subdirectories(sites) if path_state(sites) == DIRECTORY else []
    if known is None:
        return
    if site not in known:
        raise InputError(f"{SITE_VAR}={excerpt(site)}: no such site directory in {sites} "
                         f"(sites: {', '.join(known) or 'none'}){did_you_mean(site, known)}")


def cmd_spack_validate(args: argparse.Namespace) -> int:
    """Print one finding a line (`file: key: message`); 1 if any, 0 if none (2: no such target)."""
    from scalebench.spack.validate import DIRECTORY, FILE, OTHER, find_envs, path_state, validate_env, validate_tree

    target = Path(args.dir) if getattr(args, "dir", None) else paths.SPACK_ENVS
    state = path_state(target)
    if state not in (DIRECTORY, FILE, OTHER):
        raise InputError(f"{target} {state}")
    _check_named_site(target)
    if state != DIRECTORY and target.name != "spack.yaml":
        raise InputError(f"{target} is not a directory of environments, an environment directory or a spack.yaml")
    if target.name == "spack.yaml" or path_state(target / "spack.yaml") == FILE:
        findings, count = validate_env(target), 1
    else:
        findings = validate_tree(target)
        count = len(find_envs(target))
    for finding in findings:
        print(finding)
    plural = "s" if count != 1 else ""
    if findings:
        print(f"{target}: {len(findings)} finding(s) in {count} environment{plural}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{target}: {count} environment{plural}, no findings", file=sys.stderr)
    return EXIT_OK
