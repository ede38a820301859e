"""`scalebench plan [SITE]`: every case a site would submit, before anything is submitted."""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from scalebench.cli.cases import add_filter_arguments, planned_cases
from scalebench.cli.common import EXIT_FAILED, EXIT_OK, print_json
from scalebench.cli.predict import add_calibration_arguments, calibration_given, run_predictions
from scalebench.errors import InputError
from scalebench.hpl.case_plan import HplPlan, memory_text
from scalebench.screening.jobs import ScreeningJob
from scalebench.site.transport_evidence import EvidencePlan
from scalebench.site.jobs import JobPlan
from scalebench.site_plan import PlannedCase, Unplanned
from scalebench.units import format_duration, format_size

HEADER = ("Check", "Partition", "Stack", "Nodes", "Ranks", "Ranks/node", "Threads", "N", "NB", "P x Q", "Idle",
          "Memory/node", "Predicted", "Time limit")


def _row(case: PlannedCase) -> tuple[str, ...]:
    job = case.plan.job if case.plan else None
    hpl = case.plan.detail if case.plan and isinstance(case.plan.detail, HplPlan) else None
    limit = job.time_limit_s if job and job.time_limit_s else case.partition.time_limit_s
    reserved = f" in {job.reservation.name}" if job and job.reservation else ""
    if job and job.startup_s:  # an image pulled or mounted on every node before the program starts
        reserved += f" with {format_duration(job.startup_s)} start-up"
    cells = [case.display_name, case.partition.name, case.stack.name]
    if job is None:  # a check that compares other cases
        return tuple(cells + [""] * 10 + ["no job"])
    cells += [str(job.nodes), str(job.tasks), str(job.ranks_per_node), str(job.threads_per_rank)]
    if hpl:
        d = hpl.deck
        cells += [str(d.n), str(d.nb), f"{d.p} x {d.q}", str(job.idle_ranks), memory_text(hpl),
                  format_duration(hpl.predicted_s)]
    else:
        screening = case.plan.detail if case.plan and isinstance(case.plan.detail, ScreeningJob) else None
        predicted = screening.predicted_s if screening else None
        cells += ["", "", "", str(job.idle_ranks), "", "" if predicted is None else format_duration(predicted)]
    cells.append((format_duration(limit) if limit else "partition default") + reserved)
    return tuple(cells)


def screening_summary(cases: Sequence[PlannedCase]) -> list[str]:
    """One line per partition and stack screened: how many jobs, nodes each, wall time."""
    jobs: dict[tuple[str, str], list[PlannedCase]] = {}
    for case in cases:
        if case.plan is not None and isinstance(case.plan.detail, ScreeningJob):
            jobs.setdefault((case.partition.name, case.stack.name), []).append(case)
    lines = []
    for (partition, stack), found in jobs.items():
        sizes = sorted({c.plan.detail.nodes for c in found})  # type: ignore[union-attr]
        longest = max(c.plan.detail.predicted_s for c in found)  # type: ignore[union-attr]
        limit = max(c.plan.job.time_limit_s or 0 for c in found)  # type: ignore[union-attr]
        total = sum(c.plan.detail.nodes for c in found)  # type: ignore[union-attr]
        lines.append(f"Screening {partition} with {stack}: {len(found)} job(s) of "
                     f"{' or '.join(map(str, sizes))} nodes ({total} in all), each predicted "
                     f"{format_duration(longest)} (time limit {format_duration(limit)})")
    return lines


def render(cases: Sequence[PlannedCase], predicted: Mapping[int, Any] | None = None,
           unplanned: Sequence[Unplanned] = (), not_described: Mapping[str, str] | None = None) -> str:
    """The plan as a table; with `predicted` (id of a case -> scalebench.cli.predict.Predicted), the
    predicted Rmax of each HPL case; then the checks `unplanned` and why."""
    planned = [c for c in cases if c.plan is not None]
    header, rows = HEADER, [_row(c) for c in planned]
    if predicted is not None:
        header = (*HEADER, "Predicted Rmax (Gflop/s)")
        rows = [(*row, _predicted_cell(predicted.get(id(c)))) for row, c in zip(rows, planned)]
    rows = [header, *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i < 3 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    left = [c for c in cases if c.plan is None]
    if left:
        lines += ["", f"Left out ({len(left)}):"]
        lines += [f"  {c.display_name} on {c.partition.name} with {c.stack.name}: {c.left_out}" for c in left]
    if unplanned:
        lines += ["", f"Not generated ({len(unplanned)} check(s)), for want of:"]
        by_need: dict[str, list[str]] = {}
        for u in unplanned:
            by_need.setdefault(u.needs, []).append(u.check)
        lines += [f"  {needs}: {', '.join(checks)}" for needs, checks in by_need.items()]
        lines += [f"  The site has {has}" for has in dict.fromkeys(u.site_has for u in unplanned)]
    sizing = _node_sizing(cases)
    if sizing:
        lines += ["", "Node kinds (job_options.constraint, node_kinds):"]
        lines += [f"  {fullname}: {text}" for fullname, text in sizing.items()]
    if not_described:
        lines += ["", f"Not described ({len(not_described)} partition(s) of the configuration, left to other checks):"]
        lines += [f"  {name}: {why}" for name, why in not_described.items()]
    summary = screening_summary(cases)
    if summary:
        lines += [""] + summary
    lines += ["", f"{len(planned)} case(s) planned, {len(left)} left out"]
    not_predicted = [p for p in (predicted or {}).values() if p.prediction is None]
    if not_predicted:
        lines += [f"Not predicted: {p.case.display_name} on {p.case.partition.name} with {p.case.stack.name}: "
                  f"{p.reason}" for p in not_predicted]
    most = most_evidence(cases)
    lines += ["", most.line() if most else "Transport evidence: none (no stack declares a transport)"]
    lines += ["", "Energy (site file `energy:`; HPL cases get figures from it):"]
    lines += [f"  {fullname}: {spec.describe()}" for fullname, spec in _energy(cases).items()]
    return "\n".join(lines)


def _node_sizing(cases: Sequence[PlannedCase]) -> dict[str, str]:
    """How HPL is sized on each partition whose nodes differ or whose jobs are constrained to some."""
    return {c.partition.fullname: c.partition.node_sizing for c in cases if c.partition.node_sizing}


def _predicted_cell(predicted: Any) -> str:
    if predicted is None:
        return ""
    return f"{predicted.prediction.rmax_gflops:.1f}" if predicted.prediction else "-"


@dataclass(frozen=True)
class MostEvidence:
    """The planned job that writes the most transport evidence (of those alike, the one with the most ranks)."""

    case: PlannedCase
    job: JobPlan
    evidence: EvidencePlan

    @property
    def bytes(self) -> int:
        return self.evidence.estimated_bytes(self.job.tasks)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.case.display_name, "partition": self.case.partition.name, "stack": self.case.stack.name,
                "nodes": self.job.nodes, "tasks": self.job.tasks, **self.evidence.to_json(self.job.tasks)}

    def line(self) -> str:
        printing = " and ".join(map(str, self.evidence.ranks(self.job.tasks)))
        return (f"Transport evidence: at most {format_size(self.bytes)} per job ({self.case.display_name} on "
                f"{self.case.partition.name} with {self.case.stack.name}: {self.job.tasks} ranks, rank(s) {printing} "
                f"print; volumes measured in scalebench/data/transports.yaml)")


def most_evidence(cases: Sequence[PlannedCase]) -> MostEvidence | None:
    """None when no planned job's stack declares a transport."""
    found = [MostEvidence(c, c.plan.job, c.plan.job.transport_evidence) for c in cases
             if c.plan and c.plan.job and c.plan.job.transport_evidence]
    return max(found, key=lambda m: (m.bytes, m.job.tasks, m.job.nodes), default=None)


def _energy(cases: Sequence[PlannedCase]) -> dict[str, Any]:
    """Each partition's declared energy source, in the order the cases name them."""
    return {c.partition.fullname: c.partition.energy for c in cases}


def to_json(site: Path, cases: Sequence[PlannedCase], predicted: Mapping[int, Any] | None = None,
            unplanned: Sequence[Unplanned] = (), not_described: Mapping[str, str] | None = None) -> dict[str, Any]:
    def case_json(case: PlannedCase) -> dict[str, Any]:
        data: dict[str, Any] = {"check": case.check, "name": case.display_name, "params": dict(case.params),
                                "system": case.partition.system, "partition": case.partition.name,
                                "stack": case.stack.name}
        if case.plan is None:
            data["left_out"] = case.left_out
            return data
        if case.plan.job is not None:
            data["job"] = case.plan.job.to_json()
        if case.plan.detail is not None:
            data[case.plan.detail.PLAN_KEY] = case.plan.detail.to_json()
        found = (predicted or {}).get(id(case))  # HPL's cases only
        if found is not None:
            from scalebench.cli.predict import prediction_json

            data["prediction"] = prediction_json(found.prediction) if found.prediction else {"reason": found.reason}
        if case.plan.note:
            data["note"] = case.plan.note
        if case.plan.args:
            data["args"] = list(case.plan.args)
        return data

    most = most_evidence(cases)
    found = {"site": str(site), "cases": [case_json(c) for c in cases if c.plan is not None],
             "left_out": [case_json(c) for c in cases if c.plan is None],
             "not_generated": [{"check": u.check, "needs": u.needs, "site_has": u.site_has} for u in unplanned],
             "energy": {name: {**spec.to_json(), "describe": spec.describe()} for name, spec in _energy(cases).items()},
             # the job that writes the most evidence of its transport, and how much (estimated)
             "transport_evidence": most.to_json() if most else None}
    if not_described:  # a ReFrame configuration's partitions without facts
        found["not_described"] = dict(not_described)
    if _node_sizing(cases):
        found["node_sizing"] = _node_sizing(cases)
    return found


def cmd_plan(args: argparse.Namespace) -> int:
    given = calibration_given(args)
    if given and not args.predict:  # it calibrates the model only: dropped unsaid otherwise
        raise InputError(f"{', '.join(given)}: calibrates the model of --predict; add --predict")
    planned = planned_cases(args)
    site, cases, unplanned = planned.site, planned.cases, planned.unplanned
    predicted = None
    if args.predict:
        predicted = {id(p.case): p for p in run_predictions(cases, args)[0]}
    if args.json:
        print_json(to_json(site, cases, predicted, unplanned, planned.not_described))
    else:
        print(render(cases, predicted, unplanned, planned.not_described))
    if all(case.plan is None for case in cases):
        print(f"scalebench plan: nothing to run: all {len(cases)} case(s) are left out (reasons above)", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def add_plan_arguments(subparsers: Any) -> None:
    p = subparsers.add_parser("plan", help="every case a site would submit: nodes, ranks, N, P x Q, time limits")
    add_filter_arguments(p)
    p.add_argument("--predict", action="store_true",
                   help="add HPL's predicted Rmax (scalebench predict's model; calibrate with --from or the numbers)")
    add_calibration_arguments(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_plan)
