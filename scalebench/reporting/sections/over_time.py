"""The report's "Over time" section, for results of more than one day (nightly runs): each benchmark's
figure of merit per day at its smallest and largest scale, per stack, as the day's median with the
spread of its runs (lowest to highest) around it, relative to the median of every run at that scale.
Aggregated per day, a year is 365 points a line, whatever the number of runs."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

import polars as pl

from scalebench.reporting import series
from scalebench.reporting.document import Block, Chart, Figure, Heading, Line, Panel, Text, table
from scalebench.reporting.sections.common import slug
from scalebench.reporting.series import Series, at_label
from scalebench.reporting.table import Table, exact_median

_CASE_AXES = ("nodes", "procs", "cores")  # a curve over message sizes or a parameter has no one scale to follow
_FORMATS = ("%Y%m%dT%H%M%S%z",)  # ReFrame's time_start; perflog sessions start with an ISO time


def _day(start: str) -> int | None:
    """The UTC day (proleptic ordinal) a session started, None when its start says no time."""
    for parse in (*(lambda text, f=f: datetime.strptime(text, f) for f in _FORMATS), datetime.fromisoformat):
        try:
            moment = parse(start)
        except ValueError:
            continue
        moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
        return moment.astimezone(timezone.utc).date().toordinal()
    return None


def over_time_section(results: Table, all_series: Sequence[Series]) -> list[Block]:
    starts = results.sessions.select("session", "start")
    days = pl.DataFrame({"session": starts["session"], "day": [_day(s) for s in starts["start"]]},
                        schema={"session": pl.UInt32, "day": pl.Int64})
    if days["day"].drop_nulls().n_unique() < 2:
        return []
    foms = {s.key.benchmark for s in all_series if s.bench.fom == s.key.figure and s.bench.x in _CASE_AXES}
    found = series.points(results, benchmark_names=sorted(foms))
    rows = found.rows.filter(pl.col("figure") == pl.col("benchmark").replace_strict(
        {name: bench.fom for name, bench in found.benches.items()}, default=None))
    rows = rows.join(results.cases.select("case", "session"), on="case", how="left").join(
        days, on="session", how="left").filter(pl.col("day").is_not_null())
    # The smallest and largest scale of each series: where drift and noise matter most.
    x = pl.col("x")
    rows = rows.filter((x == x.min().over(series.KEY)) | (x == x.max().over(series.KEY)))
    overall = rows.group_by([*series.KEY, "x"]).agg(overall=exact_median("value"))
    daily = rows.group_by([*series.KEY, "x", "day"]).agg(median=exact_median("value"), low=pl.col("value").min(),
                                                         high=pl.col("value").max(), runs=pl.len())
    daily = daily.join(overall, on=[*series.KEY, "x"]).filter(
        (pl.col("overall") > 0) & (pl.len().over([*series.KEY, "x"]) > 1)).sort([*series.KEY, "x", "day"])
    if daily.is_empty():  # no stack ran a scale on two days
        return []
    first_day = daily["day"].min()
    lines: dict[tuple[Any, ...], dict[int, list[Line]]] = {}
    summary = []
    for (system, partition, stack, bench_name, figure, named, x), group in daily.group_by(
            [*series.KEY, "x"], maintain_order=True):
        overall_median = group["overall"][0]
        relative = [(d - first_day, m / overall_median, lo / overall_median, hi / overall_median)
                    for d, m, lo, hi in group.select("day", "median", "low", "high").iter_rows()]
        xs, ys, lows, highs = (tuple(v) for v in zip(*relative))
        key = (f"{system}:{partition}", bench_name, series.variant_of(found.named[named]), figure)
        lines.setdefault(key, {}).setdefault(x, []).append(Line(stack, xs, ys, stack, low=lows, high=highs))
        spread = sorted(h - lo for lo, h in zip(lows, highs))
        summary.append((key[0], bench_name, key[2] or "-", stack, at_label(found.benches[bench_name].x, x),
                        str(len(xs)), f"{ys[0]:.3f}", f"{ys[-1]:.3f}", f"{ys[-1] / ys[0] - 1:+.1%}",
                        f"{spread[len(spread) // 2]:.1%}"))
    out: list[Block] = [
        Heading(2, "Over time"),
        Text(f"Each benchmark's figure of merit per day from {datetime.fromordinal(first_day).date()}, at its "
             "smallest and largest scale: the day's median (line) and its runs' spread, lowest to highest (band), "
             "relative to the median of every run at that scale (1.0). For times, above 1 is slower. A day's "
             "spread is the band's width; the table lists the median of them.")]
    for (where, bench_name, variant, figure), by_x in lines.items():
        bench = found.benches[bench_name]
        label = bench.figure(figure).label
        panels = tuple(Panel(f"{label} at {at_label(bench.x, x)} ({where})", "Day",
                             f"{label} / median of all runs", tuple(by_x[x])) for x in sorted(by_x))
        title = f"{bench_name}{' ' + variant if variant else ''} on {where}"
        out += [Heading(3, title), Figure(Chart(slug("time", where, bench_name, variant), f"{title}: {label} per "
                                                 "day, median and spread, relative to all runs", panels))]
    out.append(table(("System", "Benchmark", "Variant", "Stack", "At", "Days", "First day", "Last day", "Change",
                      "Median daily spread"), summary))
    return out
