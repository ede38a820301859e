"""The report's first page: the answer before the evidence. For each system and stack: its best Rmax, its
efficiency at the largest scale it measured, its acceptance verdict, its energy efficiency and what it
has to re-run; a bake-off's ranking with its margins; each leading to the section that shows it.

Nothing here is measured or judged again: the page picks from what the sections computed (the HPL
table's lines, the acceptance verdicts, the bake-off's comparison, the noise findings and the failures),
in their own words and formats.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from scalebench.reporting import acceptance, bakeoff
from scalebench.reporting.document import Block, Bullets, Heading, Inline, Ref, Text, span, table
from scalebench.reporting.hpl_table import NOISY, SECTION as HPL, HplLine
from scalebench.reporting.sections.appendix import FAILURES, Failure
from scalebench.reporting.sections.common import fmt
from scalebench.reporting.sections.energy import TITLE as ENERGY, per_watt_cell
from scalebench.reporting.sections.interference import TITLE as NOISE, Findings

TITLE = "Summary"
RERUN = "What to re-run"
SHOWN = 8  # items of each kind listed here; their sections list them all


@dataclass(frozen=True)
class Rerun:
    where: str
    stack: str
    what: str  # the case or point, and why
    section: str  # the heading of the section that shows it


@dataclass(frozen=True)
class Todo:
    """What to re-run: the items the sections list, and how many each section has in all (a section may
    list the first of many) and each system and stack."""
    items: tuple[Rerun, ...]
    by_section: dict[str, int]
    by_place: dict[tuple[str, str], int]


@dataclass(frozen=True)
class Glance:
    """One system and stack at a glance: the HPL lines picked, its verdicts and its re-runs."""
    where: str
    stack: str
    best: HplLine | None  # the best Rmax (counted runs before noisy ones)
    largest: HplLine | None  # the largest scale measured (its best efficiency there)
    per_watt: HplLine | None  # the best Gflop/s per watt (the core phase's, else the job's)
    verdicts: tuple[acceptance.Verdict, ...]
    reruns: int


def _noisy(line: HplLine) -> bool:
    return line.noise.startswith(NOISY)


def _best(lines: Sequence[HplLine], figure: Callable[[HplLine], float | None]) -> HplLine | None:
    """The line with the highest figure, lines only noisy runs measured last (they are not counted)."""
    measured = [l for l in lines if figure(l) is not None]
    return max(measured, key=lambda l: (not _noisy(l), figure(l)), default=None)


def _largest(lines: Sequence[HplLine]) -> HplLine | None:
    measured = [l for l in lines if l.efficiency is not None]
    return max(measured, key=lambda l: (l.nodes or 0, l.ranks or 0, l.efficiency), default=None)


def _per_watt(line: HplLine) -> float | None:
    return line.gflops_per_watt if line.gflops_per_watt is not None else line.job_gflops_per_watt


def glances(places: Sequence[tuple[str, str]], lines: Sequence[HplLine],
            verdicts: Sequence[acceptance.Verdict] | None, todo: Todo) -> list[Glance]:
    """Per (system:partition, stack) of `places`, in order."""
    out = []
    for where, stack in places:
        mine = [l for l in lines if (l.where, l.stack) == (where, stack)]
        out.append(Glance(where, stack, _best(mine, lambda l: l.rmax), _largest(mine), _best(mine, _per_watt),
                          tuple(v for v in verdicts or () if (v.where, v.stack) == (where, stack)),
                          todo.by_place.get((where, stack), 0)))
    return out


def reruns(findings: Findings | None, failed: Sequence[Failure]) -> Todo:
    """Noisy cases and points whose runs disagree (Interference and noise), then failed and cut-short
    cases (Failures): each what the section that lists it says."""
    items: list[Rerun] = []
    by_place: dict[tuple[str, str], int] = {}
    if findings is not None:
        items += [Rerun(c.where, c.stack, f"{c.label}: {'; '.join(c.noise.reasons)}", NOISE) for c in findings.cases]
        items += [Rerun(p.where, p.stack, f"{p.benchmark}{' ' + p.variant if p.variant != '-' else ''} on {p.where} "
                                          f"({p.stack}) at {p.at}: {p.why}", NOISE) for p in findings.points]
        by_place.update(findings.by_place)
        for p in findings.points:
            by_place[(p.where, p.stack)] = by_place.get((p.where, p.stack), 0) + 1
    items += [Rerun(f.where, f.stack, f.line + (f" ({f.runs} runs)" if f.runs > 1 else ""), FAILURES) for f in failed]
    for f in failed:
        by_place[(f.where, f.stack)] = by_place.get((f.where, f.stack), 0) + 1
    noisy = findings.noisy + len(findings.points) if findings is not None else 0
    return Todo(tuple(items), {NOISE: noisy, FAILURES: len(failed)}, by_place)


def _acceptance_cell(verdicts: Sequence[acceptance.Verdict]) -> str:
    return f"{acceptance.decision(verdicts)}: {acceptance.counts(verdicts)}" if verdicts else "-"


def _row(g: Glance, energy: bool, judged: bool, rerun: bool) -> list[str | Ref]:
    cells: list[str | Ref] = [g.where, g.stack]
    if g.best is not None:
        cells += [Ref(fmt(g.best.rmax, ".2f"), HPL), g.best.scale]
    else:
        cells += ["-", "-"]
    largest = g.largest
    cells += [Ref(f"{largest.efficiency:.1f}%", HPL), largest.scale] if largest and largest.efficiency is not None \
        else ["-", "-"]
    if energy:
        cells += [Ref(per_watt_cell(g.per_watt), ENERGY), g.per_watt.scale] if g.per_watt else ["-", "-"]
    if judged:
        cells.append(Ref(_acceptance_cell(g.verdicts), acceptance.TITLE) if g.verdicts else "-")
    if rerun:
        cells.append(Ref(str(g.reruns), RERUN) if g.reruns else "0")
    return cells


def _notes(g: Glance) -> list[Inline]:
    """A figure picked from runs that were all noisy is not counted: said under the row."""
    scales = dict.fromkeys(line.scale for line in (g.best, g.largest, g.per_watt) if line is not None and _noisy(line))
    return [span(f"{scale}: only noisy runs measured it, not counted until re-run (", Ref(RERUN, RERUN), ")")
            for scale in scales]


def _glance_table(found: Sequence[Glance]) -> list[Block]:
    energy = any(g.per_watt is not None for g in found)
    judged = any(g.verdicts for g in found)
    rerun = any(g.reruns for g in found)
    header = ["System", "Stack", "Best Rmax (Gflop/s)", "At", "Efficiency at the largest scale", "Largest scale",
              *(["Best Gflop/s/W", "Gflop/s/W at"] if energy else []), *(["Acceptance"] if judged else []),
              *(["Re-runs"] if rerun else [])]
    return [table(header, [_row(g, energy, judged, rerun) for g in found], [_notes(g) for g in found])]


def _ranking(c: bakeoff.Comparison) -> list[Block]:
    """The bake-off's ranking, each configuration's margin over the next and its spread over the series."""
    ranked = c.ranking()
    rows = []
    for i, (config, geomean) in enumerate(ranked):
        summary = c.summary[config]
        ahead = f"{geomean / ranked[i + 1][1] - 1:+.1%}" if i + 1 < len(ranked) else "-"
        rows.append((str(i + 1), config, Ref(f"{geomean:.3f}", bakeoff.title(c)), ahead,
                     f"{summary.minimum:.3f}", f"{summary.maximum:.3f}", summary.count))
    what, how = ("stacks", "on the same system") if c.by == "stack" else ("systems", "each with its best stack")
    return [Text(span("Ranking of the ", Ref(what, bakeoff.title(c)), f" ({how}) by the geometric mean of their "
                      f"figures of merit over {c.baseline}'s (above 1: better):")),
            table(("Rank", "Stack" if c.by == "stack" else "System", f"Geomean ratio to {c.baseline}",
                   "Ahead of the next by", "Worst series", "Best series", "Series"), rows)]


def _listed(todo: Todo) -> list[Inline]:
    """The first SHOWN of each section's items, each leading to its section, and how many more."""
    out: list[Inline] = []
    for section in dict.fromkeys(r.section for r in todo.items):
        mine = [r for r in todo.items if r.section == section]
        out += [span(r.what, " (", Ref(f"see {section}", section), ")") for r in mine[:SHOWN]]
        more = todo.by_section.get(section, len(mine)) - min(len(mine), SHOWN)
        if more > 0:
            out.append(span(f"... and {more} more: ", Ref(section, section)))
    return out


def blocks(places: Sequence[tuple[str, str]], lines: Sequence[HplLine],
           verdicts: Sequence[acceptance.Verdict] | None, thresholds: Path | None,
           comparisons: Sequence[bakeoff.Comparison], todo: Todo) -> list[Block]:
    """The first page; nothing when there is nothing to say (no HPL, verdicts, bake-off or re-run)."""
    if not (lines or verdicts or comparisons or todo.items):
        return []
    out: list[Block] = [Heading(2, TITLE)]
    if verdicts:
        out.append(Text(span(f"Acceptance against `{thresholds}`: ", Ref(acceptance.decision(verdicts),
                                                                           acceptance.TITLE),
                             f" ({acceptance.counts(verdicts)}).")))
    for c in comparisons:
        out += _ranking(c)
    found = glances(places, lines, verdicts, todo)
    if lines or verdicts:
        out += [Text(span("Each system and stack: the best ", Ref("HPL", HPL), " Rmax and where, the efficiency "
                          "(Rmax/Rpeak) at the largest scale measured",
                          ", Gflop/s per watt" if any(g.per_watt for g in found) else "",
                          ", the acceptance verdict with its counts" if verdicts else "",
                          ", how many results to re-run" if todo.items else "", ".")),
                *_glance_table(found)]
    if todo.items:
        out += [Heading(3, RERUN), Bullets(tuple(_listed(todo)))]
    return out
