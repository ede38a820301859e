"""What HPL's scalability model (scalebench.hpl.model) expects of measured HPL runs, calibrated on the
same results: per system, partition and stack, the rank rate from its smallest HPL run, the links
from its ping-pongs (NetPIPE, OSU, hpcc) and the load from hpcc's rings or its fabric class.

The report puts the expected efficiency beside the measured one and flags a configuration more than
`below_model_margin` (site_configs/report_flags.yaml) below it; `scalebench predict --from` takes
the same calibration to the scales of a plan.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

import polars as pl

from scalebench.registry import lookup, split_sized
from scalebench.errors import InputError
from scalebench.hpl import model
from scalebench.hpl.model import Calibration, Link, RankRate
from scalebench.reporting.records import Case
from scalebench.reporting.table import Table
from scalebench.validation import is_number

BELOW_MODEL = "below model: look at the fabric or the nodes"
# The checks whose figures calibrate the links: ping-pongs (NetPIPE, OSU) and hpcc's pairs and rings.
LINK_CHECKS = ("NetPIPECheck", "OSULatencyCheck", "OSUBandwidthCheck", "HPCCNetworkCheck")


@dataclass(frozen=True)
class Point:
    """One measured HPL configuration (the medians of its runs)."""

    where: str  # system:partition
    stack: str
    nodes: int
    ranks: int
    threads_per_rank: int
    n: int
    nb: int
    p: int
    q: int
    rmax: float
    rpeak: float
    dgemm: float | None = None

    @property
    def cores(self) -> int:
        return self.ranks * self.threads_per_rank

    def case(self) -> model.Case:
        return model.Case(self.n, self.nb, self.p, self.q, self.nodes, math.ceil(self.ranks / self.nodes), self.rpeak)


@dataclass(frozen=True)
class Expected:
    efficiency: float | None  # percent; None: no expectation (see note)
    status: str  # calibration | ok | below | none
    note: str = ""

    @property
    def flag(self) -> str:
        return BELOW_MODEL if self.status == "below" else ""


# --- links from the microbenchmarks ---------------------------------------------------------------

def _hpcc_pingpong(cases: Sequence[Case], placement: str) -> dict[str, float]:
    """hpcc's mean ping-pong over rank pairs, where all its pairs are of `placement`: one rank per
    node between nodes, one node within."""
    out: dict[str, float] = {}
    for case in cases:
        if case.benchmark != "HPCCNetworkCheck" or case.result != "pass" or not case.num_nodes or not case.num_tasks:
            continue
        single = (case.num_nodes > 1 and case.num_tasks == case.num_nodes) if placement == "inter_node" \
            else case.num_nodes == 1
        latency, bandwidth = case.figure("pingpong_latency_avg"), case.figure("pingpong_bandwidth_avg")
        if single and latency is not None and bandwidth is not None:
            out = {"latency_us": min(latency, out.get("latency_us", math.inf)),
                   "bandwidth_mbs": max(1000 * bandwidth, out.get("bandwidth_mbs", 0.0))}
    return out


def ring_points(cases: Sequence[Case]) -> list[tuple[int, float]]:
    """(nodes, bytes/s each node carried) of hpcc's randomly ordered rings: every rank sends to and
    receives from random neighbours at once, the network under all-node load."""
    points = []
    for case in cases:
        bandwidth = case.figure("random_ring_bandwidth") if case.benchmark == "HPCCNetworkCheck" else None
        if case.result == "pass" and bandwidth and case.num_nodes and case.num_tasks and case.num_nodes >= 2:
            points.append((case.num_nodes, bandwidth * 1e9 * math.ceil(case.num_tasks / case.num_nodes)))
    return points


def loaded(link: Link, bandwidths: Sequence[tuple[int, float]], fabric: str | None,
           what: str = "hpcc's random rings") -> Link:
    """The link under all-node load: its load exponent fitted to loaded bandwidths at several node
    counts, else the fabric class's default."""
    fitted = model.fit_load_exponent(bandwidths, link.bandwidth_bps)
    if fitted is not None:
        return model.with_load(link, fitted, f"load exponent {fitted:.3g} fitted to {what}")
    return model.with_load(link, *model.default_load(fabric))


def with_exchange(link: Link, exchange_bps: float | None, what: str) -> Link:
    """The link with the bandwidth each direction keeps while two nodes send to each other at once,
    `exchange_bps` (bytes/s; hpcc's ring on two one-rank nodes is such an exchange), as a part of the
    pair's; above the pair's is noise (full duplex). None or no rate: the link as it is."""
    if exchange_bps is None or not is_number(exchange_bps) or not exchange_bps > 0 or link.bandwidth_bps == math.inf:
        return link
    share = min(1.0, exchange_bps / link.bandwidth_bps)
    return replace(link, exchange_share=share, source=f"{link.source}; exchange share {share:.2f} from {what}")


def exchange_ring(cases: Sequence[Case]) -> float | None:
    """Bytes/s of the best hpcc randomly ordered ring run on exactly 2 nodes with one rank each: both
    neighbours of a rank are the other node, so it sends to it while receiving from it."""
    found = [case.figure("random_ring_bandwidth") for case in cases if case.benchmark == "HPCCNetworkCheck"
             and case.result == "pass" and case.num_nodes == 2 and case.num_tasks == 2]
    return max((value * 1e9 for value in found if value), default=None)


_PAIR_BANDWIDTH = ("NetPIPECheck", "OSUBandwidthCheck")


def _curve(case: Case, figure: str) -> dict[int, float]:
    sized = [(split_sized(lookup(case.benchmark), name), value) for name, (value, _) in case.figures.items()]
    return {found[1]: value for found, value in sized if found and found[0] == figure and value}


def _slope_bandwidth(times_us: Mapping[int, float]) -> float | None:
    """MB/s from the one-way time's growth over the largest messages (an eighth of the largest and up):
    Hockney's r-infinity, 1 / slope. A fixed cost (latency, a shaper's burst sent at full speed)
    shifts the times, not their slope. None without two such sizes or with a slope that is no rate."""
    largest = max(times_us, default=0)
    points = [(size, t) for size, t in times_us.items() if size >= largest / 8]
    if len(points) < 2:
        return None
    mean_s = sum(size for size, _ in points) / len(points)
    mean_t = sum(t for _, t in points) / len(points)
    spread = sum((size - mean_s) ** 2 for size, _ in points)
    slope = sum((size - mean_s) * (t - mean_t) for size, t in points) / spread if spread else 0.0
    return 1 / slope if slope > 0 else None  # bytes per us = MB/s


def asymptotic_bandwidth(cases: Sequence[Case], placement: str) -> float | None:
    """MB/s of HPL's large messages from the best passed NetPIPE or OSU curve at `placement`: the slope
    of NetPIPE's one-way time over its largest messages, else the bandwidth at the largest message. A
    curve's peak can sit at a mid size instead (a shaper lets a burst through at full speed, a cache
    helps a mid-size copy), which HPL's messages do not see."""
    best = None
    for case in cases:
        if case.benchmark not in _PAIR_BANDWIDTH or case.result != "pass" or case.params.get("placement") != placement:
            continue
        bandwidth = _curve(case, "bandwidth")
        rate = _slope_bandwidth(_curve(case, "latency")) if case.benchmark == "NetPIPECheck" else None
        if rate is None and bandwidth:
            rate = bandwidth[max(bandwidth)]
        if rate is not None:
            best = rate if best is None else max(best, rate)
    return best


def link_from(figures: Mapping[str, float], source: str) -> Link | None:
    if "latency_us" not in figures or "bandwidth_mbs" not in figures:
        return None
    return Link(figures["latency_us"] * 1e-6, figures["bandwidth_mbs"] * 1e6, source=source)


def _links(cases: Sequence[Case]) -> tuple[Link | None, Link | None, list[str]]:
    from scalebench.reporting.sections.transports import fabric_figures  # the sections import this module

    notes = []
    links = []
    for placement in ("inter_node", "intra_node"):
        figures = {**_hpcc_pingpong(cases, placement), **fabric_figures(cases, placement)}
        asymptotic = asymptotic_bandwidth(cases, placement)
        if asymptotic is not None:
            figures["bandwidth_mbs"] = asymptotic
        link = link_from(figures, f"{placement} ping-pong: {figures.get('latency_us', 0):.3g} us, "
                                  f"{figures.get('bandwidth_mbs', 0):.0f} MB/s")
        links.append(link)
    inter, intra = links
    if inter is not None:
        fabric = next((c.provenance.get("fabric") for c in cases if c.provenance.get("fabric")), None)
        inter = with_exchange(loaded(inter, ring_points(cases), fabric), exchange_ring(cases),
                              "hpcc's ring on 2 one-rank nodes")
        notes.append(inter.source)
    return inter, intra, notes


# --- the rank rate --------------------------------------------------------------------------------

def _base(points: Sequence[Point]) -> Point:
    """The configuration the rank rate comes from: the fewest nodes, then the fewest ranks."""
    return min(points, key=lambda p: (p.nodes, p.ranks, p.cores))


def rate_from(base: Point, calibration: Calibration) -> RankRate:
    link = calibration.link_for(base.nodes) if base.ranks > 1 else None
    if base.ranks > 1 and link is None:
        raise InputError(f"{base.where} {base.stack}: its smallest HPL ({base.nodes} node(s), {base.ranks} ranks) "
                         "needs link figures to take its communication out")
    case = base.case()
    rate = model.rate_from_run(case, base.rmax, link,
                               f"HPL on {base.nodes} node(s), {base.ranks} rank(s): {base.rmax:.4g} Gflop/s")
    return replace(rate, of_peak=rate.gflops / (case.rpeak_gflops / case.ranks))


def link_cases(results: Table) -> list[Case]:
    """The passed cases of the checks whose figures calibrate the links."""
    found = results.cases_by_id(pl.col("benchmark").is_in(LINK_CHECKS) & (pl.col("result") == "pass"))
    return [case for _, case in found.values()]


def calibrations(cases: Iterable[Case], points: Sequence[Point]) -> dict[tuple[str, str], Calibration]:
    """Per (system:partition, stack): the links its microbenchmarks (`cases`, LINK_CHECKS) measured and
    the rank rate of its smallest HPL configuration among `points`."""
    by_stack: dict[tuple[str, str], list[Case]] = defaultdict(list)
    for case in cases:
        by_stack[(f"{case.system}:{case.partition}", case.stack)].append(case)
    grouped: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for point in points:
        grouped[(point.where, point.stack)].append(point)
    out = {}
    for key in set(by_stack) | set(grouped):
        inter, intra, notes = _links(by_stack.get(key, []))
        calibration = Calibration(None, inter, intra, tuple(notes))
        if grouped.get(key):
            try:
                calibration = replace(calibration, rate=rate_from(_base(grouped[key]), calibration))
            except InputError as err:
                calibration = replace(calibration, notes=(*notes, str(err)))
        out[key] = calibration
    return out


def expect(point: Point, calibration: Calibration, base: Point, margin: float) -> Expected:
    """The model's efficiency for `point`; its own DGEMM ceiling, where both it and the base have one,
    scales the base's rank rate (the same job's compute, measured with every rank busy)."""
    if point == base:
        return Expected(100 * point.rmax / point.rpeak, "calibration", "the rank rate comes from this run")
    case = point.case()
    why = calibration.missing(case)
    if why:
        return Expected(None, "none", why)
    assert calibration.rate is not None
    rate = calibration.rate.for_case(case)
    try:
        if point.dgemm and base.dgemm:
            rate = model.rate_at_dgemm(rate, base.dgemm / base.ranks, point.dgemm / point.ranks,
                                       "scaled by this job's DGEMM ceiling")
        predicted = model.predict(case, rate, calibration.link_for(point.nodes))
    except InputError as err:
        return Expected(None, "none", str(err))
    measured = point.rmax / point.rpeak
    status = "below" if measured < predicted.efficiency * (1 - margin) else "ok"
    return Expected(100 * predicted.efficiency, status, f"{predicted.dominant_loss} dominates the loss")


def expectations(cases: Iterable[Case], points: Sequence[Point], margin: float) -> dict[Point, Expected]:
    calibrated = calibrations(cases, points)
    grouped: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for point in points:
        grouped[(point.where, point.stack)].append(point)
    out = {}
    for key, group in grouped.items():
        base = _base(group)
        calibration = calibrated[key]
        for point in group:
            if calibration.rate is None:
                out[point] = Expected(None, "none", calibration.notes[-1] if calibration.notes else "no rank rate")
            else:
                out[point] = expect(point, calibration, base, margin)
    return out
