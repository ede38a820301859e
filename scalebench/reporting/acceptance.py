"""Acceptance verdicts: thresholds from a YAML file (site_configs/acceptance.yaml) checked against the
results, one PASS / FAIL / NO DATA row per criterion, system, stack and point.

Measured values are the series' medians over repeated runs (scalebench.reporting.series), so one lucky run
does not pass a criterion and one bad run does not fail it. A criterion nothing was measured for is
NO DATA, which fails acceptance unless the criterion says `optional: true`: missing evidence is not
a pass, and an acceptance that measured nothing (every criterion optional and NO DATA) fails. Noisy
runs (scalebench.reporting.noise) are set aside: a point only they measured, or whose runs disagree, is
NOISY, neither a pass nor a fail, and its note names the cases to re-run. A required point with no data
while a run of its system was cut short (scalebench.reporting.cutshort: no report, killed or still
running) is CUT SHORT: that run may have been about to measure it, so acceptance is NOT DECIDED.
"""
from __future__ import annotations

import fnmatch
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import polars as pl

from scalebench import loaders
from scalebench.analysis import scaling
from scalebench.registry import registry
from scalebench.errors import InputError
from scalebench.reporting import noise, series
from scalebench.reporting.cutshort import CutShort
from scalebench.reporting.document import Block, Heading, Table, Text, table
from scalebench.reporting.series import Series, SeriesKey, at_label
from scalebench.reporting.table import FigureUnit, Table as ResultsTable
from scalebench.site.thresholds import report_flags
from scalebench.validation import C_INT_MAX, did_you_mean, excerpt, excerpt_text, finite_number

METRICS = ("value", "speedup", "parallel_efficiency", "of_model")
# of_model: the measured value over what HPL's scalability model expects of it (scalebench.reporting.expected)
MODEL_FIGURES = {"HPLCheck": ("efficiency",)}
AT_WORDS = ("every", "largest", "smallest")
_KEYS = ("name", "benchmark", "figure", "metric", "min", "max", "at", "system", "partition", "stack", "params",
         "optional")
PASS, FAIL, NO_DATA, NOISY, CUT_SHORT = "PASS", "FAIL", "NO DATA", "NOISY", "CUT SHORT"


@dataclass(frozen=True)
class Criterion:
    where: str  # 'site_configs/acceptance.yaml: criteria[2]', for messages
    name: str
    benchmark: str
    figure: str
    metric: str  # value | speedup | parallel_efficiency | of_model
    bound: str  # min | max
    threshold: float
    at: tuple[int, ...] | str  # x values, or every | largest | smallest
    system: str  # fnmatch patterns
    partition: str
    stack: str
    params: tuple[tuple[str, str], ...]
    optional: bool

    def matches(self, s: Series) -> bool:
        key = s.key
        own = {k: str(v) for k, v in key.params}
        return (key.benchmark == self.benchmark and key.figure == self.figure
                and fnmatch.fnmatchcase(key.system, self.system)
                and fnmatch.fnmatchcase(key.partition, self.partition)
                and fnmatch.fnmatchcase(key.stack, self.stack)
                and all(own.get(k) == v for k, v in self.params))


@dataclass(frozen=True)
class Verdict:
    criterion: Criterion
    where: str
    stack: str
    at: str
    measured: float | None
    unit: str
    status: str  # PASS | FAIL | NO DATA | NOISY | CUT SHORT (NO DATA while a run of its system was cut short)
    note: str = ""
    reruns: tuple[str, ...] = ()  # NOISY: each case to re-run, with why it is noisy

    @property
    def failed(self) -> bool:
        return self.status == FAIL or (self.status == NO_DATA and not self.criterion.optional)


# --- the thresholds file ------------------------------------------------------------------------------

def _known_figures(rows: Sequence[FigureUnit]) -> dict[str, set[str]]:
    """benchmark -> figure names, from the registry and from what the results hold."""
    known = {name: set(bench.figures) for name, bench in registry().items()}
    for r in rows:
        known.setdefault(r.benchmark, set()).add(r.figure)
    return known


def _units(rows: Sequence[FigureUnit]) -> dict[tuple[str, str], str]:
    units: dict[tuple[str, str], str] = {}
    for r in rows:
        units.setdefault((r.benchmark, r.figure), r.unit)
    return units


def _threshold(value: Any, metric: str, unit: str | None, where: str) -> float:
    """A finite number in the metric's unit; '75%' means 75 for a figure in %, 0.75 for an efficiency."""
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            number = finite_number(float(value.strip()[:-1]), where)
        except (ValueError, InputError):
            raise InputError(f"{where}: {excerpt(value)} is not a number or a percentage") from None
        if metric in ("parallel_efficiency", "of_model"):
            return number / 100
        if metric == "value" and unit in (None, "%"):
            return number
        raise InputError(f"{where}: a percentage is meaningless for {metric} in {unit or 'no unit'}; give a number")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: expected a number or a percentage such as 80%, got {excerpt(value)}")
    number = finite_number(value, where)
    if metric in ("parallel_efficiency", "of_model") and number > 1.5:
        raise InputError(f"{where}: {value} looks like a percentage; write {value}% (or {number / 100:g})")
    return number


def _at(value: Any, where: str) -> tuple[int, ...] | str:
    if value is None:
        return "every"
    if isinstance(value, str):
        if value not in AT_WORDS:
            raise InputError(f"{where}: {excerpt(value)} is not one of {', '.join(AT_WORDS)} or a number"
                             f"{did_you_mean(value[:100], AT_WORDS)}")
        return value
    values = value if isinstance(value, list) else [value]
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= C_INT_MAX for v in values):
        raise InputError(f"{where}: expected every, largest, smallest, a count or a list of counts, "
                         f"got {excerpt(value)}")
    return tuple(values)


def _pattern(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key, "*")
    if not isinstance(value, str) or not value:
        raise InputError(f"{where}.{key}: expected a name or a pattern such as 'cluster*'")
    return value


def _criterion(entry: Any, where: str, known: dict[str, set[str]], units: dict[tuple[str, str], str]) -> Criterion:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected a mapping with benchmark, figure and min or max")
    for key in entry:
        if key not in _KEYS:
            raise InputError(f"{where}.{excerpt_text(str(key), 40)}: unknown key{did_you_mean(str(key)[:100], _KEYS)}")
    benchmark = entry.get("benchmark")
    if not isinstance(benchmark, str) or benchmark not in known:
        raise InputError(f"{where}.benchmark: unknown benchmark {excerpt(benchmark)}"
                         f"{did_you_mean(str(benchmark)[:100], known)}")
    bench = registry().get(benchmark)
    figure = entry.get("figure", bench.fom if bench else None)
    if not isinstance(figure, str) or figure not in known[benchmark]:
        raise InputError(f"{where}.figure: unknown figure {excerpt(figure)} of {benchmark}"
                         f"{did_you_mean(str(figure)[:100], known[benchmark])} "
                         f"(known: {', '.join(sorted(known[benchmark]))})")
    metric = entry.get("metric", "value")
    if not isinstance(metric, str) or metric not in METRICS:
        raise InputError(f"{where}.metric: {excerpt(metric)} is not one of {', '.join(METRICS)}"
                         f"{did_you_mean(str(metric)[:100], METRICS)}")
    if metric != "value" and bench is not None and bench.figure(figure).direction == "none":
        raise InputError(f"{where}.metric: {metric} needs a figure that is better higher or lower; {figure} is neither")
    if metric == "of_model" and figure not in MODEL_FIGURES.get(benchmark, ()):
        raise InputError(f"{where}.metric: of_model compares with HPL's scalability model: "
                         f"{', '.join(f'{b} {f}' for b, fs in MODEL_FIGURES.items() for f in fs)} only")
    bounds = [b for b in ("min", "max") if b in entry]
    if len(bounds) != 1:
        raise InputError(f"{where}: give exactly one of min or max")
    params = entry.get("params") or {}
    if not isinstance(params, dict) or not all(
            isinstance(v, (str, int, float, bool)) and isinstance(k, (str, int)) for k, v in params.items()):
        raise InputError(f"{where}.params: expected a mapping of names to plain values such as {{workload: lj}}, "
                         f"got {excerpt(params)}")
    optional = entry.get("optional", False)
    if not isinstance(optional, bool):
        raise InputError(f"{where}.optional: must be true or false, got {excerpt(optional)}")
    name = entry.get("name")
    if name is not None and not isinstance(name, str):
        raise InputError(f"{where}.name: must be text, got {excerpt(name)}")
    threshold = _threshold(entry[bounds[0]], metric, units.get((benchmark, figure)), f"{where}.{bounds[0]}")
    name = name or f"{benchmark} {figure}{' ' + metric if metric != 'value' else ''}"
    return Criterion(where, str(name), benchmark, figure, metric, bounds[0], threshold,
                     _at(entry.get("at"), f"{where}.at"),
                     _pattern(entry, "system", where), _pattern(entry, "partition", where),
                     _pattern(entry, "stack", where),
                     tuple(sorted((str(k), str(v)) for k, v in params.items())), optional)


def load(path: Path, rows: Sequence[FigureUnit]) -> list[Criterion]:
    """The criteria of a thresholds file, checked against the registry and the results' figures.
    Every mistake is one line naming the file and the key."""
    data = loaders.load_yaml(path, "thresholds")
    if not isinstance(data, dict) or set(data) != {"criteria"} or not isinstance(data["criteria"], list):
        raise InputError(f"{path}: expected one key, criteria, holding a list of criteria")
    if not data["criteria"]:  # nothing checked is no verdict: it must not pass, nor let references freeze
        raise InputError(f"{path}: criteria: an empty list; an acceptance needs at least one criterion")
    known, units = _known_figures(rows), _units(rows)
    return [_criterion(entry, f"{path}: criteria[{i}]", known, units) for i, entry in enumerate(data["criteria"])]


# --- verdicts -----------------------------------------------------------------------------------------

Expectations = Mapping[tuple[str, str, str, int], float]  # (system, partition, stack, x) -> expected value


def uses_model(criteria: Iterable[Criterion]) -> bool:
    return any(c.metric == "of_model" for c in criteria)


def _of_model(s: Series, expectations: Expectations | None) -> dict[int, float]:
    """Measured over expected at every point the model has an expectation for (a run the model was
    calibrated on is none)."""
    if expectations is None:
        raise InputError("no expectations of HPL's scalability model were computed")
    key = (s.key.system, s.key.partition, s.key.stack)
    values = {x: v / expectations[(*key, x)] for x, v in s.points.items() if expectations.get((*key, x))}
    if not values:
        raise InputError("the model expects nothing here (it was calibrated on this run, or lacks a figure)")
    return values


def _metric_values(s: Series, metric: str, expectations: Expectations | None = None) -> dict[int, float]:
    if metric == "of_model":
        return _of_model(s, expectations)
    if metric == "speedup":
        return scaling.speedup(s.points, higher_is_better=s.higher_is_better)
    if metric == "parallel_efficiency":
        return series.efficiency(s)  # weak-scaling series: T(p0)/T(p)
    return dict(s.points)


def _points(c: Criterion, values: dict[int, float]) -> list[tuple[int, float | None]]:
    if not isinstance(c.at, str):
        return [(x, values.get(x)) for x in c.at]
    if c.at == "every":
        return list(values.items())
    x = max(values) if c.at == "largest" else min(values)
    return [(x, values[x])]


def _status(c: Criterion, measured: float) -> str:
    ok = measured >= c.threshold if c.bound == "min" else measured <= c.threshold
    return PASS if ok else FAIL


# Why a point is noisy: (note, the cases to re-run with their reasons), or None when it is not.
Noisy = Callable[[SeriesKey, str, int], "tuple[str, tuple[str, ...]] | None"]


def evaluate(criteria: Iterable[Criterion], all_series: Sequence[Series], expectations: Expectations | None = None,
             clean: Mapping[SeriesKey, Series] | None = None, noisy: Noisy | None = None) -> list[Verdict]:
    """Verdicts of the criteria over the series; `expectations` (scalebench.reporting.hpl_table.
    model_expectations) serve the of_model metric. With `clean` (the series of the runs that are not
    noisy) and `noisy`, a point is judged on its clean runs, and is NOISY where it has none, where its
    metric's base point has none, or where `noisy` names a reason."""
    verdicts = []
    for c in criteria:
        matched = [s for s in all_series if c.matches(s)]
        if not matched:
            verdicts.append(Verdict(c, "-", "-", "-", None, "", NO_DATA, "no results match"))
        for s in matched:
            unit = "" if c.metric != "value" else s.unit
            judged = s if clean is None else clean.get(s.key)
            try:
                values = _metric_values(s, c.metric, expectations)
                judged_values = _metric_values(judged, c.metric, expectations) if judged is not None else {}
            except InputError as err:  # e.g. a zero rate has no speedup
                verdicts.append(Verdict(c, s.key.where, s.key.stack, "-", None, unit, NO_DATA, str(err)))
                continue
            base_clean = judged is not None and (c.metric == "value" or min(s.points) in judged.points)
            for x, measured in _points(c, values):
                at = at_label(s.axis, x)
                if measured is None:
                    verdicts.append(Verdict(c, s.key.where, s.key.stack, at, None, unit, NO_DATA,
                                            f"not measured at {at}"))
                    continue
                why = noisy(s.key, s.axis, x) if noisy is not None else None
                if clean is not None and (not base_clean or x not in judged_values or why):
                    note, reruns = why or ("its base point has only noisy runs", ())
                    verdicts.append(Verdict(c, s.key.where, s.key.stack, at, None, unit, NOISY, note, reruns))
                    continue
                value = judged_values[x] if clean is not None else measured
                verdicts.append(Verdict(c, s.key.where, s.key.stack, at, value, unit, _status(c, value)))
    return verdicts


def judge(criteria: Iterable[Criterion], results: ResultsTable, flags: Mapping[str, float] | None = None,
          all_series: Sequence[Series] | None = None, expectations: Expectations | None = None,
          cut_short: Sequence[CutShort] = ()) -> list[Verdict]:
    """Verdicts over the results with noisy runs set aside (scalebench.reporting.noise): a point is
    NOISY when only noisy cases measured it (they are named, to re-run) or its clean runs disagree.
    `all_series`: series.build(results), when the caller has it; `expectations` as evaluate's. A
    required point with no data while a run of its system was cut short (`cut_short`, the runs without
    a report) is CUT SHORT: that run may have been about to measure it."""
    return _missing_for(_judge(criteria, results, flags, all_series, expectations), cut_short)


def _missing_for(verdicts: list[Verdict], cut_short: Sequence[CutShort]) -> list[Verdict]:
    """Each required NO DATA of a system a run was cut short on as CUT SHORT, naming the run."""
    out = []
    for v in verdicts:
        runs = [c for c in cut_short if not c.systems or any(fnmatch.fnmatchcase(system, v.criterion.system)
                                                            for system in c.systems)]
        if v.status == NO_DATA and not v.criterion.optional and runs:
            more = f" and {len(runs) - 1} more" if len(runs) > 1 else ""
            v = replace(v, status=CUT_SHORT, note=f"{v.note}: run {runs[0].run_dir}{more} was cut short; re-run it")
        out.append(v)
    return out


def _judge(criteria: Iterable[Criterion], results: ResultsTable, flags: Mapping[str, float] | None,
           all_series: Sequence[Series] | None, expectations: Expectations | None) -> list[Verdict]:
    flags = flags or report_flags()
    verdicts_of = {row: verdict.noise for row, verdict in noise.table_verdicts(results, flags).items()}
    noisy_rows = [row for row, verdict in verdicts_of.items() if verdict.noisy]
    clean_table = replace(results, records=results.records.filter(~pl.col("case").is_in(noisy_rows)))
    clean = {s.key: s for s in series.build(clean_table)}
    found: series.Points | None = None  # the points' cases, looked up only when a point has no clean run

    def why(key: SeriesKey, axis: str, x: int) -> tuple[str, tuple[str, ...]] | None:
        nonlocal found
        judged = clean.get(key)
        if judged is not None and x in judged.points:
            disagree = noise.runs_noise(judged.values.get(x, ()), flags) if noise.judged(key.benchmark) else None
            return (f"{disagree}: re-run", ()) if disagree else None
        found = found or series.points(results)
        named = [i for i, params in found.named.items() if params == key.params]
        rows = found.rows.filter((pl.col("system") == key.system) & (pl.col("partition") == key.partition)
                                 & (pl.col("stack") == key.stack) & (pl.col("benchmark") == key.benchmark)
                                 & (pl.col("figure") == key.figure) & pl.col("named").is_in(named)
                                 & (pl.col("x") == x))
        cases = [row for row in dict.fromkeys(rows["case"].to_list()) if row in verdicts_of]
        named = noise.rerun_labels(results, cases)
        labels = sorted({named[row] for row in cases})
        reruns = tuple(sorted({f"{named[row]}: {'; '.join(verdicts_of[row].reasons)}" for row in cases}))
        return f"only noisy runs: re-run {'; '.join(labels)}", reruns

    return evaluate(criteria, series.build(results) if all_series is None else all_series, expectations, clean, why)


def failed(verdicts: Iterable[Verdict]) -> bool:
    """A FAIL or a required NO DATA fails; so does an acceptance that measured nothing (every verdict an
    optional NO DATA): it checked nothing, and references are frozen only on what was checked."""
    verdicts = list(verdicts)
    return any(v.failed for v in verdicts) or not any(v.status in (PASS, NOISY, CUT_SHORT) for v in verdicts)


def outcome(verdicts: Sequence[Verdict]) -> str:
    """PASSED, FAILED, or NOT DECIDED when nothing failed but a point waits for a re-run: of a run cut
    short (CUT SHORT), or of noisy cases (NOISY)."""
    if failed(verdicts):
        return "FAILED"
    if any(v.status == CUT_SHORT for v in verdicts):
        return "NOT DECIDED (a run was cut short before the CUT SHORT points were measured: re-run it)"
    return "NOT DECIDED (re-run the NOISY points' cases)" if any(v.status == NOISY for v in verdicts) else "PASSED"


def passed(verdicts: Sequence[Verdict]) -> bool:
    return outcome(verdicts) == "PASSED"


# --- presentation -------------------------------------------------------------------------------------

def _amount(value: float, c: Criterion, unit: str, signed: bool = False) -> str:
    """A measured value or threshold; a margin (signed) of a percentage is in percentage points."""
    if c.metric in ("parallel_efficiency", "of_model"):
        return f"{value * 100:+.1f} pp" if signed else f"{value:.1%}"
    if unit == "%":
        return f"{value:+.4g} pp" if signed else f"{value:.4g}%"
    sign = "+" if signed else ""
    return f"{value:{sign}.4g}{' ' + unit if unit else ''}{'x' if c.metric == 'speedup' else ''}"


def _cells(v: Verdict) -> list[str]:
    c = v.criterion
    threshold = f"{'>=' if c.bound == 'min' else '<='} {_amount(c.threshold, c, v.unit)}"
    if v.measured is None:
        measured = margin = "-"
    else:
        margin_value = v.measured - c.threshold if c.bound == "min" else c.threshold - v.measured
        measured = _amount(v.measured, c, v.unit)
        margin = _amount(margin_value, c, v.unit, signed=True)
        if c.threshold:
            margin += f" ({margin_value / abs(c.threshold):+.1%})"
    status = v.status if v.status != NO_DATA or not c.optional else f"{NO_DATA} (optional)"
    return [c.name, v.where, v.stack, v.at, measured, threshold, margin, status, v.note]


HEADER = ("Criterion", "System", "Stack", "At", "Measured", "Threshold", "Margin", "Verdict", "Note")


def decision(verdicts: Sequence[Verdict]) -> str:
    """The outcome in a word or two: PASSED, FAILED or NOT DECIDED."""
    said = outcome(verdicts)
    return "NOT DECIDED" if said.startswith("NOT DECIDED") else said


def counts(verdicts: Sequence[Verdict]) -> str:
    tally = {status: sum(v.status == status for v in verdicts) for status in (PASS, FAIL, NO_DATA)}
    tally[NOISY] = sum(v.status == NOISY for v in verdicts)
    tally[CUT_SHORT] = sum(v.status == CUT_SHORT for v in verdicts)
    return ", ".join(f"{n} {status}" for status, n in tally.items() if n or status not in (NOISY, CUT_SHORT))


def verdict_table(verdicts: Sequence[Verdict]) -> Table:
    """The verdicts, a note under the row of each that has one (the terminal's `accept` among them)."""
    cells = [_cells(v) for v in verdicts]
    return table(HEADER[:-1], [row[:-1] for row in cells], [f"Note: {row[-1]}" if row[-1] else "" for row in cells])


TITLE = "Acceptance"


def blocks(verdicts: Sequence[Verdict], source: Path, level: int = 2) -> list[Block]:
    return [Heading(level, TITLE),
            Text(f"Thresholds from `{source}`: acceptance {outcome(verdicts)} ({counts(verdicts)}). Measured values "
                 "are medians over repeated runs; the margin is the headroom over the threshold (negative: short of "
                 "it). NO DATA fails acceptance unless the criterion is optional; an acceptance that measured "
                 "nothing fails. Noisy runs (see \"Interference and noise\") are not counted: a point with no "
                 "other runs, or whose runs disagree, is NOISY, neither a pass nor a fail until its cases are re-run; "
                 "a required point with no data while a run of its system was cut short (killed, or still running) "
                 "is CUT SHORT, undecided until that run is re-run."),
            verdict_table(verdicts)]


def reruns(verdicts: Sequence[Verdict]) -> list[str]:
    """What the NOISY verdicts ask to re-run, once each, and why."""
    return list(dict.fromkeys(line for v in verdicts if v.status == NOISY
                              for line in (v.reruns or (f"{v.where} {v.stack} at {v.at}: {v.note}",))))


# --- for CI: JSON and JUnit ---------------------------------------------------------------------------

def _verdict_json(v: Verdict) -> dict[str, Any]:
    c = v.criterion
    margin = None if v.measured is None else (v.measured - c.threshold if c.bound == "min" else c.threshold - v.measured)
    return {"criterion": c.name, "benchmark": c.benchmark, "figure": c.figure, "metric": c.metric,
            "where": v.where, "stack": v.stack, "at": v.at, "measured": v.measured, "unit": v.unit,
            "bound": c.bound, "threshold": c.threshold, "margin": margin, "status": v.status,
            "optional": c.optional, "failed": v.failed, "note": v.note, "reruns": list(v.reruns)}


def to_json(verdicts: Sequence[Verdict], source: Path) -> dict[str, Any]:
    """`accept --json`: the outcome, its counts and every verdict (field names documented and stable)."""
    return {"thresholds": str(source), "outcome": decision(verdicts),
            "passed": passed(verdicts),
            "counts": {status: sum(v.status == status for v in verdicts) for status in (PASS, FAIL, NO_DATA, NOISY)},
            "verdicts": [_verdict_json(v) for v in verdicts], "reruns": reruns(verdicts)}


def junit_xml(verdicts: Sequence[Verdict], source: Path) -> str:
    """`accept --junit`: one test case per criterion and point; a FAIL and a required NO DATA are failures,
    NOISY (not decided until re-run) and an optional NO DATA are skips, each with its reason."""

    failures = sum(v.failed for v in verdicts)
    skipped = sum(not v.failed and v.status != PASS for v in verdicts)
    suite_attrs = {"name": f"scalebench accept ({source})", "tests": str(len(verdicts)), "failures": str(failures),
                   "errors": "0", "skipped": str(skipped)}
    suites = ET.Element("testsuites", suite_attrs)
    suite = ET.SubElement(suites, "testsuite", suite_attrs)
    for v in verdicts:
        cells = dict(zip(HEADER, _cells(v)))
        case = ET.SubElement(suite, "testcase", {"classname": f"{v.criterion.benchmark}.{v.criterion.figure}",
                                                 "name": f"{v.criterion.name} [{v.where} {v.stack} at {v.at}]",
                                                 "time": "0"})
        what = (f"{v.status}: measured {cells['Measured']}, threshold {cells['Threshold']}, margin {cells['Margin']}"
                + (f"; {v.note}" if v.note else ""))
        if v.failed:
            ET.SubElement(case, "failure", {"message": what, "type": v.status}).text = what
        elif v.status == NOISY:
            ET.SubElement(case, "skipped", {"message": f"NOT DECIDED: {what}; re-run: {'; '.join(v.reruns)}"})
        elif v.status != PASS:
            ET.SubElement(case, "skipped", {"message": what})
        ET.SubElement(case, "system-out").text = what
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
