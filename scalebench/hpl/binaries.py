"""HPL binary profiles (hpl_decks/binaries.yaml): what a binary reads and how it is launched."""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.hpl.deck import Algorithm
from scalebench.validation import excerpt, require_count

_ALGORITHM_KEYS = tuple(f.name for f in fields(Algorithm))


@dataclass(frozen=True)
class BinaryProfile:
    name: str
    descr: str
    input: str  # HPL.dat or hpccinf.txt
    output: str  # "stdout" or a file name
    args: tuple[str, ...] = ()
    ranks: str = "per_core"  # per_core | per_gpu
    memory: str = "host"  # host | gpu
    ignores: tuple[str, ...] = ()
    nb: int | None = None
    dgemm_env: str | None = None  # the variable that asks the binary to time DGEMM first
    dgemm_n: int | None = None  # the order it is asked for

    @property
    def is_hpcc(self) -> bool:
        return self.input == "hpccinf.txt"


def _profile(name: str, data: Any, where: str) -> BinaryProfile:
    if not isinstance(data, Mapping):
        raise InputError(f"{where}: expected a mapping")
    known = {f.name for f in fields(BinaryProfile)} - {"name"}
    unknown = sorted(map(str, set(data) - known))
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}")
    if data.get("input") not in ("HPL.dat", "hpccinf.txt"):
        raise InputError(f"{where}.input: must be HPL.dat or hpccinf.txt, got {excerpt(data.get('input'))}")
    for key, allowed in (("ranks", ("per_core", "per_gpu")), ("memory", ("host", "gpu"))):
        if data.get(key, allowed[0]) not in allowed:
            raise InputError(f"{where}.{key}: must be one of {', '.join(allowed)}, got {excerpt(data[key])}")
    ignores = tuple(data.get("ignores") or ())
    bad = [key for key in ignores if key not in _ALGORITHM_KEYS]
    if bad:
        raise InputError(f"{where}.ignores: {', '.join(map(str, bad))} are not HPL.dat settings "
                         f"({', '.join(_ALGORITHM_KEYS)})")
    nb = data.get("nb")
    dgemm_env, dgemm_n = data.get("dgemm_env"), data.get("dgemm_n")
    if (dgemm_env is None) != (dgemm_n is None):
        raise InputError(f"{where}: dgemm_env and dgemm_n go together")
    if dgemm_env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(dgemm_env)):
        raise InputError(f"{where}.dgemm_env: {excerpt(dgemm_env)} is not a variable name")
    return BinaryProfile(name=name, descr=str(data.get("descr", name)), input=data["input"],
                         output=str(data.get("output", "stdout")), args=tuple(str(a) for a in data.get("args") or ()),
                         ranks=data.get("ranks", "per_core"), memory=data.get("memory", "host"), ignores=ignores,
                         nb=None if nb is None else require_count(f"{where}.nb", nb),
                         dgemm_env=None if dgemm_env is None else str(dgemm_env),
                         dgemm_n=None if dgemm_n is None else require_count(f"{where}.dgemm_n", dgemm_n))


@functools.lru_cache(maxsize=4)
def load_profiles(path: Path | None = None) -> dict[str, BinaryProfile]:
    path = Path(path or paths.HPL_DECKS / "binaries.yaml")
    data = loaders.load_yaml(path, "binary profiles")
    if not isinstance(data, Mapping):
        raise InputError(f"{path}: expected a mapping of profile names")
    return {str(name): _profile(str(name), entry, f"{path}: {name}") for name, entry in data.items()}


def profile_for(binary: str, profile: str | None = None) -> BinaryProfile:
    """The named profile, else the one named after the binary's file name, else xhpl's."""
    profiles = load_profiles()
    if profile:
        if profile not in profiles:
            raise InputError(f"hpl_profile: {excerpt(profile)} is not one of {', '.join(profiles)} "
                             "(hpl_decks/binaries.yaml)")
        return profiles[profile]
    return profiles.get(os.path.basename(binary), profiles["xhpl"])


def resolve_binary(binary: str) -> str:
    """A relative path (one with a '/') is under the repository, as a stack's spack_env is: project
    files name build/bin/xhpl, never this machine's directories. A bare name stays a name, looked up
    on PATH where the job runs (modules and Spack views set PATH only there)."""
    if "/" in binary and not os.path.isabs(binary):
        return str(paths.REPO_ROOT / binary)
    return binary


def missing_binary(binary: str, what: str = "HPL binary") -> str | None:
    """Why a binary of the repository cannot run (e.g. build/bin/xhpl not built yet), else None.
    Other paths and names are the job's to find: its guard names a missing one."""
    if "/" not in binary or os.path.isabs(binary):
        return None
    path = paths.REPO_ROOT / binary
    if path.is_file() and os.access(path, os.X_OK):
        return None
    hint = " (built by scripts/install.sh, which make run calls)" if binary.startswith("build/") else ""
    return f"{what} {binary}: no executable file at that path in the repository{hint}"
