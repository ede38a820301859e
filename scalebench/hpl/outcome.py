"""What one HPL job's outputs say: the residual-checked rows, Rmax, the solve that set it, and every
reason the run is not clean (the check's sanity), with the DGEMM ceiling measured in the same job
(hpcc's StarDGEMM, or the same keys from the embedded xhpl asked for them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scalebench.errors import ParseError
from scalebench.hpl import blas
from scalebench.parse.hpcc import parse_hpcc, summary_value
from scalebench.parse.hpl import HplOutput, HplRow, parse_hpl
from scalebench.site.thresholds import report_flags


@dataclass(frozen=True)
class HplOutcome:
    hpl: HplOutput
    problems: tuple[str, ...]  # [] for a clean, complete, residual-checked run on the processes asked for
    processes: int | None  # what the program itself reports
    dgemm_ceiling_gflops: float | None  # StarDGEMM x processes; None when the binary timed no DGEMM
    kernels_used: str  # what OpenBLAS says it runs (OPENBLAS_VERBOSE=2)
    ceiling_warnings: str
    stream_triad_gbs: float | None = None  # hpcc: StarSTREAM_Triad x processes (GB/s); None for xhpl

    @property
    def rmax_gflops(self) -> float | None:
        return self.hpl.rmax_gflops

    @property
    def best_row(self) -> HplRow:
        """The PASSED solve that set Rmax (the last row when none passed: sanity has failed then)."""
        rmax = self.rmax_gflops
        return next((r for r in self.hpl.rows if r.status == "PASSED" and r.gflops == rmax), self.hpl.rows[-1])

    @property
    def trial_gflops(self) -> str:
        """Every PASSED solve, in run order."""
        return " ".join(format(r.gflops, ".2f") if isinstance(r.gflops, float) else str(r.gflops)
                        for r in self.hpl.rows if r.status == "PASSED")

    def efficiency_pct(self, rpeak_gflops: float) -> float | None:
        rmax = self.rmax_gflops
        return None if rmax is None else 100 * rmax / rpeak_gflops


def hpl_outcome(output: str, stderr: str, *, hpcc: bool, expected_cases: int, tasks: int,
                rpeak_gflops: float, sweep: bool = False) -> HplOutcome:
    """The outcome of HPL's (or hpcc's) output text; ParseError when it holds no HPL result.

    The processes the program reports must be the tasks launched: hpcc's CommWorldProcs, or the
    P x Q of xhpl's rows (of a sweep: the largest grid, which may leave ranks idle, within them) and
    the CommWorldProcs of its DGEMM lines."""
    processes: Any
    if hpcc:
        parsed = parse_hpcc(output)
        if parsed.hpl is None:
            raise ParseError("no HPL section (hpcc ran no HPL test)")
        hpl = parsed.hpl
        summary = parsed.last_summary or {}
        processes = summary.get("CommWorldProcs")

        def node_total(per_process: str) -> float | None:  # hpcc's Star figures are per process
            value = summary.get(per_process)
            return value * processes if isinstance(value, float) and isinstance(processes, int) else None

        dgemm, stream = node_total("StarDGEMM_Gflops"), node_total("StarSTREAM_Triad")
    else:
        hpl = parse_hpl(output)
        grids = {row.p * row.q for row in hpl.rows}
        processes = max(grids) if grids and (sweep or len(grids) == 1) else None
        stream = None
        keys = star_dgemm_keys(output)
        star, world = keys.get("StarDGEMM_Gflops"), keys.get("CommWorldProcs")
        dgemm = star * world if isinstance(star, float) and star > 0 and isinstance(world, int) else None
    problems = list(hpl.problems(expected_cases=expected_cases))
    if processes is None or (processes > tasks if sweep else processes != tasks):
        problems.append(f"the program reports {processes} processes, {tasks} were launched (wrong MPI launcher?)")
    elif dgemm is not None and not hpcc and world != tasks:
        problems.append(f"the program reports {world} MPI processes, {tasks} were launched (wrong MPI launcher?)")
    warnings: list[str] = []
    if dgemm and hpl.rmax_gflops:
        flags = report_flags()
        warnings += blas.ceiling_flags(hpl.rmax_gflops, dgemm, rpeak_gflops, flags["min_hpl_over_dgemm"],
                                       flags["min_dgemm_over_rpeak"]).warnings
    reported = sorted(set(blas.kernels_reported(stderr)))
    fallback = [kernel for kernel in reported if blas.fallback_core(kernel)]
    if fallback:  # OpenBLAS did not know the CPU: DGEMM runs at a fraction of what it could
        warnings.append(f"OpenBLAS ran its fallback kernel {', '.join(fallback)}: set OPENBLAS_CORETYPE in the "
                        "stack's env_vars (scalebench/data/openblas_coretypes.yaml lists the cores seen misdetected)")
    kernels = ",".join(reported) or "not reported"
    return HplOutcome(hpl, tuple(problems), processes if isinstance(processes, int) else None, dgemm, kernels,
                      "; ".join(warnings), stream)


_STAR_KEYS = ("StarDGEMM_N", "CommWorldProcs", "StarDGEMM_Gflops", "StarDGEMM_Gflops_min", "StarDGEMM_Gflops_max")


def star_dgemm_keys(output: str) -> dict[str, Any]:
    """The StarDGEMM lines the embedded xhpl prints before HPL's banner (scripts/xhpl-driver.c),
    typed as hpcc's Summary values; {} when it timed no DGEMM."""
    found: dict[str, Any] = {}
    for line in output.splitlines():
        if line.startswith("HPLinpack") or line.startswith("====="):  # HPL's own output begins
            break
        key, sep, value = line.partition("=")
        if sep and key in _STAR_KEYS:
            found[key] = summary_value(value.strip())
    return found
