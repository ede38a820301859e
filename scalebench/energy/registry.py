"""scalebench/data/energy.yaml, read once: coverage names, Slurm plugins, sampler counters, bounds."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.validation import excerpt, is_number


@dataclass(frozen=True)
class EnergyRegistry:
    coverage: Mapping[str, str]  # name -> label
    plugins: Mapping[str, tuple[str, ...]]  # Slurm plugin -> coverage
    sampler: Mapping[str, tuple[str, ...]]  # counter source -> coverage
    max_node_power_w: float
    min_node_power_w: float
    min_window_s: float

    def label(self, coverage: tuple[str, ...] | list[str]) -> str:
        return " + ".join(self.coverage[c] for c in coverage)


def _coverage_list(value: object, known: Mapping[str, str], where: str) -> tuple[str, ...]:
    names = tuple(value) if isinstance(value, list) else (value,)
    if not names or not all(isinstance(n, str) and n in known for n in names):
        raise InputError(f"{where}: {excerpt(value)} is not coverage among {', '.join(known)}")
    return names  # type: ignore[return-value]


def load(path: Path | None = None) -> EnergyRegistry:
    path = path or paths.PACKAGE_DATA / "energy.yaml"
    data = loaders.load_yaml(path, "energy registry")
    keys = {"coverage", "plugins", "sampler", "max_node_power_w", "min_node_power_w", "min_window_s"}
    if not isinstance(data, dict) or set(data) != keys:
        raise InputError(f"{path}: expected exactly the keys {', '.join(sorted(keys))}")
    coverage = data["coverage"]
    if not isinstance(coverage, dict) or not all(isinstance(v, str) for v in coverage.values()):
        raise InputError(f"{path}: coverage: expected a mapping of names to labels")
    for key in ("plugins", "sampler"):
        if not isinstance(data[key], dict):
            raise InputError(f"{path}: {key}: expected a mapping")
    bounds = {}
    for key in ("max_node_power_w", "min_node_power_w", "min_window_s"):
        if not is_number(data[key]) or data[key] <= 0:
            raise InputError(f"{path}: {key}: must be a positive number, got {excerpt(data[key])}")
        bounds[key] = float(data[key])
    return EnergyRegistry(
        coverage, {str(k): _coverage_list(v, coverage, f"{path}: plugins.{k}") for k, v in data["plugins"].items()},
        {str(k): _coverage_list(v, coverage, f"{path}: sampler.{k}") for k, v in data["sampler"].items()}, **bounds)


@functools.lru_cache(maxsize=None)
def registry() -> EnergyRegistry:
    return load()
