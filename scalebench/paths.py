"""Where the project's data directories are (the library is installed editable from the repo)."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from scalebench.errors import InputError

REPO_ROOT = Path(os.environ.get("SCALEBENCH_HOME") or Path(__file__).resolve().parents[1])
HPL_DECKS = REPO_ROOT / "hpl_decks"
SITE_CONFIGS = REPO_ROOT / "site_configs"
RESULTS = REPO_ROOT / "results"
PACKAGE_DATA = Path(__file__).resolve().parent / "data"

_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def check_name(where: str, value: Any) -> str:
    """System, partition and stack names end up in paths (perflogs, frozen decks): no separators."""
    if not isinstance(value, str) or not _NAME.fullmatch(value) or value in (".", ".."):
        raise InputError(f"{where}: {value!r} must be letters, digits, '_', '.' and '-' only "
                         "(not a valid name: it becomes a path)")
    return value
