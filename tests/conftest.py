import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def require_tools(*tools: str) -> None:
    """Skip when a tool is missing, except in CI, where `make test` installs everything: fail there."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        message = f"needs {', '.join(missing)} (installed by scripts/install.sh)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: missing in CI")
        pytest.skip(message)


def run_reframe(run_dir: Path, *args: str, config: str = "local.py", env: dict | None = None,
                argv_prefix: tuple[str, ...] = (), checks: str = "hpl.py",
                timeout: int = 600) -> subprocess.CompletedProcess:
    """Real ReFrame with a site configuration of site_configs/, writing into run_dir."""
    env = dict(os.environ if env is None else env, SCALEBENCH_RUN_DIR=str(run_dir))
    command = [*argv_prefix, str(VENV_BIN / "reframe"), "-C", str(REPO / "site_configs" / config),
               "-c", str(REPO / "reframe_tests" / checks), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
