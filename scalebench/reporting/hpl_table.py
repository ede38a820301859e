"""The HPL table of a report: one line per HPL configuration (scale, geometry, deck) on one system and
stack, the medians of its runs, with the efficiency HPL's scalability model expects beside the measured
one. HPL's report section (scalebench/benchmarks/hpl/section.py) shows it, the terminal prints it, and
acceptance and `predict --from` read the model's expectations and the measured points from it."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Sequence

import polars as pl

from scalebench.registry import lookup
from scalebench.reporting import expected as model_expected
from scalebench.reporting import noise, series
from scalebench.reporting.document import Table as TableBlock, table, text_table
from scalebench.reporting.expected import Expected, Point
from scalebench.reporting.records import Case
from scalebench.reporting.sections.common import fmt
from scalebench.reporting.sections.energy import per_watt_cell
from scalebench.reporting.table import Table, exact_median, per_table
from scalebench.site.thresholds import report_flags


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
    clock: float | None = None  # GHz, from the DGEMM ceiling (a lower bound)
    solve_cv: float | None = None  # a share
    noise: str = ""  # "" quiet; else why the figures are not counted until a re-run
    examined: bool = False  # a counted run recorded what a noise verdict needs (else "quiet" is not known)
    noisy_runs: int = 0
    gflops_per_watt: float | None = None  # core phase (scalebench.energy)
    job_gflops_per_watt: float | None = None  # job total, includes set-up
    expected: Expected | None = None  # what HPL's scalability model expects (scalebench.reporting.expected)

    def point(self) -> Point | None:
        """The configuration as the model reads it; None when a figure it needs is missing, or only noisy
        runs measured it (no evidence of the machine)."""
        deck = self.case.recorded("hpl_deck") or {}
        try:
            p, q = (int(v) for v in self.grid.split(" x "))
        except ValueError:
            return None
        if not (self.nodes and self.ranks and self.n and self.nb and self.rmax and self.rpeak) \
                or self.noise.startswith(NOISY):
            return None
        return Point(self.where, self.stack, self.nodes, self.ranks, int(deck.get("threads_per_rank") or 1),
                     self.n, int(self.nb), p, q, self.rmax, self.rpeak, self.dgemm)


def _result(passed: int, runs: int) -> str:
    return "PASS" if passed == runs else "FAIL" if passed == 0 else f"{passed}/{runs} PASS"


# Each line's medians over its counted runs; N only places a case on its line.
_MEDIANS = ("rmax", "rpeak_gflops", "efficiency", "dgemm_ceiling", "dgemm_clock", "gflops_per_watt",
            "job_gflops_per_watt")
_FIGURES = (*_MEDIANS, "n")


def _deck_key(deck_json: str | None, n_figure: float | None) -> tuple[int | None, Any, str]:
    """(N, NB, 'P x Q') of a case: its deck's, N from its figure without one."""
    deck = json.loads(deck_json) if deck_json else {}
    n = deck.get("n") or n_figure
    return int(n) if n else None, deck.get("nb"), f"{deck['p']} x {deck['q']}" if deck else ""


@per_table
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
    # Noisy runs (scalebench.reporting.noise) are not counted where the line has clean ones.
    verdicts = noise.table_verdicts(results, report_flags(), within=pl.col("case").is_in(cases["case"].to_list()))
    noisy_rows = [row for row, verdict in verdicts.items() if verdict.noise.noisy]
    cvs = {row: verdict.noise.solve_cv for row, verdict in verdicts.items() if verdict.noise.solve_cv is not None}
    examined_rows = [row for row, verdict in verdicts.items() if verdict.noise.evidence]
    line = ["system", "partition", "stack", "num_nodes", "num_tasks", "key"]
    measured, noisy, counted = pl.col("measured"), pl.col("noisy"), pl.col("counted")
    cases = cases.with_columns(noisy=measured & pl.col("case").is_in(noisy_rows),
                               solve_cv=pl.col("case").replace_strict(cvs, default=None, return_dtype=pl.Float64))
    cases = cases.with_columns(counted=measured & (~noisy | ~(measured & ~noisy).any().over(line)))
    grouped = cases.group_by(line, maintain_order=True).agg(
        *(exact_median(pl.col(name).filter(counted)).alias(name) for name in (*_MEDIANS, "solve_cv")),
        passed=(pl.col("result") == "pass").sum(), runs=pl.len(), measured_runs=measured.sum(),
        noisy_runs=noisy.sum(), examined=pl.col("case").filter(counted).is_in(examined_rows).any(),
        latest=pl.col("case").sort_by("session_start", maintain_order=True).last(),
        latest_noisy=pl.col("case").filter(noisy).sort_by(pl.col("session_start").filter(noisy),
                                                          maintain_order=True).last())
    latest = results.cases_by_id(pl.col("case").is_in(grouped["latest"].to_list()))
    lines = []
    for row in grouped.iter_rows(named=True):
        n, nb, grid, scale = shown[row["key"]]
        why = ""
        if row["noisy_runs"]:
            reasons = "; ".join(verdicts[row["latest_noisy"]].noise.reasons)
            why = (f"{NOISY}: {reasons}" if row["noisy_runs"] == row["measured_runs"]
                   else f"{row['noisy_runs']} of {row['measured_runs']} runs noisy, not counted ({reasons})")
        lines.append(HplLine(f"{row['system']}:{row['partition']}", row["stack"], scale, row["num_nodes"],
                             row["num_tasks"], n, nb, grid, rmax=row["rmax"], rpeak=row["rpeak_gflops"],
                             efficiency=row["efficiency"], dgemm=row["dgemm_ceiling"],
                             result=_result(row["passed"], row["runs"]), case=latest[row["latest"]][1],
                             runs=row["runs"], clock=row["dgemm_clock"], solve_cv=row["solve_cv"], noise=why,
                             examined=row["examined"], noisy_runs=row["noisy_runs"], gflops_per_watt=row["gflops_per_watt"],
                             job_gflops_per_watt=row["job_gflops_per_watt"]))
    lines = sorted(lines, key=lambda l: (l.where, l.stack, l.nodes or 0, l.ranks or 0, l.scale))
    return _with_expectations(results, lines)


def _with_expectations(results: Table, lines: list[HplLine]) -> list[HplLine]:
    """The lines with what the model, calibrated on the same results, expects of each."""
    points = [line.point() for line in lines]
    found = model_expected.expectations(model_expected.link_cases(results), [p for p in points if p is not None],
                                        report_flags()["below_model_margin"])
    return [replace(line, expected=found.get(point)) if point else line for line, point in zip(lines, points)]


SECTION = "HPL"  # the report section's heading
HPL_HEADER = ("System", "Stack", "Scale", "Nodes", "Ranks", "N", "NB", "P x Q",
              "Rmax (Gflop/s)", "Rpeak (Gflop/s)", "Efficiency", "Expected", "Model", "Clock (GHz)",
              "DGEMM (Gflop/s)", "Rmax/DGEMM", "Gflop/s/W", "Solve CV", "Noise", "Result", "Runs")
# The report splits the line in two tables: what a committee compares, and how the figures came about;
# the noise verdict's reasons and a clock above nominal go under the core table's row.
HPL_CORE = ("System", "Stack", "Scale", "Nodes", "Ranks", "N", "NB", "P x Q", "Rmax (Gflop/s)", "Rpeak (Gflop/s)",
            "Efficiency", "Result")
HPL_DETAIL = ("System", "Stack", "Scale", "Efficiency", "Expected", "Model", "Clock (GHz)", "DGEMM (Gflop/s)",
              "Rmax/DGEMM", "Gflop/s/W", "Solve CV", "Noise", "Runs")  # the measured efficiency beside the model's
TURBO = "clock above nominal (turbo)"
CEILING_NOT_VALID = "ceiling not valid (interference or clock change)"
NOISY = "NOISY"  # a line only noisy runs measured starts so


def _percent(efficiency: float) -> str:
    return f"{efficiency:.1f}%"


def efficiency_cell(efficiency: float | None) -> str:
    """Rmax over the nominal Rpeak (TOP500's convention); above 100% only a clock above nominal explains it."""
    if efficiency is None:
        return "-"
    return _percent(efficiency) + (f", {TURBO}" if efficiency > 100 else "")


def of_ceiling_cell(rmax: float | None, ceiling: float | None) -> str:
    """Rmax as a share of the DGEMM ceiling of the same job; a ceiling Rmax exceeds is none."""
    if not rmax or not ceiling:
        return "-"
    return CEILING_NOT_VALID if rmax > ceiling else f"{100 * rmax / ceiling:.1f}%"


def _expected_cells(line: HplLine) -> tuple[str, str]:
    """(expected efficiency, the model's word on it)."""
    found = line.expected
    if found is None or found.efficiency is None:
        return "-", "-"
    word = {"calibration": "calibration", "below": found.flag, "ok": "as expected"}[found.status]
    return f"{found.efficiency:.1f}%", word


def hpl_cells(line: HplLine) -> tuple[str, ...]:
    expected, word = _expected_cells(line)
    return (line.where, line.stack, line.scale, fmt(line.nodes), fmt(line.ranks), fmt(line.n),
            fmt(line.nb), line.grid or "-", fmt(line.rmax, ".2f"), fmt(line.rpeak, ".1f"),
            efficiency_cell(line.efficiency), expected, word, fmt(line.clock, ".2f"), fmt(line.dgemm, ".1f"),
            of_ceiling_cell(line.rmax, line.dgemm), per_watt_cell(line),
            "-" if line.solve_cv is None else f"{line.solve_cv:.1%}", line.noise or ("quiet" if line.examined else "-"), line.result,
            str(line.runs))


def noise_word(line: HplLine) -> str:
    """The noise verdict in a word: NOISY (only noisy runs), "k noisy" (set aside), quiet, or - (not known)."""
    if line.noise.startswith(NOISY):
        return NOISY
    if line.noise:
        return f"{line.noisy_runs} noisy"
    return "quiet" if line.examined else "-"


def line_notes(line: HplLine) -> tuple[str, ...]:
    """What goes under a line's row: why it is noisy, and a clock above nominal."""
    turbo = line.efficiency is not None and line.efficiency > 100
    return tuple(note for note in (line.noise, f"Efficiency above 100%: {TURBO}" if turbo else "") if note)


_SHORT_WORDS = {CEILING_NOT_VALID: "not valid", model_expected.BELOW_MODEL: "below model"}  # in a column of the report


def hpl_tables(lines: Sequence[HplLine]) -> tuple[TableBlock, TableBlock]:
    """(core, detail): the lines' cells (hpl_cells) in the report's two tables, notes under their rows: the
    noise verdict's reasons and a clock above nominal under the core's, a ceiling not valid under the
    detail's (a model below its expectation has its own list, "Expected against measured")."""
    rows = [dict(zip(HPL_HEADER, hpl_cells(line)), Noise=noise_word(line),
                 Efficiency="-" if line.efficiency is None else _percent(line.efficiency)) for line in lines]
    return (table(HPL_CORE, [[row[name] for name in HPL_CORE] for row in rows], [line_notes(l) for l in lines]),
            table(HPL_DETAIL, [[_SHORT_WORDS.get(row[name], row[name]) for name in HPL_DETAIL] for row in rows],
                  [f"Rmax/DGEMM: {CEILING_NOT_VALID}" if row["Rmax/DGEMM"] == CEILING_NOT_VALID else ""
                   for row in rows]))


def model_expectations(results: Table) -> dict[tuple[str, str, str, int], float]:
    """(system, partition, stack, nodes) -> the efficiency (%) the model expects there, as the series
    count a node count (its configuration with the most cores); calibration runs expect nothing."""
    best: dict[tuple[str, str, str, int], tuple[int, float | None]] = {}
    for line in hpl_lines(results):
        point = line.point()
        if point is None or line.expected is None:
            continue
        system, partition = line.where.split(":", 1)
        key = (system, partition, line.stack, point.nodes)
        value = line.expected.efficiency if line.expected.status in ("ok", "below") else None
        if point.cores >= best.get(key, (0, None))[0]:
            best[key] = (point.cores, value)
    return {key: value for key, (_, value) in best.items() if value is not None}


def hpl_terminal_table(results: Table) -> str:
    return text_table(HPL_HEADER, [hpl_cells(line) for line in hpl_lines(results)])
