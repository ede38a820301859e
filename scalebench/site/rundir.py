"""What exactly was run: digests of the files that pin a build (e.g. a Spack environment's lock)."""
from __future__ import annotations

import hashlib
from pathlib import Path


def file_digest(path: str | Path) -> str:
    """'sha256:<first 16 hex> <path>', or 'missing <path>' when the file does not exist."""
    path = Path(path)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except FileNotFoundError:
        return f"missing {path}"
    return f"sha256:{digest} {path}"
