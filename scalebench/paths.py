"""Where the data directories are: the clone's, when scalebench runs from one (an editable install, as
`make install` makes), else the copies an installed distribution ships under scalebench/shipped (setup.py).
What a run writes (results, frozen references) goes under the clone, or, installed, under the directory
the command was started in; SCALEBENCH_HOME names another tree holding the data directories."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

PACKAGE_DATA = Path(__file__).resolve().parent / "data"
_CLONE = Path(__file__).resolve().parents[1]
# A clone has its checks beside the library; an installed distribution has them as scalebench_checks.
FROM_CLONE = (_CLONE / "reframe_tests" / "base.py").is_file() and (_CLONE / "hpl_decks").is_dir()
REPO_ROOT = Path(os.environ.get("SCALEBENCH_HOME") or (_CLONE if FROM_CLONE else Path(__file__).resolve().parent / "shipped"))
HPL_DECKS = REPO_ROOT / "hpl_decks"
SITE_CONFIGS = REPO_ROOT / "site_configs"
SPACK_ENVS = REPO_ROOT / "spack_envs"


def _installed_checks() -> Path:
    spec = importlib.util.find_spec("scalebench_checks")  # finds it without importing ReFrame
    return Path(spec.origin).parent if spec and spec.origin else REPO_ROOT / "reframe_tests"


# The ReFrame checks (`reframe -c CHECKS`), and the inputs the application checks read.
CHECKS = REPO_ROOT / "reframe_tests" if FROM_CLONE or os.environ.get("SCALEBENCH_HOME") else _installed_checks()
# Where runs and frozen references go by default: the clone's, or the directory a command started in
# (PWD: ReFrame imports a check file from the file's own directory).
_OWN_TREE = FROM_CLONE or bool(os.environ.get("SCALEBENCH_HOME"))
_WRITES = REPO_ROOT if _OWN_TREE else Path(os.environ.get("PWD") or os.getcwd())
RESULTS = _WRITES / "results"
REFERENCES = (SITE_CONFIGS if _OWN_TREE else _WRITES) / "references"
