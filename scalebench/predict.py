"""HPL's scalability model (scalebench.hpl.model) at every planned HPL case: per system, partition and
stack a calibration from numbers given or measured results (scalebench.reporting.expected), then each
case's prediction or the reason for none, and a sentence per stack. `scalebench predict` and
`plan --predict` print what this gives.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from scalebench.errors import InputError
from scalebench.hpl import model
from scalebench.hpl.case_plan import HplPlan
from scalebench.hpl.model import Calibration, Link, Prediction, RankRate
from scalebench.site_plan import PlannedCase


@dataclass(frozen=True)
class Given:
    """Numbers from the command line; None where not given."""

    rank_gflops: float | None = None
    latency_us: float | None = None
    bandwidth_gbs: float | None = None
    load_exponent: float | None = None
    results: tuple[str, ...] = ()

    @property
    def anything(self) -> bool:
        return bool(self.results) or any(v is not None for v in (self.rank_gflops, self.latency_us,
                                                                 self.bandwidth_gbs, self.load_exponent))


@dataclass(frozen=True)
class Measured:
    """What --from results calibrate, per (system:partition, stack), and the HPL runs behind them."""

    calibrations: Mapping[tuple[str, str], Calibration]
    runs: Mapping[tuple[str, str], list[Any]]  # scalebench.reporting.expected.Point


def measured(results: Sequence[str]) -> Measured:
    """The calibrations the results under `results` give (read as `report` reads them, index included)."""
    from scalebench.reporting import expected
    from scalebench.reporting.hpl_table import hpl_lines
    from scalebench.reporting.store import load

    table = load(results).table
    points = [p for p in (line.point() for line in hpl_lines(table)) if p is not None]
    runs: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for point in points:
        runs[(point.where, point.stack)].append(point)
    return Measured(expected.calibrations(expected.link_cases(table), points), runs)


def _lookup(found: Measured | None, where: str, stack: str) -> tuple[tuple[str, str] | None, str]:
    """The results' key for a planned stack: the same system:partition and stack, else the one
    system that ran a stack of that name."""
    if found is None:
        return None, ""
    if (where, stack) in found.calibrations:
        return (where, stack), ""
    others = [key for key in found.calibrations if key[1] == stack]
    if len(others) == 1:
        return others[0], f"calibrated on {others[0][0]}'s results"
    return None, ""


def calibration_for(where: str, stack: str, fabric: str | None, given: Given, found: Measured | None) -> Calibration:
    """The rank rate and links for one planned stack: numbers given first, then the results."""
    key, note = _lookup(found, where, stack)
    base = found.calibrations[key] if found is not None and key else Calibration(None, None, None)
    notes = [note] if note else []
    rate = RankRate(given.rank_gflops, f"--dgemm-gflops {given.rank_gflops:g}") if given.rank_gflops else base.rate
    inter = base.inter
    if given.latency_us is not None or given.bandwidth_gbs is not None:
        latency = given.latency_us * 1e-6 if given.latency_us is not None else inter.latency_s if inter else None
        bandwidth = given.bandwidth_gbs * 1e9 if given.bandwidth_gbs is not None else \
            inter.bandwidth_bps if inter else None
        if latency is None or bandwidth is None:
            raise InputError(f"{stack} on {where}: --latency-us and --bandwidth-gbs go together unless --from "
                             "results measured the other")
        inter = Link(latency, bandwidth, source=f"{latency * 1e6:.3g} us, {bandwidth / 1e6:.0f} MB/s (command line)")
        inter = model.with_load(inter, *model.default_load(fabric))
    if inter is not None and given.load_exponent is not None:
        inter = model.with_load(inter, given.load_exponent, f"load exponent {given.load_exponent:g} (command line)")
    elif inter is not None and rate is not None and key and not re.search(r"load exponent \S+ fitted", inter.source):
        inter = _fit_to_runs(inter, rate, found.runs.get(key, []) if found else [])
    return Calibration(rate, inter, base.intra, (*base.notes, *notes))


def _fit_to_runs(link: Link, rate: RankRate, runs: Sequence[Any]) -> Link:
    """The load exponent that reproduces measured HPL runs on more than 2 nodes, when there are any."""
    pairs = [(p.case(), p.rmax / p.rpeak) for p in runs if p.nodes > 2]
    fitted = model.fit_load_from_runs([(case, measured, rate.for_case(case)) for case, measured in pairs], link) \
        if pairs else None
    if fitted is None:
        return link
    scales = ", ".join(str(p.nodes) for p in runs if p.nodes > 2)
    return model.with_load(link, fitted, f"load exponent {fitted:.3g} fitted to HPL at {scales} nodes")


@dataclass(frozen=True)
class Predicted:
    case: PlannedCase
    prediction: Prediction | None
    reason: str = ""  # why not predicted


def predict_cases(cases: Sequence[PlannedCase], given: Given,
                  found: Measured | None = None) -> tuple[list[Predicted], dict[tuple[str, str, str], Calibration]]:
    """A prediction (or the reason for none) for every planned HPL case, and the calibration of each
    (system, partition, stack)."""
    calibrations: dict[tuple[str, str, str], Calibration] = {}
    out = []
    for planned in cases:
        hpl = planned.plan.detail if planned.plan else None
        if not isinstance(hpl, HplPlan) or hpl.sweep is not None:
            continue
        partition, stack = planned.partition, planned.stack
        key = (partition.system, partition.name, stack.name)
        if key not in calibrations:
            calibrations[key] = calibration_for(f"{partition.system}:{partition.name}", stack.name,
                                                stack.extras.get("fabric"), given, found)
        calibration = calibrations[key]
        case = model.Case.from_plan(hpl)
        why = calibration.missing(case)
        if why:
            out.append(Predicted(planned, None, why))
            continue
        assert calibration.rate is not None
        rate = calibration.rate.for_case(case)
        out.append(Predicted(planned, model.predict(case, rate, calibration.link_for(case.nodes))))
    return out, calibrations


def summaries(predicted: Sequence[Predicted]) -> list[str]:
    """One sentence per partition and stack, on the whole-node scales."""
    curves: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for p in predicted:
        scale = p.case.partition.scale(str(p.case.params.get("scale")))
        if p.prediction is not None and (scale is None or not scale.sub_node):
            curves[(p.case.partition.fullname, p.case.stack.name)][p.prediction.case.nodes] = p.prediction.efficiency
    return [model.summary_sentence(f"{stack} on {where}", curve) for (where, stack), curve in sorted(curves.items())]
