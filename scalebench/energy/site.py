"""A partition's energy source, as its site file declares it (`energy:` on a partition).

    energy: {source: slurm, plugin: pm_counters, period_s: 1}      # Slurm's acct_gather_energy plugin
    energy: {source: slurm, plugin: ipmi, period_s: 30, sampler: false, profile_dir: /shared/h5}
    energy: {source: rapl, period_s: 1}                            # only the per-node sampler
    energy: {source: none}                                         # the default

source slurm: sacct gives the allocation's energy after the job (job total, includes set-up), and the
per-node sampler runs beside HPL for the core phase unless `sampler: false`; `profile_dir` (the
ProfileHDF5Dir of acct_gather_profile/hdf5) makes the job ask --profile=energy and read Slurm's own
power samples with sh5util. Any other source names a counter the sampler reads on each node
(scalebench/data/energy.yaml: sampler), sampled every period_s.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from scalebench.registry import did_you_mean
from scalebench.energy.registry import registry
from scalebench.errors import InputError
from scalebench.validation import excerpt, is_number

_KEYS = {"source", "plugin", "period_s", "sampler", "profile_dir"}


@dataclass(frozen=True)
class EnergySpec:
    source: str = "none"  # slurm | a sampler counter | none
    plugin: str | None = None  # slurm: the AcctGatherEnergyType plugin
    period_s: float | None = None
    sampler: bool = False  # run the per-node sampler beside HPL
    profile_dir: str | None = None  # slurm: acct_gather_profile/hdf5's ProfileHDF5Dir

    @property
    def slurm(self) -> bool:
        return self.source == "slurm"

    @classmethod
    def from_site(cls, data: Any, where: str) -> EnergySpec:
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise InputError(f"{where}: expected a mapping with source (slurm, {', '.join(registry().sampler)} "
                             "or none), plugin and period_s")
        unknown = sorted(map(str, set(data) - _KEYS))
        if unknown:
            raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}")
        sources = ("slurm", *registry().sampler, "none")
        source = data.get("source")
        if source not in sources:
            raise InputError(f"{where}.source: {excerpt(source)} is not one of {', '.join(sources)}"
                             f"{did_you_mean(str(source), sources)}")
        if source == "none":
            if set(data) - {"source"}:
                raise InputError(f"{where}: source none takes no other key")
            return cls()
        period = data.get("period_s")
        if not is_number(period) or not 0 < period <= 3600:
            raise InputError(f"{where}.period_s: the sampling period in seconds (0-3600], got {excerpt(period)}")
        sampler = data.get("sampler", True)
        if not isinstance(sampler, bool):
            raise InputError(f"{where}.sampler: must be true or false, got {excerpt(sampler)}")
        if source != "slurm":
            for key in ("plugin", "profile_dir", "sampler"):
                if key in data:
                    raise InputError(f"{where}.{key}: only for source slurm")
            return cls(str(source), None, float(period), True)
        plugin = data.get("plugin")
        if plugin not in registry().plugins:
            raise InputError(f"{where}.plugin: {excerpt(plugin)} is not one of {', '.join(registry().plugins)} "
                             "(the part after acct_gather_energy/ of AcctGatherEnergyType)"
                             f"{did_you_mean(str(plugin), registry().plugins)}")
        profile = data.get("profile_dir")
        if profile is not None and (not isinstance(profile, str) or not profile.startswith("/")):
            raise InputError(f"{where}.profile_dir: an absolute directory (ProfileHDF5Dir), got {excerpt(profile)}")
        return cls("slurm", str(plugin), float(period), sampler, profile)

    def describe(self) -> str:
        if self.source == "none":
            return "none (no energy source)"
        if self.slurm:
            text = (f"Slurm acct_gather_energy/{self.plugin} every {self.period_s:g} s "
                    f"({registry().label(registry().plugins[self.plugin or ''])}): job total from sacct")
            core = [*(["Slurm's hdf5 profile"] if self.profile_dir else []),
                    *(["node sampler"] if self.sampler else [])]
            return text + (f"; core phase from {' or '.join(core)}" if core else "; no core phase")
        return (f"node sampler of {self.source} every {self.period_s:g} s "
                f"({registry().label(registry().sampler[self.source])}): core phase")

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "plugin": self.plugin, "period_s": self.period_s, "sampler": self.sampler,
                "profile_dir": self.profile_dir}

    @classmethod
    def from_json(cls, data: Any) -> EnergySpec:
        """Back from a partition's extras (written by to_json after from_site checked it)."""
        if not isinstance(data, Mapping):
            return cls()
        return cls(str(data.get("source", "none")), data.get("plugin"), data.get("period_s"),
                   bool(data.get("sampler", False)), data.get("profile_dir"))
