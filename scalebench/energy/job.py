"""Energy in a job: the sampler's lines in the job script, and the figures once the job has ended.

A check calls sampler_commands() before the run (the per-node sampler beside the program, where the
partition declares one) and case_energy() after it (in ReFrame, before the performance stage: the
job has completed, and ReFrame's Slurm scheduler has seen its end in sacct already).
"""
from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

from scalebench.energy import sample, slurm
from scalebench.energy.figures import (EnergyResult, Measurement, combine, core_from_profile, core_from_samples,
                                       job_from_slurm, rmax_window)
from scalebench.energy.site import EnergySpec
from scalebench.errors import ScalebenchError
from scalebench.parse.hpl_windows import solve_windows

SAMPLES_DIR = "energy"  # under the job's working directory
SACCT_TRIES = 6  # slurmctld books the allocation's energy when its last step (extern) ends: wait for it
SACCT_RETRY_S = 2.0
NO_SOURCE_DECLARED = "the partition declares no energy source (site file: energy)"


def sampler_commands(spec: EnergySpec, slurm_like: bool, nodes: int, samples_dir: str = SAMPLES_DIR,
                     python: str = sys.executable) -> tuple[list[str], list[str]]:
    """(before, after) lines of the job script: one sampler per node in the background, stopped (and
    waited for) once the program has ended. Nothing when the partition declares no sampler."""
    if not spec.sampler:
        return [], []
    argv = [python, "-m", sample.__name__, "--out", samples_dir, "--interval", f"{spec.period_s:g}"]
    if slurm_like:  # one task per node, sharing the job's resources with the program's step
        argv = ["srun", "--overlap", f"--nodes={nodes}", "--ntasks-per-node=1", "--cpu-bind=none", *argv]
    start = f"{shlex.join(argv)} & SCALEBENCH_ENERGY_PID=$!"
    stop = 'kill -TERM "$SCALEBENCH_ENERGY_PID" 2>/dev/null; wait "$SCALEBENCH_ENERGY_PID" 2>/dev/null || true'
    return [start], [stop]


def job_options(spec: EnergySpec) -> list[str]:
    """Scheduler options: Slurm's energy profile, when the site keeps one."""
    if spec.slurm and spec.profile_dir:
        return ["--profile=energy", f"--acctg-freq=energy={max(1, round(spec.period_s or 1))}"]
    return []


def _slurm_job(job_id: str, exclusive: bool, config: slurm.SlurmEnergyConfig,
               read: Callable[[str], slurm.SacctRecord], wait: Callable[[float], None]) -> Measurement | str:
    for attempt in range(SACCT_TRIES):
        if attempt:
            wait(SACCT_RETRY_S)
        record = read(job_id)
        if record.energy_j or not exclusive:
            break
    return job_from_slurm(slurm.job_energy(record, exclusive), config)


def case_energy(spec: EnergySpec, *, hpl_output: str, rows: int, best_row: int | None, exclusive: bool,
                nodes: int, nodelist: Sequence[str], job_id: str | None, workdir: Path,
                slurm_config: Callable[[], slurm.SlurmEnergyConfig] = slurm.energy_config,
                sacct: Callable[[str], slurm.SacctRecord] = slurm.sacct_allocation,
                run: Callable[[Sequence[str]], str] = slurm.run_command,
                wait: Callable[[float], None] = time.sleep) -> EnergyResult:
    """The case's energy figures, or the reasons there are none. Slurm's clients are parameters so that
    a test can hand in recorded answers."""
    if spec.source == "none":
        return EnergyResult(None, None, (NO_SOURCE_DECLARED,))
    notes: list[str] = []
    window, why = rmax_window(solve_windows(hpl_output), rows, best_row)
    config = None
    if spec.slurm:
        try:
            config = slurm_config()
        except ScalebenchError as err:
            notes.append(f"scontrol: {err}")
        if config is not None and config.plugin != spec.plugin:
            notes.append(f"the site file declares acct_gather_energy/{spec.plugin}, Slurm runs "
                         f"{config.describe()}")
            config = None
    core: Measurement | str | None = why or None
    if not exclusive:
        core = "the job shared its nodes: the nodes' energy is not the job's"
    elif window is not None:
        core = _core(spec, window, nodes, nodelist, job_id, workdir, config, run, notes)
    job: Measurement | str | None = None
    if spec.slurm and config is not None:
        if not job_id:
            job = "no Slurm job id"
        else:
            try:
                job = _slurm_job(job_id, exclusive, config, sacct, wait)
            except ScalebenchError as err:
                job = f"sacct: {err}"
    return combine(core, job, notes)


def _core(spec: EnergySpec, window, nodes: int, nodelist: Sequence[str], job_id: str | None, workdir: Path,
          config: slurm.SlurmEnergyConfig | None, run: Callable[[Sequence[str]], str], notes: list[str]
          ) -> Measurement | str | None:
    found: Measurement | str | None = None
    samples: list[sample.NodeSamples] = []
    if spec.sampler:
        try:
            samples = sample.read_directory(workdir / SAMPLES_DIR)
        except ScalebenchError as err:
            notes.append(str(err))
        for node in samples:
            notes += node.notes
        found = core_from_samples(samples, window, nodes)
    if not isinstance(found, Measurement) and spec.profile_dir and config is not None and job_id:
        if isinstance(found, str):
            notes.append(found)
        offset = samples[0].utc_offset_s if samples else time.localtime().tm_gmtoff
        try:
            merged, extracted = workdir / f"energy-{job_id}.h5", workdir / f"energy-{job_id}.csv"
            for argv in slurm.sh5util_argv(job_id, spec.profile_dir, str(merged), str(extracted)):
                run(argv)
            series = slurm.parse_energy_profile(extracted.read_text(errors="replace")[:slurm.OUTPUT_LIMIT])
            found = core_from_profile(series, window, nodelist, config, offset)
        except (ScalebenchError, OSError) as err:
            found = f"Slurm's energy profile: {err}"
    return found
