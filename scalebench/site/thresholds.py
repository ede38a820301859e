"""The thresholds a site sets, as data: efficiency floors (site_configs/efficiency_floors.yaml) and the
report's flags (site_configs/report_flags.yaml)."""
from __future__ import annotations

from pathlib import Path

from scalebench import loaders, paths, schema
from scalebench.errors import InputError
from scalebench.validation import excerpt


def efficiency_floor(system: str, partition: str, path: Path | None = None) -> float:
    """The most specific floor for system:partition (then system:*, then *)."""
    path = path or paths.SITE_CONFIGS / "efficiency_floors.yaml"
    floors = loaders.load_yaml(path, "efficiency floors") or {}
    schema.check(floors, "efficiency_floors.yaml", str(path))
    for key in (f"{system}:{partition}", f"{system}:*", "*"):
        if key in floors:
            return float(floors[key])
    raise InputError(f"{path}: no floor for {system}:{partition} and no '*' entry")


# Each flag and the open-closed interval (low, high] it must lie in.
REPORT_FLAGS = {
    "min_hpl_over_dgemm": (0.0, 1.0),
    "min_dgemm_over_rpeak": (0.0, 1.0),
    "screen_z": (0.0, 1000.0),
    "screen_min_deviation": (0.0, 1.0),
    "screen_max_deviation": (0.0, 1.0),
    "screen_link_min_deviation": (0.0, 1.0),
    "screen_link_max_deviation": (0.0, 1.0),
    "screen_latency_min_deviation": (0.0, 1000.0),  # a latency can be any multiple of its median
    "screen_latency_max_deviation": (0.0, 1000.0),
    "noisy_cv": (0.0, 1.0),
    "noisy_steal": (0.0, 1.0),
    "noisy_foreign_cores": (0.0, 1e6),
    "noisy_dgemm_spread": (0.0, 1.0),
    "below_model_margin": (0.0, 1.0),
}


def report_flags(path: Path | None = None) -> dict[str, float]:
    """Warning thresholds for reports (site_configs/report_flags.yaml)."""
    path = path or paths.SITE_CONFIGS / "report_flags.yaml"
    flags = loaders.load_yaml(path, "report flags") or {}
    if not isinstance(flags, dict) or set(flags) != set(REPORT_FLAGS):
        raise InputError(f"{path}: expected exactly the keys {', '.join(sorted(REPORT_FLAGS))}")
    for key, value in flags.items():
        low, high = REPORT_FLAGS[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low < value <= high:
            raise InputError(f"{path}: {key}: must be a number in ({low:g}, {high:g}], got {excerpt(value)}")
    return {k: float(v) for k, v in flags.items()}
