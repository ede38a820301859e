"""`scalebench predict SITE`: HPL's time, Rmax and efficiency at every planned scale, before any of it
runs (HPL's scalability model, scalebench.predict), calibrated on measured results (--from) or on
numbers given (--dgemm-gflops, --latency-us, --bandwidth-gbs, --load-exponent).

`plan --predict` adds the predicted Rmax to the plan with the same arguments.
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

from scalebench.cli.cases import add_filter_arguments, planned_cases
from scalebench.cli.common import float_arg, path_arg, print_json
from scalebench.errors import InputError
from scalebench.hpl import model
from scalebench.hpl.model import Calibration, Prediction
from scalebench.predict import Given, Predicted, measured, predict_cases, summaries
from scalebench.site_plan import PlannedCase
from scalebench.units import format_duration


HEADER = ("Check", "Partition", "Stack", "Nodes", "Ranks", "N", "NB", "P x Q", "Rpeak (Gflop/s)", "Time",
          "Rmax (Gflop/s)", "Efficiency", "Lost: compute", "bandwidth", "latency", "Dominant loss")


def _row(p: Predicted) -> tuple[str, ...]:
    prediction = p.prediction
    assert prediction is not None
    case = prediction.case
    losses = prediction.losses
    return (p.case.display_name, p.case.partition.name, p.case.stack.name, str(case.nodes), str(case.ranks),
            str(case.n), str(case.nb), f"{case.p} x {case.q}", f"{case.rpeak_gflops:.1f}",
            format_duration(prediction.time_s), f"{prediction.rmax_gflops:.1f}", f"{prediction.efficiency:.1%}",
            *(f"{100 * losses[name]:.1f}" for name in model.LOSSES), prediction.dominant_loss)


def calibration_lines(calibrations: Mapping[tuple[str, str, str], Calibration]) -> list[str]:
    lines = []
    for (system, partition, stack), c in sorted(calibrations.items()):
        rate = "no rank rate"
        if c.rate:
            rate = (f"{c.rate.of_peak:.1%} of each rank's Rpeak ({c.rate.source})" if c.rate.of_peak is not None
                    else f"{c.rate.gflops:.4g} Gflop/s per rank ({c.rate.source})")
        inter = f"between nodes {c.inter.source}" if c.inter else "no link between nodes"
        intra = f"; within a node {c.intra.source}" if c.intra else ""
        lines.append(f"  {stack} on {system}:{partition}: {rate}; {inter}{intra}"
                     + "".join(f"; {note}" for note in c.notes if note and note not in inter))
    return lines


def render(predicted: Sequence[Predicted], calibrations: Mapping[tuple[str, str, str], Calibration]) -> str:
    done = [p for p in predicted if p.prediction is not None]
    rows = [HEADER, *(_row(p) for p in done)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = ["Calibration:", *calibration_lines(calibrations), ""]
    lines += ["  ".join(cell.ljust(w) if i < 3 or i == len(HEADER) - 1 else cell.rjust(w)
                        for i, (cell, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
    lines.append("(Lost: efficiency points lost to computing below Rpeak, to bandwidth and to latency)")
    left = [p for p in predicted if p.prediction is None]
    if left:
        lines += ["", f"Not predicted ({len(left)}):"]
        lines += [f"  {p.case.display_name} on {p.case.partition.name} with {p.case.stack.name}: {p.reason}"
                  for p in left]
    lines += ["", *summaries(predicted)]
    return "\n".join(lines)


def prediction_json(p: Prediction) -> dict[str, Any]:
    case = p.case
    return {"nodes": case.nodes, "ranks": case.ranks, "n": case.n, "nb": case.nb, "p": case.p, "q": case.q,
            "rpeak_gflops": round(case.rpeak_gflops, 3), **p.to_json()}


def to_json(site: Path, predicted: Sequence[Predicted],
            calibrations: Mapping[tuple[str, str, str], Calibration]) -> dict[str, Any]:
    def calibration_json(key: tuple[str, str, str], c: Calibration) -> dict[str, Any]:
        return {"system": key[0], "partition": key[1], "stack": key[2],
                "rank_gflops": c.rate.gflops if c.rate else None, "rank_rate_source": c.rate.source if c.rate else "",
                "rank_share_of_rpeak": c.rate.of_peak if c.rate else None,
                "latency_us": c.inter.latency_s * 1e6 if c.inter else None,
                "bandwidth_mbs": c.inter.bandwidth_bps / 1e6 if c.inter and math.isfinite(c.inter.bandwidth_bps)
                else None,
                "load_exponent": c.inter.load_exponent if c.inter else None,
                "exchange_share": c.inter.exchange_share if c.inter else None,
                "link_source": c.inter.source if c.inter else "", "notes": [n for n in c.notes if n]}

    def case_json(p: Predicted) -> dict[str, Any]:
        data: dict[str, Any] = {"name": p.case.display_name, "system": p.case.partition.system,
                                "partition": p.case.partition.name, "stack": p.case.stack.name}
        if p.prediction is None:
            return {**data, "reason": p.reason}
        return {**data, "threads_per_rank": p.case.plan.job.threads_per_rank,  # type: ignore[union-attr]
                **prediction_json(p.prediction)}

    return {"site": str(site), "model": "HPL scalability model (Petitet, Whaley, Dongarra, Cleary), refined: "
                                        "scalebench.hpl.model",
            "efficiency_unit": "%", "calibrations": [calibration_json(k, c) for k, c in sorted(calibrations.items())],
            "cases": [case_json(p) for p in predicted if p.prediction is not None],
            "not_predicted": [case_json(p) for p in predicted if p.prediction is None],
            "summary": summaries(predicted)}


def run_predictions(cases: Sequence[PlannedCase], args: argparse.Namespace) -> tuple[
        list[Predicted], dict[tuple[str, str, str], Calibration]]:
    given = Given(args.dgemm_gflops, args.latency_us, args.bandwidth_gbs, args.load_exponent, tuple(args.results or ()))
    if not given.anything:
        raise InputError("nothing to calibrate the model on: give --from RESULTS (a 1-node HPL and the stack's "
                         "ping-pongs) or --dgemm-gflops with --latency-us and --bandwidth-gbs")
    found = measured(given.results) if given.results else None
    return predict_cases(cases, given, found)


def cmd_predict(args: argparse.Namespace) -> int:
    planned = planned_cases(args, checks=["HPLCheck"])
    site, cases = planned.site, planned.cases
    predicted, calibrations = run_predictions(cases, args)
    if not any(p.prediction for p in predicted):
        reasons = sorted({p.reason for p in predicted}) or ["no HPL case is planned"]
        raise InputError(f"no HPL case can be predicted: {'; '.join(reasons)}")
    if args.json:
        print_json(to_json(site, predicted, calibrations))
    else:
        print(render(predicted, calibrations))
    return 0


# dest -> option of every calibration argument below
CALIBRATION_OPTIONS = {"results": "--from", "dgemm_gflops": "--dgemm-gflops", "latency_us": "--latency-us",
                       "bandwidth_gbs": "--bandwidth-gbs", "load_exponent": "--load-exponent"}


def calibration_given(args: argparse.Namespace) -> list[str]:
    """The calibration options given on the command line."""
    return [option for dest, option in CALIBRATION_OPTIONS.items() if getattr(args, dest) not in (None, [])]


def add_calibration_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="results", action="append", default=[], type=path_arg, metavar="RESULTS",
                   help="run directories, report files or results/ to calibrate on (repeatable)")
    p.add_argument("--dgemm-gflops", type=float_arg(0, 1e9, "a rate in Gflop/s above 0"), default=None,
                   help="one rank's DGEMM rate, Gflop/s (the published model's g = 1/rate)")
    p.add_argument("--latency-us", type=float_arg(0, 1e6, "a latency in us from 0", low_included=True),
                   default=None, help="inter-node small-message latency, us")
    p.add_argument("--bandwidth-gbs", type=float_arg(1e-6, 1e6, "a bandwidth in GB/s above 0.000001"),
                   default=None, help="inter-node bandwidth of one pair, GB/s (1e9 bytes/s)")
    p.add_argument("--load-exponent", type=float_arg(0, model.MAX_LOAD_EXPONENT,
                                                     f"at least 0 and below {model.MAX_LOAD_EXPONENT:g}",
                                                     low_included=True),
                   default=None, help="per-node bandwidth at n nodes = pair x (n/2)^-K (default: fitted, else "
                                      "the stack's fabric class, site_configs/fabric_load.yaml)")


def add_predict_arguments(subparsers: Any) -> None:
    p = subparsers.add_parser("predict", help="HPL's time, Rmax and efficiency at every planned scale (model)")
    add_filter_arguments(p)
    add_calibration_arguments(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_predict)
