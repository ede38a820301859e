"""The HPL section's energy part: Gflop/s per watt per case and against node count, each figure with
its source and coverage (scalebench.energy), and the partitions where nothing measured it."""
from __future__ import annotations

from typing import Protocol, Sequence

from scalebench.energy.figures import CORE, JOB_TOTAL, NO_SOURCE
from scalebench.reporting import series
from scalebench.reporting.document import Block, Chart, Figure, Heading, Panel, Text, bullets, table
from scalebench.reporting.records import Case
from scalebench.reporting.sections.common import fmt, measured_line, slug
from scalebench.reporting.series import Series, axis_label

CORE_FIGURE, JOB_FIGURE = "gflops_per_watt", "job_gflops_per_watt"


class HplLine(Protocol):
    """What this part reads of a line of the HPL table (scalebench.reporting.hpl_table.HplLine)."""

    @property
    def where(self) -> str: ...
    @property
    def stack(self) -> str: ...
    @property
    def scale(self) -> str: ...
    @property
    def nodes(self) -> int | None: ...
    @property
    def rmax(self) -> float | None: ...
    @property
    def gflops_per_watt(self) -> float | None: ...
    @property
    def job_gflops_per_watt(self) -> float | None: ...
    @property
    def case(self) -> Case: ...


def per_watt_cell(line: HplLine) -> str:
    """The HPL table's column: the core phase's figure, else the job total's, marked so."""
    if line.gflops_per_watt is not None:
        return f"{line.gflops_per_watt:.3g}"
    if line.job_gflops_per_watt is not None:
        return f"{line.job_gflops_per_watt:.3g} (job total)"
    return "-"


def _chart(where: str, hpl: Sequence[Series]) -> list[Block]:
    core, job = series.select(hpl, figure=CORE_FIGURE), series.select(hpl, figure=JOB_FIGURE)
    if not core and not job:
        return []
    axis = (core or job)[0].axis
    panels = [Panel(f"{title} ({where})", axis_label(axis), "Gflop/s per watt",
                    tuple(measured_line(s) for s in chosen), y_from_zero=True)
              for title, chosen in ((f"Gflop/s per watt, {CORE}", core), (f"Rmax per watt, {JOB_TOTAL}", job))
              if chosen]
    return [Figure(Chart(slug("energy", where), f"HPL on {where}: Gflop/s per watt vs "
                                                f"{axis_label(axis).lower()}, per stack", tuple(panels)))]


TITLE = "Energy to solution"


def energy_blocks(lines: Sequence[HplLine], hpl_series: Sequence[Series]) -> list[Block]:
    out: list[Block] = [
        Heading(3, TITLE),
        Text(f"Green500 Level 1: Rmax divided by the average power over the {CORE}, the solve HPL dates itself "
             "(HPL 2.1 and later; hpcc dates its whole HPL section), not the set-up, matrix generation or DGEMM "
             f"ceiling. Slurm's accounting of the allocation is shown beside it as the {JOB_TOTAL}. Each figure "
             "names its source and coverage: only whole-node power is what Green500 asks for; CPU package, DRAM "
             "or GPU counters leave the rest of the node out. A figure comes only from a job that had its nodes "
             "to itself."),
    ]
    measured = [l for l in lines if l.gflops_per_watt is not None or l.job_gflops_per_watt is not None]
    if measured:
        out.append(table(("System", "Stack", "Scale", "Nodes", "Rmax (Gflop/s)", "Energy (kJ)", "Power (kW)",
                          "Gflop/s/W", "Job energy (kJ)", "Job power (kW)", "Job Gflop/s/W"),
                         [(l.where, l.stack, l.scale, fmt(l.nodes), fmt(l.rmax, ".2f"),
                           fmt(l.case.figure("energy"), ".4g"), fmt(l.case.figure("power"), ".4g"),
                           fmt(l.gflops_per_watt, ".3g"), fmt(l.case.figure("job_energy"), ".4g"),
                           fmt(l.case.figure("job_power"), ".4g"), fmt(l.job_gflops_per_watt, ".3g"))
                          for l in measured],
                         [f"Source: {l.case.recorded('energy_source') or '-'}" for l in measured]))
    for where in sorted({s.key.where for s in hpl_series}):
        out += _chart(where, [s for s in hpl_series if s.key.where == where])
    unmeasured = sorted({f"{l.where} {l.stack} {l.scale}: "
                         f"{l.case.recorded('energy_source') or NO_SOURCE + ' (the run recorded none)'}"
                         for l in lines if l not in measured})
    if unmeasured:
        out += [Text("Not measured:"), bullets(unmeasured)]
    return out
