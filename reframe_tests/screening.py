"""Screening: every node and every link of a partition in a few jobs, the slow ones named.

ScreeningCheck runs one job per chunk of the partition's nodes (scalebench.screening.jobs): the probe
(scripts/screen-probe.c) times DGEMM and STREAM on every core of every node at once, then latency and
bandwidth of node pairs in rounds. `scalebench screen` and the report judge every node and pair
against their peers (scalebench.screening.verdict); the job's figures count what was flagged.
NodeHealthCheck (reframe_tests/hpl.py, with --distribute) is the one-job-per-node alternative.
"""
from dataclasses import replace

import reframe as rfm
from reframe.core.builtins import run_after, sanity_function, variable
from reframe.core.exceptions import ConfigError

from scalebench.errors import ScalebenchError
from scalebench.screening import jobs, probe, verdict
from scalebench.site.partition import SLURM_SCHEDULERS
from scalebench.site.thresholds import report_flags

from .base import ScalebenchCheck, planned_test, recorded

# Each partition's available nodes, asked of the scheduler once per run: every chunk splits the same list.
_AVAILABLE = {}


@planned_test
class ScreeningCheck(rfm.RunOnlyRegressionTest, ScalebenchCheck, recorded('ScreeningCheck')):
    descr = 'Every node (DGEMM, STREAM) and node pair (latency, bandwidth) of a job at once, against their peers'
    screen_nodes = variable(str, value='', loggable=True)  # a Slurm node list; '': the partition's nodes
    output_description = 'no screening probe output'

    def plan_settings(self):
        return replace(super().plan_settings(), screen_nodes=self.node_names())

    def node_names(self):
        """The nodes to split into chunks: -S screen_nodes, else (running on Slurm) the partition's
        available nodes, else none known (the plan then counts max_nodes)."""
        if self.screen_nodes:
            try:
                return tuple(jobs.expand_hostlist(self.screen_nodes, '-S screen_nodes'))
            except ScalebenchError as err:
                raise ConfigError(str(err)) from None
        partition = self.current_partition
        if partition is None or self.is_dry_run() or partition.scheduler.registered_name not in SLURM_SCHEDULERS:
            return ()
        if partition.fullname not in _AVAILABLE:
            scheduler = partition.scheduler
            found = scheduler.filternodes_by_state(scheduler.filternodes(self.job, scheduler.allnodes()), 'avail')
            _AVAILABLE[partition.fullname] = tuple(sorted((n.name for n in found), key=jobs.natural))
        return _AVAILABLE[partition.fullname]

    @run_after('setup')
    def set_executable(self):
        screening = self.case_plan.detail
        self.skip_if(bool(screening.missing) and not self.is_dry_run(), screening.missing)
        self.launch_program(screening.binary, screening.probe_args)
        self.env_vars.update(dict(screening.env_vars))
        if screening.names:
            self.job.options.append(f'--nodelist={screening.hostlist}')
        self.screened_nodes = screening.hostlist

    def parse_outputs(self, read):
        return verdict.judge(probe.parse_probe(read(self.job.stdout)), report_flags(), self.node_interference()[0])

    @sanity_function
    def validate(self):
        expected = set(self.case_plan.detail.names)
        return self.assert_result(lambda judged: [
            (len(judged.result.nodes) == self.num_nodes,
             f'the probe screened {len(judged.result.nodes)} node(s) of the job\'s {self.num_nodes}'),
            (not expected or set(judged.result.node_names()) == expected,
             f'the probe ran on {jobs.hostlist(judged.result.node_names())}, not on {self.screened_nodes}'),
        ])

    def record(self, judged):
        self.probe_output = probe.probe_lines(self.read_stage_file(self.job.stdout))

    def figures(self, judged):
        return verdict.summary(judged)
