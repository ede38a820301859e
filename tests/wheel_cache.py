"""What the package registry says about requirements.txt, cached in .cache/ (git-ignored) under the hash
of requirements.txt: pip's resolution report per target Python and machine, and wheelhouses made by
`make wheelhouse`. The registry is needed only when requirements.txt changes; unreachable, the caller
skips (fails under CI=true)."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from conftest import REPO, unavailable

CACHE = REPO / ".cache"
REQUIREMENTS = REPO / "requirements.txt"
OFFLINE = re.compile(r"NewConnectionError|Network is unreachable|Temporary failure in name resolution|"
                     r"Name or service not known|Max retries exceeded")


def _load_wheelhouse():
    spec = importlib.util.spec_from_file_location("wheelhouse", REPO / "scripts" / "wheelhouse.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


wheelhouse = _load_wheelhouse()


def requirements_key() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]


def _cached(kind: str, python: str, arch: str) -> Path:
    """The cache entry of one target; entries of other requirements go when a new one is made."""
    folder = CACHE / kind
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if not old.name.startswith((requirements_key(), ".")):
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    return folder / f"{requirements_key()}-cp{python.replace('.', '')}-{arch}"


def _from_registry(command: list[str], what: str) -> subprocess.CompletedProcess:
    # Without the machine's local wheel directories: the registry's word alone.
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_FIND_LINKS", "PIP_NO_INDEX")}
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if result.returncode and OFFLINE.search(result.stdout + result.stderr):
        unavailable(f"{what} needs the package registry, unreachable here")
    assert result.returncode == 0, f"{what}: {' '.join(command)}\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


def resolution(python: str, arch: str) -> dict:
    """pip's --report of the wheels requirements.txt installs with CPython `python` on `arch` Linux,
    resolved for that target (--python-version, --platform, ...) without its interpreter."""
    path = _cached("resolve", python, arch).with_suffix(".json")
    if not path.is_file():
        with tempfile.TemporaryDirectory() as scratch:
            report = Path(scratch) / "report.json"
            _from_registry([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                            "--dry-run", "--ignore-installed", "--no-deps", "--target", f"{scratch}/target",
                            "--report", str(report), *wheelhouse.target_options(python, arch),
                            "-r", str(REQUIREMENTS)], f"the wheels of Python {python} on {arch}")
            shutil.move(report, path)
    return json.loads(path.read_text())


def wheelhouse_for(python: str, arch: str) -> Path:
    """A directory made by `make wheelhouse` for one Python version and machine."""
    path = _cached("wheelhouse", python, arch)
    if not path.is_dir():
        partial = Path(tempfile.mkdtemp(dir=path.parent, prefix=".partial-"))
        try:
            _from_registry(["make", "-s", "-C", str(REPO), "wheelhouse", f"WHEELHOUSE={partial}",
                            f"PYTHONS={python}", f"PLATFORMS={arch}", f"PYTHON={sys.executable}"],
                           f"a wheelhouse for Python {python} on {arch}")
            partial.rename(path)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return path
