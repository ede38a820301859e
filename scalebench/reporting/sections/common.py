"""What the report's sections share: number cells, chart names, measured lines and axis labels, and the
grouping of figure-of-merit series. Every number shown for a point is the median over the runs that
measured it (scalebench.reporting.series)."""
from __future__ import annotations

import re
from typing import Iterable

from scalebench.reporting.document import Line
from scalebench.reporting.series import Series


def fmt(value: float | int | None, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


def slug(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", "-".join(parts)).strip("-").lower()


def measured_line(s: Series, values: dict[int, float] | None = None) -> Line:
    values = s.points if values is None else values
    return Line(s.key.stack, tuple(values), tuple(values.values()), s.key.stack)


def ylabel(s: Series) -> str:
    label = s.bench.figure(s.key.figure).label
    return f"{label} ({s.unit})" if s.unit and s.unit.lower() != label.lower() else label


def fom_groups(all_series: Iterable[Series]) -> dict[tuple[str, str, str, str], list[Series]]:
    """Figure-of-merit series grouped by (system:partition, benchmark, variant, figure); stacks inside."""
    grouped: dict[tuple[str, str, str, str], list[Series]] = {}
    for s in all_series:
        if s.key.figure == s.bench.fom:
            grouped.setdefault((s.key.where, s.key.benchmark, s.key.variant, s.key.figure), []).append(s)
    return grouped

