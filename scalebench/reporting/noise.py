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

import json
import math
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple, Sequence

import polars as pl

from scalebench.registry import lookup
from scalebench.hpl.outcome import DgemmRepeats, disturbance, solve_cv
from scalebench.reporting.records import Case
from scalebench.reporting.table import Table, per_table
from scalebench.site.thresholds import report_flags


JUDGED = ("hpl", "application")  # the report sections whose cases and points get a noise verdict


def judged(benchmark: str) -> bool:
    return lookup(benchmark).section in JUDGED


@dataclass(frozen=True)
class Noise:
    reasons: tuple[str, ...]
    solve_cv: float | None  # of an HPL case's solves; None without repeated solves
    evidence: bool = False  # the case recorded something to judge by (solves, DGEMM repeats, probe samples)
    probe: Mapping[str, Any] | None = None  # the node probe's record (scalebench.nodeprobe.samples), if any

    @property
    def noisy(self) -> bool:
        return bool(self.reasons)


EVIDENCE = ("trial_gflops", "dgemm_repeats", "interference")  # what a verdict reads of a case's provenance


def _solves(recorded: Any) -> list[float]:
    values = []
    for word in str(recorded or "").split()[:1000]:
        try:
            value = float(word)
        except ValueError:
            continue
        if math.isfinite(value) and value > 0:
            values.append(value)
    return values


def recorded_repeats(case: Case) -> DgemmRepeats | None:
    """The DGEMM repeats an HPL case recorded (its positive, finite rates); None without any."""
    return _repeats(case.recorded("dgemm_repeats", None))


def _repeats(recorded: Any) -> DgemmRepeats | None:
    found = recorded or {}
    if not isinstance(found, Mapping):
        return None

    def rates(phase: str) -> tuple[float, ...]:
        values = found.get(phase)
        return tuple(float(v) for v in values if type(v) in (int, float) and math.isfinite(v) and v > 0) \
            if isinstance(values, list) else ()

    repeats = DgemmRepeats(rates("before"), rates("after"))
    return repeats if repeats.all else None


def evidence_noise(provenance: Mapping[str, Any], solve_cv_pct: float | None,
                   flags: Mapping[str, float]) -> Noise:
    """The verdict of a judged case from its provenance (the EVIDENCE fields) and its solve_cv figure."""
    reasons = []
    solves = _solves(provenance.get("trial_gflops"))
    cv = solve_cv(solves)
    if cv is None and solve_cv_pct is not None:  # a perflog keeps the figure, not the solves
        cv = solve_cv_pct / 100
    if cv is not None and cv > flags["noisy_cv"]:
        detail = f": {' '.join(f'{v:.2f}' for v in solves)} Gflop/s" if solves else ""
        reasons.append(f"solves disagree: CV {cv:.1%} (> {flags['noisy_cv']:.0%}){detail}")
    probed = _probe(provenance)
    repeats = _repeats(provenance.get("dgemm_repeats"))
    reasons += disturbance(repeats, probed, flags)
    return Noise(tuple(reasons), cv, evidence=cv is not None or probed is not None or repeats is not None,
                 probe=probed)


def case_noise(case: Case, flags: Mapping[str, float] | None = None) -> Noise:
    """The verdict of one case from what it recorded."""
    if not judged(case.benchmark):
        return Noise((), None)
    return evidence_noise({name: case.recorded(name, None) for name in EVIDENCE}, case.figure("solve_cv"),
                          flags or report_flags())


def runs_noise(values: Sequence[float], flags: Mapping[str, float] | None = None) -> str | None:
    """Why the repeated runs of one point disagree, or None: CV above noisy_cv."""
    flags = flags or report_flags()
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2:
        return None
    # In floats (two passes, fsum), not statistics' exact fractions: a year of nightly runs gives a point a
    # thousand values, and a report hundreds of points.
    mean = math.fsum(finite) / len(finite)
    if mean == 0:
        return None
    cv = abs(math.sqrt(math.fsum((v - mean) ** 2 for v in finite) / (len(finite) - 1)) / mean)
    return f"runs disagree: CV {cv:.1%} over {len(finite)} runs (> {flags['noisy_cv']:.0%})" \
        if cv > flags["noisy_cv"] else None


def runs_cell(runs: int, values: Sequence[float], flags: Mapping[str, float] | None = None) -> tuple[int | str, str]:
    """A table's Runs cell (the count, marked NOISY when the runs disagree) and the note under its row
    that says why ("" when they agree)."""
    why = runs_noise(values, flags)
    return (f"{runs} {NOISY}", f"{runs} runs {NOISY}: {why}") if why else (runs, "")


NOISY = "NOISY"


class Verdict(NamedTuple):
    session: int  # the case's session row
    noise: Noise


def table_verdicts(results: Table, flags: Mapping[str, float] | None = None, probed: bool = False,
                   within: pl.Expr | None = None) -> dict[int, Verdict]:
    """{case row: Verdict} of the measured cases of judged checks (and, with `probed`, of any check whose
    provenance holds probe samples), of those matching `within` if given. Drawn from the columns, each
    case's provenance read once per table: a year of nightly runs holds ~200 000 such cases, and making
    Case objects of them all took most of a report's time."""
    every = _every_verdict(results, flags or report_flags())
    wanted = _judged(results) | _probed() if probed else _judged(results)
    if within is not None:
        wanted = wanted & within
    return {row: every[row] for row in results.cases.filter(wanted)["case"].to_list() if row in every}


def _every_verdict(results: Table, flags: Mapping[str, float]) -> dict[int, Verdict]:
    """The verdicts of every measured case that has any, drawn once per table and thresholds."""
    drawn = _drawn(results)
    key = tuple(sorted(flags.items()))
    if key not in drawn:
        unknown = evidence_noise({}, None, flags)  # most cases of a year of runs recorded nothing to judge by
        names = {name: judged(name) for name in results.cases["benchmark"].unique().to_list()}
        drawn[key] = {row: Verdict(session, (unknown if not provenance and cv_pct is None
                                             else evidence_noise(provenance, cv_pct, flags)) if names[benchmark]
                                   else Noise((), None, probe=_probe(provenance)))
                      for row, (session, benchmark, provenance, cv_pct) in _measured_evidence(results).items()}
    return drawn[key]


@per_table
def _drawn(results: Table) -> dict[tuple[tuple[str, float], ...], dict[int, Verdict]]:
    return {}


def _probe(provenance: Mapping[str, Any]) -> Mapping[str, Any] | None:
    found = provenance.get("interference")
    return found if isinstance(found, Mapping) else None


def _judged(results: Table) -> pl.Expr:
    return pl.col("benchmark").is_in([n for n in results.cases["benchmark"].unique().to_list() if judged(n)])


def _probed() -> pl.Expr:
    return pl.col("provenance").str.contains('"interference":', literal=True)


@per_table
def _measured_evidence(results: Table) -> dict[int, tuple[int, str, dict[str, Any], float | None]]:
    """{case row: (session row, benchmark, the EVIDENCE of its provenance, its solve_cv figure)}."""
    rows = results.cases.filter((_judged(results) | _probed()) & pl.col("measured")).select(
        "case", "session", "benchmark", "provenance")
    cvs = results.records.filter(pl.col("perf_var") == "solve_cv").select("case", "value").unique(
        "case", keep="last", maintain_order=True)
    rows = rows.join(cvs, on="case", how="left", maintain_order="left")
    # Only a provenance that gives some evidence a value is read (most cases of a year of runs hold none):
    # one where every "<name>": of the evidence is followed by null holds none.
    text = pl.col("provenance")
    holds = pl.any_horizontal(text.str.count_matches(f'"{name}":', literal=True)
                              > text.str.count_matches(f'"{name}":null', literal=True) for name in EVIDENCE)
    out = {}
    for case, session, benchmark, provenance, cv_pct, evidence in rows.with_columns(holds=holds).iter_rows():
        every = json.loads(provenance) if evidence else {}
        out[case] = (session, benchmark, {name: every[name] for name in EVIDENCE if name in every}, cv_pct)
    return out


def rerun_labels(results: Table, rows: Sequence[int]) -> dict[int, str]:
    """{case row: rerun_label} of those cases, from the columns."""
    found = results.cases.filter(pl.col("case").is_in(list(rows))).select("case", "name", "system", "partition",
                                                                          "stack")
    return {case: _label(name, system, partition, stack) for case, name, system, partition, stack in found.iter_rows()}


def _label(name: str, system: str, partition: str, stack: str) -> str:
    return f"{name} on {system}:{partition} ({stack})"


def rerun_label(case: Case) -> str:
    """How a case to re-run is named: its check and parameters, where and on which stack."""
    return _label(case.name, case.system, case.partition, case.stack)
