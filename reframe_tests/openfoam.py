"""OpenFOAM: seconds per time step and solver time at each scale, strong and weak scaling.

Each case is a tutorial of the OpenFOAM installation (reframe_tests/inputs/openfoam/cases.yaml). The
job prepares it where OpenFOAM is installed (`scalebench prepare openfoam`: the tutorial copied from
$FOAM_TUTORIALS and sized by scalebench.benchmarks.openfoam.cases, blockMesh cells, endTime = steps x deltaT,
`simple` decomposition into `ranks` subdomains), runs the meshing steps, then the solver under the
partition's launcher with -parallel (serial on one rank), timed by `date` around it.

motorBike (surfaceFeatureExtract, snappyHexMesh and potentialFoam in parallel, then simpleFoam) takes
minutes on tens of cores: it runs only with -S heavy_cases=true.

Parser, plan rules and outcome: scalebench.benchmarks.openfoam.
"""
import shlex
import sys

import reframe as rfm
from reframe.core.builtins import run_after, run_before, sanity_function, variable

from scalebench.check import Settings
from scalebench.benchmarks.openfoam import cases as openfoam
from scalebench.benchmarks.openfoam.outcome import openfoam_outcome
from scalebench.benchmarks.openfoam.rules import OpenFOAMSettings

from .base import ScalebenchCheck, knob_variables, planned_test

CASES = openfoam.load_openfoam_cases()


@planned_test
class OpenFOAMCheck(rfm.RunOnlyRegressionTest, ScalebenchCheck,
                    knob_variables(Settings, 'threads_per_rank', 'ranks_per_node'),
                    knob_variables(OpenFOAMSettings)):
    descr = 'OpenFOAM seconds per step and solver time, strong and weak scaling'

    cells = variable(int, value=0, loggable=True)  # 0: the case's default; weak: per rank
    steps = variable(int, value=0, loggable=True)  # 0: the case's default
    tutorials_dir = variable(str, value='')  # '' = $FOAM_TUTORIALS where the job runs

    # Recorded in every perflog line and report.
    mesh_cells = variable(int, value=0, loggable=True)  # blockMesh cells
    solver_cells = variable(int, value=0, loggable=True)  # the solver's mesh (snappyHexMesh's, if run)
    case_summary = variable(str, value='', loggable=True)
    openfoam_build = variable(str, value='', loggable=True)
    output_description = 'no solver log'

    @run_after('setup')
    def set_case(self):
        spec = CASES[self.case]
        self.steps = self.steps or spec.steps
        # looked for after OpenFOAM's environment is sourced (prepare_in_job), in the batch shell: the plan
        # leaves out a stack whose step's environment is not it
        self.launch_program(spec.solver, ['-parallel'] if self.num_tasks > 1 else [])
        self.keep_files = ['system', openfoam.CASE_FILE, *openfoam.openfoam_logs(spec, self.num_tasks),
                           openfoam.SOLVER_START, openfoam.SOLVER_END]
        self.env_vars['OMP_NUM_THREADS'] = str(self.num_cpus_per_task)

    @run_before('run')
    def prepare_in_job(self):
        """The case is prepared where OpenFOAM is installed: the job runs scalebench first."""
        spec = CASES[self.case]
        prepare = [sys.executable, '-m', 'scalebench', 'prepare', 'openfoam', '--case', self.case,
                   '--cells', str(self.cells or spec.cells), '--steps', str(self.steps),
                   '--ranks', str(self.num_tasks), '--scaling', self.scaling,
                   *(['--tutorials', self.tutorials_dir] if self.tutorials_dir else [])]
        # The launch line of the utilities run in parallel: ReFrame gives the job its task counts only
        # when it writes the script, so give them now.
        self.job.num_tasks, self.job.num_tasks_per_node = self.num_tasks, self.num_tasks_per_node
        self.job.num_cpus_per_task = self.num_cpus_per_task
        launcher = self.job.launcher.run_command(self.job)
        self.prerun_cmds = [*openfoam.source_environment(self.stack_spec().extras.get('openfoam_bashrc')),
                            *self.prerun_cmds, shlex.join(prepare),
                            *openfoam.openfoam_commands(spec, self.num_tasks, launcher),
                            f'date +%s.%N > {openfoam.SOLVER_START}']
        self.postrun_cmds = [f'date +%s.%N > {openfoam.SOLVER_END}']

    def parse_outputs(self, read):
        return openfoam_outcome(CASES[self.case], read, stdout=self.job.stdout, tasks=self.num_tasks, steps=self.steps)

    @sanity_function
    def validate(self):
        return self.assert_result(lambda outcome: [(not outcome.problems, '; '.join(outcome.problems))])

    def record(self, outcome):
        self.openfoam_build = outcome.log.build or ''
        self.mesh_cells, self.solver_cells = int(outcome.setup['cells']), outcome.solver_cells
        self.case_summary = outcome.setup['summary']

    def figures(self, outcome):
        return outcome.figures
