"""Bake-off: systems or stacks side by side, each point normalised to a baseline configuration.

A ratio is always "> 1 means better than the baseline", whatever was measured: rates are inverted into
time-like values first, then scalebench.analysis.comparison.normalise_to_baseline divides. Ratios are summarised
by their geometric mean (scalebench.analysis.comparison.summarise). Where the figure is a run time in seconds,
the registry's run-time figure of each benchmark (LAMMPS loop time, OpenFOAM wall time) is also summed
over the points every configuration ran before normalising (scalebench.analysis.comparison.aggregate_then_normalise),
as an allocation would be spent.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

from scalebench.analysis import comparison
from scalebench.errors import InputError
from scalebench.reporting.document import Block, Heading, Text, bullets, table
from scalebench.reporting.series import Series, at_label, time_like
from scalebench.validation import did_you_mean, excerpt

BY = ("stack", "system")
_MIN_MESSAGE = 4  # bytes: below it OSU latencies sit at the timer's resolution


def time_like_curves(curves: Mapping[str, Mapping[int, float]], higher_is_better: bool) -> dict[str, dict[int, float]]:
    """Every curve made time-like; zero values are left out (a zero bandwidth has no ratio)."""
    return {config: {x: time_like(v, higher_is_better) for x, v in curve.items() if v > 0}
            for config, curve in curves.items()}


def ratios_to_baseline(curves: Mapping[str, Mapping[int, float]], baseline: str, higher_is_better: bool,
                       axis: str) -> dict[str, dict[int, float]]:
    """{config: {x: ratio}} against the baseline's curve; message sizes below 4 bytes are left out."""
    return comparison.normalise_to_baseline(time_like_curves(curves, higher_is_better), baseline,
                                         _MIN_MESSAGE if axis == "msg_size" else 0)


def config_of(s: Series, by: str) -> str:
    return s.key.stack if by == "stack" else s.key.where


def group_of(s: Series, by: str) -> tuple[str, ...]:
    """What must match for two configurations to be compared: the same benchmark, figure and variant,
    on the same system when stacks are compared."""
    where = (s.key.where,) if by == "stack" else ()
    return (*where, s.key.benchmark, s.key.figure, s.key.variant)


def _best(curves: Iterable[Mapping[int, float]], higher_is_better: bool) -> dict[int, float]:
    """A system's best stack at each point (a vendor's best effort in a bake-off)."""
    best: dict[int, float] = {}
    pick = max if higher_is_better else min
    for curve in curves:
        for x, v in curve.items():
            best[x] = pick(best[x], v) if x in best else v
    return best


@dataclass(frozen=True)
class Group:
    key: tuple[str, ...]
    axis: str
    unit: str
    higher_is_better: bool
    values: dict[str, dict[int, float]]  # config -> x -> value
    ratios: dict[str, dict[int, float]]  # config -> x -> ratio to the baseline (> 1 better)


@dataclass(frozen=True)
class Comparison:
    by: str
    baseline: str
    configs: tuple[str, ...]
    groups: tuple[Group, ...]
    summary: dict[str, comparison.Summary]  # over the series' geomeans: each series weighs the same
    per_benchmark: dict[str, dict[str, comparison.Summary]]  # benchmark -> config -> summary
    totals: comparison.AggregateComparison | None  # run times summed first, then normalised
    without_baseline: tuple[str, ...]  # groups the baseline did not run (not compared)
    figure: str | None = None  # compared on this figure instead of each benchmark's figure of merit

    def ranking(self) -> list[tuple[str, float]]:
        """(configuration, geomean ratio), best first."""
        return sorted(((c, s.geomean) for c, s in self.summary.items()), key=lambda item: (-item[1], item[0]))


def _groups(all_series: Sequence[Series], by: str, figure: Callable[[Series], str | None]
            ) -> dict[tuple[str, ...], list[Series]]:
    """Series of the figure `figure(series)` names (the figure of merit, the run time), grouped."""
    grouped: dict[tuple[str, ...], list[Series]] = {}
    for s in all_series:
        if figure(s) == s.key.figure and s.direction != "none":
            grouped.setdefault(group_of(s, by), []).append(s)
    return grouped


def _by_config(members: Sequence[Series], by: str) -> dict[str, dict[int, float]]:
    return {c: _best([s.points for s in members if config_of(s, by) == c], members[0].higher_is_better)
            for c in sorted({config_of(s, by) for s in members})}


def _totals(all_series: Sequence[Series], by: str, baseline: str) -> comparison.AggregateComparison | None:
    """Run times summed over the points every configuration ran, then normalised to the baseline."""
    times: dict[str, dict[Hashable, float]] = {}
    for key, members in _groups(all_series, by, lambda s: s.bench.time).items():
        for config, by_x in _by_config(members, by).items():
            times.setdefault(config, {}).update({(key, x): v for x, v in by_x.items()})
    if len(times) < 2 or baseline not in times:
        return None
    try:
        return comparison.aggregate_then_normalise(times, baseline)
    except InputError:
        return None  # no run time measured by every configuration


def default_baseline(all_series: Sequence[Series], by: str = "stack") -> str:
    """The configuration that ran the most compared series (first by name on a tie): the one the
    others can be set against most often, e.g. the stack that ran every check, not only the
    interconnect ones."""
    return _most_compared(_groups(all_series, by, lambda s: s.bench.fom), by)


def _most_compared(grouped: Mapping[tuple[str, ...], Sequence[Series]], by: str) -> str:
    counts: dict[str, int] = {}
    for members in grouped.values():
        for config in {config_of(s, by) for s in members}:
            counts[config] = counts.get(config, 0) + 1
    if not counts:
        raise InputError("compare: no figure of merit in these results (see scalebench/data/benchmarks.yaml)")
    return min(counts, key=lambda config: (-counts[config], config))


def compare(all_series: Sequence[Series], by: str = "stack", baseline: str | None = None,
            figure: str | None = None) -> Comparison:
    """Every figure of merit (or `figure`, e.g. gflops_per_watt, wherever a benchmark reports it) measured
    by the baseline and at least one other configuration."""
    if by not in BY:
        raise InputError(f"--by: {excerpt(by)} is not one of {', '.join(BY)}")
    grouped = _groups(all_series, by, lambda s: figure or s.bench.fom)
    configs = sorted({config_of(s, by) for members in grouped.values() for s in members})
    if not configs and figure:
        known = {f for s in all_series for f, spec in s.bench.figures.items() if spec.direction != "none"}
        raise InputError(f"--figure: no results report {excerpt(figure)} with a direction"
                         f"{did_you_mean(figure[:100], known)}")
    if not configs:
        raise InputError("compare: no figure of merit in these results (see scalebench/data/benchmarks.yaml)")
    baseline = baseline or _most_compared(grouped, by)
    if baseline not in configs:
        raise InputError(f"--baseline: {excerpt(baseline)} is not a {by} of these results "
                         f"({', '.join(configs)}){did_you_mean(baseline[:100], configs)}")
    groups, without = [], []
    # Only the ratios are summarised: they are filed under running numbers.
    per_series: dict[str, dict[int, float]] = {}  # config -> geomean of each series' ratios
    by_bench: dict[str, dict[str, dict[int, float]]] = {}  # benchmark -> config -> every ratio
    for key, members in sorted(grouped.items()):
        first = members[0]
        values = _by_config(members, by)
        if baseline not in values:
            without.append(" ".join(k for k in key if k))
            continue
        ratios = ratios_to_baseline(values, baseline, first.higher_is_better, first.axis)
        groups.append(Group(key, first.axis, first.unit, first.higher_is_better, values, ratios))
        measured = {c: r for c, r in ratios.items() if r}  # none when the others share no point with the baseline
        for config, summary in (comparison.summarise(measured) if measured else {}).items():
            series_means = per_series.setdefault(config, {})
            series_means[len(series_means)] = summary.geomean
        for config, by_x in measured.items():
            every = by_bench.setdefault(first.key.benchmark, {}).setdefault(config, {})
            every.update((len(every) + i, ratio) for i, ratio in enumerate(by_x.values()))
    return Comparison(by, baseline, tuple(configs), tuple(groups),
                      comparison.summarise(per_series) if per_series else {},
                      {bench: comparison.summarise(ratios) for bench, ratios in sorted(by_bench.items())},
                      _totals(all_series, by, baseline) if figure is None else None, tuple(without), figure)


def _summary_rows(summaries: Mapping[str, comparison.Summary], lead: Sequence[str] = ()) -> list[list[Any]]:
    return [[*lead, config, s.count, f"{s.minimum:.3f}", f"{s.geomean:.3f}", f"{s.maximum:.3f}"]
            for config, s in summaries.items()]


def _value(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def _detail_rows(c: Comparison) -> list[list[str]]:
    rows = []
    for group in c.groups:
        for x in sorted({x for by_x in group.values.values() for x in by_x}):
            rows.append([" ".join(k for k in group.key if k), at_label(group.axis, x), group.unit,
                         *(_value(group.values.get(cfg, {}).get(x)) for cfg in c.configs),
                         *(_value(group.ratios.get(cfg, {}).get(x)) for cfg in c.configs if cfg != c.baseline)])
    return rows


def title(c: Comparison) -> str:
    return ("Bake-off: " + ("stacks" if c.by == "stack" else "systems") + f" against {c.baseline}"
            + ("" if c.figure is None else f", by {c.figure}"))


def blocks(c: Comparison, level: int = 2, details: bool = True) -> list[Block]:
    """The comparison as report blocks: summaries first, every point after them."""
    what = "figure of merit" if c.figure is None else c.figure
    out: list[Block] = [
        Heading(level, title(c)),
        Text(f"Each configuration's {what} divided by the baseline's ({c.baseline}) at the same point, "
             "turned so that a ratio above 1 is better than the baseline (rates: value/baseline; times: "
             "baseline/value); summarised by the geometric mean, under which a 2x gain and a 2x loss cancel. "
             "Overall, each series (a benchmark's figure of merit on one system) first gets the geometric mean "
             "of its points, and the summary is taken over those, so a 23-size message curve weighs as much as "
             "a 3-point HPL curve; min and max are those of the series. "
             + ("Stacks are compared on the same system and partition."
                if c.by == "stack" else "Each system contributes its best stack at each point.")),
        table(("Configuration", "Series", "Min ratio", "Geomean ratio", "Max ratio"),
              _summary_rows(c.summary)),
        *([Text("Ranked by geometric-mean ratio: "
                + " > ".join(f"{config} ({geomean:.3f})" for config, geomean in c.ranking()))] if c.figure else []),
        Heading(level + 1, "By benchmark"),
        table(("Benchmark", "Configuration", "Points", "Min ratio", "Geomean ratio", "Max ratio"),
              [row for bench, summaries in c.per_benchmark.items() for row in _summary_rows(summaries, [bench])]),
    ]
    if c.totals is not None:
        t = c.totals
        out += [Heading(level + 1, "Run times summed, then normalised"),
                Text(f"Each benchmark's run time (scalebench/data/benchmarks.yaml: time) summed over the "
                     f"{len(t.keys)} point(s) every configuration ran, then divided: long runs weigh as much "
                     "as they cost."),
                table(("Configuration", "Total time (s)", "Ratio (baseline total / total)", "Points it lacks"),
                      [[cfg, f"{t.totals[cfg]:.4g}", f"{t.ratios[cfg]:.3f}", len(t.missing[cfg])] for cfg in t.totals])]
    if c.without_baseline:
        out += [Text(f"Not compared (the baseline {c.baseline} did not run them):"), bullets(c.without_baseline)]
    if details:
        others = [cfg for cfg in c.configs if cfg != c.baseline]
        out += [Heading(level + 1, "Every point"),
                table(("Series", "At", "Unit", *c.configs, *(f"{cfg} / {c.baseline}" for cfg in others)),
                      _detail_rows(c))]
    return out


def to_json(c: Comparison) -> dict[str, Any]:
    """`compare --json`: the ranking and every ratio to the baseline (field names documented and stable)."""
    def summary(s: comparison.Summary) -> dict[str, Any]:
        return {"min": s.minimum, "geomean": s.geomean, "max": s.maximum, "count": s.count}

    return {"by": c.by, "baseline": c.baseline, "figure": c.figure, "configs": list(c.configs),
            "ranking": [{"config": config, "geomean": ratio} for config, ratio in c.ranking()],
            "summary": {config: summary(s) for config, s in c.summary.items()},
            "per_benchmark": {bench: {config: summary(s) for config, s in found.items()}
                              for bench, found in c.per_benchmark.items()},
            "groups": [{"key": list(g.key), "axis": g.axis, "unit": g.unit, "higher_is_better": g.higher_is_better,
                        "values": {config: {str(x): v for x, v in xs.items()} for config, xs in g.values.items()},
                        "ratios": {config: {str(x): v for x, v in xs.items()} for config, xs in g.ratios.items()}}
                       for g in c.groups],
            "totals": None if c.totals is None else {"ratios": {str(k): v for k, v in c.totals.ratios.items()},
                                                     "totals_s": {str(k): v for k, v in c.totals.totals.items()}},
            "without_baseline": list(c.without_baseline)}
