"""The job script's lines that run the per-node probe (scalebench.nodeprobe.sampler) on every node of a
job: started before the run, one task per node, stopped after it.

Under Slurm the probe is a job step of its own, `srun --overlap` (Slurm 20.11 and newer), so that it
shares the CPUs and memory of the run's step instead of waiting for them. It is stopped by a stop file
in its directory (which the job's nodes share), not by a signal: srun answers a SIGTERM by killing its
tasks (SIGKILL), which would lose the last samples (the after window, the energy round at the stop);
srun gets the SIGTERM only if a node has not seen the file in STOP_WAIT_S (a shared file system's
cache). Elsewhere it runs on the job's first node, where the job script runs; a job of several nodes
under another scheduler then has samples of that node only, and its record says how many nodes went
without. Where the partition declares an energy sampler, the same probe takes
the energy readings (`energy`: their directory and period), so a job never runs a second per-node step.
"""
from __future__ import annotations

import shlex
import sys

from scalebench.nodeprobe.samples import PROBE_DIR
from scalebench.site.partition import SLURM_SCHEDULERS
WAIT_S = 10  # longest wait for every node's first sample before the run starts anyway
STOP_WAIT_S = 10  # longest wait for every node to see the stop file and take its last samples


def probe_commands(scheduler: str, nodes: int, *, interval_s: float, max_s: float,
                   energy: tuple[str, float] | None = None,
                   python: str = sys.executable) -> tuple[list[str], list[str]]:
    """(lines before the run, lines after it) of a job on `nodes` nodes; `energy` (directory, seconds
    between rounds) has the probe write each node's energy samples too."""
    sampler = [python, "-m", "scalebench.nodeprobe.sampler"]
    energy_args = ["--energy-out", energy[0], "--energy-interval", f"{energy[1]:g}"] if energy else []
    run = shlex.join([*sampler, "run", "--dir", PROBE_DIR, "--interval", f"{interval_s:g}", "--max-s", f"{max_s:g}",
                      *energy_args])
    launch = ""
    if scheduler in SLURM_SCHEDULERS:
        launch = shlex.join(["srun", "--overlap", f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1",
                             "--cpu-bind=none", "--kill-on-bad-exit=0"]) + " "
    probed = nodes if launch else 1
    # The job's processes: under Slurm those of its slurmstepd processes (the probe knows the job from
    # SLURM_JOB_ID); elsewhere the descendants of the job script's shell, $$ (a pid of the first node).
    owner = "" if launch else " --job-pid $$"
    start = [f"mkdir -p {PROBE_DIR}; rm -f {PROBE_DIR}/stop",  # a requeued job's would stop it at once
             f"{launch}{run}{owner} > {PROBE_DIR}/probe.log 2>&1 &",
             "scalebench_probe=$!",
             shlex.join([*sampler, "wait", "--dir", PROBE_DIR, "--nodes", str(probed), "--timeout", str(WAIT_S)])
             + " --pid $scalebench_probe"]
    stop = [f"touch {PROBE_DIR}/stop",
            f"for _ in $(seq {STOP_WAIT_S * 10}); do kill -0 $scalebench_probe 2>/dev/null || break; sleep 0.1; done",
            "kill -TERM $scalebench_probe 2>/dev/null; wait $scalebench_probe"]
    return start, stop
