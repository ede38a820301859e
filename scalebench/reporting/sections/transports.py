"""The report's transport section: per system and stack, the transport it declares, what its MPI selected in
each case (scalebench.site.transport_evidence), and whether its ping-pong meets the floors of the
fabric class it declares (scalebench.site.fabric)."""
from __future__ import annotations

from typing import Sequence

import polars as pl

from scalebench.reporting.document import Block, Heading, Text, table
from scalebench.reporting.records import Case
from scalebench.reporting.sections.common import fmt
from scalebench.reporting.table import Table
from scalebench.site import fabric

# Where each fabric figure comes from: benchmark -> {floor key: figure, or the prefix of a curve's
# figures (latency_<bytes>)}; each the best a stack reached at the class's placement.
_PING_PONG = {
    "NetPIPECheck": {"latency_us": "min_latency", "bandwidth_mbs": "peak_bandwidth", "n_half_bytes": "n_half"},
    "OSULatencyCheck": {"latency_us": "latency_"},
    "OSUBandwidthCheck": {"bandwidth_mbs": "bandwidth_", "n_half_bytes": "n_half"},
}
_SMALLER_IS_BETTER = {"latency_us", "n_half_bytes"}


def _best(key: str):
    return min if key in _SMALLER_IS_BETTER else max


def _figure(case: Case, key: str, name: str) -> float | None:
    if not name.endswith("_"):
        return case.figure(name)
    values = [v for figure, (v, _) in case.figures.items() if figure.startswith(name) and v is not None]
    return _best(key)(values) if values else None


def fabric_figures(cases: Sequence[Case], placement: str) -> dict[str, float]:
    """The best latency, bandwidth and n1/2 the passed ping-pong cases at `placement` measured."""
    out: dict[str, float] = {}
    for case in cases:
        if case.result != "pass" or case.params.get("placement") != placement:
            continue
        for key, name in _PING_PONG.get(case.benchmark, {}).items():
            value = _figure(case, key, name)
            if value is not None:
                out[key] = _best(key)(out[key], value) if key in out else value
    return out


def transport_section(results: Table) -> list[Block]:
    cases = results.cases.filter((pl.col("stack") != "") & (pl.col("result") != "skip"))
    if cases.filter(pl.col("shown_transport_evidence") != "").is_empty():
        return []
    marker = pl.format("stack {} declared ", pl.col("stack"))
    groups = cases.group_by(["system", "partition", "stack"]).agg(
        declared=pl.col("shown_transport").filter(pl.col("shown_transport") != "").first(),
        used=pl.col("shown_transport_evidence").filter(
            ~pl.col("shown_transport_evidence").is_in(["", "none printed"])).str.split(" (").list.first().unique(),
        wrong=pl.col("fail_reason").filter((pl.col("result") == "fail")
                                           & pl.col("fail_reason").fill_null("").str.contains(marker, literal=True)),
        fabric=pl.col("shown_fabric").filter(pl.col("shown_fabric") != "").first(),
        ping_pong=pl.col("case").filter((pl.col("result") == "pass") & pl.col("benchmark").is_in(list(_PING_PONG))),
    )
    ids = groups["ping_pong"].explode(empty_as_null=True).drop_nulls().to_list()
    ping_pong = results.cases_by_id(pl.col("case").is_in(ids))
    rows, fabric_rows = [], []
    for system, partition, stack, declared, used, wrong, declared_fabric, ids in sorted(
            groups.iter_rows(), key=lambda g: (f"{g[0]}:{g[1]}", g[2])):
        where, declared, marker_text = f"{system}:{partition}", declared or "", f"stack {stack} declared "
        verdict = (f"{len(wrong)} case(s) on another transport: {wrong[0][wrong[0].index(marker_text):]}" if wrong
                   else "as declared" if declared else "not declared")
        rows.append((where, stack, declared or "-", "; ".join(sorted(used)) or "-", verdict))
        if declared_fabric:
            cls = fabric.fabric_classes()[declared_fabric]
            measured = fabric_figures([ping_pong[i][1] for i in ids], cls.placement)
            flag = fabric.judge(declared_fabric, measured) if measured else "no passed ping-pong at " + cls.placement
            fabric_rows.append((where, stack, cls.label, fmt(measured.get("latency_us"), ".3g"),
                                fmt(measured.get("bandwidth_mbs"), ".0f"), fmt(measured.get("n_half_bytes"), ".0f"),
                                flag or "meets its class"))
    out: list[Block] = [
        Heading(2, "Transports"),
        Text("What each stack's MPI itself printed about the transport it selected between ranks (Open MPI's "
             "BTL and OFI MTL choices, UCX's endpoint lanes), in the same jobs as the figures; a case whose "
             "MPI selected anything but the declared transport failed its sanity check."),
        table(("System", "Stack", "Declared", "Selected", "Verdict"), rows),
    ]
    if fabric_rows:
        out += [Heading(3, "Fabric floors"),
                Text("Each stack's best ping-pong (NetPIPE, OSU) against the floors of the fabric class it "
                     "declares (site_configs/fabric_floors.yaml): latency in us, peak bandwidth in MB/s, n1/2 "
                     "in bytes."),
                table(("System", "Stack", "Fabric", "Latency", "Bandwidth", "n1/2", "Verdict"), fabric_rows)]
    return out
