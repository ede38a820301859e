"""The plan of OpenFOAMCheck: every case of reframe_tests/inputs/openfoam/cases.yaml at every scale of
the system, strong and weak, each a job of the application checks' layout (scalebench.check.app_check);
a case marked heavy (motorBike, meshing included) only with -S heavy_cases=true."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from scalebench.check import CheckSpec, Settings, app_check, has_scale
from scalebench.knobs import knob
from scalebench.benchmarks.openfoam.cases import load_openfoam_cases
from scalebench.site.partition import PartitionSpec


@dataclass(frozen=True)
class OpenFOAMSettings:
    heavy_cases: bool = knob(False)  # run the cases marked heavy (motorBike)


def _valid(partition: PartitionSpec, params: Mapping[str, Any], settings: Settings | None = None) -> bool:
    """A heavy case (meshing included) only when asked for: -S heavy_cases=true."""
    heavy = load_openfoam_cases()[params["case"]].heavy
    return has_scale(partition, params) and (not heavy or bool(settings and settings.of(OpenFOAMSettings).heavy_cases))


CHECKS: tuple[CheckSpec, ...] = (app_check("OpenFOAMCheck", "case", load_openfoam_cases, "openfoam", _valid),)
