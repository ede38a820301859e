"""Configurations side by side (switches, stacks, MPIs, compilers): figures normalised to a baseline,
summarised with geometric means, and health warnings for curves that look wrong.

Ratios are averaged geometrically: the geometric mean is the only mean for which the summary of A/B
is the reciprocal of the summary of B/A, and a 2x gain and a 2x loss cancel out.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, TypeVar

from scalebench.analysis.scaling import geomean
from scalebench.errors import InputError
from scalebench.validation import excerpt, finite_number, non_negative_number, positive_number

K = TypeVar("K", bound=Hashable)  # a configuration: switch, stack, MPI, compiler name...


def _config_times(times: Mapping[K, Mapping], name: str) -> None:
    if not isinstance(times, Mapping) or not times:
        raise InputError(f"{name}: needs at least one configuration")
    for config, by_key in times.items():
        if not isinstance(by_key, Mapping):
            raise InputError(f"{name}[{excerpt(config)}]: must map keys to times, got {type(by_key).__name__}")
        for key, value in by_key.items():
            positive_number(value, f"{name}[{config!r}][{key!r}]")



def normalise_to_baseline(times: Mapping[K, Mapping[int, float]], baseline: K,
                          min_size: int = 4) -> dict[K, dict[int, float]]:
    """{config: {size: T_baseline/T_config}} (> 1 means faster than the baseline).

    Only sizes >= min_size (below it OSU latencies sit at the timer's resolution) and present for
    both the configuration and the baseline; the baseline itself is kept (all ratios 1).
    """
    _config_times(times, "times")
    if baseline not in times:
        raise InputError(f"baseline: {excerpt(baseline)} is not a configuration of times ({list(times)})")
    limit = non_negative_number(min_size, "min_size")
    reference = times[baseline]
    return {config: {size: reference[size] / by_size[size] for size in sorted(by_size)
                     if size in reference and size >= limit}
            for config, by_size in times.items()}


@dataclass(frozen=True)
class Summary:
    minimum: float
    geomean: float
    maximum: float
    count: int  # ratios summarised


def _summary(ratios: Iterable[float], name: str) -> Summary:
    values = [positive_number(r, name) for r in ratios]
    if not values:
        raise InputError(f"{name}: no ratios to summarise")
    return Summary(min(values), geomean(values), max(values), len(values))


def summarise(ratios: Mapping[K, Mapping[int, float]]) -> dict[K, Summary]:
    """(min, geometric mean, max) of each configuration's ratios; never their arithmetic mean,
    which would call a 2x gain plus a 2x loss a 25% gain."""
    if not isinstance(ratios, Mapping) or not ratios:
        raise InputError("ratios: needs at least one configuration")
    return {config: _summary(by_size.values(), f"ratios[{config!r}]")
            for config, by_size in ratios.items()}


@dataclass(frozen=True)
class HealthWarning:
    config: Hashable
    size: int
    time: float
    best_time: float  # the minimum over all configurations at this size
    best_config: Hashable
    times_best: float  # time / best_time, above the factor


def _in_progression(size: object) -> bool:
    """0 and the powers of two: OSU's default size progression."""
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        return False
    return size == 0 or (size > 0 and size & (size - 1) == 0)


def health_warnings(times: Mapping[K, Mapping[int, float]], factor: float = 10.0) -> list[HealthWarning]:
    """(config, size) pairs more than `factor` times slower than the best configuration there.

    Sizes are compared only on OSU's default progression, 0 and the powers of two: other sizes
    (custom -m lists) are not measured by every configuration. Ordered by configuration, then size.
    """
    _config_times(times, "times")
    limit = finite_number(factor, "factor")
    if limit < 1:
        raise InputError(f"factor: must be at least 1, got {excerpt(factor)}")
    best: dict[int, tuple[float, Hashable]] = {}
    for config, by_size in times.items():
        for size, time in by_size.items():
            if _in_progression(size) and (size not in best or time < best[size][0]):
                best[size] = (time, config)
    return [HealthWarning(config, size, time, best[size][0], best[size][1], time / best[size][0])
            for config, by_size in times.items() for size, time in sorted(by_size.items())
            if size in best and time > limit * best[size][0]]


@dataclass(frozen=True)
class AggregateComparison:
    ratios: dict[Hashable, float]  # config -> baseline_total / config_total (> 1: faster)
    totals: dict[Hashable, float]  # config -> summed time over the common keys
    keys: tuple[Hashable, ...]  # the (function, procs) keys summed: those every config has
    missing: dict[Hashable, tuple[Hashable, ...]]  # config -> keys others have and it lacks


def aggregate_then_normalise(times: Mapping[K, Mapping[Hashable, float]],
                             baseline: K) -> AggregateComparison:
    """Sum run times over (function, procs) first, then normalise the totals to the baseline.

    Summing first weights each run by its time, as a user's allocation does; normalising each run
    first would let a 1-second function count as much as a 1-hour one. Only keys every
    configuration has are summed, else a configuration lacking a slow run would look faster;
    the keys each configuration lacks are listed.
    """
    _config_times(times, "times")
    if baseline not in times:
        raise InputError(f"baseline: {excerpt(baseline)} is not a configuration of times ({list(times)})")
    every: list[Hashable] = []
    for by_key in times.values():
        every.extend(key for key in by_key if key not in every)
    keys = tuple(key for key in every if all(key in by_key for by_key in times.values()))
    if not keys:
        raise InputError("times: no (function, procs) key is measured for every configuration")
    totals = {config: math.fsum(by_key[key] for key in keys) for config, by_key in times.items()}
    return AggregateComparison(
        ratios={config: totals[baseline] / total for config, total in totals.items()},
        totals=totals,
        keys=keys,
        missing={config: tuple(key for key in every if key not in by_key)
                 for config, by_key in times.items()},
    )

