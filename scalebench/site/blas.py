"""Which BLAS a stack's HPL links: the site file says (`blas:`), else the stack's spack.lock, else the
libraries of an HPL binary given by its path (ldd). A bare program name is looked up on PATH only in
the job (modules and views set it there): a login node's PATH could name another build, so it is not
read here. FlexiBLAS loads its backend at run time: the one FLEXIBLAS names (the stack's env_vars, else
the submitting shell's), whose kernels and thread variable are then the job's. The vocabulary is data:
scalebench/data/blas.yaml."""
from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass, replace
from typing import Mapping

from scalebench import loaders, paths

FLEXIBLAS = "flexiblas"
_NOT_NAMED = "give the stack's `blas:` in the site file"


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    return loaders.load_yaml(paths.PACKAGE_DATA / "blas.yaml", "BLAS table")


def blas_names() -> list[str]:
    return list(_table()["names"])


def threads_variables(blas: str | None) -> list[str]:
    """The thread-count variables a BLAS reads besides OMP_NUM_THREADS: all of them when not known. For
    FlexiBLAS ask with its backend's name (StackBlas.runs)."""
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
    backend: StackBlas | None = None  # the BLAS FlexiBLAS loads; None: FLEXIBLAS names none

    @property
    def runs(self) -> StackBlas:
        """The BLAS whose kernels run: FlexiBLAS's backend (not known when FLEXIBLAS names none), else this."""
        if self.name != FLEXIBLAS:
            return self
        return self.backend or StackBlas(None, None, "FLEXIBLAS not set: FlexiBLAS's configured default")

    def describe(self) -> str:
        if self.name is None:
            return f"BLAS not known ({self.source or _NOT_NAMED})"
        text = f"{self.name}{' ' + self.version if self.version else ''} ({self.source})"
        if self.name == FLEXIBLAS:  # its own version is not its backend's
            runs = self.runs
            text += f", backend {runs.name or 'not known'}{' ' + runs.version if runs.version else ''} ({runs.source})"
        return text


_OPENBLAS_FILE = re.compile(r"libopenblas\w*?-r(\d+(?:\.\d+)+)\.so")


def _library_blas(library: str) -> str | None:
    """The BLAS a library's file name says (libmkl_core.so.2: mkl), or None."""
    name = os.path.basename(library)
    return next((blas for prefix, blas in _table()["libraries"].items() if name.startswith(prefix)), None)


@functools.lru_cache(maxsize=32)
def linked_blas(binary: str, mtime: float = 0.0) -> StackBlas | None:
    """The BLAS `binary` links, from ldd and the libraries' real file names (OpenBLAS names its version
    there: libopenblasp-r0.3.21.so); None when ldd cannot say. mtime: a rebuilt binary is read again."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        library = os.path.realpath(rest.split(" (")[0]) if rest.startswith("/") else name
        blas = _library_blas(library) or _library_blas(name)
        if blas:
            found = _OPENBLAS_FILE.search(os.path.basename(library)) if blas == "openblas" else None
            return StackBlas(blas, found.group(1) if found else None, f"ldd {binary}")
    return None


def _locked(specs: str) -> dict[str, str | None]:
    """{BLAS: version} of a stack's spack.lock programs ('openblas@0.3.28 threads=openmp; ...'), in order."""
    packages, found = _table()["spack_packages"], {}
    for spec in specs.split(";"):
        name, _, rest = spec.strip().partition("@")
        if name in packages:
            found.setdefault(packages[name], rest.split()[0] if rest else None)
    return found


def locked_blas(specs: str) -> StackBlas | None:
    """The BLAS of a stack's spack.lock: FlexiBLAS when it holds it (the others are its backends), else
    the first."""
    found = _locked(specs)
    name = FLEXIBLAS if FLEXIBLAS in found else next(iter(found), None)
    return StackBlas(name, found[name], "the stack's spack.lock") if name else None


def flexiblas_backend(stack_env: Mapping[str, str], shell_env: Mapping[str, str],
                      lock_specs: str = "") -> StackBlas | None:
    """The BLAS FlexiBLAS loads: the one FLEXIBLAS names (a backend's name, or a library's path), the
    stack's before the submitting shell's; its version from the stack's lock. None when neither sets it."""
    for env, whose in ((stack_env, "the stack's env_vars"), (shell_env, "the submitting shell")):
        value = env.get("FLEXIBLAS", "").strip()
        if value:
            name = _library_blas(value) if "/" in value else _backend_blas(value)
            return StackBlas(name, _locked(lock_specs).get(name) if name else None, f"FLEXIBLAS={value} in {whose}")
    return None


def _backend_blas(backend: str) -> str | None:
    """The BLAS a FlexiBLAS backend's name is (OPENBLAS-OPENMP: openblas), by its longest listed start."""
    table = _table()["flexiblas_backends"]
    starts = [start for start in table if backend.lower().startswith(start)]
    return table[max(starts, key=len)] if starts else None


def stack_blas(declared: str | None, lock_specs: str, binary: str, stack_env: Mapping[str, str] | None = None,
               shell_env: Mapping[str, str] | None = None) -> StackBlas:
    """The site file's `blas:`, else the lock's, else what a binary given by its path links; FlexiBLAS with
    the backend FLEXIBLAS names in the stack's env_vars (`stack_env`) or the submitting shell."""
    found = _linked(declared, lock_specs, binary)
    if found.name != FLEXIBLAS:
        return found
    return replace(found, backend=flexiblas_backend(stack_env or {}, shell_env or {}, lock_specs))


def _linked(declared: str | None, lock_specs: str, binary: str) -> StackBlas:
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
