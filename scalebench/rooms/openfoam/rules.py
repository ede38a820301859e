"""The plan of OpenFOAMCheck: every case of reframe_tests/inputs/openfoam/cases.yaml at every scale of
the system, strong and weak, each a job of the application checks' layout (scalebench.site_plan.app_check);
a case marked heavy (motorBike, meshing included) only with -S heavy_cases=true."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from scalebench.knobs import knob
from scalebench.rooms.openfoam.cases import load_openfoam_cases
from scalebench.site.partition import PartitionSpec

if TYPE_CHECKING:
    from scalebench.site_plan import CheckSpec, Settings


@dataclass(frozen=True)
class OpenFOAMSettings:
    heavy_cases: bool = knob(False)  # run the cases marked heavy (motorBike)


def _valid(partition: PartitionSpec, params: Mapping[str, Any], settings: Settings | None = None) -> bool:
    """A heavy case (meshing included) only when asked for: -S heavy_cases=true."""
    from scalebench.site_plan import has_scale

    heavy = load_openfoam_cases()[params["case"]].heavy
    return has_scale(partition, params) and (not heavy or bool(settings and settings.of(OpenFOAMSettings).heavy_cases))


def checks() -> tuple[CheckSpec, ...]:
    from scalebench.site_plan import app_check

    return (app_check("OpenFOAMCheck", "case", load_openfoam_cases, "openfoam", _valid),)
