"""Which BLAS a stack's HPL links: the site file says (`blas:`), else the stack's spack.lock, else the
libraries of an HPL binary given by its path (ldd). A bare program name is looked up on PATH only in
the job (modules and views set it there): a login node's PATH could name another build, so it is not
read here. The vocabulary is data: scalebench/data/blas.yaml."""
from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass

from scalebench import loaders, paths


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    return loaders.load_yaml(paths.PACKAGE_DATA / "blas.yaml", "BLAS table")


def blas_names() -> list[str]:
    return list(_table()["names"])


def threads_variables(blas: str | None) -> list[str]:
    """The thread-count variables the BLAS reads besides OMP_NUM_THREADS: all of them when not known."""
    table = _table()["threads_variables"]
    return [table[blas]] if blas in table else [] if blas else sorted(set(table.values()))


def blas_packages() -> list[str]:
    """The Spack packages that provide a BLAS."""
    return list(_table()["spack_packages"])


@dataclass(frozen=True)
class StackBlas:
    name: str | None  # openblas, mkl, ... (scalebench/data/blas.yaml); None: not known
    version: str | None
    source: str  # where it was read: the site file, the stack's spack.lock, ldd of the binary

    def describe(self) -> str:
        if self.name is None:
            return "BLAS not known (give the stack's `blas:` in the site file)"
        return f"{self.name}{' ' + self.version if self.version else ''} ({self.source})"


_OPENBLAS_FILE = re.compile(r"libopenblas\w*?-r(\d+(?:\.\d+)+)\.so")


@functools.lru_cache(maxsize=32)
def linked_blas(binary: str, mtime: float = 0.0) -> StackBlas | None:
    """The BLAS `binary` links, from ldd and the libraries' real file names (OpenBLAS names its version
    there: libopenblasp-r0.3.21.so); None when ldd cannot say. mtime: a rebuilt binary is read again."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    prefixes = _table()["libraries"]
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        library = os.path.realpath(rest.split(" (")[0]) if rest.startswith("/") else name
        for prefix, blas in prefixes.items():
            if os.path.basename(library).startswith(prefix) or name.startswith(prefix):
                found = _OPENBLAS_FILE.search(os.path.basename(library)) if blas == "openblas" else None
                return StackBlas(blas, found.group(1) if found else None, f"ldd {binary}")
    return None


def locked_blas(specs: str) -> StackBlas | None:
    """The BLAS of a stack's spack.lock, from its concrete programs ('openblas@0.3.28 threads=openmp; ...')."""
    packages = _table()["spack_packages"]
    for spec in specs.split(";"):
        name, _, rest = spec.strip().partition("@")
        if name in packages:
            return StackBlas(packages[name], rest.split()[0] if rest else None, "the stack's spack.lock")
    return None


def stack_blas(declared: str | None, lock_specs: str, binary: str) -> StackBlas:
    """The site file's `blas:`, else the lock's, else what a binary given by its path links."""
    if declared:
        found = locked_blas(lock_specs) or (linked_blas(binary, _mtime(binary)) if os.path.isabs(binary) else None)
        version = found.version if found and found.name == declared else None
        return StackBlas(declared, version, "site file")
    if lock_specs and (found := locked_blas(lock_specs)):
        return found
    if os.path.isabs(binary) and os.path.isfile(binary) and (found := linked_blas(binary, _mtime(binary))):
        return found
    return StackBlas(None, None, "")


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
