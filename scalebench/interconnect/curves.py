"""The methods of interconnect studies on microbenchmark curves: n1/2 and the asymptotic bandwidth
(Hockney's model), message rates, the latency surprise, and the ring / ping-pong latency ratio.

Bandwidths are MB/s with MB = 1e6 bytes as the OSU benchmarks print them, so MB/s = bytes/us.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from scalebench.errors import InputError
from scalebench.validation import excerpt, non_negative_number, positive_count, positive_number

Curve = Sequence[tuple[float, float]]  # (message size in bytes, figure), sizes increasing


def _curve(curve: Curve, name: str) -> list[tuple[float, float]]:
    """(size, figure) pairs with strictly increasing non-negative sizes and non-negative figures."""
    if isinstance(curve, (str, bytes)) or not isinstance(curve, Sequence) or not curve:
        raise InputError(f"{name}: needs at least one (size, value) point")
    points: list[tuple[float, float]] = []
    for point in curve:
        if not isinstance(point, Sequence) or len(point) != 2:
            raise InputError(f"{name}: each point must be a (size, value) pair, got {excerpt(point)}")
        size = non_negative_number(point[0], f"{name} size")
        value = non_negative_number(point[1], f"{name}[{point[0]!r}]")
        if points and size <= points[-1][0]:
            raise InputError(f"{name}: sizes must be strictly increasing, got {excerpt(point[0])} "
                             f"after {excerpt(points[-1][0])}")
        points.append((point[0], value))  # the size as given: an int stays an int in reports
    return points



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


def message_rate(size_bytes: int, bandwidth_MBps: float) -> float:
    """Messages/s carried by a bandwidth at one message size (MB = 1e6 bytes, as OSU prints)."""
    size = positive_number(size_bytes, "size_bytes")
    return non_negative_number(bandwidth_MBps, "bandwidth_MBps") * 1e6 / size


def ideal_latency(t0_us: float, b_inf_MBps: float, size: float) -> float:
    """Hockney's model t0 + size/B_inf in us (B_inf in MB/s = bytes/us)."""
    return (non_negative_number(t0_us, "t0_us") + non_negative_number(size, "size")
            / positive_number(b_inf_MBps, "b_inf_MBps"))


def latency_surprise(curve_latency_us: Curve, t0_us: float,
                     b_inf_MBps: float) -> list[tuple[float, float]]:
    """(size, measured/ideal) per measured size: 1 is exactly the ideal model, 2 twice as slow."""
    points = _curve(curve_latency_us, "curve_latency_us")
    t0 = positive_number(t0_us, "t0_us")
    b_inf = positive_number(b_inf_MBps, "b_inf_MBps")
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
    return (positive_number(random_ring_latency_us, "random_ring_latency_us")
            / positive_number(pingpong_latency_us, "pingpong_latency_us"))
