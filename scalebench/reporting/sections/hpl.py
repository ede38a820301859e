"""The report's HPL section: the table (also printed on the terminal) with the efficiency HPL's
scalability model expects beside the measured one, Rmax and efficiency vs node count with the
linear-scaling line and the model's curve, and how each deck was chosen."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Sequence

import polars as pl

from scalebench.analysis import scaling
from scalebench.benchmarks import lookup
from scalebench.reporting import expected as model_expected
from scalebench.reporting import noise, series
from scalebench.reporting.document import Block, Chart, Figure, Heading, Line, Panel, Text, bullets, table, text_table
from scalebench.reporting.expected import Expected, Point
from scalebench.reporting.records import Case
from scalebench.reporting.sections.common import fmt, measured_line, slug, ylabel
from scalebench.reporting.sections.energy import energy_blocks, per_watt_cell
from scalebench.reporting.series import Series, axis_label
from scalebench.reporting.table import Table, exact_median, per_table
from scalebench.site.thresholds import report_flags


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


HPL_HEADER = ("System", "Stack", "Scale", "Nodes", "Ranks", "N", "NB", "P x Q",
              "Rmax (Gflop/s)", "Rpeak (Gflop/s)", "Efficiency", "Expected", "Model", "Clock (GHz)",
              "DGEMM (Gflop/s)", "Rmax/DGEMM", "Gflop/s/W", "Solve CV", "Noise", "Result", "Runs")
TURBO = "clock above nominal (turbo)"
CEILING_NOT_VALID = "ceiling not valid (interference or clock change)"
NOISY = "NOISY"  # a line only noisy runs measured starts so


def efficiency_cell(efficiency: float | None) -> str:
    """Rmax over the nominal Rpeak (TOP500's convention); above 100% only a clock above nominal explains it."""
    if efficiency is None:
        return "-"
    return f"{efficiency:.1f}%" + (f", {TURBO}" if efficiency > 100 else "")


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


def _hpl_cells(line: HplLine) -> tuple[str, ...]:
    expected, word = _expected_cells(line)
    return (line.where, line.stack, line.scale, fmt(line.nodes), fmt(line.ranks), fmt(line.n),
            fmt(line.nb), line.grid or "-", fmt(line.rmax, ".2f"), fmt(line.rpeak, ".1f"),
            efficiency_cell(line.efficiency), expected, word, fmt(line.clock, ".2f"), fmt(line.dgemm, ".1f"),
            of_ceiling_cell(line.rmax, line.dgemm), per_watt_cell(line),
            "-" if line.solve_cv is None else f"{line.solve_cv:.1%}", line.noise or ("quiet" if line.examined else "-"), line.result,
            str(line.runs))


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


def _model_lines(efficiency: Sequence[Series], lines: Sequence[HplLine]) -> list[Line]:
    """Per stack, the model's expected efficiency at the series' points, dashed in the stack's colour.
    At one x, as in the series, the configuration with the most cores counts."""
    out = []
    for s in efficiency:
        expected: dict[int, tuple[int, float]] = {}
        for line in lines:
            point = line.point()
            found = line.expected
            if point is None or found is None or found.efficiency is None or line.stack != s.key.stack \
                    or line.where != s.key.where:
                continue
            x = point.cores if s.axis == "cores" else point.nodes
            if x in s.points and point.cores >= expected.get(x, (0, 0.0))[0]:
                expected[x] = (point.cores, found.efficiency)
        if len(expected) >= 2:
            xs = sorted(expected)
            out.append(Line(f"{s.key.stack} (model)", tuple(xs), tuple(expected[x][1] for x in xs), s.key.stack,
                            style="model"))
    return out


def _hpl_where(where: str, hpl: Sequence[Series], lines: Sequence[HplLine]) -> list[Block]:
    rmax = series.select(hpl, figure="rmax")
    efficiency = series.select(hpl, figure="efficiency")
    if not rmax:
        return []
    axis = rmax[0].axis
    chart = Chart(slug("hpl", where), f"HPL on {where}: Rmax and efficiency vs {axis_label(axis).lower()}, per stack "
                                      "(dashed: HPL's scalability model, calibrated on these results)", (
        Panel(f"Rmax ({where})", axis_label(axis), ylabel(rmax[0]),
              tuple(line for s in rmax for line in (measured_line(s), _linear(s, "linear scaling"))), y_from_zero=True),
        Panel(f"Efficiency Rmax/Rpeak ({where})", axis_label(axis), "Efficiency (%)",
              tuple(measured_line(s) for s in efficiency) + tuple(_model_lines(efficiency, lines)), y_from_zero=True),
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
        Text("Efficiency = Rmax / nominal Rpeak of the cores used (TOP500 convention); above 100% the cores ran "
             "above their nominal clock (turbo). Clock is the clock the DGEMM ceiling implies at Rpeak's flop/cycle, "
             "a lower bound of the clock the cores ran at. Rmax counts only runs whose residual check PASSED. DGEMM "
             "is the ceiling measured in the same job: the best of short repeats of DGEMM on every rank at once, "
             "before and after the solves (the embedded xhpl), or hpcc's StarDGEMM x ranks after them; Rmax/DGEMM "
             "is the share of it HPL reaches, and a ceiling below Rmax is not valid (interference or a clock "
             "change between the two). Solve CV is the coefficient of variation of a run's solves of its deck. "
             "A run is noisy when its solves or DGEMM repeats disagree, or the node probe measured CPU steal or "
             "foreign load during it (thresholds: site_configs/report_flags.yaml; see \"Interference and noise\"): "
             "noisy runs are not counted where clean ones exist, and a configuration with only noisy runs is NOISY "
             "until re-run. Repeated runs of one configuration are summarised by their median (Runs)."),
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
    return out + _model_notes(lines)


def _model_notes(lines: Sequence[HplLine]) -> list[Block]:
    margin = report_flags()["below_model_margin"]
    below = [f"{l.where} {l.stack} {l.scale}: {l.expected.flag} (measured {l.efficiency:.1f}%, expected "
             f"{l.expected.efficiency:.1f}%; {l.expected.note})"
             for l in lines if l.expected and l.expected.status == "below" and l.efficiency is not None
             and l.expected.efficiency is not None]
    none = sorted({f"{l.where} {l.stack}: {l.expected.note}" for l in lines
                   if l.expected and l.expected.status == "none"})
    out: list[Block] = [
        Heading(3, "Expected against measured"),
        Text("Expected is the efficiency HPL's scalability model (Petitet, Whaley, Dongarra, Cleary; "
             "`scalebench.hpl.model`) gives each configuration, calibrated on these results alone: the rank rate of "
             "the stack's smallest HPL configuration (scaled by each job's own DGEMM ceiling where both have one), "
             "latency and bandwidth from the stack's ping-pongs (NetPIPE, OSU, hpcc) at the configuration's "
             "placement, and the bandwidth's fall under load from hpcc's rings at several node counts or the "
             f"fabric class's default (site_configs/fabric_load.yaml). A configuration more than {margin:.0%} below "
             "its expectation (`below_model_margin`, site_configs/report_flags.yaml) is flagged."),
    ]
    if below:
        out.append(bullets(below))
    if none:
        out += [Text("Not expected (the model lacks a figure):"), bullets(none)]
    return out


def hpl_section(results: Table, all_series: Sequence[Series]) -> list[Block]:
    lines = hpl_lines(results)
    out: list[Block] = [Heading(2, "HPL")]
    if not lines:
        return out + [Text("No HPL results.")]
    out.append(table(HPL_HEADER, [_hpl_cells(line) for line in lines]))
    hpl = [s for s in all_series if s.bench.section == "hpl"]
    for where in sorted({s.key.where for s in hpl}):
        out += _hpl_where(where, _hpl_axis_series(results, [s for s in hpl if s.key.where == where]), lines)
    return out + energy_blocks(lines, hpl) + _hpl_notes(lines)
