"""The report's HPL section: the table (also printed on the terminal), Rmax and efficiency vs node count
with the linear-scaling line, and how each deck was chosen."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from scalebench.analysis import scaling
from scalebench.benchmarks import lookup
from scalebench.results import series
from scalebench.results.document import Block, Chart, Figure, Heading, Line, Panel, Text, bullets, table, text_table
from scalebench.results.records import Case
from scalebench.results.sections.common import fmt, measured_line, slug, ylabel
from scalebench.results.series import Series, axis_label
from scalebench.results.table import Table, exact_median


# --- HPL table (terminal and report) ----------------------------------------------------------------

@dataclass(frozen=True)
class HplLine:
    """One HPL configuration (scale, geometry, deck) on one system and stack; repeated runs of it
    are summarised by their medians."""

    where: str  # system:partition
    stack: str
    scale: str
    nodes: int | None
    ranks: int | None
    n: int | None
    nb: int | None
    grid: str
    rmax: float | None
    rpeak: float | None
    efficiency: float | None
    dgemm: float | None
    result: str  # PASS, FAIL or "<passed>/<runs> PASS"
    case: Case  # the latest run, for its provenance
    runs: int = 1


def _result(passed: int, runs: int) -> str:
    return "PASS" if passed == runs else "FAIL" if passed == 0 else f"{passed}/{runs} PASS"


_FIGURES = ("rmax", "rpeak_gflops", "efficiency", "dgemm_ceiling", "n")


def _deck_key(deck_json: str | None, n_figure: float | None) -> tuple[int | None, Any, str]:
    """(N, NB, 'P x Q') of a case: its deck's, N from its figure without one."""
    deck = json.loads(deck_json) if deck_json else {}
    n = deck.get("n") or n_figure
    return int(n) if n else None, deck.get("nb"), f"{deck['p']} x {deck['q']}" if deck else ""


def hpl_lines(results: Table) -> list[HplLine]:
    """One line per HPL configuration; medians over the measured runs, the latest run's case kept."""
    names = [n for n in results.cases["benchmark"].unique().to_list() if lookup(n).section == "hpl"]
    cases = results.cases.filter(pl.col("benchmark").is_in(names) & (pl.col("result") != "skip"))
    if cases.is_empty():
        return []
    figures = results.records.filter(pl.col("perf_var").is_in(_FIGURES)).join(cases.select("case"), on="case",
                                                                            how="semi")
    figures = figures.group_by("case").agg(pl.col("value").filter(pl.col("perf_var") == name).first().alias(name)
                                           for name in _FIGURES)
    cases = cases.join(figures, on="case", how="left", maintain_order="left")
    # Per distinct deck, N figure and parameters: the line's (N, NB, P x Q, scale), numbered.
    keys: dict[tuple[Any, ...], int] = {}
    shown: list[tuple[Any, ...]] = []
    combos: dict[str, list[Any]] = {"hpl_deck": [], "n": [], "params": [], "key": []}
    for deck, n_figure, params in cases.select("hpl_deck", "n", "params").unique(maintain_order=True).iter_rows():
        line_key = (*_deck_key(deck, n_figure), str(json.loads(params).get("scale", "")))
        hashed = tuple(map(repr, line_key))  # a deck's NB may be anything a report holds
        if hashed not in keys:
            keys[hashed] = len(shown)
            shown.append(line_key)
        for name, value in zip(combos, (deck, n_figure, params, keys[hashed])):
            combos[name].append(value)
    cases = cases.join(pl.DataFrame(combos, schema={"hpl_deck": pl.Utf8, "n": pl.Float64, "params": pl.Utf8,
                                                    "key": pl.UInt32}),
                       on=["hpl_deck", "n", "params"], how="left", nulls_equal=True, maintain_order="left")
    measured = pl.col("measured")
    grouped = cases.group_by(["system", "partition", "stack", "num_nodes", "num_tasks", "key"],
                             maintain_order=True).agg(
        *(exact_median(pl.col(name).filter(measured)).alias(name) for name in _FIGURES[:4]),
        passed=(pl.col("result") == "pass").sum(), runs=pl.len(),
        latest=pl.col("case").sort_by("session_start", maintain_order=True).last())
    latest = results.cases_by_id(pl.col("case").is_in(grouped["latest"].to_list()))
    lines = []
    for row in grouped.iter_rows(named=True):
        n, nb, grid, scale = shown[row["key"]]
        lines.append(HplLine(f"{row['system']}:{row['partition']}", row["stack"], scale, row["num_nodes"],
                             row["num_tasks"], n, nb, grid, rmax=row["rmax"], rpeak=row["rpeak_gflops"],
                             efficiency=row["efficiency"], dgemm=row["dgemm_ceiling"],
                             result=_result(row["passed"], row["runs"]), case=latest[row["latest"]][1],
                             runs=row["runs"]))
    return sorted(lines, key=lambda l: (l.where, l.stack, l.nodes or 0, l.ranks or 0, l.scale))


HPL_HEADER = ("System", "Stack", "Scale", "Nodes", "Ranks", "N", "NB", "P x Q",
              "Rmax (Gflop/s)", "Rpeak (Gflop/s)", "Efficiency", "DGEMM (Gflop/s)", "Rmax/DGEMM", "Result", "Runs")


def _hpl_cells(line: HplLine) -> tuple[str, ...]:
    efficiency = "-" if line.efficiency is None else f"{line.efficiency:.1f}%"
    of_dgemm = f"{100 * line.rmax / line.dgemm:.1f}%" if line.rmax and line.dgemm else "-"
    return (line.where, line.stack, line.scale, fmt(line.nodes), fmt(line.ranks), fmt(line.n),
            fmt(line.nb), line.grid or "-", fmt(line.rmax, ".2f"), fmt(line.rpeak, ".1f"),
            efficiency, fmt(line.dgemm, ".1f"), of_dgemm, line.result, str(line.runs))


def hpl_terminal_table(results: Table) -> str:
    return text_table(HPL_HEADER, [_hpl_cells(line) for line in hpl_lines(results)])


# --- HPL section ------------------------------------------------------------------------------------

def _linear(s: Series, label: str) -> Line:
    """Perfect scaling from the series' smallest point: value(x0) * x / x0."""
    x0 = min(s.points)
    return Line(label, tuple(s.points), tuple(s.points[x0] * x / x0 for x in s.points), s.key.stack, style="ideal")


def _hpl_axis_series(results: Table, where_series: Sequence[Series]) -> list[Series]:
    """On one node (a workstation), scaling is over cores: plot against cores there."""
    if len({x for s in where_series for x in s.points}) > 1:
        return list(where_series)
    system, partition = where_series[0].key.system, where_series[0].key.partition
    names = sorted({s.key.benchmark for s in where_series})
    return [s for s in series.build(results, "cores", names) if (s.key.system, s.key.partition) == (system, partition)]


def _hpl_where(where: str, hpl: Sequence[Series]) -> list[Block]:
    rmax = series.select(hpl, figure="rmax")
    efficiency = series.select(hpl, figure="efficiency")
    if not rmax:
        return []
    axis = rmax[0].axis
    chart = Chart(slug("hpl", where), f"HPL on {where}: Rmax and efficiency vs {axis_label(axis).lower()}, per stack", (
        Panel(f"Rmax ({where})", axis_label(axis), ylabel(rmax[0]),
              tuple(line for s in rmax for line in (measured_line(s), _linear(s, "linear scaling"))), y_from_zero=True),
        Panel(f"Efficiency Rmax/Rpeak ({where})", axis_label(axis), "Efficiency (%)",
              tuple(measured_line(s) for s in efficiency), y_from_zero=True),
    ))
    rows = []
    for s in rmax:
        eff = next((e.points for e in efficiency if e.key.stack == s.key.stack), {})
        speedups = scaling.speedup(s.points, higher_is_better=s.higher_is_better)
        parallel = series.efficiency(s)
        x0 = min(s.points)
        for x, value in s.points.items():
            rows.append((s.key.stack, x, f"{value:.2f}", f"{s.points[x0] * x / x0:.2f}", f"{speedups[x]:.2f}",
                         f"{parallel[x]:.1%}", fmt(eff.get(x), ".1f"), s.runs[x]))
    return [Heading(3, f"Scaling on {where}"), Figure(chart),
            table(("Stack", axis_label(axis), "Rmax (Gflop/s)", "Linear scaling", "Speedup",
                   "Parallel efficiency", "Rmax/Rpeak (%)", "Runs"), rows)]


def _hpl_notes(lines: Sequence[HplLine]) -> list[Block]:
    out: list[Block] = [
        Text("Efficiency = Rmax / nominal Rpeak of the cores used (TOP500 convention). Rmax counts only runs whose "
             "residual check PASSED. DGEMM is the ceiling measured in the same job (StarDGEMM x ranks, all ranks "
             "busy: hpcc's, or the embedded xhpl's before it solves), Rmax/DGEMM the share of it HPL reaches. The "
             "clock under load can exceed the nominal one, so DGEMM may exceed Rpeak. Repeated runs of one "
             "configuration are summarised by their median (Runs)."),
        Heading(3, "How N was chosen"),
        bullets(sorted({f"{l.where} {l.stack} {l.scale}: {l.case.recorded('n_policy', 'unknown')}; "
                        f"deck from {l.case.recorded('deck_source', 'unknown')}" for l in lines})),
        Heading(3, "BLAS kernel and Rpeak inputs"),
        bullets(sorted({f"{l.where} {l.stack}: BLAS kernel {l.case.recorded('blas_kernel', 'unknown')}; "
                        f"OpenBLAS reported: {l.case.recorded('blas_kernel_used', 'unknown')}" for l in lines})
                + sorted({f"{l.where}: Rpeak from {l.case.recorded('rpeak_derivation', 'unknown')}"
                          for l in lines})),
    ]
    trials = sorted({f"{l.where} {l.stack} {l.scale}: {l.case.recorded('trial_gflops')} Gflop/s"
                     for l in lines if len(str(l.case.recorded("trial_gflops") or "").split()) > 1})
    if trials:
        out += [Heading(3, "Solves per run (Rmax is the best PASSED one)"), bullets(trials)]
    ceiling = sorted({f"{l.case.name} on {l.where} ({l.stack}): {l.case.recorded('ceiling_warnings')}"
                      for l in lines if l.case.recorded("ceiling_warnings")})
    if ceiling:
        out += [Heading(3, "DGEMM ceiling warnings"), bullets(ceiling)]
    return out


def hpl_section(results: Table, all_series: Sequence[Series]) -> list[Block]:
    lines = hpl_lines(results)
    out: list[Block] = [Heading(2, "HPL")]
    if not lines:
        return out + [Text("No HPL results.")]
    out.append(table(HPL_HEADER, [_hpl_cells(line) for line in lines]))
    hpl = [s for s in all_series if s.bench.section == "hpl"]
    for where in sorted({s.key.where for s in hpl}):
        out += _hpl_where(where, _hpl_axis_series(results, [s for s in hpl if s.key.where == where]))
    return out + _hpl_notes(lines)
