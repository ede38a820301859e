"""LAMMPS: timesteps/s, atom-steps/s and the Comm share at each scale, strong and weak scaling.

Inputs are written by scalebench.apps.common from the templates of reframe_tests/inputs/lammps/ (LJ melt,
EAM copper, SPC/E water with PPPM and the rhodopsin benchmark's settings). Strong scaling runs
`atoms` atoms at every rank count; weak scaling replicates the 1-rank box so each rank keeps
`atoms` atoms. A workload whose LAMMPS packages the binary lacks (`lmp -h`) is skipped.
"""
import functools
import os
import shlex
import shutil
import subprocess

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (parameter, performance_function, run_after, run_before,
                                   sanity_function, variable)

from scalebench import programs

from scalebench.apps import common as apps

from scalebench.hpl import deck

from scalebench.site import scales
from scalebench.parse.lammps import parse_lammps

WORKLOADS = apps.load_lammps_workloads()


@functools.lru_cache(maxsize=None)
def _lmp_packages(path):
    """The packages of the LAMMPS binary at path (`lmp -h`), asked once per session; None if it
    cannot be asked."""
    if path is None:
        return None
    try:
        out = subprocess.run([path, '-h'], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return frozenset(apps.lammps_packages(out))


@rfm.simple_test
class LAMMPSCheck(rfm.RunOnlyRegressionTest):
    descr = 'LAMMPS throughput (timesteps/s, atom-steps/s) and Comm share, strong and weak scaling'
    valid_systems = ['*']
    valid_prog_environs = ['+lammps']
    scale = parameter(scales.scale_names(), loggable=True)
    workload = parameter(list(WORKLOADS), loggable=True)
    scaling = parameter(list(deck.SCALING_MODES), loggable=True)

    lmp_binary = variable(str, value='')  # '' = the environment's extras['lmp_binary'], else lmp
    atoms = variable(int, value=0, loggable=True)  # 0: the workload's default; weak: per rank
    steps = variable(int, value=0, loggable=True)  # 0: the workload's default
    threads_per_rank = variable(int, value=1, loggable=True)
    ranks_per_node = variable(int, type(None), value=None, loggable=True)  # None: fill the cores
    inputs_dir = variable(str, value=str(apps.INPUTS / 'lammps'))

    # Recorded in every perflog line and report.
    num_nodes = variable(int, value=0, loggable=True)
    stack = variable(str, value='', loggable=True)
    spack_lock = variable(str, value='', loggable=True)
    lammps_version = variable(str, value='', loggable=True)
    expected_atoms = variable(int, value=0, loggable=True)
    input_summary = variable(str, value='', loggable=True)

    log_file = 'log.lammps'

    @run_after('setup')
    def set_input(self):
        """The scale's geometry (or its skip reason), then the input for that many ranks."""
        part, env = self.current_partition, self.current_environ
        scales.task_setup(self.scale, part.extras, part.processor.num_cores, env.name, env.extras,
                        self.threads_per_rank, self.ranks_per_node).apply(self)
        spec = WORKLOADS[self.workload]
        self.lmp_binary = self.lmp_binary or self.current_environ.extras.get('lmp_binary', 'lmp')
        missing = sorted(set(spec.packages) - self._installed_packages())
        self.skip_if(bool(missing), f'{self.lmp_binary} lacks LAMMPS package(s) {", ".join(missing)} '
                                    f'needed by workload {self.workload}')
        template = os.path.join(self.inputs_dir, spec.input)
        with open(template) as handle:
            self.lammps_in = apps.lammps_input(spec, handle.read(), self.atoms or spec.atoms,
                                               self.steps or spec.steps, self.num_tasks, self.scaling)
        self.steps = self.lammps_in.steps
        self.expected_atoms = self.lammps_in.atoms
        self.input_summary = self.lammps_in.summary
        self.executable = shlex.quote(self.lmp_binary)  # -S lmp_binary=... is no shell code
        self.prerun_cmds.append(programs.guard(self.lmp_binary))
        self.executable_opts = ['-in', 'in.lammps', '-log', self.log_file, '-nocite']
        self.keep_files = [self.log_file, 'in.lammps']
        self.env_vars['OMP_NUM_THREADS'] = str(self.num_cpus_per_task)

    def _installed_packages(self):
        """Packages the binary lists in `lmp -h`; everything assumed when it cannot be asked here
        (a binary that only a module or Spack view puts on the job's PATH)."""
        found = _lmp_packages(shutil.which(self.lmp_binary))
        return set(WORKLOADS[self.workload].packages) if found is None else found

    @run_before('run')
    def write_input(self):
        with open(os.path.join(self.stagedir, 'in.lammps'), 'w') as handle:
            handle.write(self.lammps_in.text)
        for name in WORKLOADS[self.workload].files:
            shutil.copy(os.path.join(self.inputs_dir, name), self.stagedir)

    def _log(self):
        if not hasattr(self, '_parsed'):
            with open(os.path.join(self.stagedir, self.log_file), errors='replace') as handle:
                self._parsed = parse_lammps(handle.read())
        return self._parsed

    @sanity_function
    def validate(self):
        log, problem = programs.read_output(os.path.join(self.stagedir, self.job.stderr), self._log,
                                            f'no LAMMPS log {self.log_file}')
        if problem:
            return sn.assert_true(False, msg=problem)
        if log.run is None or not log.complete:
            return sn.assert_true(False, msg=f'LAMMPS run did not finish: {log.error or "no complete run summary"}')
        run = log.run
        return sn.all([
            sn.assert_false(log.nan_in_thermo, msg='NaN or inf in the thermo output'),
            sn.assert_eq(run.procs, self.num_tasks,
                         msg='LAMMPS ran on {0} procs, {1} requested (wrong MPI launcher?)'),
            sn.assert_eq(run.mpi_tasks, self.num_tasks, msg='LAMMPS reports {0} MPI tasks, {1} requested'),
            sn.assert_eq(run.atoms, self.expected_atoms, msg='LAMMPS ran {0} atoms, {1} expected'),
            sn.assert_eq(run.steps, self.steps, msg='LAMMPS ran {0} steps, {1} requested'),
        ])

    @run_before('performance')
    def drop_absent_figures(self):
        run = self._log().run
        self.lammps_version = run.lammps_version or ''
        unit = WORKLOADS[self.workload].time_unit
        self.perf_variables.pop('tau_per_day' if unit == 'ns/day' else 'ns_per_day', None)
        if 'Kspace' not in run.timing_breakdown:
            self.perf_variables.pop('kspace_share', None)

    @performance_function('timesteps/s')
    def timesteps_per_s(self):
        return self._log().run.timesteps_per_s

    @performance_function('atom-steps/s')
    def atom_steps_per_s(self):
        """LAMMPS's own k/M/Gatom-step/s, normalised; older releases print none for some inputs:
        then atoms x timesteps/s, which is how LAMMPS computes it."""
        run = self._log().run
        return run.atom_steps_per_s or run.atoms * run.timesteps_per_s

    @performance_function('ns/day')
    def ns_per_day(self):
        return self._log().run.ns_per_day

    @performance_function('tau/day')
    def tau_per_day(self):
        return self._log().run.tau_per_day

    @performance_function('s')
    def loop_time(self):
        return self._log().run.loop_time_s

    @performance_function('%')
    def comm_share(self):
        """Comm's share of the loop time: the interconnect signal."""
        return self._log().run.comm_pct_total

    @performance_function('%')
    def kspace_share(self):
        return self._log().run.timing_breakdown['Kspace']['pct_total']
