"""HPL binary profiles (hpl_decks/binaries.yaml): what a binary reads and how it is launched."""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from scalebench import loaders, paths, schema
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
    sweep_nbs: tuple[int, ...] = ()  # the NBs a tuning sweep tries; a frozen NB outside them is not this binary's

    def takes_nb(self, nb: int) -> bool:
        """Whether a block size is within the range this binary is tuned over."""
        return not self.sweep_nbs or min(self.sweep_nbs) <= nb <= max(self.sweep_nbs)

    @property
    def is_hpcc(self) -> bool:
        return self.input == "hpccinf.txt"


def _profile(name: str, data: Mapping[str, Any], where: str) -> BinaryProfile:
    """A profile of binaries.yaml (its shape checked by the binaries schema)."""
    bad = [key for key in data.get("ignores") or () if key not in _ALGORITHM_KEYS]
    if bad:
        raise InputError(f"{where}.ignores: {', '.join(map(str, bad))} are not HPL.dat settings "
                         f"({', '.join(_ALGORITHM_KEYS)})")
    return BinaryProfile(name=name, descr=str(data.get("descr", name)), input=data["input"],
                         output=str(data.get("output", "stdout")), args=tuple(data.get("args") or ()),
                         ranks=data.get("ranks", "per_core"), memory=data.get("memory", "host"),
                         ignores=tuple(data.get("ignores") or ()), nb=data.get("nb"), dgemm_env=data.get("dgemm_env"),
                         dgemm_n=data.get("dgemm_n"), sweep_nbs=tuple(data.get("sweep_nbs") or ()))


@functools.lru_cache(maxsize=4)
def load_profiles(path: Path | None = None) -> dict[str, BinaryProfile]:
    path = Path(path or paths.HPL_DECKS / "binaries.yaml")
    data = loaders.load_yaml(path, "binary profiles")
    schema.check(data, "binaries.yaml", str(path))
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
