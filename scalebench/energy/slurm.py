"""What Slurm's own accounting says about a job's energy.

- sacct: ConsumedEnergyRaw (joules) of the allocation (`sacct -X`), never a sum of its steps: the
  batch step spans the srun steps inside it, so summing double-counts (ARCHER2's documentation
  warns of it). What the allocation's figure holds depends on the site: with PrologFlags=Contain it
  is the extern step's, the whole allocation on every node; without, slurmctld adds up the steps
  that report energy, which leaves out the time between them.
- scontrol show config: which AcctGatherEnergyType plugin, polled how often (AcctGatherNodeFreq,
  JobAcctGatherFrequency's energy=), and whether it profiles (AcctGatherProfileType).
- sh5util: the power samples acct_gather_profile/hdf5 wrote for a job run with --profile=energy.

A ConsumedEnergyRaw of 0 or empty is no reading (the plugin measured nothing), never zero joules; a
value no node can draw in the time (a wrapped counter, Slurm's NO_VAL) is refused with the reason.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from typing import Sequence

from scalebench.energy.registry import registry
from scalebench.errors import InputError
from scalebench.validation import excerpt

SACCT_FIELDS = ("JobIDRaw", "State", "Start", "End", "ElapsedRaw", "NNodes", "NodeList", "ConsumedEnergyRaw")
COMMAND_TIMEOUT_S = 60.0
OUTPUT_LIMIT = 4 * 2**20
_ENERGY_RE = re.compile(r"\d{1,30}")


@dataclass(frozen=True)
class SacctRecord:
    """One line of `sacct -P -n --format=<SACCT_FIELDS>` with SLURM_TIME_FORMAT=%s."""

    job_id: str  # 1234, 1234.batch, 1234.extern, 1234.0
    state: str
    start: float | None  # seconds since the epoch; None: Unknown / None (never started, still running)
    end: float | None
    elapsed_s: int | None
    nodes: int | None
    nodelist: str
    energy_j: int | None  # ConsumedEnergyRaw as printed; None when empty

    @property
    def is_allocation(self) -> bool:
        return "." not in self.job_id


def _int(text: str) -> int | None:
    return int(text) if re.fullmatch(r"\d{1,18}", text) else None


def parse_sacct(text: str, fields: Sequence[str] = SACCT_FIELDS) -> list[SacctRecord]:
    """Records of sacct's parsable output (-P, no header); InputError on a line with other fields."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) != len(fields):
            raise InputError(f"sacct output line {number}: {len(cells)} fields, expected {len(fields)} "
                             f"({','.join(fields)}): {excerpt(line)}")
        row = dict(zip(fields, cells))
        energy = row.get("ConsumedEnergyRaw", "").strip()
        records.append(SacctRecord(
            job_id=row.get("JobIDRaw", row.get("JobID", "")).strip(), state=row.get("State", "").strip(),
            start=_epoch(row.get("Start", "")), end=_epoch(row.get("End", "")),
            elapsed_s=_int(row.get("ElapsedRaw", "").strip()), nodes=_int(row.get("NNodes", "").strip()),
            nodelist=row.get("NodeList", "").strip(),
            energy_j=int(energy) if _ENERGY_RE.fullmatch(energy) else None))
    return records


def _epoch(text: str) -> float | None:
    value = _int(text.strip())
    return float(value) if value else None  # "Unknown", "None", or 0


def sacct_argv(job_id: str, allocation: bool = True) -> list[str]:
    return ["sacct", *(["-X"] if allocation else []), "-n", "-P", "--noconvert", "-j", job_id,
            f"--format={','.join(SACCT_FIELDS)}"]


def run_command(argv: Sequence[str], env: dict[str, str] | None = None) -> str:
    """A Slurm client's stdout; InputError with its last line when it fails or hangs."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        raise InputError(f"`{' '.join(argv)}` did not answer within {COMMAND_TIMEOUT_S:g} s") from None
    except OSError as err:
        raise InputError(f"cannot run {argv[0]}: {err.strerror}") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise InputError(f"`{' '.join(argv)}` exited {proc.returncode}: {excerpt(last[-1] if last else '')}")
    return proc.stdout[:OUTPUT_LIMIT]


def sacct_allocation(job_id: str) -> SacctRecord:
    """The allocation's record, times in epoch seconds."""
    if not re.fullmatch(r"\d{1,12}(?:_\d{1,12})?", job_id):
        raise InputError(f"job id {excerpt(job_id)} is not a Slurm job id")
    text = run_command(sacct_argv(job_id), env=dict(os.environ, SLURM_TIME_FORMAT="%s"))
    records = [r for r in parse_sacct(text) if r.is_allocation]
    if len(records) != 1:
        raise InputError(f"sacct -X -j {job_id}: {len(records)} allocation records, expected 1")
    return records[0]


@dataclass(frozen=True)
class JobEnergy:
    """The allocation's energy as Slurm accounted it, or why there is none (joules is then None)."""

    joules: float | None
    seconds: float | None
    start: float | None
    end: float | None
    nodes: int | None
    reason: str = ""


def job_energy(record: SacctRecord, exclusive: bool) -> JobEnergy:
    """The allocation's ConsumedEnergyRaw, when it can be the job's."""
    def none(reason: str) -> JobEnergy:
        return JobEnergy(None, record.elapsed_s, record.start, record.end, record.nodes, reason)

    if not record.is_allocation:
        return none(f"{record.job_id} is a step, not the allocation (sacct -X)")
    if not exclusive:
        return none("the job shared its nodes: the nodes' energy is not the job's")
    if record.end is None or record.start is None or record.state in ("RUNNING", "PENDING"):
        return none(f"job {record.job_id} has not ended ({record.state or 'no state'})")
    if not record.elapsed_s or not record.nodes:
        return none(f"job {record.job_id} ran {record.elapsed_s or 0} s on {record.nodes or 0} node(s)")
    if record.energy_j is None or record.energy_j == 0:
        return none(f"Slurm recorded no energy for job {record.job_id} (ConsumedEnergyRaw "
                    f"{'0' if record.energy_j == 0 else 'empty'})")
    bounds = registry()
    watts = record.energy_j / record.elapsed_s / record.nodes
    # Start and End are whole seconds: one more second keeps a short job's true power within bounds.
    if record.energy_j > bounds.max_node_power_w * record.nodes * (record.elapsed_s + 1):
        return none(f"ConsumedEnergyRaw {record.energy_j} J in {record.elapsed_s} s on {record.nodes} node(s) is "
                    f"{watts:.3g} W per node, above {bounds.max_node_power_w:g} W: a wrapped or garbled counter")
    if watts < bounds.min_node_power_w:
        return none(f"ConsumedEnergyRaw {record.energy_j} J in {record.elapsed_s} s on {record.nodes} node(s) is "
                    f"{watts:.3g} W per node, below {bounds.min_node_power_w:g} W: a counter that did not count")
    return JobEnergy(float(record.energy_j), float(record.elapsed_s), record.start, record.end, record.nodes)


# --- scontrol show config -------------------------------------------------------------------------

@dataclass(frozen=True)
class SlurmEnergyConfig:
    plugin: str | None  # pm_counters, rapl, ipmi, ... (None: acct_gather_energy/none)
    node_freq_s: int | None  # AcctGatherNodeFreq: slurmd's polling of the node (0: none)
    task_energy_freq_s: int | None  # JobAcctGatherFrequency energy=: the steps' polling
    profile: str | None  # hdf5, influxdb (None: acct_gather_profile/none)
    prolog_contain: bool  # PrologFlags has Contain: the allocation's energy is the extern step's

    def describe(self) -> str:
        if not self.plugin:
            return "no energy plugin (AcctGatherEnergyType=acct_gather_energy/none)"
        period = self.task_energy_freq_s or self.node_freq_s
        parts = [f"Slurm acct_gather_energy/{self.plugin}",
                 f"sampled every {period} s" if period else "read at step start and end"]
        if self.profile:
            parts.append(f"profiled by acct_gather_profile/{self.profile}")
        return ", ".join(parts)


def parse_scontrol_config(text: str) -> SlurmEnergyConfig:
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()

    def plugin(key: str, prefix: str) -> str | None:
        name = values.get(key, "").removeprefix(prefix)
        return None if name in ("", "none", "(null)") else name

    node_freq = re.match(r"(\d{1,6})", values.get("AcctGatherNodeFreq", ""))
    task_freq = re.search(r"(?:^|,)energy=(\d{1,6})", values.get("JobAcctGatherFrequency", ""))
    return SlurmEnergyConfig(plugin("AcctGatherEnergyType", "acct_gather_energy/"),
                             int(node_freq[1]) if node_freq else None, int(task_freq[1]) if task_freq else None,
                             plugin("AcctGatherProfileType", "acct_gather_profile/"),
                             "contain" in values.get("PrologFlags", "").lower().split(","))


def energy_config() -> SlurmEnergyConfig:
    return parse_scontrol_config(run_command(["scontrol", "show", "config"]))


# --- sh5util ---------------------------------------------------------------------------------------

def sh5util_argv(job_id: str, profile_dir: str, merged: str, extracted: str) -> list[list[str]]:
    """Merge the job's node-step files, then extract its Energy series as CSV."""
    return [["sh5util", "-j", job_id, "-p", profile_dir.rstrip("/") + "/", "-o", merged],
            ["sh5util", "-j", job_id, "-i", merged, "-E", "-s", "Energy", "-l", "Node:TimeSeries", "-o", extracted]]


def parse_energy_profile(text: str) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """sh5util's extracted Energy series ("Step,Node,ElapsedTime,EpochTime,Power"): {(step, node):
    [(epoch, watts)]}, each series in time order (sh5util repeats the first sample)."""
    # Plain comma-separated values (sh5util quotes nothing): split, not csv, which stops on a stray CR.
    rows = [line.split(",") for line in text.splitlines() if line.strip()]
    header = rows[0] if rows else []
    if [h.strip() for h in header[:5]] != ["Step", "Node", "ElapsedTime", "EpochTime", "Power"]:
        raise InputError(f"not an sh5util Energy series (header {excerpt(','.join(header))})")
    series: dict[tuple[str, str], dict[float, float]] = {}
    for row in rows[1:]:
        if len(row) < 5:
            continue
        epoch, watts = _int(row[3].strip()), row[4].strip()
        if epoch and re.fullmatch(r"\d{1,9}(?:\.\d{1,6})?", watts):
            series.setdefault((row[0].strip(), row[1].strip()), {})[float(epoch)] = float(watts)
    return {key: sorted(points.items()) for key, points in series.items()}
