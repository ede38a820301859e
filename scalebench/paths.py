"""Where the project's data directories are (the library is installed editable from the repo)."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(os.environ.get("SCALEBENCH_HOME") or Path(__file__).resolve().parents[1])
HPL_DECKS = REPO_ROOT / "hpl_decks"
SITE_CONFIGS = REPO_ROOT / "site_configs"
RESULTS = REPO_ROOT / "results"
PACKAGE_DATA = Path(__file__).resolve().parent / "data"
