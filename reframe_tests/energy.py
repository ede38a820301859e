"""Energy figures of an HPL case (scalebench.energy): a mixin, so the HPL checks read as before.

Before the run, the node probe (base.py) is asked to take the partition's energy readings on every node; once
the job has completed (ReFrame's Slurm scheduler has seen its end in sacct), the case gets energy,
average power and Gflop/s per watt over the core phase of the Rmax solve, and Slurm's job total
beside them, each with its source and coverage, or the reason there are none (`energy_source`).
"""
from pathlib import Path

from reframe.core.builtins import run_before

from scalebench.energy import job as energy_job

from .base import TestPlugin


class EnergyFigures(TestPlugin):
    """For a ScalebenchCheck whose result() is an HplOutcome and whose output_file is HPL's output."""

    @run_before('run')
    def sample_energy(self):
        partition = self.partition_spec()
        self.probe_energy = energy_job.probe_energy(partition.energy)  # read by run_node_probe, the last hook
        self.job.options += energy_job.job_options(partition.energy)

    def energy(self, outcome):
        """The energy figures {name: (value, unit)} of the finished job's Rmax solve (its figures() lists them);
        energy_source says from what, or why there are none."""
        rows = list(outcome.hpl.rows)
        partition = self.partition_spec()
        result = energy_job.case_energy(
            partition.energy, hpl_output=self.read_stage_file(self.output_file), rows=len(rows),
            best_row=rows.index(outcome.best_row) if outcome.rmax_gflops else None,
            exclusive=bool(self.exclusive_access), nodes=self.num_nodes, nodelist=list(self.job.nodelist or []),
            job_id=str(self.job.jobid) if partition.slurm_like and self.job.jobid else None,
            workdir=Path(self.stagedir))
        self.energy_source, self.energy_detail = result.source(), result.to_json()
        return result.figures(outcome.rmax_gflops)
