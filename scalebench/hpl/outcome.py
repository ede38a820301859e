"""What one HPL job's outputs say: the residual-checked rows, Rmax, the solve that set it, and every
reason the run is not clean (the check's sanity), with the DGEMM ceiling measured in the same job
(hpcc's StarDGEMM after the solves, or the embedded xhpl's short repeats before and after them), how
much the solves disagree, and warnings whose diagnosis follows the evidence: interference when the
node probe measured it or the DGEMM repeats disagree, the BLAS kernel only when nothing else explains
a low ceiling.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Mapping

from scalebench.errors import ParseError
from scalebench.hpl import blas
from scalebench.hpl.hpcc_output import parse_hpcc, summary_value
from scalebench.hpl.output import HplOutput, HplRow, parse_hpl
from scalebench.nodeprobe.samples import interference_reasons
from scalebench.site.thresholds import report_flags

_MAX_REPEATS = 64


@dataclass(frozen=True)
class DgemmRepeats:
    """The DGEMM rate of every rank at once, summed over the ranks, in short repeats before and after
    the solves (hpcc: one StarDGEMM x ranks, after them)."""

    before: tuple[float, ...]
    after: tuple[float, ...]

    @property
    def all(self) -> tuple[float, ...]:
        return (*self.before, *self.after)

    @property
    def best(self) -> float:
        return max(self.all)

    @property
    def spread(self) -> float | None:
        """(best - worst) / best over every repeat; None for a single one."""
        values = self.all
        return (max(values) - min(values)) / max(values) if len(values) > 1 else None

    def to_json(self) -> dict[str, list[float]]:
        return {"before": [round(v, 2) for v in self.before], "after": [round(v, 2) for v in self.after]}


def solve_cv(gflops: list[float]) -> float | None:
    """Coefficient of variation (sample standard deviation / mean) of repeated solves; None below two."""
    return statistics.stdev(gflops) / statistics.mean(gflops) if len(gflops) > 1 else None


@dataclass(frozen=True)
class HplOutcome:
    hpl: HplOutput
    problems: tuple[str, ...]  # [] for a clean, complete, residual-checked run on the processes asked for
    processes: int | None  # what the program itself reports
    dgemm_ceiling_gflops: float | None  # the best DGEMM of every rank at once; None when the binary timed none
    kernels_used: str  # what OpenBLAS says it runs (OPENBLAS_VERBOSE=2)
    ceiling_warnings: str
    stream_triad_gbs: float | None = None  # hpcc: StarSTREAM_Triad x processes (GB/s); None for xhpl
    dgemm: DgemmRepeats | None = None
    sweep: bool = False  # the rows are different decks (a tuning sweep), not repeats of one

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

    @property
    def solve_cv(self) -> float | None:
        """How much the PASSED solves of the deck disagree; None for one solve or a sweep."""
        passed = [r.gflops for r in self.hpl.rows if r.status == "PASSED" and isinstance(r.gflops, float)]
        return None if self.sweep else solve_cv(passed)

    def efficiency_pct(self, rpeak_gflops: float) -> float | None:
        rmax = self.rmax_gflops
        return None if rmax is None else 100 * rmax / rpeak_gflops


def hpl_outcome(output: str, stderr: str, *, hpcc: bool, expected_cases: int, tasks: int,
                rpeak_gflops: float, sweep: bool = False, interference: Mapping[str, Any] | None = None,
                expected_kernel: str | None = None) -> HplOutcome:
    """The outcome of HPL's (or hpcc's) output text; ParseError when it holds no HPL result.

    The processes the program reports must be the tasks launched: hpcc's CommWorldProcs, or the
    P x Q of xhpl's rows (of a sweep: the largest grid, which may leave ranks idle, within them) and
    the CommWorldProcs of its DGEMM lines. `interference` is the job's node probe record
    (scalebench.nodeprobe.samples), `expected_kernel` the OPENBLAS_CORETYPE the job set: the evidence
    the ceiling warnings weigh."""
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
        repeats = DgemmRepeats((), (dgemm,)) if dgemm and dgemm > 0 else None  # hpcc times it after HPL
    else:
        hpl = parse_hpl(output)
        grids = {row.p * row.q for row in hpl.rows}
        processes = max(grids) if grids and (sweep or len(grids) == 1) else None
        stream = None
        keys = star_dgemm_keys(output)
        star, world = keys.get("StarDGEMM_Gflops"), keys.get("CommWorldProcs")
        dgemm = star * world if isinstance(star, float) and star > 0 and isinstance(world, int) else None
        # a build printing hpcc's keys alone: its one figure, before the solves
        repeats = (dgemm_repeats(output) or DgemmRepeats((dgemm,), ())) if dgemm else None
        dgemm = repeats.best if repeats else None
    problems = list(hpl.problems(expected_cases=expected_cases))
    if processes is None or (processes > tasks if sweep else processes != tasks):
        problems.append(f"the program reports {processes} processes, {tasks} were launched (wrong MPI launcher?)")
    elif dgemm is not None and not hpcc and world != tasks:
        problems.append(f"the program reports {world} MPI processes, {tasks} were launched (wrong MPI launcher?)")
    reported = sorted(set(blas.kernels_reported(stderr)))
    warnings = ceiling_warnings(hpl.rmax_gflops, repeats, rpeak_gflops, reported, expected_kernel, interference) \
        if repeats and hpl.rmax_gflops else []
    fallback = [kernel for kernel in reported if blas.fallback_core(kernel)]
    if fallback:  # OpenBLAS did not know the CPU: DGEMM runs at a fraction of what it could
        warnings.append(f"OpenBLAS ran its fallback kernel {', '.join(fallback)}: set OPENBLAS_CORETYPE in the "
                        "stack's env_vars (scalebench/data/openblas_coretypes.yaml lists the cores seen misdetected)")
    kernels = ",".join(reported) or "not reported"
    return HplOutcome(hpl, tuple(problems), processes if isinstance(processes, int) else None, dgemm, kernels,
                      "; ".join(warnings), stream, repeats, sweep)


def disturbance(repeats: DgemmRepeats | None, interference: Mapping[str, Any] | None,
                flags: Mapping[str, float]) -> list[str]:
    """The evidence that a job did not have its nodes to itself: the node probe's (steal, foreign
    load) and DGEMM repeats that disagree by more than noisy_dgemm_spread."""
    found = interference_reasons(interference, flags["noisy_steal"], flags["noisy_foreign_cores"])
    spread = repeats.spread if repeats else None
    if spread is not None and spread > flags["noisy_dgemm_spread"]:
        found.append(f"DGEMM repeats disagree by {spread:.0%} (> {flags['noisy_dgemm_spread']:.0%})")
    return found


def ceiling_warnings(rmax: float, repeats: DgemmRepeats, rpeak: float, kernels_seen: list[str],
                     expected_kernel: str | None, interference: Mapping[str, Any] | None = None,
                     flags: Mapping[str, float] | None = None) -> list[str]:
    """Warnings on the DGEMM ceiling: a ceiling Rmax exceeds is no ceiling; HPL far below it, or
    DGEMM far below Rpeak, each with the diagnosis the evidence supports."""
    flags = flags or report_flags()
    ceiling = repeats.best
    disturbed = "; ".join(disturbance(repeats, interference, flags))
    warnings = []
    if rmax > ceiling:  # and a ceiling that is none says nothing of the BLAS kernel either
        why = disturbed or "none measured: the clock may have changed between the DGEMM repeats and the solves"
        return [f"ceiling not valid: Rmax {rmax:.2f} exceeds the best DGEMM {ceiling:.2f} Gflop/s "
                f"(interference or clock change; {why})"]
    if rmax / ceiling < flags["min_hpl_over_dgemm"]:
        share = f"HPL reaches {rmax / ceiling:.0%} of the DGEMM ceiling (< {flags['min_hpl_over_dgemm']:.0%})"
        warnings.append(f"{share} while the node was disturbed ({disturbed}): interference, re-run" if disturbed
                        else f"{share}: look at the deck (NB, grid), binding or network")
    share = f"DGEMM reaches {ceiling / rpeak:.0%} of Rpeak (< {flags['min_dgemm_over_rpeak']:.0%})"
    if ceiling / rpeak >= flags["min_dgemm_over_rpeak"]:
        return warnings
    seen = sorted(set(kernels_seen))
    if disturbed:
        warnings.append(f"{share} while the node was disturbed ({disturbed}): interference, not the BLAS kernel; re-run")
    elif expected_kernel and seen and any(k.lower() != expected_kernel.lower() for k in seen):
        warnings.append(f"{share} and OpenBLAS ran {', '.join(seen)}, not {expected_kernel}: a wrong BLAS kernel "
                        "(check OPENBLAS_CORETYPE)")
    elif any(blas.fallback_core(k) for k in seen):  # said once, by hpl_outcome's fallback warning
        warnings.append(f"{share}: the fallback kernel OpenBLAS ran")
    elif not seen:
        warnings.append(f"{share} with no interference measured: the BLAS library's kernel (it did not say which "
                        "it ran) or a clock held below nominal (power or thermal capping)")
    else:
        warnings.append(f"{share} with the {', '.join(seen)} kernel as chosen and no interference measured: a clock "
                        "held below nominal (power or thermal capping) or a slow BLAS build")
    return warnings


def dgemm_repeats(output: str) -> DgemmRepeats | None:
    """The embedded xhpl's DGEMM repeats (scripts/xhpl-driver.c: DGEMM_Before_Gflops before HPL's output,
    DGEMM_After_Gflops after it); None when it printed none or a rate that cannot be (0: a rank's
    matrices did not fit)."""
    found: dict[str, tuple[float, ...]] = {}
    for line in output.splitlines():
        key, sep, values = line.partition("=")
        if sep and key in ("DGEMM_Before_Gflops", "DGEMM_After_Gflops") and key not in found:
            try:
                rates = tuple(float(v) for v in values.split()[:_MAX_REPEATS])
            except ValueError:
                return None
            if not rates or not all(math.isfinite(r) and r > 0 for r in rates):
                return None
            found[key] = rates
    if not found:
        return None
    return DgemmRepeats(found.get("DGEMM_Before_Gflops", ()), found.get("DGEMM_After_Gflops", ()))


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
