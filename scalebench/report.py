"""Reports from the results store: a terminal table and a Markdown file (HPL section)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from scalebench import paths
from scalebench.results import Case, Session, ingest


@dataclass(frozen=True)
class HplLine:
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
    result: str
    case: Case


def hpl_lines(sessions: Iterable[Session]) -> list[HplLine]:
    lines = []
    for session in sessions:
        for case in session.cases:
            if case.benchmark != "HPLCheck" or case.result == "skip":
                continue
            deck = case.provenance.get("hpl_deck") or {}
            n = deck.get("n") or case.figure("n")
            lines.append(HplLine(
                where=f"{case.system}:{case.partition}", stack=case.stack,
                scale=str(case.params.get("scale", "")), nodes=case.num_nodes, ranks=case.num_tasks,
                n=int(n) if n else None, nb=deck.get("nb"),
                grid=f"{deck['p']} x {deck['q']}" if deck else "",
                rmax=case.figure("rmax"), rpeak=case.figure("rpeak_gflops"),
                efficiency=case.figure("efficiency"), dgemm=case.figure("dgemm_ceiling"),
                result=case.result, case=case))
    return sorted(lines, key=lambda l: (l.where, l.stack, l.nodes or 0, l.ranks or 0, l.case.session_start))


def _fmt(value: float | int | None, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


HPL_HEADER = ("System", "Stack", "Scale", "Nodes", "Ranks", "N", "NB", "P x Q",
              "Rmax (Gflop/s)", "Rpeak (Gflop/s)", "Efficiency", "DGEMM (Gflop/s)", "Result")


def _hpl_cells(line: HplLine) -> tuple[str, ...]:
    efficiency = "-" if line.efficiency is None else f"{line.efficiency:.1f}%"
    return (line.where, line.stack, line.scale, _fmt(line.nodes), _fmt(line.ranks), _fmt(line.n),
            _fmt(line.nb), line.grid or "-", _fmt(line.rmax, ".2f"), _fmt(line.rpeak, ".1f"),
            efficiency, _fmt(line.dgemm, ".1f"), line.result.upper())


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Aligned plain-text table for terminals."""
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([fmt.format(*header), rule, *(fmt.format(*row) for row in rows)])


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    escape = lambda cell: str(cell).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def hpl_terminal_table(sessions: Iterable[Session]) -> str:
    return text_table(HPL_HEADER, [_hpl_cells(line) for line in hpl_lines(sessions)])


def _overhead_lines(sessions: Sequence[Session]) -> list[str]:
    out = []
    for session in sessions:
        ran = [c for c in session.cases if c.result != "skip" and c.time_run_s is not None]
        if session.elapsed_s is None or not ran:
            continue
        overhead = session.elapsed_s - sum(c.time_run_s or 0 for c in ran)
        out.append(f"- `{session.report}`: {session.elapsed_s:.1f} s wall for {len(ran)} case(s); "
                   f"ReFrame overhead {overhead:.1f} s ({overhead / len(ran):.1f} s per case: "
                   "session wall time minus the jobs' run times)")
    return out


def render_markdown(sessions: Sequence[Session], warnings: Sequence[str]) -> str:
    lines = hpl_lines(sessions)
    out = ["# scalebench report", "",
           f"Generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} from "
           f"{len(sessions)} run report(s).", "",
           "## HPL", ""]
    if lines:
        out += [markdown_table(HPL_HEADER, [_hpl_cells(line) for line in lines]), "",
                "Efficiency = Rmax / nominal Rpeak of the cores used (TOP500 convention). "
                "Rmax counts only runs whose residual check PASSED. DGEMM is the measured ceiling "
                "(hpcc StarDGEMM x ranks, all ranks busy): the clock under load can exceed the nominal "
                "one, so DGEMM may exceed Rpeak.", "", "### How N was chosen", ""]
        out += sorted({f"- {l.where} {l.stack} {l.scale}: {l.case.provenance.get('n_policy', 'unknown')}; "
                       f"deck from {l.case.provenance.get('deck_source', 'unknown')}"
                       for l in lines})
        out += ["", "### BLAS kernel and Rpeak inputs", ""]
        out += sorted({f"- {l.where} {l.stack}: BLAS kernel {l.case.provenance.get('blas_kernel', 'unknown')}; "
                       f"OpenBLAS reported: {l.case.provenance.get('blas_kernel_used', 'unknown')}"
                       for l in lines})
        ceiling = [f"- {l.case.name} on {l.where} ({l.stack}): {l.case.provenance['ceiling_warnings']}"
                   for l in lines if l.case.provenance.get("ceiling_warnings")]
        if ceiling:
            out += ["", "### DGEMM ceiling warnings", ""] + ceiling
        out += sorted({f"- {l.where}: Rpeak from {l.case.provenance.get('rpeak_derivation', 'unknown')}"
                       for l in lines})
        failed = [l for l in lines if l.result != "pass"]
        if failed:
            out += ["", "### Failures", ""]
            out += [f"- {l.case.name} on {l.where} ({l.stack}): {l.case.fail_phase}: {l.case.fail_reason}"
                    for l in failed]
    else:
        out.append("No HPL results.")
    skipped = sorted({f"- {c.name} on {c.system}:{c.partition}" for s in sessions for c in s.cases
                      if c.result == "skip"})
    if skipped:
        out += ["", "### Skipped (the partition cannot run them; reasons in each run's reframe.log)", ""]
        out += skipped
    overhead = _overhead_lines(sessions)
    if overhead:
        out += ["", "## Runs", ""] + overhead
    if warnings:
        out += ["", "## Warnings", ""] + [f"- {w}" for w in warnings]
    return "\n".join(out) + "\n"


def default_out_dir() -> Path:
    return paths.RESULTS / "reports" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def write_report(results: Sequence[str | Path], out_dir: Path | None = None) -> tuple[Path, list[Session], list[str]]:
    """Write report.md into a new directory; never replaces an existing report."""
    sessions, warnings = ingest(results)
    out_dir = out_dir or default_out_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "report.md"
    suffix = 1
    while target.exists():
        suffix += 1
        target = out_dir / f"report-{suffix}.md"
    target.write_text(render_markdown(sessions, warnings))
    return target, sessions, warnings
