"""Scaling figures of a series of runs: speedup, parallel and weak-scaling efficiency, Karp-Flatt
serial fraction, the speedup peak, and how one stack improves on a baseline (the study figures).

Curves "by procs" map a process count to one measured figure. Times are lower-is-better; rates
(Gflop/s, timesteps/s) are higher-is-better and are passed with `higher_is_better=True`, so every
speedup, efficiency and improvement is "> 1 (or > 0) means better" whatever was measured.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

from scalebench.errors import InputError
from scalebench.validation import excerpt, positive_count, positive_number


def by_procs(values: Mapping[int, float], name: str) -> dict[int, float]:
    """The curve sorted by process count, with every count and figure checked."""
    if not isinstance(values, Mapping) or not values:
        raise InputError(f"{name}: needs at least one (process count, value) entry")
    checked = {positive_count(p, f"{name} process count"): positive_number(v, f"{name}[{p!r}]")
               for p, v in values.items()}
    return dict(sorted(checked.items()))


def _baseline(values: Mapping[int, float], baseline: int | None, name: str) -> int:
    if baseline is None:
        return min(values)
    p0 = positive_count(baseline, "baseline")
    if p0 not in values:
        raise InputError(f"baseline: {excerpt(baseline)} is not a process count of {name} ({sorted(values)})")
    return p0


def geomean(values: Iterable[float]) -> float:
    logs = [math.log(v) for v in values]
    return math.exp(math.fsum(logs) / len(logs))



def speedup(values_by_procs: Mapping[int, float], baseline: int | None = None, *,
            higher_is_better: bool = False) -> dict[int, float]:
    """S(p) = T(p0)/T(p) for times, R(p)/R(p0) for rates; p0 = smallest count unless given."""
    values = by_procs(values_by_procs, "values_by_procs")
    p0 = _baseline(values, baseline, "values_by_procs")
    ref = values[p0]
    return {p: (v / ref if higher_is_better else ref / v) for p, v in values.items()}


def parallel_efficiency(values_by_procs: Mapping[int, float], baseline: int | None = None, *,
                        higher_is_better: bool = False) -> dict[int, float]:
    """E(p) = S(p) * p0 / p: 1 is ideal strong scaling relative to the baseline run."""
    values = by_procs(values_by_procs, "values_by_procs")
    p0 = _baseline(values, baseline, "values_by_procs")
    speedups = speedup(values, p0, higher_is_better=higher_is_better)
    return {p: s * p0 / p for p, s in speedups.items()}


def karp_flatt(speedup: float, p: int, p0: int = 1) -> float | None:
    """Experimentally determined serial fraction e = (1/S - 1/q)/(1 - 1/q), q = p/p0.

    With a baseline p0 > 1, S is the speedup relative to p0 and e the serial fraction of the p0
    run (Amdahl with the p0 run as unit). None at p == p0, where the formula is 0/0. A negative e
    means superlinear speedup; an e growing with p means overhead rather than a serial part.
    """
    s = positive_number(speedup, "speedup")
    procs = positive_count(p, "p")
    base = positive_count(p0, "p0")
    if procs == base:
        return None
    q = procs / base
    return (1 / s - 1 / q) / (1 - 1 / q)


def weak_scaling_efficiency(values_by_procs: Mapping[int, float], baseline: int | None = None, *,
                            higher_is_better: bool = False) -> dict[int, float]:
    """Work per process held constant: T(p0)/T(p) for times, R(p)/(R(p0)*p/p0) for total rates."""
    values = by_procs(values_by_procs, "values_by_procs")
    p0 = _baseline(values, baseline, "values_by_procs")
    ref = values[p0]
    if higher_is_better:
        return {p: v / (ref * p / p0) for p, v in values.items()}
    return {p: ref / v for p, v in values.items()}


def speedup_peak(speedups: Mapping[int, float]) -> tuple[int, float]:
    """(p_peak, S_peak): the highest speedup measured, even inside a curve that later degrades;
    ties go to the smallest p, the cheaper way to get that speedup."""
    curve = by_procs(speedups, "speedups")
    best = next(iter(curve))
    for p, s in curve.items():
        if s > curve[best]:
            best = p
    return best, curve[best]


def improvement_at(baseline_curve: Mapping[int, float], other_curve: Mapping[int, float], p: int,
                   *, higher_is_better: bool = False) -> float:
    """Improvement of the other stack at p: T_base(p)/T_other(p) - 1 (R_other/R_base - 1 for rates).

    0.25 means the other stack is 25% faster, -0.2 slower. Defined on the measured figures, not on
    speedups: each stack's speedup is relative to its own T(p0), so their ratio hides a faster p0.
    """
    base = by_procs(baseline_curve, "baseline_curve")
    other = by_procs(other_curve, "other_curve")
    procs = positive_count(p, "p")
    for name, curve in (("baseline_curve", base), ("other_curve", other)):
        if procs not in curve:
            raise InputError(f"p: {procs} is not a process count of {name} ({sorted(curve)})")
    ratio = other[procs] / base[procs] if higher_is_better else base[procs] / other[procs]
    return ratio - 1


@dataclass(frozen=True)
class StackImprovement:
    p_peak: int  # process count where the baseline's speedup peaks
    at_peak: float  # improvement at p_peak (0.25 = 25% faster)
    mean_to_peak: float  # geometric mean of the ratios at counts <= p_peak, minus 1
    average_to_peak: float  # the seed study's "Average %": arithmetic mean of the improvements at those counts
    counts: tuple[int, ...]  # counts <= p_peak averaged (measured for both stacks)
    missing: tuple[int, ...]  # baseline counts <= p_peak the other stack lacks (not averaged)


def stack_improvement(baseline_curve: Mapping[int, float], other_curve: Mapping[int, float], *,
                      higher_is_better: bool = False) -> StackImprovement:
    """The study figures: improvement at the baseline's speedup peak and averaged up to it.

    The average is the geometric mean of the per-count ratios T_base/T_other minus 1, because
    ratios are averaged geometrically (a 2x gain at one count and a 2x loss at another give 0).
    average_to_peak is the arithmetic mean of the per-count improvements, as the seed study's
    "Average %" columns are computed: comparable with its tables, biased upward by large gains.
    The other stack must have been measured at p_peak; other missing counts are skipped and listed.
    """
    base = by_procs(baseline_curve, "baseline_curve")
    other = by_procs(other_curve, "other_curve")
    p_peak, _ = speedup_peak(speedup(base, higher_is_better=higher_is_better))
    at_peak = improvement_at(base, other, p_peak, higher_is_better=higher_is_better)
    counts = tuple(p for p in base if p <= p_peak and p in other)
    missing = tuple(p for p in base if p <= p_peak and p not in other)
    ratios = [(other[p] / base[p]) if higher_is_better else (base[p] / other[p]) for p in counts]
    return StackImprovement(p_peak, at_peak, geomean(ratios) - 1, sum(ratios) / len(ratios) - 1, counts, missing)


@dataclass(frozen=True)
class InterconnectValue:
    p_other: float  # processes the other stack needs for the target speedup (interpolated)
    fewer_procs: float  # p - p_other; negative when the other stack needs more
    upper_bound: bool  # other already beats the target at its smallest count: p_other is an upper bound


def interconnect_value(baseline_speedups: Mapping[int, float], other_speedups: Mapping[int, float],
                       p: int) -> InterconnectValue | None:
    """How many fewer processes the other stack needs to reach the speedup the baseline has at p.

    Linear interpolation between the two measured counts of the other curve where it first rises
    through the target (a later crossing after a dip is ignored). None if it never reaches it.
    """
    base = by_procs(baseline_speedups, "baseline_speedups")
    other = list(by_procs(other_speedups, "other_speedups").items())
    procs = positive_count(p, "p")
    if procs not in base:
        raise InputError(f"p: {procs} is not a process count of baseline_speedups ({sorted(base)})")
    target = base[procs]
    p_first, s_first = other[0]
    if s_first >= target:
        return InterconnectValue(float(p_first), procs - p_first, upper_bound=s_first > target)
    for (p_lo, s_lo), (p_hi, s_hi) in zip(other, other[1:]):
        if s_lo < target <= s_hi:
            p_other = p_lo + (target - s_lo) * (p_hi - p_lo) / (s_hi - s_lo)
            return InterconnectValue(p_other, procs - p_other, upper_bound=False)
    return None


# --- scaling figures of a series of runs (what a scaling check reports) ----------------------------

@dataclass(frozen=True)
class ScalingFigure:
    name: str  # e.g. "speedup_p4"
    value: float
    unit: str


def scaling_figures(values_by_procs: Mapping[int, float], *, higher_is_better: bool,
                    weak: bool) -> list[ScalingFigure]:
    """Per process count above the smallest: speedup, parallel efficiency and the Karp-Flatt serial
    fraction (strong scaling), or weak-scaling efficiency (weak scaling: work per process fixed)."""
    curve = by_procs(values_by_procs, "values_by_procs")
    if len(curve) < 2:
        raise InputError("values_by_procs: needs at least two process counts to scale")
    p0 = min(curve)
    figures = []
    if weak:
        for p, eff in weak_scaling_efficiency(curve, higher_is_better=higher_is_better).items():
            if p != p0:
                figures.append(ScalingFigure(f"weak_efficiency_p{p}", 100 * eff, "%"))
        return figures
    speedups = speedup(curve, higher_is_better=higher_is_better)
    efficiencies = parallel_efficiency(curve, higher_is_better=higher_is_better)
    for p in curve:
        if p == p0:
            continue
        figures.append(ScalingFigure(f"speedup_p{p}", speedups[p], "x"))
        figures.append(ScalingFigure(f"efficiency_p{p}", 100 * efficiencies[p], "%"))
        serial = karp_flatt(speedups[p], p, p0)
        if serial is not None:
            figures.append(ScalingFigure(f"karp_flatt_p{p}", serial, "serial fraction"))
    return figures
