"""Whether an HPL job sets OPENBLAS_CORETYPE: only for a stack whose BLAS is OpenBLAS, or FlexiBLAS
running it (which BLAS a stack links: scalebench.site.blas), only on a CPU an OpenBLAS release was seen
to misdetect, never over a value the stack or the submitting shell sets
(scalebench/data/openblas_coretypes.yaml)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Mapping

from scalebench import loaders, paths
from scalebench.site.blas import StackBlas


@functools.lru_cache(maxsize=1)
def _coretypes() -> dict:
    return loaders.load_yaml(paths.PACKAGE_DATA / "openblas_coretypes.yaml", "OpenBLAS core types")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


@dataclass(frozen=True)
class CoreTypeChoice:
    value: str | None  # what OPENBLAS_CORETYPE is set to; None: OpenBLAS detects the CPU itself
    reason: str
    recommended: str | None  # the core forced on this CPU where an OpenBLAS release misdetects it

    @property
    def warning(self) -> str | None:
        if self.recommended and self.value and self.value.lower() != self.recommended.lower():
            return (f"OPENBLAS_CORETYPE={self.value} is set; {self.recommended} is the kernel for this CPU: "
                    "BLAS-bound figures may be low")
        return None


def forced_core(microarch: str) -> tuple[str, list[str]] | None:
    """(core, OpenBLAS releases seen to misdetect it) for the CPU or its nearest listed ancestor."""
    import archspec.cpu

    table = _coretypes()["force"]
    target = archspec.cpu.TARGETS.get(microarch)
    names = [microarch] + ([a.name for a in target.ancestors] if target else [])
    entry = next((table[name] for name in names if name in table), None)  # null: seen detected
    return (entry["core"], [str(v) for v in entry["misdetected_by"]]) if entry else None


def choose_coretype(stack_env: Mapping[str, str], shell_env: Mapping[str, str], microarch: str,
                    blas: StackBlas) -> CoreTypeChoice:
    forced = forced_core(microarch)
    recommended = forced[0] if forced else None
    for env, whose in ((stack_env, "the stack's env_vars"), (shell_env, "the submitting shell")):
        value = env.get("OPENBLAS_CORETYPE", "").strip()
        if value:
            return CoreTypeChoice(value, f"OPENBLAS_CORETYPE from {whose} (kept)", recommended)
    runs = blas.runs  # FlexiBLAS's backend: OpenBLAS's kernel choice is the same under it
    if runs.name != "openblas":
        why = "not OpenBLAS" if runs.name else "not known to be OpenBLAS"
        return CoreTypeChoice(None, f"{blas.describe()}: {why}, no OPENBLAS_CORETYPE", None)
    if forced is None:
        return CoreTypeChoice(None, f"{blas.describe()}: no OpenBLAS release is known to misdetect {microarch}: "
                                    "it picks its kernel itself (scalebench/data/openblas_coretypes.yaml)", None)
    core, versions = forced
    if runs.version and all(_version(runs.version) > _version(v) for v in versions):
        return CoreTypeChoice(None, f"{blas.describe()}: newer than the OpenBLAS {', '.join(versions)} seen to "
                                    f"misdetect {microarch}: it detects the CPU itself", None)
    seen = f"OpenBLAS {', '.join(versions)} was seen to misdetect {microarch}" + \
        ("" if runs.version else "; this version is not known")
    return CoreTypeChoice(core, f"{blas.describe()}: {seen} (scalebench/data/openblas_coretypes.yaml)", core)


def fallback_core(kernel: str) -> bool:
    """Whether OpenBLAS reported a core it falls back to for a CPU it does not know."""
    return kernel.lower() in {core.lower() for core in _coretypes()["fallback_cores"]}


_CORE_LINE = re.compile(r"^\s*Core:\s*(\S+)", re.MULTILINE)


def kernels_reported(text: str) -> list[str]:
    """Kernel names OpenBLAS printed with OPENBLAS_VERBOSE=2 ('Core: SkylakeX'), one per process."""
    return _CORE_LINE.findall(text)
