"""Energy to solution, measured as Green500 asks (scalebench/data/energy.yaml says what each source covers).

- scalebench.energy.slurm: what Slurm's own accounting says (sacct's ConsumedEnergyRaw of the
  allocation, scontrol's plugin and sampling period, sh5util's profiled power samples);
- scalebench.energy.counters: the counters a node exposes without Slurm (pm_counters, RAPL powercap,
  NVML, ROCm SMI), their wrap-around, and energy over a window from their readings;
- scalebench.energy.sample: the per-node sampler a job runs beside its program;
- scalebench.energy.figures: energy, average power and Gflop/s per watt of an HPL case, over its core
  phase (Green500 Level 1) or the whole job, each with its source and coverage, or the reason there
  is none.
"""
