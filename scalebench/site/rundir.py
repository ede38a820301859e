"""Run directories and what exactly was run.

Every `reframe` invocation writes into one fresh run directory under results/runs/ (results/ is the
clone's, or SCALEBENCH_RESULTS; SCALEBENCH_RUN_DIR names the run directory itself): report.json,
perflogs/, reframe.log, output/ (kept benchmark outputs), stage/, and provenance.json (which
scalebench, on which host, with which arguments). Nothing already in results/ is rewritten.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from scalebench import atomic, paths, textfile
from scalebench.errors import InputError, ResultsError
from scalebench.validation import excerpt

# ReFrame expands $NAME, and runs $(...) and `...` through a shell, in its directory settings.
_EXPANDED_IN_PATHS = re.compile(r"[$`\x00-\x1f\x7f]")


def _check_run_path(where: str, path: Path) -> Path:
    bad = _EXPANDED_IN_PATHS.search(str(path))
    if bad:
        raise ResultsError(f"{where}: {excerpt(str(path))} has {excerpt(bad.group(0))}; ReFrame expands $ and runs "
                           "$(...) and "
                           "`...` in its directory paths: choose one without $, ` or line breaks")
    return path


def new_run_dir(results: Path | None = None) -> Path:
    """A run directory name no other run can take (UTC time, host, pid); not created here."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    results = _check_run_path("results directory", results or results_root())
    return results / "runs" / f"{stamp}-{socket.gethostname()}-{os.getpid()}"


def results_root() -> Path:
    """The results directory this invocation writes under: the parent of runs/ of SCALEBENCH_RUN_DIR,
    else SCALEBENCH_RESULTS, else results/ of the clone. ReFrame's results database lives there,
    beside the run directories."""
    given = os.environ.get("SCALEBENCH_RUN_DIR")
    if not given:
        return Path(os.environ.get("SCALEBENCH_RESULTS") or paths.RESULTS).resolve()
    run = Path(given).resolve()
    return run.parent.parent if run.parent.name == "runs" else run.parent


# A file in a dry run's directory: ReFrame writes a report there whose cases "pass" without having run.
DRY_RUN_MARK = "DRY-RUN"
_DRY_RUN_NOTE = ("ReFrame dry run (--dry-run): job scripts and decks only, nothing was measured.\n"
                 "scalebench report, accept, compare, screen and references never read this directory as a run.\n")


def dry_run_requested(argv: Sequence[str]) -> bool:
    """Whether a reframe command line asks for a dry run: --dry-run, or a prefix argparse accepts for it
    (--dr is the shortest no other ReFrame option shares)."""
    return any(len(arg) >= 4 and "--dry-run".startswith(arg) for arg in argv)


def claim_run_dir(dry_run: bool = False) -> Path:
    """Create this invocation's run directory (SCALEBENCH_RUN_DIR, else a new one under results/runs)
    with its provenance.json, and for a dry run its DRY_RUN_MARK; a directory that already holds a run
    report is never reused."""
    given = os.environ.get("SCALEBENCH_RUN_DIR")
    path = _check_run_path("SCALEBENCH_RUN_DIR", Path(given).resolve()) if given else new_run_dir()
    if (path / "report.json").exists():
        raise ResultsError(f"SCALEBENCH_RUN_DIR: {path} already holds a run report; name a new directory")
    where = "SCALEBENCH_RUN_DIR" if given else "results directory"
    try:
        path.mkdir(parents=True, exist_ok=bool(given))
    except OSError as err:
        raise ResultsError(f"{where}: cannot write {err.filename or path}: {err.strerror}") from err
    if dry_run:
        _write_new(path / DRY_RUN_MARK, _DRY_RUN_NOTE, where)
    _write_provenance(path, where)
    return path


def _git_describe() -> str:
    """The clone's commit, or the installed distribution's version."""
    if not paths.FROM_CLONE:
        try:
            return f"scalebench-hpc {importlib.metadata.version('scalebench-hpc')}"
        except importlib.metadata.PackageNotFoundError:
            return "unknown"
    try:
        proc = subprocess.run(["git", "-C", str(paths.REPO_ROOT), "describe", "--always", "--dirty"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return proc.stdout.strip() or "unknown"


def _write_provenance(path: Path, where: str) -> None:
    """What produced this run (the ReFrame report does not say which scalebench it was)."""
    record = {"git_describe": _git_describe(), "hostname": socket.gethostname(),
              "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "argv": sys.argv, "openblas_coretype_env": os.environ.get("OPENBLAS_CORETYPE")}
    _write_new(path / "provenance.json", json.dumps(record, indent=2) + "\n", where)


def _write_new(target: Path, text: str, where: str) -> None:
    """`target` whole (scalebench.atomic), unless it exists already: the first writer's stays."""
    if target.exists():
        return
    with contextlib.suppress(FileExistsError):
        atomic.write(target, text, what=where)


def read_digested(path: str | Path) -> tuple[str, bytes | None]:
    """(file_digest's line, the bytes it hashed), the bytes None when there were none to read."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return f"missing {path}", None
    try:
        data = textfile.read_bytes(path, "lock file")
    except InputError as err:
        return f"unreadable {path} ({err})", None
    return f"sha256:{hashlib.sha256(data).hexdigest()[:16]} {path}", data


def file_digest(path: str | Path) -> str:
    """'sha256:<first 16 hex> <path>', 'missing <path>' when the file does not exist, or 'unreadable
    <path> (why)' when it is no regular file of a readable size (a FIFO would block the reader)."""
    return read_digested(path)[0]
