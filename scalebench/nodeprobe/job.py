"""The job script's lines that run the per-node probe (scalebench.nodeprobe.sampler) on every node of a
job: started before the run, one task per node, stopped after it.

Under Slurm the probe is a job step of its own, `srun --overlap` (Slurm 20.11 and newer), so that it
shares the CPUs and memory of the run's step instead of waiting for them; srun forwards the SIGTERM
that stops it to every node. Elsewhere it runs on the job's first node, where the job script runs;
a job of several nodes under another scheduler then has samples of that node only, and its record
says how many nodes went without.
"""
from __future__ import annotations

import shlex
import sys

from scalebench.nodeprobe.samples import PROBE_DIR

SLURM_SCHEDULERS = ("slurm", "squeue")
WAIT_S = 10  # longest wait for every node's first sample before the run starts anyway


def probe_commands(scheduler: str, nodes: int, *, interval_s: float, max_s: float,
                   python: str = sys.executable) -> tuple[list[str], list[str]]:
    """(lines before the run, lines after it) of a job on `nodes` nodes."""
    sampler = [python, "-m", "scalebench.nodeprobe.sampler"]
    run = shlex.join([*sampler, "run", "--dir", PROBE_DIR, "--interval", f"{interval_s:g}", "--max-s", f"{max_s:g}"])
    launch = ""
    if scheduler in SLURM_SCHEDULERS:
        launch = shlex.join(["srun", "--overlap", f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1",
                             "--cpu-bind=none", "--kill-on-bad-exit=0"]) + " "
    probed = nodes if launch else 1
    # The job's processes: under Slurm those of its slurmstepd processes (the probe knows the job from
    # SLURM_JOB_ID); elsewhere the descendants of the job script's shell, $$ (a pid of the first node).
    owner = "" if launch else " --job-pid $$"
    start = [f"mkdir -p {PROBE_DIR}",
             f"{launch}{run}{owner} > {PROBE_DIR}/probe.log 2>&1 &",
             "scalebench_probe=$!",
             shlex.join([*sampler, "wait", "--dir", PROBE_DIR, "--nodes", str(probed), "--timeout", str(WAIT_S)])
             + " --pid $scalebench_probe"]
    stop = ["kill -TERM $scalebench_probe 2>/dev/null; wait $scalebench_probe"]
    return start, stop
