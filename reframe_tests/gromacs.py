"""GROMACS: ns/day of a water box at each scale, strong and weak scaling.

The job builds its input with GROMACS's own tools before the run: `gmx solvate` fills a box of whole
copies of GROMACS's spc216.gro water (the topology template gets the molecules it placed), `gmx grompp`
makes the run input from the run parameters template, and `gmx mdrun` runs on the job's MPI ranks
under the partition's launcher, with -ntomp OpenMP threads per rank and its counters reset half-way.
Strong scaling runs the same box at every scale (`cells` spc216 boxes per side); weak scaling grows
it with the ranks, so each rank keeps the 1-rank box's water.

A site's repository subclasses it (class SiteGROMACS(GROMACSCheck) with its own valid_systems, a
gmx_binary, larger cells and steps). Parser, inputs, plan rules and outcome: scalebench.benchmarks.gromacs.
"""
import reframe as rfm
from reframe.core.builtins import run_after, run_before, sanity_function, variable

from scalebench.check import Settings
from scalebench.benchmarks.gromacs import inputs
from scalebench.benchmarks.gromacs.outcome import gromacs_outcome

from .base import ScalebenchCheck, knob_variables, planned_test, recorded

WORKLOADS = inputs.load_workloads()


@planned_test
class GROMACSCheck(rfm.RunOnlyRegressionTest, ScalebenchCheck, recorded('GROMACSCheck'),
                   knob_variables(Settings, 'threads_per_rank', 'ranks_per_node')):
    descr = 'GROMACS ns/day of an SPC/E water box, strong and weak scaling'

    # An MPI build (Debian's, Spack's gromacs +mpi); '' = the stack's extras['gmx_binary'], else gmx_mpi.
    gmx_binary = variable(str, value='')
    cells = variable(int, value=0, loggable=True)  # 0: the workload's; spc216 boxes per side (weak: per rank)
    steps = variable(int, value=0, loggable=True)  # 0: the workload's
    inputs_dir = variable(str, value=str(inputs.INPUTS))  # the topology and run parameters templates

    output_description = 'no GROMACS md.log'

    @run_after('setup')
    def set_run(self):
        workload = WORKLOADS[self.workload]
        self.gmx_binary = self.gmx_binary or self.stack_spec().extras.get('gmx_binary', 'gmx_mpi')
        self.box = inputs.water_box(self.cells or workload.cells, self.steps or workload.steps, self.num_tasks,
                                    self.scaling)
        self.steps = self.box.steps
        self.gromacs_input = self.box.summary()
        # looked for in the batch shell, where the input is built (the plan leaves out a stack whose step's
        # environment is not it)
        self.launch_program(self.gmx_binary, inputs.mdrun_args(self.num_cpus_per_task, self.box))
        self.prerun_cmds += inputs.prepare_commands(self.gmx_binary, self.box)
        self.env_vars.update(OMP_NUM_THREADS=str(self.num_cpus_per_task), GMX_MAXBACKUP='-1')  # no #backup#s
        self.keep_files = [inputs.LOG, inputs.TOPOLOGY, inputs.PARAMETERS, inputs.SOLVATE_LOG, inputs.GROMPP_LOG]

    @run_before('run')
    def write_input(self):
        workload = WORKLOADS[self.workload]
        self.write_stage_file(inputs.TOPOLOGY, inputs.read_template(workload.topology, self.inputs_dir))
        self.write_stage_file(inputs.PARAMETERS, inputs.fill(inputs.read_template(workload.parameters, self.inputs_dir),
                                                             steps=self.steps))

    def parse_outputs(self, read):
        return gromacs_outcome(read, WORKLOADS[self.workload].molecule, tasks=self.num_tasks,
                               threads=self.num_cpus_per_task, steps=self.steps,
                               streams=(self.job.stdout, self.job.stderr))

    @sanity_function
    def validate(self):
        return self.assert_result(lambda outcome: [(not outcome.problems, '; '.join(outcome.problems))])

    def record(self, outcome):
        self.gromacs_version = (outcome.log.gromacs_version if outcome.log else None) or ''
        self.gromacs_atoms = outcome.atoms
        self.gromacs_input = self.box.summary(outcome.atoms)

    def figures(self, outcome):
        return outcome.figures
