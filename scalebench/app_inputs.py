"""What the application checks share: scaling modes applied to inputs, factor splits, spec files.

Two scaling modes, the same for both applications:

* strong: the problem is the same at every rank count (`atoms` or `cells` in total);
* weak: the 1-rank problem (`atoms` or `cells`) is grown with the ranks, by factors whose product
  is the rank count exactly, so the work per rank is fixed: LAMMPS replicates the box
  (`replicate rx ry rz`), OpenFOAM widens the domain (`stretch`) or refines it (`refine`).

Templates are data files under reframe_tests/inputs/ (`INPUTS`); the functions here take their text
and return new text, so they are tested without the applications.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any, Sequence

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.textfile import file_key
from scalebench.validation import require_count

INPUTS = paths.CHECKS / "inputs"


def _prime_factors(n: int) -> list[int]:
    """Prime factors of n, largest first."""
    found, p = [], 2
    while p * p <= n:
        while n % p == 0:
            found.append(p)
            n //= p
        p += 1
    if n > 1:
        found.append(n)
    return sorted(found, reverse=True)


def split_factors(n: int, weights: Sequence[float]) -> tuple[int, ...]:
    """n as a product of one factor per dimension, as even as the weights allow: each prime factor
    (largest first) goes to the dimension with the most weight per part so far; ties go to the
    first dimension. Equal weights give MPI_Dims_create's answer (8 -> 2 x 2 x 2, 6 -> 3 x 2 x 1)."""
    require_count("n", n)  # trial division up to sqrt(n): a C int keeps it short
    if not weights or any(w <= 0 for w in weights):
        raise InputError(f"weights: need one positive weight per dimension, got {list(weights)}")
    parts = [1] * len(weights)
    for prime in _prime_factors(n):
        best = max(range(len(parts)), key=lambda i: (weights[i] / parts[i], -i))
        parts[best] *= prime
    return tuple(parts)


def fill(template: str, **values: Any) -> str:
    """@name@ placeholders replaced (the applications' own syntax uses braces and $); one left without a
    value is an error."""
    for name, value in values.items():
        template = template.replace(f"@{name}@", str(value))
    left = re.search(r"@\w+@", template)
    if left:
        raise InputError(f"input template: no value for {left.group(0)}")
    return template


def load_specs(path: Path, kind: type, tuples: tuple[str, ...]) -> dict[str, Any]:
    """name -> kind(name=name, **entry) for each entry of a YAML mapping; `tuples` keys as tuples.
    Read once per version of the file: every variant of a check asks."""
    return dict(_cached_specs(file_key(path), kind, tuples))


@functools.lru_cache(maxsize=32)
def _cached_specs(key: tuple[str, int, int], kind: type, tuples: tuple[str, ...]) -> dict[str, Any]:
    path = Path(key[0])
    data = loaders.load_yaml(path, "spec file")
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of names to entries")
    specs = {}
    for name, entry in data.items():
        if not isinstance(entry, dict):
            raise InputError(f"{path}: entry {name}: expected a mapping")
        entry = {key: tuple(value) if key in tuples else value for key, value in entry.items()}
        try:
            specs[name] = kind(name=name, **entry)
        except (TypeError, InputError) as err:
            raise InputError(f"{path}: entry {name}: {err}") from None
    return specs
