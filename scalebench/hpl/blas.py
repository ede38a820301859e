"""Which OpenBLAS kernel a run gets, and why: never override a user's explicit choice."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from scalebench import loaders, paths


@dataclass(frozen=True)
class CoreTypeChoice:
    value: str | None  # what OPENBLAS_CORETYPE is set to; None: leave OpenBLAS to auto-detect
    reason: str
    recommended: str | None  # what the table recommends for this CPU (for warnings)

    @property
    def warning(self) -> str | None:
        if self.recommended and self.value and self.value.lower() != self.recommended.lower():
            return (f"OPENBLAS_CORETYPE={self.value} from the environment; {self.recommended} is the "
                    "kernel for this CPU: BLAS-bound figures may be low")
        return None


def recommended_coretype(microarch: str) -> str | None:
    import archspec.cpu

    table = loaders.load_yaml(paths.PACKAGE_DATA / "openblas_coretypes.yaml", "OpenBLAS core types")
    target = archspec.cpu.TARGETS.get(microarch)
    names = [microarch] + ([a.name for a in target.ancestors] if target else [])
    return next((table[name] for name in names if name in table), None)


def choose_coretype(environ: Mapping[str, str], microarch: str) -> CoreTypeChoice:
    recommended = recommended_coretype(microarch)
    current = environ.get("OPENBLAS_CORETYPE", "").strip()
    if current:
        return CoreTypeChoice(current, "OPENBLAS_CORETYPE already set in the environment (respected)",
                              recommended)
    if recommended:
        return CoreTypeChoice(recommended, f"table choice for {microarch} "
                              "(scalebench/data/openblas_coretypes.yaml)", recommended)
    return CoreTypeChoice(None, f"no table entry for {microarch}: OpenBLAS auto-detection", None)


_CORE_LINE = re.compile(r"^\s*Core:\s*(\S+)", re.MULTILINE)


def kernels_reported(text: str) -> list[str]:
    """Kernel names OpenBLAS printed with OPENBLAS_VERBOSE=2 ('Core: SkylakeX'), one per process."""
    return _CORE_LINE.findall(text)
