"""Figures of the scaling and interconnect studies: speedups, efficiencies, n1/2, latency surprise,
comparisons of configurations (switches, stacks, MPIs, compilers) against a baseline.

Conventions:
- Curves "by procs" map a process count to one measured figure. Times are lower-is-better; rates
  (Gflop/s, timesteps/s) are higher-is-better and are passed with `higher_is_better=True`, so every
  speedup/efficiency/improvement is "> 1 (or > 0) means better" whatever was measured.
- Ratios are averaged geometrically: the geometric mean is the only mean for which the summary of
  A/B is the reciprocal of the summary of B/A, and a 2x gain and a 2x loss cancel out.
- Bandwidths are MB/s with MB = 1e6 bytes as the OSU benchmarks print them, so MB/s = bytes/us.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Dict, Hashable, Iterable, Mapping, Sequence, Tuple, TypeVar

from scalebench.errors import InputError

K = TypeVar("K", bound=Hashable)  # a configuration: switch, stack, MPI, compiler name...
Curve = Sequence[Tuple[float, float]]  # (message size in bytes, figure), sizes increasing


# --- validation -----------------------------------------------------------------------------------

def _number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InputError(f"{name}: must be a finite number, got {value!r}")
    return float(value)


def _positive(value: object, name: str) -> float:
    number = _number(value, name)
    if number <= 0:
        raise InputError(f"{name}: must be positive, got {value!r}")
    return number


def _non_negative(value: object, name: str) -> float:
    number = _number(value, name)
    if number < 0:
        raise InputError(f"{name}: must not be negative, got {value!r}")
    return number


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise InputError(f"{name}: must be a positive integer process count, got {value!r}")
    return int(value)


def _by_procs(values: Mapping[int, float], name: str) -> dict[int, float]:
    """The curve sorted by process count, with every count and figure checked."""
    if not isinstance(values, Mapping) or not values:
        raise InputError(f"{name}: needs at least one (process count, value) entry")
    checked = {_count(p, f"{name} process count"): _positive(v, f"{name}[{p!r}]")
               for p, v in values.items()}
    return dict(sorted(checked.items()))


def _baseline(values: Mapping[int, float], baseline: int | None, name: str) -> int:
    if baseline is None:
        return min(values)
    p0 = _count(baseline, "baseline")
    if p0 not in values:
        raise InputError(f"baseline: {baseline!r} is not a process count of {name} ({sorted(values)})")
    return p0


def _curve(curve: Curve, name: str) -> list[tuple[float, float]]:
    """(size, figure) pairs with strictly increasing non-negative sizes and non-negative figures."""
    if isinstance(curve, (str, bytes)) or not isinstance(curve, Sequence) or not curve:
        raise InputError(f"{name}: needs at least one (size, value) point")
    points: list[tuple[float, float]] = []
    for point in curve:
        if not isinstance(point, Sequence) or len(point) != 2:
            raise InputError(f"{name}: each point must be a (size, value) pair, got {point!r}")
        size = _non_negative(point[0], f"{name} size")
        value = _non_negative(point[1], f"{name}[{point[0]!r}]")
        if points and size <= points[-1][0]:
            raise InputError(f"{name}: sizes must be strictly increasing, got {point[0]!r} "
                             f"after {points[-1][0]!r}")
        points.append((point[0], value))  # the size as given: an int stays an int in reports
    return points


def _config_times(times: Mapping[K, Mapping], name: str) -> None:
    if not isinstance(times, Mapping) or not times:
        raise InputError(f"{name}: needs at least one configuration")
    for config, by_key in times.items():
        if not isinstance(by_key, Mapping):
            raise InputError(f"{name}[{config!r}]: must map keys to times, got {type(by_key).__name__}")
        for key, value in by_key.items():
            _positive(value, f"{name}[{config!r}][{key!r}]")


def _geomean(values: Iterable[float]) -> float:
    logs = [math.log(v) for v in values]
    return math.exp(math.fsum(logs) / len(logs))


# --- scaling --------------------------------------------------------------------------------------

def speedup(values_by_procs: Mapping[int, float], baseline: int | None = None, *,
            higher_is_better: bool = False) -> dict[int, float]:
    """S(p) = T(p0)/T(p) for times, R(p)/R(p0) for rates; p0 = smallest count unless given."""
    values = _by_procs(values_by_procs, "values_by_procs")
    p0 = _baseline(values, baseline, "values_by_procs")
    ref = values[p0]
    return {p: (v / ref if higher_is_better else ref / v) for p, v in values.items()}


def parallel_efficiency(values_by_procs: Mapping[int, float], baseline: int | None = None, *,
                        higher_is_better: bool = False) -> dict[int, float]:
    """E(p) = S(p) * p0 / p: 1 is ideal strong scaling relative to the baseline run."""
    values = _by_procs(values_by_procs, "values_by_procs")
    p0 = _baseline(values, baseline, "values_by_procs")
    speedups = speedup(values, p0, higher_is_better=higher_is_better)
    return {p: s * p0 / p for p, s in speedups.items()}


def karp_flatt(speedup: float, p: int, p0: int = 1) -> float | None:
    """Experimentally determined serial fraction e = (1/S - 1/q)/(1 - 1/q), q = p/p0.

    With a baseline p0 > 1, S is the speedup relative to p0 and e the serial fraction of the p0
    run (Amdahl with the p0 run as unit). None at p == p0, where the formula is 0/0. A negative e
    means superlinear speedup; an e growing with p means overhead rather than a serial part.
    """
    s = _positive(speedup, "speedup")
    procs = _count(p, "p")
    base = _count(p0, "p0")
    if procs == base:
        return None
    q = procs / base
    return (1 / s - 1 / q) / (1 - 1 / q)


def weak_scaling_efficiency(values_by_procs: Mapping[int, float], baseline: int | None = None, *,
                            higher_is_better: bool = False) -> dict[int, float]:
    """Work per process held constant: T(p0)/T(p) for times, R(p)/(R(p0)*p/p0) for total rates."""
    values = _by_procs(values_by_procs, "values_by_procs")
    p0 = _baseline(values, baseline, "values_by_procs")
    ref = values[p0]
    if higher_is_better:
        return {p: v / (ref * p / p0) for p, v in values.items()}
    return {p: ref / v for p, v in values.items()}


def speedup_peak(speedups: Mapping[int, float]) -> tuple[int, float]:
    """(p_peak, S_peak): the highest speedup measured, even inside a curve that later degrades;
    ties go to the smallest p, the cheaper way to get that speedup."""
    curve = _by_procs(speedups, "speedups")
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
    base = _by_procs(baseline_curve, "baseline_curve")
    other = _by_procs(other_curve, "other_curve")
    procs = _count(p, "p")
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
    counts: tuple[int, ...]  # counts <= p_peak averaged (measured for both stacks)
    missing: tuple[int, ...]  # baseline counts <= p_peak the other stack lacks (not averaged)


def stack_improvement(baseline_curve: Mapping[int, float], other_curve: Mapping[int, float], *,
                      higher_is_better: bool = False) -> StackImprovement:
    """The study figures: improvement at the baseline's speedup peak and averaged up to it.

    The average is the geometric mean of the per-count ratios T_base/T_other minus 1, because
    ratios are averaged geometrically (a 2x gain at one count and a 2x loss at another give 0).
    The other stack must have been measured at p_peak; other missing counts are skipped and listed.
    """
    base = _by_procs(baseline_curve, "baseline_curve")
    other = _by_procs(other_curve, "other_curve")
    p_peak, _ = speedup_peak(speedup(base, higher_is_better=higher_is_better))
    at_peak = improvement_at(base, other, p_peak, higher_is_better=higher_is_better)
    counts = tuple(p for p in base if p <= p_peak and p in other)
    missing = tuple(p for p in base if p <= p_peak and p not in other)
    ratios = [(other[p] / base[p]) if higher_is_better else (base[p] / other[p]) for p in counts]
    return StackImprovement(p_peak, at_peak, _geomean(ratios) - 1, counts, missing)


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
    base = _by_procs(baseline_speedups, "baseline_speedups")
    other = list(_by_procs(other_speedups, "other_speedups").items())
    procs = _count(p, "p")
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


# --- interconnect microbenchmarks -----------------------------------------------------------------

@dataclass(frozen=True)
class HalfPower:
    n_half: float | None  # bytes; None when the smallest size already reaches half the peak
    peak_bandwidth: float  # MB/s, the maximum over the curve
    peak_size: float  # bytes where the peak was measured
    at_or_below_smallest: bool  # True: n1/2 <= the smallest size measured (n_half is None)
    method: str  # "least-squares", "bracket" (two-point fallback) or "none"


def _line_fit(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line through >= 2 points of distinct x."""
    n = len(points)
    mean_x = math.fsum(x for x, _ in points) / n
    mean_y = math.fsum(y for _, y in points) / n
    sxx = math.fsum((x - mean_x) ** 2 for x, _ in points)
    sxy = math.fsum((x - mean_x) * (y - mean_y) for x, y in points)
    slope = sxy / sxx
    return mean_y - slope * mean_x, slope


def half_power_point(curve: Curve) -> HalfPower:
    """n1/2: the message size where half the peak bandwidth is first reached.

    The crossing lies between the last point below peak/2 and the first point at or above it. A
    least-squares line (bandwidth linear in bytes) is fitted through the two measured points just
    below and the two just above (fewer where the curve ends) and solved for peak/2. If that line
    does not put the answer inside the bracketing pair (a kink in the curve can tilt it), the
    straight line between the bracketing pair is used instead (method "bracket"): the measurements
    themselves say n1/2 lies there. If the smallest size already reaches peak/2, n_half is None
    and at_or_below_smallest is True.
    """
    points = _curve(curve, "curve")
    peak_size, peak = max(points, key=lambda point: point[1])
    if peak <= 0:
        raise InputError("curve: bandwidth is zero everywhere, no peak to halve")
    half = peak / 2
    k = next(i for i, (_, bw) in enumerate(points) if bw >= half)
    if k == 0:
        return HalfPower(None, peak, peak_size, at_or_below_smallest=True, method="none")
    (lo, bw_lo), (hi, bw_hi) = points[k - 1], points[k]
    intercept, slope = _line_fit(points[max(k - 2, 0):k + 2])
    tolerance = 1e-9 * (hi - lo)
    if slope > 0:
        n_half = (half - intercept) / slope
        if lo - tolerance <= n_half <= hi + tolerance:
            return HalfPower(min(max(n_half, lo), hi), peak, peak_size,
                             at_or_below_smallest=False, method="least-squares")
    n_half = lo + (half - bw_lo) * (hi - lo) / (bw_hi - bw_lo)
    return HalfPower(n_half, peak, peak_size, at_or_below_smallest=False, method="bracket")


def multi_pair_summary(curves_by_pairs: Mapping[int, Curve]) -> dict[int, HalfPower]:
    """Per pair count (1, 2, 4, ...), peak aggregate bandwidth and n1/2 of its aggregate curve
    (osu_mbw_mr / osu_bibw style: the bandwidth summed over all pairs)."""
    if not isinstance(curves_by_pairs, Mapping) or not curves_by_pairs:
        raise InputError("curves_by_pairs: needs at least one pair count")
    summary = {}
    for pairs in sorted(curves_by_pairs, key=lambda n: _count(n, "curves_by_pairs pair count")):
        try:
            summary[int(pairs)] = half_power_point(curves_by_pairs[pairs])
        except InputError as error:
            raise InputError(f"curves_by_pairs[{pairs!r}]: {error}") from None
    return summary


def message_rate(size_bytes: int, bandwidth_MBps: float) -> float:
    """Messages/s carried by a bandwidth at one message size (MB = 1e6 bytes, as OSU prints)."""
    size = _positive(size_bytes, "size_bytes")
    return _non_negative(bandwidth_MBps, "bandwidth_MBps") * 1e6 / size


def osu_message_rates(rows: Iterable[Sequence[float]]) -> dict[int, float]:
    """{size: Messages/s} from osu_mbw_mr rows (Size, MB/s, Messages/s): its own rate column is
    taken as printed, not recomputed from the rounded MB/s."""
    rates: dict[int, float] = {}
    for row in rows:
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) or len(row) != 3:
            raise InputError(f"rows: each row must be (size, MB/s, Messages/s), got {row!r}")
        size = _non_negative(row[0], "rows size")
        if size != int(size):
            raise InputError(f"rows: size must be a whole number of bytes, got {row[0]!r}")
        if int(size) in rates:
            raise InputError(f"rows: size {int(size)} appears twice")
        _non_negative(row[1], f"rows[{int(size)}] MB/s")
        rates[int(size)] = _non_negative(row[2], f"rows[{int(size)}] Messages/s")
    if not rates:
        raise InputError("rows: needs at least one row")
    return rates


def ideal_latency(t0_us: float, b_inf_MBps: float, size: float) -> float:
    """Hockney's model t0 + size/B_inf in us (B_inf in MB/s = bytes/us)."""
    return (_non_negative(t0_us, "t0_us") + _non_negative(size, "size")
            / _positive(b_inf_MBps, "b_inf_MBps"))


def latency_surprise(curve_latency_us: Curve, t0_us: float,
                     b_inf_MBps: float) -> list[tuple[float, float]]:
    """(size, measured/ideal) per measured size: 1 is exactly the ideal model, 2 twice as slow."""
    points = _curve(curve_latency_us, "curve_latency_us")
    t0 = _positive(t0_us, "t0_us")
    b_inf = _positive(b_inf_MBps, "b_inf_MBps")
    return [(size, latency / ideal_latency(t0, b_inf, size)) for size, latency in points]


def surprise_area(curve_latency_us: Curve, t0_us: float, b_inf_MBps: float) -> float:
    """The area of (measured/ideal - 1) over log2(size), trapezoidal, as one number.

    0 means the ideal model exactly (or excesses and shortfalls cancelling: the area is signed).
    Each unit is one doubling of message size spent 100% above the model; divide by the log2 span
    for the mean excess. Size 0 (OSU's first row) has no log2 and is left out of the area.
    """
    surprise = [(s, r) for s, r in latency_surprise(curve_latency_us, t0_us, b_inf_MBps) if s > 0]
    if len(surprise) < 2:
        raise InputError("curve_latency_us: needs at least two sizes above 0 bytes for an area")
    return math.fsum((math.log2(s2) - math.log2(s1)) * ((r1 - 1) + (r2 - 1)) / 2
                     for (s1, r1), (s2, r2) in zip(surprise, surprise[1:]))


def ring_vs_pingpong_ratio(random_ring_latency_us: float, pingpong_latency_us: float) -> float:
    """HPCC random-ring latency over ping-pong latency: how much worse latency gets under load."""
    return (_positive(random_ring_latency_us, "random_ring_latency_us")
            / _positive(pingpong_latency_us, "pingpong_latency_us"))


# --- comparisons across configurations ------------------------------------------------------------

def normalise_to_baseline(times: Mapping[K, Mapping[int, float]], baseline: K,
                          min_size: int = 4) -> dict[K, dict[int, float]]:
    """{config: {size: T_baseline/T_config}} (> 1 means faster than the baseline).

    Only sizes >= min_size (below it OSU latencies sit at the timer's resolution) and present for
    both the configuration and the baseline; the baseline itself is kept (all ratios 1).
    """
    _config_times(times, "times")
    if baseline not in times:
        raise InputError(f"baseline: {baseline!r} is not a configuration of times ({list(times)})")
    limit = _non_negative(min_size, "min_size")
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
    values = [_positive(r, name) for r in ratios]
    if not values:
        raise InputError(f"{name}: no ratios to summarise")
    return Summary(min(values), _geomean(values), max(values), len(values))


def summarise(ratios: Mapping[K, Mapping[int, float]]) -> dict[K, Summary]:
    """(min, geometric mean, max) of each configuration's ratios; never their arithmetic mean,
    which would call a 2x gain plus a 2x loss a 25% gain."""
    if not isinstance(ratios, Mapping) or not ratios:
        raise InputError("ratios: needs at least one configuration")
    return {config: _summary(by_size.values(), f"ratios[{config!r}]")
            for config, by_size in ratios.items()}


def summarise_pooled(ratios_by_procs: Mapping[int, Mapping[int, float]]) -> Summary:
    """One (min, geometric mean, max) over every size at every process count, pooled."""
    if not isinstance(ratios_by_procs, Mapping) or not ratios_by_procs:
        raise InputError("ratios_by_procs: needs at least one process count")
    return _summary((r for by_size in ratios_by_procs.values() for r in by_size.values()),
                    "ratios_by_procs")


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
    limit = _number(factor, "factor")
    if limit < 1:
        raise InputError(f"factor: must be at least 1, got {factor!r}")
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
    ratios: Dict[Hashable, float]  # config -> baseline_total / config_total (> 1: faster)
    totals: Dict[Hashable, float]  # config -> summed time over the common keys
    keys: Tuple[Hashable, ...]  # the (function, procs) keys summed: those every config has
    missing: Dict[Hashable, Tuple[Hashable, ...]]  # config -> keys others have and it lacks


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
        raise InputError(f"baseline: {baseline!r} is not a configuration of times ({list(times)})")
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


__all__ = [
    "AggregateComparison", "HalfPower", "HealthWarning", "InterconnectValue", "StackImprovement",
    "Summary", "aggregate_then_normalise", "health_warnings", "half_power_point", "ideal_latency",
    "improvement_at", "interconnect_value", "karp_flatt", "latency_surprise", "message_rate",
    "multi_pair_summary", "normalise_to_baseline", "osu_message_rates", "parallel_efficiency",
    "ring_vs_pingpong_ratio", "speedup", "speedup_peak", "stack_improvement", "summarise",
    "summarise_pooled", "surprise_area", "weak_scaling_efficiency",
]


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
    curve = _by_procs(values_by_procs, "values_by_procs")
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
