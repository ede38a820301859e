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


# Characters that quote, separate, redirect or substitute in a shell (with line breaks and other
# control characters); `$` too where ReFrame expands it (see check_shell_word).
_SHELL_SPECIAL = re.compile(r"[\s;&|<>'\"\\`()\x00-\x1f\x7f]")
_SHELL_SPECIAL_OR_DOLLAR = re.compile(r"[\s;&|<>'\"\\`()$\x00-\x1f\x7f]")


def check_shell_word(where: str, value: Any, variables: bool = True) -> str:
    """A value that ReFrame writes unquoted into job scripts (environment values, launcher options,
    module names, program paths) and into which it substitutes $(...) and `...` itself when it loads
    an environment or a directory: one plain word, no command can hide in it. `variables`: $NAME and
    ${NAME} allowed (PATH: /opt/x/bin:$PATH)."""
    text = str(value)
    bad = (_SHELL_SPECIAL if variables else _SHELL_SPECIAL_OR_DOLLAR).search(text)
    if bad:
        raise InputError(f"{where}: {text!r} has {bad.group(0)!r}; it goes unquoted into job scripts, so it must "
                         "be one word without spaces, quotes, backslashes, ;&|<>()`" + ("" if variables else " or $"))
    return text
