"""Noise verdicts: which results a committee cannot count on until they are re-run.

A case is noisy when its own evidence says its nodes were not its own or its figures do not agree
with themselves: an HPL case's solves disagree (coefficient of variation above noisy_cv), the node
probe measured CPU steal or foreign load above noisy_steal / noisy_foreign_cores, or its DGEMM
repeats disagree (noisy_dgemm_spread). A point of any check is noisy when its repeated runs disagree
(noisy_cv over the runs). The thresholds are data (site_configs/report_flags.yaml) and verdicts are
drawn when results are read, so a threshold changed there applies to runs already made.

A noisy case is neither a pass nor a fail: the report marks it, `accept` says NOISY and names the
cases to re-run, and `references freeze` learns nothing from it. HPL and the applications are judged
(JUDGED sections of scalebench/data/benchmarks.yaml); a microbenchmark's own spread is its figure
(latency varies run to run), and its probe record is shown, not judged.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence

import polars as pl

from scalebench.benchmarks import lookup
from scalebench.hpl.outcome import DgemmRepeats, disturbance, solve_cv
from scalebench.results.records import Case
from scalebench.results.table import Table, per_table
from scalebench.site.thresholds import report_flags


JUDGED = ("hpl", "application")  # the report sections whose cases and points get a noise verdict


def judged(benchmark: str) -> bool:
    return lookup(benchmark).section in JUDGED


@dataclass(frozen=True)
class Noise:
    reasons: tuple[str, ...]
    solve_cv: float | None  # of an HPL case's solves; None without repeated solves
    evidence: bool = False  # the case recorded something to judge by (solves, DGEMM repeats, probe samples)

    @property
    def noisy(self) -> bool:
        return bool(self.reasons)


def _solves(case: Case) -> list[float]:
    values = []
    for word in str(case.recorded("trial_gflops") or "").split()[:1000]:
        try:
            value = float(word)
        except ValueError:
            continue
        if math.isfinite(value) and value > 0:
            values.append(value)
    return values


def _repeats(case: Case) -> DgemmRepeats | None:
    found = case.recorded("dgemm_repeats") or {}
    if not isinstance(found, Mapping):
        return None

    def rates(phase: str) -> tuple[float, ...]:
        values = found.get(phase)
        return tuple(float(v) for v in values if type(v) in (int, float) and math.isfinite(v) and v > 0) \
            if isinstance(values, list) else ()

    repeats = DgemmRepeats(rates("before"), rates("after"))
    return repeats if repeats.all else None


def case_noise(case: Case, flags: Mapping[str, float] | None = None) -> Noise:
    """The verdict of one case from what it recorded."""
    if not judged(case.benchmark):
        return Noise((), None)
    flags = flags or report_flags()
    reasons = []
    solves = _solves(case)
    cv = solve_cv(solves)
    if cv is None and case.figure("solve_cv") is not None:  # a perflog keeps the figure, not the solves
        cv = case.figure("solve_cv") / 100  # type: ignore[operator]
    if cv is not None and cv > flags["noisy_cv"]:
        detail = f": {' '.join(f'{v:.2f}' for v in solves)} Gflop/s" if solves else ""
        reasons.append(f"solves disagree: CV {cv:.1%} (> {flags['noisy_cv']:.0%}){detail}")
    interference = case.recorded("interference")
    probed = interference if isinstance(interference, Mapping) else None
    repeats = _repeats(case)
    reasons += disturbance(repeats, probed, flags)
    return Noise(tuple(reasons), cv, evidence=cv is not None or probed is not None or repeats is not None)


def runs_noise(values: Sequence[float], flags: Mapping[str, float] | None = None) -> str | None:
    """Why the repeated runs of one point disagree, or None: CV above noisy_cv."""
    flags = flags or report_flags()
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2 or statistics.mean(finite) == 0:
        return None
    cv = abs(solve_cv(finite) or 0.0)  # two values or more: never None
    return f"runs disagree: CV {cv:.1%} over {len(finite)} runs (> {flags['noisy_cv']:.0%})" \
        if cv > flags["noisy_cv"] else None


def runs_cell(runs: int, values: Sequence[float], flags: Mapping[str, float] | None = None) -> int | str:
    """A table's Runs cell: the count, and NOISY with why when the runs disagree."""
    why = runs_noise(values, flags)
    return f"{runs} (NOISY: {why})" if why else runs


def table_verdicts(results: Table, flags: Mapping[str, float] | None = None, probed: bool = False,
                   within: pl.Expr | None = None) -> dict[int, tuple[int, Case, Noise]]:
    """{case row: (session row, Case, Noise)} of the measured cases of judged checks (and, with
    `probed`, of any check whose provenance holds probe samples), of those matching `within` if given;
    Case objects are made for these cases only (a year of nightly runs holds ~200 000 cases), once per
    table however many parts of a report ask."""
    flags = flags or report_flags()
    every = _measured_cases(results)
    wanted = _judged(results) | _probed() if probed else _judged(results)
    if within is not None:
        wanted = wanted & within
    return {row: (*every[row], case_noise(every[row][1], flags))
            for row in results.cases.filter(wanted)["case"].to_list() if row in every}


def _judged(results: Table) -> pl.Expr:
    return pl.col("benchmark").is_in([n for n in results.cases["benchmark"].unique().to_list() if judged(n)])


def _probed() -> pl.Expr:
    return pl.col("provenance").str.contains('"interference":', literal=True)


@per_table
def _measured_cases(results: Table) -> dict[int, tuple[int, Case]]:
    return results.cases_by_id((_judged(results) | _probed()) & pl.col("measured"))


def rerun_label(case: Case) -> str:
    """How a case to re-run is named: its check and parameters, where and on which stack."""
    return f"{case.name} on {case.system}:{case.partition} ({case.stack})"
