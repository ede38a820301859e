"""A Spack stack's spack.lock as a run keeps it: archived under the results directory by content
(written once), and the concrete specs of the programs it installed (its roots) and of the MPI and
fabric libraries under them, with versions and variants, so that a bake-off can be rebuilt."""
from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scalebench import loaders, textfile, writeonce
from scalebench.errors import InputError
from scalebench.site.blas import blas_packages
from scalebench.site.rundir import read_digested

ARCHIVE_DIR = "spack-locks"  # under the results directory
# A lock's concrete programs by its digest: every case of a stack plans with the same lock, parsed once.
_PROGRAMS: dict[str, str] = {}
_DESCRIBED: dict[tuple[Any, ...], tuple[str, str]] = {}  # by path and the file's stat: read once per run
# Beside the roots: what decides the transport and the MPI of a stack (and its BLAS: blas.yaml).
FABRIC_PACKAGES = ("openmpi", "mpich", "cray-mpich", "mvapich", "intel-oneapi-mpi", "ucx", "libfabric", "pmix",
                   "rdma-core")


def _variants(parameters: Any) -> str:
    """Spack's spelling of a node's variants: +a ~b key=value (compiler flags and empty lists left out)."""
    if not isinstance(parameters, dict):
        return ""
    out = []
    for name, value in sorted(parameters.items()):
        if name.endswith("flags") or name in ("patches", "dev_path") or value in ([], "", None):
            continue
        if isinstance(value, bool):
            out.append(f"{'+' if value else '~'}{name}")
        else:
            out.append(f"{name}={','.join(map(str, value)) if isinstance(value, list) else value}")
    return " ".join(out)


def _spec(node: dict[str, Any]) -> str:
    return f"{node.get('name')}@{node.get('version')} {_variants(node.get('parameters'))}".strip()


def concrete_programs(lock: Any, source: str = "spack.lock") -> str:
    """'hpl@2.3 +openmp; ...; openmpi@5.0.8 fabrics=ucx ...': the roots, then the fabric packages."""
    if not isinstance(lock, dict) or not isinstance(lock.get("concrete_specs"), dict):
        raise InputError(f"{source}: no concrete_specs (not a Spack lock file)")
    nodes = {h: n for h, n in lock["concrete_specs"].items() if isinstance(n, dict)}
    roots = [nodes[r["hash"]] for r in lock.get("roots", []) if isinstance(r, dict) and r.get("hash") in nodes]
    kept = (*FABRIC_PACKAGES, *blas_packages())
    fabric = sorted((n for n in nodes.values() if n.get("name") in kept), key=lambda n: str(n.get("name")))
    seen, out = set(), []
    for node in [*roots, *fabric]:
        spec = _spec(node)
        if spec not in seen:
            seen.add(spec)
            out.append(spec)
    return "; ".join(out)


def describe(path: str | Path) -> tuple[str, str]:
    """(digest, concrete programs) of a stack's spack.lock; the digest says 'missing ...' or 'unreadable
    ...' when there is no lock to read (scalebench.site.rundir.file_digest). A lock is read once per run
    (every case of a stack loads it) unless the file changes."""
    try:
        found = os.stat(path)
        key: tuple[Any, ...] | None = (str(path), found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
    except OSError:
        key = None  # missing or unreachable: read_digested says which, each time
    if key is not None and key in _DESCRIBED:
        return _DESCRIBED[key]
    described = _describe(path)
    if key is not None:
        _DESCRIBED[key] = described
    return described


def _describe(path: str | Path) -> tuple[str, str]:
    digest, data = read_digested(path)
    if data is None:
        return digest, ""
    key = digest.split()[0]
    if key not in _PROGRAMS:
        _PROGRAMS[key] = concrete_programs(loaders.parse_json(data, str(path)), str(path))
    return digest, _PROGRAMS[key]


def archive(path: str | Path, results: Path) -> Path | None:
    """The lock copied to <results>/spack-locks/<digest>.spack.lock once (a later run of the same lock
    finds it there); None when there is no lock to keep."""
    digest, data = read_digested(path)
    if data is None:
        return None
    target = results / ARCHIVE_DIR / f"{digest.split()[0].split(':')[1]}.spack.lock"
    if target.is_file():
        return target
    text = textfile.decode(data, "spack.lock")
    try:
        return writeonce.write_once(target, text, what="archived spack.lock", force=False,
                                    now=datetime.now(timezone.utc), option="results directory",
                                    exists=lambda p: f"{p}: archived by a concurrent run")
    except InputError:
        if target.is_file():  # another run archived the same content first
            return target
        raise
