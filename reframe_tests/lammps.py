"""LAMMPS: timesteps/s, atom-steps/s and the Comm share at each scale, strong and weak scaling.

Inputs are written by scalebench.benchmarks.lammps.inputs from the templates of reframe_tests/inputs/lammps/
(LJ melt, EAM copper, SPC/E water with PPPM). Strong scaling runs `atoms` atoms at every rank count;
weak scaling replicates the 1-rank box so each rank keeps `atoms` atoms. The job lists the binary's
packages first (`lmp -h`): a workload whose packages it lacks fails naming them. Parser, plan rules
and outcome: scalebench.benchmarks.lammps.
"""
import shlex
import shutil

import reframe as rfm
from reframe.core.builtins import run_after, run_before, sanity_function, variable

from scalebench.check import Settings
from scalebench.benchmarks.lammps import inputs
from scalebench.benchmarks.lammps.outcome import lammps_outcome
from scalebench.benchmarks.lammps.output import parse_lammps

from .base import ScalebenchCheck, knob_variables, planned_test

WORKLOADS = inputs.load_lammps_workloads()


@planned_test
class LAMMPSCheck(rfm.RunOnlyRegressionTest, ScalebenchCheck,
                  knob_variables(Settings, 'threads_per_rank', 'ranks_per_node')):
    descr = 'LAMMPS throughput (timesteps/s, atom-steps/s) and Comm share, strong and weak scaling'

    lmp_binary = variable(str, value='')  # '' = the environment's extras['lmp_binary'], else lmp
    atoms = variable(int, value=0, loggable=True)  # 0: the workload's default; weak: per rank
    steps = variable(int, value=0, loggable=True)  # 0: the workload's default
    inputs_dir = variable(str, value=str(inputs.INPUTS_DIR))

    # Recorded in every perflog line and report.
    lammps_version = variable(str, value='', loggable=True)
    expected_atoms = variable(int, value=0, loggable=True)
    input_summary = variable(str, value='', loggable=True)

    log_file = 'log.lammps'
    help_file = 'lmp.help'
    output_description = 'no LAMMPS log'

    @run_after('setup')
    def set_input(self):
        spec = WORKLOADS[self.workload]
        self.lmp_binary = self.lmp_binary or self.stack_spec().extras.get('lmp_binary', 'lmp')
        self.lammps_in = inputs.lammps_input(spec, inputs.read_template(self.inputs_dir, spec),
                                             self.atoms or spec.atoms, self.steps or spec.steps, self.num_tasks,
                                             self.scaling)
        self.steps = self.lammps_in.steps
        self.expected_atoms = self.lammps_in.atoms
        self.input_summary = self.lammps_in.summary
        # looked for in the batch shell (the plan leaves out a stack whose step's environment is not it)
        self.launch_program(self.lmp_binary, ['-in', 'in.lammps', '-log', self.log_file, '-nocite'])
        # quoted: -S lmp_binary=... is no shell code
        self.prerun_cmds.append(f'{shlex.quote(self.lmp_binary)} -h > {self.help_file} 2>&1 || true')
        self.keep_files = [self.log_file, 'in.lammps', self.help_file]
        self.env_vars['OMP_NUM_THREADS'] = str(self.num_cpus_per_task)

    @run_before('run')
    def write_input(self):
        self.write_stage_file('in.lammps', self.lammps_in.text)
        for name in WORKLOADS[self.workload].files:
            shutil.copy(inputs.input_file(self.inputs_dir, name), self.stagedir)

    def parse_outputs(self, read):
        return lammps_outcome(WORKLOADS[self.workload], read(self.help_file), parse_lammps(read(self.log_file)),
                              tasks=self.num_tasks, atoms=self.expected_atoms, steps=self.steps)

    @sanity_function
    def validate(self):
        return self.assert_result(lambda outcome: [(not outcome.problems, '; '.join(outcome.problems))])

    def record(self, outcome):
        self.lammps_version = outcome.run.lammps_version or ''

    def figures(self, outcome):
        return outcome.figures(WORKLOADS[self.workload].time_unit)
