"""References learned from accepted runs: every performance figure of every case, per system,
partition, stack and scale, as the median of the repeated runs with a bound from their spread.

A reference file (site_configs/references/<system>.yaml, written by `scalebench references freeze`)
holds them in ReFrame's terms: the value, and the share it may fall below (rates) or rise above
(times, latencies) before the performance stage fails. The checks load it (reframe_tests/base.py),
so a plain `reframe -r` reports a regression.
"""
from __future__ import annotations

import functools
import re
import statistics
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

from scalebench import loaders, paths, registry, writeonce
from scalebench.errors import InputError, ScalebenchError
from scalebench.reporting import noise
from scalebench.reporting.records import Session
from scalebench.textfile import file_key
from scalebench.validation import check_name, excerpt_text, is_number

REFERENCES_DIR = paths.REFERENCES
MAD_TO_SIGMA = 1.4826  # MAD x this estimates the standard deviation of normal noise


@dataclass(frozen=True)
class Reference:
    value: float  # median of the runs
    lower: float | None  # ReFrame's lower threshold: the share it may fall below (negative); None: no bound
    upper: float | None  # the share it may rise above; None: no bound
    unit: str
    runs: int
    spread: float  # the runs' noise over the median: the larger of 1.4826 x MAD and the standard deviation

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "lower": self.lower, "upper": self.upper, "unit": self.unit,
                "runs": self.runs, "spread": round(self.spread, 6)}


@dataclass(frozen=True)
class Method:
    """How a bound is drawn: max(k x sigma / median, floor) on the side that is worse, sigma the larger
    of 1.4826 x MAD (robust to one bad run among many) and the standard deviation (the MAD of three
    runs is often near 0: measured here, it gave 3 false alarms in 6 clean runs)."""

    k: float = 3.0
    floor: float = 0.03
    min_runs: int = 3

    def __post_init__(self) -> None:
        if not is_number(self.k) or self.k <= 0:
            raise InputError(f"k: must be a positive number, got {self.k!r}")
        if not is_number(self.floor) or not 0 <= self.floor < 1:
            raise InputError(f"floor: must be in [0, 1), got {self.floor!r}")
        if isinstance(self.min_runs, bool) or not isinstance(self.min_runs, int) or self.min_runs < 1:
            raise InputError(f"min_runs: must be a positive integer, got {self.min_runs!r}")

    def describe(self) -> str:
        return (f"median of at least {self.min_runs} runs; bound max({self.k:g} x sigma / median, "
                f"{self.floor:.0%}), sigma = max({MAD_TO_SIGMA} x MAD, standard deviation), on the worse side "
                f"(below for rates, above for times and latencies)")


def direction(benchmark: str, figure: str) -> str:
    """higher | lower | none, from the benchmark registry (a sized figure as its curve)."""
    bench = registry.lookup(benchmark)
    return bench.figure(registry.family(bench, figure)).direction


def case_key(partition: str, environ: str) -> str:
    return f"{partition}:{environ}"


# Parameters ReFrame adds itself (--repeat's .repeat_no, --distribute's .part and .nid): the same case.
_GENERATED_PARAM = re.compile(r" %\.[^ =]+=\S*")


def case_name(display_name: str) -> str:
    """The case a display name is a run of: without the parameters ReFrame's options generate."""
    return _GENERATED_PARAM.sub("", display_name)


def derive(sessions: Iterable[Session], system: str, method: Method | None = None,
           flags: Mapping[str, float] | None = None) -> tuple[dict[str, dict[str, dict[str, Reference]]], list[str]]:
    """({partition:environ: {case name: {figure: Reference}}}, notes on what was left out) from the
    measured cases of `system`; noisy runs (scalebench.reporting.noise), figures without a direction, and
    figures with fewer runs than min_runs are left out."""
    method = method or Method()
    values: dict[tuple[str, str], dict[str, list[float]]] = {}  # (where, case) -> figure -> runs
    units: dict[tuple[str, str, str], str] = {}
    checks: dict[tuple[str, str], str] = {}  # (where, case) -> the check's class name
    notes = []
    for session in sessions:
        for case in session.cases:
            if case.system != system or not case.measured:
                continue
            key = (case_key(case.partition, case.environ), case_name(case.name))
            verdict = noise.case_noise(case, flags)
            if verdict.noisy:
                notes.append(f"{key[0]} {case.name} of {session.start}: a noisy run ({'; '.join(verdict.reasons)})")
                continue
            checks[key] = case.benchmark
            for figure, (value, unit) in case.figures.items():
                if is_number(value):
                    values.setdefault(key, {}).setdefault(figure, []).append(float(value))
                    units[(*key, figure)] = unit
    learned: dict[str, dict[str, dict[str, Reference]]] = {}
    for (where, name), figures in sorted(values.items()):
        for figure, runs in sorted(figures.items()):
            way = direction(checks[(where, name)], figure)
            if way == "none":
                continue
            if len(runs) < method.min_runs:
                notes.append(f"{where} {name} {figure}: {len(runs)} run(s), fewer than {method.min_runs}")
                continue
            median = statistics.median(runs)
            if median <= 0:
                notes.append(f"{where} {name} {figure}: median {median:g} is not a positive figure")
                continue
            mad = statistics.median(abs(v - median) for v in runs)
            spread = max(MAD_TO_SIGMA * mad, statistics.stdev(runs) if len(runs) > 1 else 0.0) / median
            bound = max(method.k * spread, method.floor)
            lower, upper = (-bound, None) if way == "higher" else (None, bound)
            learned.setdefault(where, {}).setdefault(name, {})[figure] = Reference(
                median, lower, upper, units[(where, name, figure)], len(runs), spread)
    return learned, notes


def reference_path(system: str, directory: Path = REFERENCES_DIR) -> Path:
    return Path(directory) / f"{check_name('system', system)}.yaml"


@functools.lru_cache(maxsize=8)
def _cached(key: tuple[str, int, int]) -> dict[str, dict[str, dict[str, tuple[Any, ...]]]]:
    path = Path(key[0])
    data = loaders.load_yaml(path, "reference file")
    table = data.get("references") if isinstance(data, dict) else None
    if not isinstance(table, dict):
        raise InputError(f"{path}: expected a mapping with 'references'")
    out: dict[str, dict[str, dict[str, tuple[Any, ...]]]] = {}
    for where, cases in table.items():
        for name, figures in (cases if isinstance(cases, dict) else {}).items():
            for figure, entry in (figures if isinstance(figures, dict) else {}).items():
                label = excerpt_text(f"{where} {name} {figure}", 120)
                if not isinstance(entry, dict) or "value" not in entry:
                    raise InputError(f"{path}: {label}: expected value, lower, upper and unit")
                value, lower, upper = entry["value"], entry.get("lower"), entry.get("upper")
                if not is_number(value) or value <= 0:
                    raise InputError(f"{path}: {label}.value: not a positive number")
                for side, share in (("lower", lower), ("upper", upper)):
                    if share is not None and (not is_number(share) or abs(share) >= 10):
                        raise InputError(f"{path}: {label}.{side}: not a share of the value")
                if (lower is not None and lower > 0) or (upper is not None and upper < 0):
                    raise InputError(f"{path}: {label}: lower must be <= 0 and upper >= 0")
                out.setdefault(str(where), {}).setdefault(str(name), {})[str(figure)] = (
                    float(value), lower, upper, str(entry.get("unit", "")))
    return out


def reference_for(system: str, partition: str, environ: str, display_name: str,
                  directory: Path = REFERENCES_DIR) -> Mapping[str, tuple[Any, ...]]:
    """ReFrame references {figure: (value, lower, upper, unit)} of one case; {} when none are frozen."""
    path = reference_path(system, directory)
    if not path.is_file():
        return {}
    return _cached(file_key(path)).get(case_key(partition, environ), {}).get(case_name(display_name), {})


def freeze(sessions: Sequence[Session], system: str, *, method: Method, sources: Sequence[str], accepted: str,
           directory: Path = REFERENCES_DIR, force: bool = False, now: datetime | None = None
           ) -> tuple[Path, dict[str, dict[str, dict[str, Reference]]], list[str]]:
    """Write <directory>/<system>.yaml from the runs of `system` (after an acceptance PASS, stated in
    `accepted`); (path, references, notes). An existing file is replaced only with force, and kept."""
    learned, notes = derive(sessions, system, method)
    if not learned:
        raise InputError(f"no figure of system {system!r} has {method.min_runs} or more measured runs"
                         + (f" ({notes[0]}, ...)" if notes else "; is the system name right?"))
    now = now or datetime.now(timezone.utc)
    starts = sorted(s.start for s in sessions if any(c.system == system for c in s.cases))
    data = {
        "provenance": {
            "frozen_at": now.astimezone(timezone.utc).isoformat(timespec="seconds"),
            "system": system,
            "sources": [str(s) for s in sources],
            "sessions": starts,
            "method": method.describe(),
            "acceptance": accepted,
            "left_out": notes,
        },
        "references": {where: {name: {f: r.to_json() for f, r in figures.items()} for name, figures in cases.items()}
                       for where, cases in learned.items()},
    }
    path = reference_path(system, directory)
    text = (f"# Performance references of {system}, written by `scalebench references freeze`.\n"
            f"# The checks load them into ReFrame's self.reference: a figure past its bound fails the\n"
            f"# performance stage. Re-freeze rather than edit; `--force` keeps this file as {path.name}.<UTC time>.\n"
            + yaml.safe_dump(data, sort_keys=False, default_flow_style=False))
    writeonce.write_once(path, text, what="reference file", force=force, now=now, option="--references-dir",
                         exists=lambda p: (f"{p}: references exist already{_frozen_at(p)}; pass --force to replace "
                                           f"them (the old file is kept as {p.name}.<UTC time>)"))
    return path, learned, notes


def _frozen_at(path: Path) -> str:
    try:
        return f" (frozen_at {excerpt_text(str(loaders.load_yaml(path)['provenance']['frozen_at']), 40)})"
    except (ScalebenchError, KeyError, TypeError):  # only decorates the message
        return ""
