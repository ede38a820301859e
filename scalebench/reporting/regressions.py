"""The report's "Against the references" section: every figure a check was held to, its reference
(frozen from accepted runs, or a floor), the bound ReFrame applied and how far the run was from it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from scalebench import registry
from scalebench.reporting.document import Block, Heading, Text, table
from scalebench.reporting.records import Case, Session
from scalebench.validation import is_number


@dataclass(frozen=True)
class Held:
    """One figure of one case against the reference it was held to."""

    case: Case
    figure: str
    value: float
    reference: float
    low: float | None  # the bound ReFrame applied below (None: none), in the figure's unit
    high: float | None

    @property
    def outside(self) -> bool:
        return (self.low is not None and self.value < self.low) or (self.high is not None and self.value > self.high)

    @property
    def deviation(self) -> float:
        return self.value / self.reference - 1


def _bound(reference: float, share: Any) -> float | None:
    return reference * (1 + share) if is_number(share) else None


def held(sessions: Sequence[Session]) -> Iterator[Held]:
    """Figures with a positive reference and a bound; ReFrame's (0, None, None) means none."""
    for session in sessions:
        for case in session.cases:
            for name, (value, _) in case.figures.items():
                reference, lower, upper = case.references.get(name, (None, None, None))
                if not is_number(value) or not is_number(reference) or reference <= 0:
                    continue
                low, high = _bound(reference, lower), _bound(reference, upper)
                if low is not None or high is not None:
                    yield Held(case, name, float(value), float(reference), low, high)


def _allowed(entry: Held, unit: str) -> str:
    sides = ([f"≥ {entry.low:.4g}"] if entry.low is not None else []) + (
        [f"≤ {entry.high:.4g}"] if entry.high is not None else [])
    return " and ".join(sides) + f" {unit}"


def blocks(sessions: Sequence[Session], level: int = 2) -> list[Block]:
    """The section; nothing when no check was held to a reference. Figures of a curve (one per message
    size) are listed only when outside their bound, with a count of the others."""
    entries = list(held(sessions))
    if not entries:
        return []
    rows, curve_within = [], 0
    for entry in sorted(entries, key=lambda e: (not e.outside, e.case.system, e.case.partition, e.case.stack,
                                                e.case.name, e.figure, e.case.session_start)):
        bench = registry.lookup(entry.case.benchmark)
        if registry.split_sized(bench, entry.figure) and not entry.outside:
            curve_within += 1
            continue
        unit = entry.case.figures[entry.figure][1]
        rows.append([f"{entry.case.system}:{entry.case.partition}", entry.case.stack, entry.case.name, entry.figure,
                     f"{entry.value:.4g} {unit}", f"{entry.reference:.4g} {unit}", _allowed(entry, unit),
                     f"{entry.deviation:+.1%}", "OUTSIDE" if entry.outside else "within", entry.case.session_start])
    outside = sum(e.outside for e in entries)
    out: list[Block] = [Heading(level, "Against the references"),
                        Text(f"{len(entries)} figure(s) held to a reference (`scalebench references freeze`, or a "
                             f"floor); {outside} outside the bound ReFrame applied.")]
    out.append(table(["where", "stack", "case", "figure", "value", "reference", "allowed", "vs reference", "",
                      "run"], rows))
    if curve_within:
        out.append(Text(f"{curve_within} more figure(s) of message-size curves within their bounds, not listed."))
    return out
