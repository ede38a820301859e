"""What a stack may declare about its interconnect: the transport its MPI must select
(scalebench/data/transports.yaml; the evidence is read by scalebench.site.transport_evidence) and
its fabric class, whose floors (site_configs/fabric_floors.yaml) say whether a measured ping-pong is
plausible for it, and the fastest class it is plausible for."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from scalebench import loaders, paths, schema
from scalebench.errors import InputError
from scalebench.validation import did_you_mean, excerpt

# --- transports ---------------------------------------------------------------------------------

_DECLARATION_RE = re.compile(r"^(?:(?:ucx|ofi|btl):[a-z0-9_]{1,32}|tcp|shm)$")


@dataclass(frozen=True)
class EvidenceVolume:
    """Bytes of stderr the evidence variables make one rank of a layer print (transports.yaml, measured)."""

    per_rank_bytes: int  # once
    per_peer_bytes: int  # for each other rank it sends to


@dataclass(frozen=True)
class Transports:
    evidence_env: dict[str, str]
    classes: dict[str, frozenset[str]]
    loopback: frozenset[str]
    shared_memory: dict[str, str]
    layers: dict[str, str]
    volumes: dict[str, EvidenceVolume]  # layer -> what one rank prints

    def atoms(self, declared: str) -> frozenset[str]:
        return self.classes.get(declared, frozenset({declared}))

    def layer(self, declared: str) -> str:
        return declared.split(":", 1)[0] if ":" in declared else "btl"


@functools.lru_cache(maxsize=None)
def transports(path: Path | None = None) -> Transports:
    data = loaders.load_yaml(path or paths.PACKAGE_DATA / "transports.yaml", "transport table")
    return Transports({str(k): str(v) for k, v in data["evidence_env"].items()},
                      {str(k): frozenset(map(str, v)) for k, v in data["classes"].items()},
                      frozenset(map(str, data["loopback"])), dict(data["shared_memory"]), dict(data["layers"]),
                      {str(layer): EvidenceVolume(int(v["per_rank_bytes"]), int(v["per_peer_bytes"]))
                       for layer, v in data["evidence_volume"].items()})


def check_declaration(where: str, value: object) -> str:
    """A site file's transport declaration, or InputError naming what it may be."""
    if not isinstance(value, str) or not _DECLARATION_RE.match(value):
        raise InputError(f"{where}: {excerpt(value)} is no transport: tcp, shm, or ucx:<transport>, "
                         f"ofi:<provider>, btl:<btl> (e.g. ucx:rc_mlx5, ofi:cxi, ofi:efa)")
    return value


# --- fabric classes and their floors -------------------------------------------------------------

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
    schema.check(data, "fabric_floors.yaml", str(path))
    out = {}
    for name, entry in data.items():
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
