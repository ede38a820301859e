"""Files a command writes once and never silently replaces: frozen HPL decks and learned references.

`write_once` creates the file complete or not at all (scalebench.atomic); replacing one needs force, and
the old file is kept as <name>.<UTC time> (never deleted).
"""
from __future__ import annotations

import itertools
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from scalebench import atomic, textfile
from scalebench.errors import InputError


def utc_stamp(now: datetime) -> str:
    return now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def write_once(path: Path, text: str, *, what: str, force: bool, now: datetime, option: str,
               exists: Callable[[Path], str]) -> Path:
    """Write `text`, a `what`, to `path`. `option` names the setting that chose the directory (for errors);
    exists(path) is the message when the file is there and force is not given."""
    # Checked before anything is written: a directory or a FIFO where the file goes is nothing to replace.
    if path.exists() and not path.is_file():
        raise InputError(f"{path}: not a regular file, so no {what} to replace; nothing written")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"{option}: cannot create {path.parent}: {err.strerror} (it must be a directory)") from None
    with atomic.named(path, option), atomic.staged(path) as tmp:
        atomic.fill(tmp, text)
        if force and path.exists():
            keep(path, now)
            atomic.publish(tmp, path, replace=True)
        else:
            try:
                atomic.publish(tmp, path)
            except FileExistsError:
                raise InputError(exists(path)) from None
    return path


def keep(path: Path, now: datetime) -> Path:
    """Hard-link the existing file to <name>.<UTC time>[.k] (a copy where links are not supported)."""
    stamp = utc_stamp(now)
    for k in itertools.count():
        backup = path.with_name(f"{path.name}.{stamp}" + (f".{k}" if k else ""))
        try:
            os.link(path, backup)
            return backup
        except FileExistsError:
            continue
        except OSError:
            data = textfile.read_bytes(path, "file to keep")  # read before the backup exists: none left empty
            try:
                return atomic.write(backup, data)
            except FileExistsError:
                continue
    raise AssertionError("unreachable")
