"""Node screening in reports and `scalebench screen`: the nodes to drain and the links to check.

- ScreeningCheck: every node and link of a job measured at once. Each job is judged on its own
  (scalebench.screening.verdict: its nodes and pairs against their peers of the same minute, confirmed
  in every pass of the probe, weighed against the interference its node probe recorded); a node
  screened by several jobs counts by its newest, so a re-screen after a repair clears it. A node or
  link 'not decided' (interference could explain it) is never in the drain list: it is to be screened
  again, with the command given.
- NodeHealthCheck (one case per node, ReFrame's --distribute): per system, partition, stack and
  figure, each node's one-node figure against the median of all nodes (a node measured several times
  counts with its median).
Thresholds: site_configs/report_flags.yaml (screen_*).
"""
from __future__ import annotations

import shlex
import statistics
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from scalebench import registry
from scalebench.errors import InputError
from scalebench.reporting.document import Block, Chart, Figure, Heading, Line, Mark, Panel, Table, Text, table
from scalebench.reporting.records import Case, Session
from scalebench.screening.jobs import hostlist, natural
from scalebench.screening.probe import parse_probe
from scalebench.screening import interference
from scalebench.screening.interference import NodeLoad
from scalebench.screening.verdict import NODE_FIGURES, Figure as ScreenFigure, Score, Thresholds, Verdict, explained, \
    judge, score, thresholds
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
                verdict = judge(parse_probe(text), flags, case.provenance.get("interference"))
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


@dataclass(frozen=True)
class NotDecided:
    name: str  # a node, or a pair 'a-b'
    nodes: tuple[str, ...]  # what a re-screen takes: the node, or the pair's two
    why: str


def not_decided(jobs: Sequence[ScreenedJob]) -> list[NotDecided]:
    """Nodes and links 'not decided' by the newest job that screened them (both nodes, for a link)."""
    last = newest(jobs)
    found = []
    for job in jobs:
        for u in job.verdict.undecided:
            if all(last.get((job.runs_on, n)) is job for n in u.nodes):
                found.append(NotDecided(u.name, u.nodes, u.why))
    return found


def rescreen_commands(jobs: Sequence[ScreenedJob], nodes: Sequence[str]) -> list[str]:
    """Per partition and stack, the ScreeningCheck of `nodes` (flagged, or not decided) beside healthy
    peers of their newest jobs (one more than they are, at least SCREEN_MIN_NODES): the median needs peers."""
    last = newest(jobs)
    flagged = set(nodes)
    groups: dict[tuple[str, str, str], list[str]] = {}
    for (where, name), job in last.items():
        if name in flagged:
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


def undecided_table(job: ScreenedJob) -> Table:
    """What a job could not decide, and the interference that could explain it."""
    return table(["not decided: re-screen", "behind its peers on", "interference that could explain it"],
                 [[u.name, "; ".join(f"{f.label} {_pct(s.deviation)}" for f, s in u.scores), u.why.split(" could explain")[0]]
                  for u in job.verdict.undecided])


def job_blocks(job: ScreenedJob, index: int, figure: bool) -> list[Block]:
    verdict = job.verdict
    undecided = f"; not decided (re-screen): {', '.join(u.name for u in verdict.undecided)}" if verdict.undecided else ""
    out: list[Block] = [Text(f"**{job.title}**. {medians_text(job)} Flagged nodes: "
                             f"{hostlist(verdict.flagged_nodes()) or 'none'}; flagged links: "
                             f"{', '.join(f'{v.pair.a}-{v.pair.b}' for v in verdict.flagged_links()) or 'none'}"
                             f"{undecided}.")]
    if verdict.nodes:
        out.append(node_table(job))
    if verdict.links:
        out.append(link_table(job))
    if verdict.undecided:
        out.append(undecided_table(job))
    if verdict.unconfirmed:
        out.append(Text("Not confirmed by every pass of the probe, so not flagged (a transient): "
                        + "; ".join(verdict.unconfirmed) + "."))
    if verdict.notes:
        out.append(Text("Not compared: " + "; ".join(verdict.notes)))
    if figure:
        out.append(Figure(chart(job, index)))
    return out


# --- NodeHealthCheck ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Measured:
    value: float
    load: NodeLoad | None  # what else ran on the node during that case (its node probe), None: not recorded
    ranks: int


@dataclass(frozen=True)
class Screen:
    where: tuple[str, str, str]  # system, partition, stack
    figure: str
    unit: str
    direction: str
    scores: tuple[Score, ...]  # worst first, of each node's median
    # nodes outside their bounds that are not flagged, and why: not confirmed by every measurement of
    # them, or not decided (every measurement outside could be the interference recorded during it)
    unconfirmed: Mapping[str, str] = field(default_factory=dict)
    undecided: Mapping[str, str] = field(default_factory=dict)

    def flagged(self) -> list[Score]:
        return [s for s in self.scores if s.flagged and s.name not in self.unconfirmed and s.name not in self.undecided]


def _case_load(case: Case) -> NodeLoad | None:
    """The one node's load from a one-node case's interference record (the record's worst node is it)."""
    record = case.recorded("interference", None)
    if not isinstance(record, Mapping) or not record.get("nodes"):
        return None
    foreign, steal = record.get("foreign_cores"), record.get("steal_pct")
    if not (is_number(foreign) and is_number(steal)):
        return None
    return NodeLoad(max(0.0, float(foreign)), max(0.0, float(steal)) / 100, str(record.get("foreign_top") or "")[:200])


def _peer_load(by_node: Mapping[str, Sequence[Measured]], node: str) -> NodeLoad:
    """What the other nodes' measurements typically ran beside: the median of their recorded loads (one
    not recorded counts as quiet). Each ran in a job of its own, at its own time: a load they all had
    slowed them alike, as the median peer the node is compared with."""
    others = [m.load or interference.QUIET for name, measured in by_node.items() if name != node for m in measured]
    return NodeLoad(statistics.median(m.foreign_cores for m in others), statistics.median(m.steal for m in others)) \
        if others else interference.QUIET


def _confirm(node: str, values: Mapping[str, float], measured: Sequence[Measured], peers: NodeLoad, direction: str,
             limits: Thresholds, flags: Mapping[str, float]) -> tuple[str, str]:
    """(why not confirmed, why not decided), '' each when not so, for a node whose median is outside its
    bounds: each of its measurements is scored alone against the other nodes' medians (a measurement
    inside its bounds leaves the node unflagged), and weighed against the load recorded during it beyond
    its peers' (scalebench.screening.interference)."""
    outside = []
    for m in measured:
        (alone,) = [s for s in score({**values, node: m.value}, direction, limits) if s.name == node]
        outside.append((m, alone))
    inside = sum(not s.flagged for _, s in outside)
    if inside:
        return f"inside its bounds in {inside} of {len(measured)} measurements", ""
    figure = ScreenFigure("", "", "", direction, "", per_rank=True)  # a bulk-synchronous HPL: one rank holds all
    if all(m.load is not None and explained(s, figure, interference.explicable(m.load, peers, m.ranks, True, flags))
           for m, s in outside):
        return "", "; ".join(f"{interference.cause(node, m.load, peers)} could explain "  # type: ignore[arg-type]
                             f"{s.deviation:+.0%}" for m, s in outside)
    return "", ""


def screens(sessions: Iterable[Session], check: str = HEALTH_CHECK, flags: Mapping[str, float] | None = None
            ) -> tuple[list[Screen], list[str]]:
    """The screens of every figure with a direction of the one-node cases of `check`; notes on cases
    left out. A node measured several times counts with its median, and is flagged only when every
    measurement of it is outside its bounds, one at least beyond what the interference recorded during
    it, beyond its peers' typical load, could explain."""
    flags = flags or report_flags()
    bench = registry.lookup(check)
    found: dict[tuple[tuple[str, str, str], str], dict[str, list[Measured]]] = {}
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
            load = _case_load(case)
            for figure, (value, unit) in case.figures.items():
                if is_number(value) and bench.figure(figure).direction != "none":
                    key = ((case.system, case.partition, case.stack), figure)
                    found.setdefault(key, {}).setdefault(nodes[0], []).append(
                        Measured(float(value), load, case.num_tasks or 1))
                    units[figure] = unit
    limits = thresholds(flags)
    out = []
    for (where, figure), by_node in sorted(found.items()):
        values = {node: statistics.median(m.value for m in measured) for node, measured in by_node.items()}
        if len(values) < SCREEN_MIN_NODES:
            notes.append(f"{':'.join(where[:2])} {where[2]} {figure}: {len(values)} node(s), fewer than "
                         f"{SCREEN_MIN_NODES} to compare")
            continue
        if statistics.median(values.values()) <= 0:
            continue
        direction = bench.figure(figure).direction
        scores = tuple(score(values, direction, limits))
        verdicts = {s.name: _confirm(s.name, values, by_node[s.name], _peer_load(by_node, s.name), direction,
                                     limits, flags)
                    for s in scores if s.flagged}
        out.append(Screen(where, figure, units[figure], direction, scores,
                          {node: why for node, (why, _) in verdicts.items() if why},
                          {node: why for node, (_, why) in verdicts.items() if why}))
    return out, notes


def flagged_nodes(found: Sequence[Screen]) -> list[str]:
    return sorted({s.name for screen in found for s in screen.flagged()}, key=natural)


def health_not_decided(found: Sequence[Screen]) -> list[NotDecided]:
    """NodeHealthCheck's nodes not decided on some figure, and flagged on none."""
    flagged = set(flagged_nodes(found))
    out: dict[str, list[str]] = {}
    for screen in found:
        for node, why in screen.undecided.items():
            if node not in flagged:
                out.setdefault(node, []).append(f"{screen.figure}: {why}")
    return [NotDecided(node, (node,), "; ".join(whys)) for node, whys in sorted(out.items(), key=lambda i: natural(i[0]))]


def _verdict_cell(screen: Screen, s: Score) -> str:
    if not s.flagged:
        return ""
    if s.name in screen.unconfirmed:
        return f"not confirmed ({screen.unconfirmed[s.name]}): {s.why}"
    if s.name in screen.undecided:
        return f"not decided, re-screen: {screen.undecided[s.name]}"
    return "FLAGGED: " + s.why


def screen_table(found: Sequence[Screen]) -> Table:
    rows = []
    for screen in found:
        for s in screen.scores:
            rows.append([f"{screen.where[0]}:{screen.where[1]}", screen.where[2], screen.figure, s.name,
                         f"{s.value:.4g} {screen.unit}", f"{s.median:.4g}", f"{s.deviation:+.1%}",
                         "-" if s.z is None else f"{s.z:+.1f}", _verdict_cell(screen, s)])
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
        drain, links, undecided = to_drain(jobs), links_to_check(jobs), not_decided(jobs)
        rescreen = "".join(f" Re-screen: `{command}`." for command in
                           rescreen_commands(jobs, sorted({n for u in undecided for n in u.nodes}, key=natural)))
        out.append(Text(f"{SCREENING_CHECK}: every node (DGEMM, STREAM) and node pair (latency, bandwidth) of a job "
                        "measured at once, each against the median of its peers in that job, worse side only, and "
                        "flagged only when it is behind in every pass of the probe and the interference recorded on "
                        "it cannot explain it; a node counts by the newest job that screened it. To drain: "
                        f"{hostlist(drain) or 'none'}; links to check: {', '.join(links) or 'none'}; not decided "
                        f"(interference; re-screen, never drained): "
                        f"{'; '.join(f'{u.name} ({u.why})' for u in undecided) or 'none'}.{rescreen}"))
        for index, job in enumerate(jobs, start=1):
            out += job_blocks(job, index, figure=True)
        if job_notes:
            out.append(Text("Left out: " + "; ".join(job_notes)))
    if found or notes:
        nodes, undecided = flagged_nodes(found), health_not_decided(found)
        out.append(Text(f"{HEALTH_CHECK} on every node (`--distribute`), each node against the median of its "
                        f"peers, flagged only when every measurement of it is behind and one at least beyond what "
                        f"the interference recorded during it could explain. Flagged: "
                        f"{hostlist(nodes) if nodes else 'none'}; not decided (re-screen, never drained): "
                        f"{hostlist([u.name for u in undecided]) or 'none'}."))
        if found:
            out.append(screen_table(found))
        if notes:
            out.append(Text("Left out: " + "; ".join(notes)))
    return out
