"""A cheap check for the fault tests (tests/integration/test_slurm_faults.py), not a benchmark: each
case's ranks sleep inside srun on the nodes its `fault` parameter names, so the test can kill,
cancel or crash them at a known time. Runs only on a partition with the `faultprobe` feature.
"""
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_after, sanity_function, variable

# fault -> (nodes, tasks per node, sbatch node selection, time limit). The victims sleep until the
# fault ends them; the time limit bounds a fault that was never injected.
CASES = {
    'rank_killed': (1, 2, '--nodelist=n1', '3m'),
    'cancelled': (1, 1, '--nodelist=n1', '3m'),
    'time_limit': (1, 1, '--nodelist=n2', '1m'),  # Slurm counts time limits in whole minutes
    'node_crash': (2, 1, '--nodelist=n2,n3', '3m'),
    'none_quick': (1, 1, '--exclude=n3', '3m'),  # done before any fault
    'none_through': (2, 1, '--exclude=n3', '3m'),  # running while the faults happen
}
VICTIM_SLEEP_S = 300


@rfm.simple_test
class FaultProbeCheck(rfm.RunOnlyRegressionTest):
    valid_systems = ['+faultprobe']
    valid_prog_environs = ['*']
    fault = parameter(list(CASES), loggable=True)
    release_file = variable(str, value='')  # none_through waits for it (at most 120 s)
    num_nodes = variable(int, value=0, loggable=True)
    stack = variable(str, value='', loggable=True)
    executable = 'sh'

    @run_after('setup')
    def set_job(self):
        nodes, per_node, selection, self.time_limit = CASES[self.fault]
        self.num_nodes, self.num_tasks_per_node, self.num_tasks = nodes, per_node, nodes * per_node
        self.stack = self.current_environ.extras.get('stack', self.current_environ.name)
        if self.fault == 'none_quick':
            wait = 'sleep 1'
        elif self.fault == 'none_through':
            release = shlex.quote(self.release_file)
            wait = f'i=0; while [ ! -e {release} ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done; [ -e {release} ]'
        else:
            wait = f'sleep {VICTIM_SLEEP_S}'
        # "done" only when the wait ended well: a rank whose sleep was killed did not finish.
        body = f'echo "rank $SLURM_PROCID started on $SLURMD_NODENAME"; {wait} && echo "rank $SLURM_PROCID done"'
        self.executable_opts = ['-c', shlex.quote(body)]
        # The comment lets the test find the job in squeue; no requeue, so a node failure ends the case.
        self.job.options += [selection, f'--comment=fault={self.fault}', '--no-requeue']
        # As MPI jobs usually run: one dead rank ends the step instead of leaving the others waiting.
        self.job.launcher.options = ['--kill-on-bad-exit=1']

    @sanity_function
    def validate(self):
        done = sn.count(sn.findall(r'rank \d+ done', self.stdout))
        return sn.assert_eq(done, self.num_tasks, msg='{0} of {1} ranks finished')

    @performance_function('ranks')
    def ranks_done(self):
        return sn.count(sn.findall(r'rank \d+ done', self.stdout))
