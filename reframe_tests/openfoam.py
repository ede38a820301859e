"""OpenFOAM: seconds per time step and solver time at each scale, strong and weak scaling.

Each case is a tutorial of the OpenFOAM installation (reframe_tests/inputs/openfoam/cases.yaml)
copied into the stage directory and sized by scalebench.apps.common: blockMesh cells, a fixed number of
steps (endTime = steps x deltaT), decomposeParDict with numberOfSubdomains = ranks and `simple`.
The job runs the meshing steps (blockMesh, decomposePar, ...), then the solver under the partition's
launcher with -parallel (serial on one rank), timed by `date` around it: ClockTime has 1 s resolution.

motorBike (surfaceFeatureExtract, snappyHexMesh and potentialFoam in parallel, then simpleFoam) takes
minutes on tens of cores: it runs only with -S heavy_cases=true.
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (parameter, performance_function, run_after, run_before,
                                   sanity_function, variable)

from scalebench import programs

from scalebench.apps import common as apps

from scalebench.hpl import deck

from scalebench.site import scales
from scalebench.errors import ParseError
from scalebench.parse.openfoam import parse_openfoam

CASES = apps.load_openfoam_cases()
EDITED = ('system/blockMeshDict', 'system/controlDict', 'system/fvSolution')


@rfm.simple_test
class OpenFOAMCheck(rfm.RunOnlyRegressionTest):
    descr = 'OpenFOAM seconds per step and solver time, strong and weak scaling'
    valid_systems = ['*']
    valid_prog_environs = ['+openfoam']
    scale = parameter(scales.scale_names(), loggable=True)
    case = parameter(list(CASES), loggable=True)
    scaling = parameter(list(deck.SCALING_MODES), loggable=True)

    cells = variable(int, value=0, loggable=True)  # 0: the case's default; weak: per rank
    steps = variable(int, value=0, loggable=True)  # 0: the case's default
    heavy_cases = variable(bool, value=False)  # run cases marked heavy (motorBike)
    # '' = FOAM_TUTORIALS of the environment's env_vars, else of this process's environment
    tutorials_dir = variable(str, value='')
    threads_per_rank = variable(int, value=1, loggable=True)
    ranks_per_node = variable(int, type(None), value=None, loggable=True)  # None: fill the cores
    inputs_dir = variable(str, value=str(apps.INPUTS / 'openfoam'))

    # Recorded in every perflog line and report.
    mesh_cells = variable(int, value=0, loggable=True)  # blockMesh cells
    solver_cells = variable(int, value=0, loggable=True)  # the solver's mesh (snappyHexMesh's, if run)
    case_summary = variable(str, value='', loggable=True)
    num_nodes = variable(int, value=0, loggable=True)
    stack = variable(str, value='', loggable=True)
    spack_lock = variable(str, value='', loggable=True)
    openfoam_build = variable(str, value='', loggable=True)

    @run_after('setup')
    def set_case(self):
        """The scale's geometry (or its skip reason), then the case sized for that many ranks."""
        spec = CASES[self.case]
        part, env = self.current_partition, self.current_environ
        scales.task_setup(self.scale, part.extras, part.processor.num_cores, env.name, env.extras,
                        self.threads_per_rank, self.ranks_per_node).apply(self)
        self.skip_if(spec.heavy and not self.heavy_cases,
                     f'case {self.case} is heavy (meshing included); run it with -S heavy_cases=true')
        self.tutorials_dir = (self.tutorials_dir or self.current_environ.env_vars.get('FOAM_TUTORIALS')
                              or os.environ.get('FOAM_TUTORIALS', ''))
        source = os.path.join(self.tutorials_dir, spec.tutorial)
        self.skip_if(not os.path.isdir(source),
                     f'no tutorial {source}: set FOAM_TUTORIALS in the stack or -S tutorials_dir=...')
        texts = {}
        for name in EDITED:
            with open(os.path.join(source, name)) as handle:
                texts[name] = handle.read()
        with open(os.path.join(self.inputs_dir, 'decomposeParDict')) as handle:
            template = handle.read()
        self.case_setup = apps.openfoam_case(spec, texts, template, self.cells or spec.cells,
                                             self.steps or spec.steps, self.num_tasks, self.scaling)
        self.steps = self.case_setup.steps
        self.mesh_cells = self.case_setup.cells
        self.case_summary = self.case_setup.summary
        self.executable = spec.solver
        self.executable_opts = ['-parallel'] if self.num_tasks > 1 else []
        self.utility_logs = apps.openfoam_logs(spec, self.num_tasks)
        self.keep_files = ['system', *self.utility_logs, 'solver.start', 'solver.end']
        self.env_vars['OMP_NUM_THREADS'] = str(self.num_cpus_per_task)

    @run_before('run')
    def write_case(self):
        spec = CASES[self.case]
        apps.copy_tutorial(self.tutorials_dir, spec, self.stagedir)
        for name, text in self.case_setup.files.items():
            with open(os.path.join(self.stagedir, name), 'w') as handle:
                handle.write(text)
        # The launch line for the utilities run in parallel: ReFrame gives the job its task
        # counts only when it writes the script, so give them now.
        self.job.num_tasks, self.job.num_tasks_per_node = self.num_tasks, self.num_tasks_per_node
        self.job.num_cpus_per_task = self.num_cpus_per_task
        launcher = self.job.launcher.run_command(self.job)
        self.prerun_cmds = [programs.guard(spec.solver),
                            *apps.openfoam_commands(spec, self.num_tasks, launcher),
                            'date +%s.%N > solver.start']
        self.postrun_cmds = ['date +%s.%N > solver.end']

    def _read(self, name):
        with open(os.path.join(self.stagedir, name), errors='replace') as handle:
            return handle.read()

    def _log(self):
        if not hasattr(self, '_parsed'):
            self._parsed = parse_openfoam(self._read(self.job.stdout))
        return self._parsed

    def _utility_problems(self):
        """Utilities whose log does not end with End, and a blockMesh with other than the cells asked."""
        problems = []
        for name in self.utility_logs:
            try:
                lines = self._read(name).split()
            except OSError:
                problems.append(f'{name} missing')
                continue
            if 'End' not in lines[-5:]:
                problems.append(f'{name} does not end with End')
            if name == 'log.blockMesh' and f'nCells: {self.mesh_cells}' not in ' '.join(lines):
                problems.append(f'blockMesh did not make {self.mesh_cells} cells')
        return problems

    @sanity_function
    def validate(self):
        missing = programs.missing_in(os.path.join(self.stagedir, self.job.stderr))
        if missing:
            return sn.assert_true(False, msg=missing)
        problems = self._utility_problems()
        if problems:
            return sn.assert_true(False, msg='case set-up failed: ' + '; '.join(problems))
        try:
            log = self._log()
        except (OSError, ParseError) as err:
            return sn.assert_true(False, msg=f'no solver log in {self.job.stdout}: {err}')
        return sn.all([
            sn.assert_false(log.fatal_error, msg='the solver stopped with a FOAM FATAL error'),
            sn.assert_true(log.finished, msg='the solver did not reach End'),
            sn.assert_eq(log.nprocs, self.num_tasks,
                         msg='the solver reports nProcs {0}, {1} requested (wrong MPI launcher?)'),
            sn.assert_eq(log.n_time_steps, self.steps, msg='the solver ran {0} steps, {1} requested'),
            sn.assert_false(log.nonfinite_residuals, msg='non-finite residuals'),
        ])

    @run_before('performance')
    def record_build(self):
        self.openfoam_build = self._log().build or ''
        snapped = (apps.snapped_cells(self._read('log.snappyHexMesh'))
                   if 'log.snappyHexMesh' in self.utility_logs else None)
        self.solver_cells = snapped or self.mesh_cells

    def _wall_time(self):
        return float(self._read('solver.end')) - float(self._read('solver.start'))

    @performance_function('s/step')
    def time_per_step(self):
        """Mean ExecutionTime per step after the first (start-up left out)."""
        return self._log().seconds_per_step_mean

    @performance_function('s')
    def execution_time(self):
        """The solver's final ExecutionTime (CPU seconds of the master rank)."""
        return self._log().final_execution_time_s

    @performance_function('s')
    def clock_time(self):
        """The solver's final ClockTime (whole seconds)."""
        return self._log().final_clock_time_s

    @performance_function('s')
    def wall_time(self):
        """The launcher and solver timed by `date` (sub-second; start-up included)."""
        return self._wall_time()

    @performance_function('s/step')
    def wall_time_per_step(self):
        return self._wall_time() / self.steps
