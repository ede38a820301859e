"""What the per-node probe wrote (scalebench.nodeprobe.sampler): its samples read back, each node's run
summarised, the case's record of them, and the interference a verdict can rest on.

A case records `interference` (a small mapping: the worst node's figures, at most WORST_NODES nodes in
detail, so that a run on thousands of nodes stays a small value) and `interference_summary` (one
line, in every perflog line). Verdicts are drawn later from the record, against the thresholds of
site_configs/report_flags.yaml, so that a threshold changed there applies to runs already made.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from scalebench import textfile
from scalebench.errors import InputError
from scalebench.validation import excerpt_text

PROBE_DIR = "nodeprobe"  # in the job's stage directory: <node>.jsonl, one per node
WORST_NODES = 8
PHASES = ("before", "during", "after")
_MAX_FILES = 100_000


@dataclass(frozen=True)
class NodeRun:
    """One node's samples over a run, summarised; rates are means over the windows during the run."""

    node: str
    cpus: int
    during_s: float
    steal_pct: float
    steal_pct_max: float
    foreign_cores: float  # beyond the cores the job leaves idle on the node (see excess_foreign)
    foreign_cores_max: float
    foreign_runnable_max: int
    job_cores: float
    foreign_top: tuple[tuple[str, int, float], ...]  # (name, pid, mean cores during the run)
    load1: tuple[float | None, float | None, float | None]  # before, highest during, after
    clock_mhz: float | None
    clock_source: str
    before: Mapping[str, float] = field(default_factory=dict)  # steal_pct, foreign_cores of that window
    after: Mapping[str, float] = field(default_factory=dict)


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) and math.isfinite(value) else None


def read_samples(stage: Path) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """({node: samples in order}, problems) of a job's probe directory; every field is kept, so that
    readers added to the sampler need nothing here to be carried."""
    directory = Path(stage) / PROBE_DIR
    nodes: dict[str, list[dict[str, Any]]] = {}
    problems: list[str] = []
    if not directory.is_dir():
        return nodes, problems
    for path in sorted(directory.glob("*.jsonl"))[:_MAX_FILES]:
        try:
            text = textfile.read_text(path, "node probe samples")
        except InputError as err:
            problems.append(str(err))
            continue
        lines = text.splitlines()
        if lines and not text.endswith("\n"):
            lines.pop()  # cut while being written
        for number, line in enumerate(lines, 1):
            try:
                sample = json.loads(line)
            except ValueError:
                sample = None
            if not isinstance(sample, dict) or sample.get("phase") not in PHASES or not isinstance(sample.get("node"), str):
                problems.append(f"{path.name}:{number}: not a probe sample")
                continue
            nodes.setdefault(sample["node"], []).append(sample)
    return nodes, problems


def excess_foreign(sample: Mapping[str, Any], job_cores_per_node: int | None) -> float:
    """Foreign CPU use, in cores, beyond the cores the job leaves idle on its node: a daemon on a core
    the job does not use takes nothing from it; on a core it uses, it takes its share."""
    foreign = _number(sample.get("foreign_cores")) or 0.0
    cpus = _number(sample.get("node_cpus")) or _number(sample.get("cpus")) or 0.0  # node_cpus: a share of its host
    idle = max(0.0, cpus - job_cores_per_node) if job_cores_per_node else 0.0
    return max(0.0, foreign - idle)


def summarise_node(node: str, samples: Sequence[Mapping[str, Any]], job_cores_per_node: int | None) -> NodeRun:
    during = [s for s in samples if s.get("phase") == "during" and (_number(s.get("window_s")) or 0) > 0]
    weights = [float(s["window_s"]) for s in during]
    total = sum(weights)

    def mean(values: Sequence[float]) -> float:
        return sum(v * w for v, w in zip(values, weights)) / total if total else 0.0

    steal = [_number(s.get("steal_pct")) or 0.0 for s in during]
    # A window in which the job used more CPUs than the node has holds the whole lives of processes its
    # parents reaped (the ranks, when the run ends): how it split between job and others is unknown.
    split = [(_number(s.get("job_cores")) or 0.0) <= 1.05 * (_number(s.get("cpus")) or math.inf) for s in during]
    foreign_weight = sum(w for w, known in zip(weights, split) if known)
    foreign = [excess_foreign(s, job_cores_per_node) if known else 0.0 for s, known in zip(during, split)]
    spent: dict[tuple[str, int], float] = {}  # core-seconds of each foreign process named
    for s, w in zip(during, weights):
        for entry in s.get("foreign_top") or ():
            if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str) and _number(entry[2]):
                key = (entry[0][:40], int(entry[1]) if type(entry[1]) is int else 0)
                spent[key] = spent.get(key, 0.0) + float(entry[2]) * w
    top = sorted(spent.items(), key=lambda item: item[1], reverse=True)[:3]

    def phase(name: str) -> Mapping[str, Any]:
        return next((s for s in samples if s.get("phase") == name), {})

    loads = [_number(s.get("load1")) for s in during]
    clocks = [c for c in (_number(s.get("clock_mhz")) for s in during) if c]
    first, last = phase("before"), phase("after")
    return NodeRun(
        node=node, cpus=int(_number(samples[0].get("cpus")) or 0), during_s=round(total, 3),
        steal_pct=round(mean(steal), 2), steal_pct_max=max(steal, default=0.0),
        foreign_cores=round(sum(f * w for f, w in zip(foreign, weights)) / foreign_weight, 3) if foreign_weight else 0.0,
        foreign_cores_max=round(max(foreign, default=0.0), 3),
        foreign_runnable_max=int(max((_number(s.get("foreign_runnable")) or 0 for s in during), default=0)),
        job_cores=round(mean([_number(s.get("job_cores")) or 0.0 for s in during]), 3),
        foreign_top=tuple((name, pid, round(seconds / total, 3)) for (name, pid), seconds in top if total),
        load1=(_number(first.get("load1")), max((v for v in loads if v is not None), default=None),
               _number(last.get("load1"))),
        clock_mhz=round(sum(clocks) / len(clocks), 1) if clocks else None,
        clock_source=str(next((s.get("clock_source") for s in during if s.get("clock_source")), ""))[:20],
        before={k: v for k in ("steal_pct", "foreign_cores") if (v := _number(first.get(k))) is not None},
        after={k: v for k in ("steal_pct", "foreign_cores") if (v := _number(last.get(k))) is not None})


def _top_text(run: NodeRun) -> str:
    return ", ".join(f"{name}[{pid}] {cores:.2f}" for name, pid, cores in run.foreign_top)


def interference_record(stage: Path, expected_nodes: int, job_cores_per_node: int | None
                        ) -> tuple[dict[str, Any], str]:
    """(the case's interference record, its one-line summary) from a job's probe directory."""
    samples, problems = read_samples(stage)
    runs = [summarise_node(node, found, job_cores_per_node) for node, found in sorted(samples.items())]
    record: dict[str, Any] = {"nodes": len(runs), "expected_nodes": expected_nodes}
    if problems:
        record["problems"] = "; ".join(problems[:3]) + (f"; {len(problems) - 3} more" if len(problems) > 3 else "")
    if not runs:
        return record, f"no node probe samples ({expected_nodes} node(s) expected)"
    steal = max(runs, key=lambda r: r.steal_pct)
    foreign = max(runs, key=lambda r: r.foreign_cores)
    loaded = max(runs, key=lambda r: r.load1[1] or 0)
    clocks = [r.clock_mhz for r in runs if r.clock_mhz]
    record.update(
        during_s=min(r.during_s for r in runs), steal_pct=steal.steal_pct, steal_node=steal.node,
        foreign_cores=foreign.foreign_cores, foreign_node=foreign.node, foreign_top=_top_text(foreign),
        foreign_runnable_max=max(r.foreign_runnable_max for r in runs),
        load1_before=loaded.load1[0], load1_max=loaded.load1[1], load1_after=loaded.load1[2], load_node=loaded.node,
        clock_mhz=round(sum(clocks) / len(clocks), 1) if clocks else None,
        clock_source=next((r.clock_source for r in runs if r.clock_source), ""),
        per_node={r.node[:64]: {"steal_pct": r.steal_pct, "foreign_cores": r.foreign_cores,
                                "foreign_top": _top_text(r), "job_cores": r.job_cores, "load1_max": r.load1[1],
                                "clock_mhz": r.clock_mhz, "before": dict(r.before), "after": dict(r.after)}
                  for r in sorted(runs, key=lambda r: (r.foreign_cores, r.steal_pct), reverse=True)[:WORST_NODES]})
    return record, summary_text(record)


def _text(record: Mapping[str, Any], name: str) -> str:
    """A text field of a record as it may have been edited since: short, whatever it holds."""
    return excerpt_text(str(record.get(name) or ""), 200)


def summary_text(record: Mapping[str, Any]) -> str:
    """One line of a case's interference record."""
    nodes, expected = _number(record.get("nodes")), _number(record.get("expected_nodes"))
    if not nodes:
        return f"no node probe samples ({expected or '?':g} node(s) expected)" if expected \
            else "no node probe samples"

    def fmt(value: Any, spec: str) -> str:
        return "-" if _number(value) is None else format(value, spec)
    missing = int((expected or nodes) - nodes)
    top = f" ({_text(record, 'foreign_top')} on {_text(record, 'foreign_node')})" if record.get("foreign_top") else ""
    return (f"{nodes:g} node(s) probed{f', {missing} without samples' if missing > 0 else ''}: "
            f"steal {fmt(record.get('steal_pct'), '.1f')}%, foreign load {fmt(record.get('foreign_cores'), '.2f')} "
            f"cores{top}, load {fmt(record.get('load1_before'), '.1f')}/{fmt(record.get('load1_max'), '.1f')}/"
            f"{fmt(record.get('load1_after'), '.1f')} before/during/after, clock {fmt(record.get('clock_mhz'), '.0f')} "
            f"MHz ({_text(record, 'clock_source') or 'not reported'})")


def interference_reasons(record: Mapping[str, Any] | None, max_steal: float, max_foreign_cores: float) -> list[str]:
    """Why a run was disturbed, from its interference record: CPU steal above max_steal (a share) or
    foreign CPU use above max_foreign_cores on some node; [] when neither was measured."""
    if not isinstance(record, Mapping):
        return []
    reasons = []
    steal = _number(record.get("steal_pct"))
    if steal is not None and steal / 100 > max_steal:
        reasons.append(f"CPU steal {steal:.1f}% on {_text(record, 'steal_node')} (> {max_steal:.0%})")
    foreign = _number(record.get("foreign_cores"))
    if foreign is not None and foreign > max_foreign_cores:
        named = f": {_text(record, 'foreign_top')}" if record.get("foreign_top") else ""
        reasons.append(f"foreign load {foreign:.2f} cores on {_text(record, 'foreign_node')} "
                       f"(> {max_foreign_cores:g}){named}")
    return reasons
