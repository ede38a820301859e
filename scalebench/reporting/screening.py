"""Node screening in reports and `scalebench screen`: the nodes to drain and the links to check.

- ScreeningCheck: every node and link of a job measured at once. Each job is judged on its own
  (scalebench.screening.verdict: its nodes and pairs against their peers of the same minute); a node
  screened by several jobs counts by its newest, so a re-screen after a repair clears it.
- NodeHealthCheck (one case per node, ReFrame's --distribute): per system, partition, stack and
  figure, each node's one-node figure against the median of all nodes (a node measured several times
  counts with its median).
Thresholds: site_configs/report_flags.yaml (screen_*).
"""
from __future__ import annotations

import shlex
import statistics
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from scalebench import benchmarks
from scalebench.errors import InputError
from scalebench.reporting.document import Block, Chart, Figure, Heading, Line, Mark, Panel, Table, Text, table
from scalebench.reporting.records import Case, Session
from scalebench.screening.jobs import hostlist, natural
from scalebench.screening.probe import parse_probe
from scalebench.screening.verdict import NODE_FIGURES, Score, Verdict, judge, score, thresholds
from scalebench.site.partition import SCREEN_MIN_NODES
from scalebench.site.thresholds import report_flags
from scalebench.validation import is_number

SCREENING_CHECK = "ScreeningCheck"
HEALTH_CHECK = "NodeHealthCheck"
CHECKS = (SCREENING_CHECK, HEALTH_CHECK)  # the results this module reads


# --- ScreeningCheck -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ScreenedJob:
    case: Case
    completed: float  # UNIX time its job completed (0 when unknown)
    verdict: Verdict

    @property
    def runs_on(self) -> tuple[str, str, str]:
        """System, partition and ReFrame environment: what --system and -p select."""
        return self.case.system, self.case.partition, self.case.environ

    @property
    def title(self) -> str:
        result = self.verdict.result
        return (f"{self.case.name} on {self.case.system}:{self.case.partition} ({self.case.stack}): "
                f"{len(result.nodes)} nodes, {len(result.pairs)} pairs in {result.settings['rounds']:g} rounds")


def screened_jobs(sessions: Iterable[Session], flags: Mapping[str, float] | None = None) -> tuple[list[ScreenedJob], list[str]]:
    """Every ScreeningCheck job measured, oldest first, judged; notes on those that cannot be read."""
    flags = flags or report_flags()
    found, notes = [], []
    for session in sessions:
        for case in session.cases:
            if case.benchmark != SCREENING_CHECK or not case.measured:
                continue
            text = case.provenance.get("probe_output")
            if not isinstance(text, str) or not text:
                notes.append(f"{case.name} in {case.report}: no probe_output recorded (a run report is needed, "
                             "not only perflogs)")
                continue
            try:
                verdict = judge(parse_probe(text), flags)
            except InputError as err:
                notes.append(f"{case.name} in {case.report}: probe output: {err}")
                continue
            completed = case.job_interval[1] if case.job_interval else 0.0
            found.append(ScreenedJob(case, completed, verdict))
    return sorted(found, key=lambda job: (job.completed, job.case.report)), notes


def newest(jobs: Sequence[ScreenedJob]) -> dict[tuple[tuple[str, str, str], str], ScreenedJob]:
    """((system, partition, environment), node) -> the newest job that screened the node there."""
    last: dict[tuple[tuple[str, str, str], str], ScreenedJob] = {}
    for job in jobs:  # oldest first
        for node in job.verdict.result.node_names():
            last[(job.runs_on, node)] = job
    return last


def to_drain(jobs: Sequence[ScreenedJob]) -> list[str]:
    """Nodes flagged by the newest job that screened them (on a partition, with a stack)."""
    last = newest(jobs)
    return sorted({node for job in jobs for node in job.verdict.flagged_nodes() if last[(job.runs_on, node)] is job},
                  key=natural)


def links_to_check(jobs: Sequence[ScreenedJob]) -> list[str]:
    """Pairs flagged for the link itself, by the newest job that screened both their nodes."""
    last = newest(jobs)
    return list(dict.fromkeys(f"{v.pair.a}-{v.pair.b}" for job in jobs for v in job.verdict.flagged_links()
                              if all(last[(job.runs_on, n)] is job for n in v.pair.nodes)))


def rescreen_commands(jobs: Sequence[ScreenedJob], nodes: Sequence[str]) -> list[str]:
    """Per partition and stack, the ScreeningCheck of the flagged nodes beside healthy peers of their
    jobs (one more than the flagged, at least SCREEN_MIN_NODES): the median needs peers."""
    last = newest(jobs)
    flagged = set(nodes)
    groups: dict[tuple[str, str, str], list[str]] = {}
    for (where, name), job in last.items():
        if name in job.verdict.flagged_nodes():
            groups.setdefault(where, []).append(name)
    commands = []
    for where, bad in groups.items():
        healthy = sorted({name for (there, name), job in last.items()
                          if there == where and name not in flagged}, key=natural)
        peers = healthy[:max(SCREEN_MIN_NODES, len(bad) + 1)]
        system, partition, environ = where
        commands.append(" ".join([".venv/bin/reframe -C site_configs/slurm.py -c reframe_tests/screening.py",
                                  "-n ScreeningCheck", f"--system {shlex.quote(f'{system}:{partition}')}",
                                  f"-p {shlex.quote('^' + environ + '$')}",
                                  f"-S screen_nodes={shlex.quote(hostlist([*bad, *peers]))}", "-r"]))
    return commands


def _pct(value: float) -> str:
    return f"{value:+.0%}"


def node_table(job: ScreenedJob) -> Table:
    """The flagged nodes of a job, the suspected cause and every figure each is behind on."""
    rows = [[v.node, v.cause, "; ".join(f"{f.label} {s.value:.4g} {f.unit} ({_pct(s.deviation)} vs median "
                                         f"{s.median:.4g}{'' if s.z is None else f', z {s.z:+.1f}'})"
                                         for f, s in v.scores)]
            for v in job.verdict.nodes]
    return table(["node", "suspected cause", "behind its peers on"], rows)


def link_table(job: ScreenedJob) -> Table:
    """The flagged pairs of a job: the link itself, or explained by a flagged node of the pair."""
    rows = []
    for v in job.verdict.links:
        p = v.pair
        value = p.bandwidth_mbs if v.figure.name == "bandwidth_mbs" else p.latency_us
        rows.append([f"{p.a}-{p.b}", f"{p.round} ({p.kind})", f"{v.figure.name.split('_')[0]} {value:.4g} {v.figure.unit}",
                     f"{v.score.value:.2f} of the best of its nodes ({_pct(v.score.deviation)} vs median "
                     f"{v.score.median:.2f})", v.explained_by or "link"])
    return table(["pair", "round", "measured", "against its nodes' best", "suspected cause"], rows)


def medians_text(job: ScreenedJob) -> str:
    values = job.verdict.node_values
    parts = []
    for figure in NODE_FIGURES:
        if values.get(figure.name):
            parts.append(f"{figure.label} {statistics.median(values[figure.name].values()):.4g} {figure.unit}")
    return "Medians: " + ", ".join(parts) + "."


def chart(job: ScreenedJob, index: int) -> Chart:
    """Every node's figures as a share of the job's median, nodes in job order; flagged ones starred."""
    names = job.verdict.result.node_names()
    position = {name: float(i + 1) for i, name in enumerate(names)}
    panels = []
    for title, causes in (("Compute and memory", ("compute", "memory")), ("Links (best pair; latency: higher is worse)", ("NIC",))):
        shown = [f for f in NODE_FIGURES if f.cause in causes and f.name in job.verdict.node_scores]
        lines = []
        for figure in shown:
            values = job.verdict.node_values[figure.name]
            median = statistics.median(values.values())
            lines.append(Line(figure.label, tuple(position[n] for n in names if n in values),
                              tuple(100 * values[n] / median for n in names if n in values), figure.label))
        marks = []
        for v in job.verdict.nodes:  # one star per node and panel, on its first figure there
            f, s = next(((f, s) for f, s in v.scores if f in shown), (None, None))
            if f is not None and s is not None:
                marks.append(Mark(position[v.node], 100 * s.value / s.median, f"{v.node} ({v.cause})", f.label))
        panels.append(Panel(title, "node (job order)", "% of the job's median", tuple(lines), tuple(marks),
                            y_from_zero=True))
    return Chart(f"screening-{index}", f"{job.title}: each node against the median of the job's nodes "
                                       f"(1 = {names[0]}, {len(names)} = {names[-1]}); flagged nodes starred.",
                 tuple(panels))


def job_blocks(job: ScreenedJob, index: int, figure: bool) -> list[Block]:
    verdict = job.verdict
    out: list[Block] = [Text(f"**{job.title}**. {medians_text(job)} Flagged nodes: "
                             f"{hostlist(verdict.flagged_nodes()) or 'none'}; flagged links: "
                             f"{', '.join(f'{v.pair.a}-{v.pair.b}' for v in verdict.flagged_links()) or 'none'}.")]
    if verdict.nodes:
        out.append(node_table(job))
    if verdict.links:
        out.append(link_table(job))
    if verdict.notes:
        out.append(Text("Not compared: " + "; ".join(verdict.notes)))
    if figure:
        out.append(Figure(chart(job, index)))
    return out


# --- NodeHealthCheck ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Screen:
    where: tuple[str, str, str]  # system, partition, stack
    figure: str
    unit: str
    direction: str
    scores: tuple[Score, ...]  # worst first


def screens(sessions: Iterable[Session], check: str = HEALTH_CHECK) -> tuple[list[Screen], list[str]]:
    """The screens of every figure with a direction of the one-node cases of `check`; notes on cases
    left out. A node measured several times counts with its median."""
    bench = benchmarks.lookup(check)
    found: dict[tuple[tuple[str, str, str], str], dict[str, list[float]]] = {}
    units: dict[str, str] = {}
    notes = []
    for session in sessions:
        for case in session.cases:
            if case.benchmark != check or not case.measured:
                continue
            nodes = [n for n in case.nodelist.split(",") if n]
            if len(nodes) != 1:
                notes.append(f"{case.name} in {case.report}: ran on {len(nodes)} nodes, not one")
                continue
            for figure, (value, unit) in case.figures.items():
                if is_number(value) and bench.figure(figure).direction != "none":
                    key = ((case.system, case.partition, case.stack), figure)
                    found.setdefault(key, {}).setdefault(nodes[0], []).append(float(value))
                    units[figure] = unit
    limits = thresholds(report_flags())
    out = []
    for (where, figure), by_node in sorted(found.items()):
        values = {node: statistics.median(v) for node, v in by_node.items()}
        if len(values) < SCREEN_MIN_NODES:
            notes.append(f"{':'.join(where[:2])} {where[2]} {figure}: {len(values)} node(s), fewer than "
                         f"{SCREEN_MIN_NODES} to compare")
            continue
        if statistics.median(values.values()) <= 0:
            continue
        direction = bench.figure(figure).direction
        out.append(Screen(where, figure, units[figure], direction, tuple(score(values, direction, limits))))
    return out, notes


def flagged_nodes(found: Sequence[Screen]) -> list[str]:
    return sorted({s.name for screen in found for s in screen.scores if s.flagged}, key=natural)


def screen_table(found: Sequence[Screen]) -> Table:
    rows = []
    for screen in found:
        for s in screen.scores:
            rows.append([f"{screen.where[0]}:{screen.where[1]}", screen.where[2], screen.figure, s.name,
                         f"{s.value:.4g} {screen.unit}", f"{s.median:.4g}", f"{s.deviation:+.1%}",
                         "-" if s.z is None else f"{s.z:+.1f}", "FLAGGED: " + s.why if s.flagged else ""])
    return table(["where", "stack", "figure", "node", "value", "median", "vs median", "robust z", ""], rows)


# --- the report's section ---------------------------------------------------------------------------

def blocks(sessions: Sequence[Session], level: int = 2) -> list[Block]:
    """The report's section; nothing when no node was screened."""
    jobs, job_notes = screened_jobs(sessions)
    found, notes = screens(sessions)
    if not (jobs or job_notes or found or notes):
        return []
    out: list[Block] = [Heading(level, "Node screening")]
    if jobs or job_notes:
        drain, links = to_drain(jobs), links_to_check(jobs)
        out.append(Text(f"{SCREENING_CHECK}: every node (DGEMM, STREAM) and node pair (latency, bandwidth) of a job "
                        "measured at once, each against the median of its peers in that job, worse side only; a "
                        "node counts by the newest job that screened it. To drain: "
                        f"{hostlist(drain) or 'none'}; links to check: {', '.join(links) or 'none'}."))
        for index, job in enumerate(jobs, start=1):
            out += job_blocks(job, index, figure=True)
        if job_notes:
            out.append(Text("Left out: " + "; ".join(job_notes)))
    if found or notes:
        nodes = flagged_nodes(found)
        out.append(Text(f"{HEALTH_CHECK} on every node (`--distribute`), each node against the median of its "
                        f"peers. Flagged: {hostlist(nodes) if nodes else 'none'}."))
        if found:
            out.append(screen_table(found))
        if notes:
            out.append(Text("Left out: " + "; ".join(notes)))
    return out
