"""Fabric-class floors (site_configs/fabric_floors.yaml): whether a stack's measured ping-pong is
plausible for the fabric it declares, and the fastest class it is plausible for."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.interconnect.microbench import PLACEMENTS
from scalebench.benchmarks import did_you_mean
from scalebench.validation import excerpt, is_number

FLOOR_FILE = paths.SITE_CONFIGS / "fabric_floors.yaml"
# figure -> (floor key, True when the floor is a most)
_BOUNDS = {"latency_us": True, "bandwidth_mbs": False, "n_half_bytes": True}


@dataclass(frozen=True)
class FabricClass:
    name: str
    label: str
    placement: str
    bounds: Mapping[str, float]  # key of _BOUNDS -> floor

    def misses(self, measured: Mapping[str, float]) -> list[str]:
        """The floors `measured` (keys of _BOUNDS) misses, as text."""
        out = []
        for key, is_most in _BOUNDS.items():
            value = measured.get(key)
            if value is not None and (value > self.bounds[key] if is_most else value < self.bounds[key]):
                out.append(f"{_describe(key, value)} ({'at most' if is_most else 'at least'} "
                           f"{_describe(key, self.bounds[key], bare=True)})")
        return out


_NAMES = {"latency_us": "latency", "bandwidth_mbs": "peak bandwidth", "n_half_bytes": "n1/2"}


def _describe(key: str, value: float, bare: bool = False) -> str:
    text = {"latency_us": f"{value:.3g} us", "bandwidth_mbs": f"{value:.0f} MB/s",
            "n_half_bytes": f"{value:.0f} B"}[key]
    return text if bare else f"{_NAMES[key]} {text}"


@functools.lru_cache(maxsize=None)
def fabric_classes(path: Path = FLOOR_FILE) -> dict[str, FabricClass]:
    """The classes, fastest first."""
    data = loaders.load_yaml(path, "fabric floors") or {}
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of fabric class to floors")
    out = {}
    for name, entry in data.items():
        where = f"{path}: {name}"
        if not isinstance(entry, dict) or set(entry) != {"label", "placement", *_BOUNDS}:
            raise InputError(f"{where}: expected exactly label, placement, {', '.join(_BOUNDS)}")
        if entry["placement"] not in PLACEMENTS:
            raise InputError(f"{where}: placement must be one of {', '.join(PLACEMENTS)}")
        for key in _BOUNDS:
            if not is_number(entry[key]) or not 0 < entry[key] < 1e12:
                raise InputError(f"{where}: {key} must be a positive number, got {excerpt(entry[key])}")
        out[str(name)] = FabricClass(str(name), str(entry["label"]), entry["placement"],
                                     {key: float(entry[key]) for key in _BOUNDS})
    return out


def check_fabric(where: str, value: object) -> str:
    classes = fabric_classes()
    if not isinstance(value, str) or value not in classes:
        raise InputError(f"{where}: {excerpt(value)} is no fabric class of {FLOOR_FILE.name}"
                         f"{did_you_mean(str(value), classes)}: {', '.join(classes)}")
    return str(value)


def judge(fabric: str, measured: Mapping[str, float]) -> str | None:
    """None when `measured` meets the floors of `fabric`; else the flag, e.g. 'declared InfiniBand HDR,
    measured latency 31 us (at most 2 us): like TCP over Ethernet'."""
    classes = fabric_classes()
    declared = classes[fabric]
    missed = declared.misses(measured)
    if not missed:
        return None
    like = next((c for c in classes.values() if c.placement == declared.placement and not c.misses(measured)), None)
    return (f"declared {declared.label}, measured {'; '.join(missed)}: "
            + (f"like {like.label}" if like else "below every class"))
