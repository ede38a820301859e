import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def unavailable(message: str) -> None:
    """Skip for want of something `make test` provides, except in CI, where it must be there: fail."""
    if os.environ.get("CI"):
        pytest.fail(f"{message}: missing in CI")
    pytest.skip(message)


def require_tools(*tools: str) -> None:
    """Skip when a tool is missing, except in CI, where `make test` installs everything: fail there."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        unavailable(f"needs {', '.join(missing)} (installed by scripts/install.sh)")


def run_reframe(run_dir: Path, *args: str, config: str = "local.py", env: dict | None = None,
                argv_prefix: tuple[str, ...] = (), checks: str = "hpl.py",
                timeout: int = 600) -> subprocess.CompletedProcess:
    """Real ReFrame with a site configuration of site_configs/, writing into run_dir; `checks` is a file
    of reframe_tests/ or an absolute path."""
    env = dict(os.environ if env is None else env, SCALEBENCH_RUN_DIR=str(run_dir))
    command = [*argv_prefix, str(VENV_BIN / "reframe"), "-C", str(REPO / "site_configs" / config),
               "-c", str(REPO / "reframe_tests" / checks), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)


def file_hashes(root: Path) -> dict[str, str]:
    """SHA-256 of every file under root, by relative path: equal before and after = nothing touched."""
    return {str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*")) if path.is_file()}


def perflog_rows(run_dir: Path) -> list[dict[str, str]]:
    """Every line of a run's perflogs (pipe-separated, a header per file) as a dict by column."""
    rows = []
    for path in sorted((run_dir / "perflogs").rglob("*.log")):
        header, *lines = path.read_text().splitlines() or [""]
        rows += [dict(zip(header.split("|"), line.split("|"))) for line in lines]
    return rows
