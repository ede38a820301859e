"""STREAM: a node's memory bandwidth (copy, scale, add, triad) on one whole node, one rank with a thread
on every core, against the node's theoretical bandwidth where the site file gives it.

scalebench.benchmarks.stream plans the case (the job, each array's size: the program's argument) and reads
what the job printed (sanity and figures); the check runs the stack's STREAM (`stream_binary`, else
`stream` on PATH where the job runs). Run it on every node of a partition with ReFrame's --distribute.
"""
import reframe as rfm
from reframe.core.builtins import run_after, sanity_function

from scalebench.programs import missing_binary, resolve_binary
from scalebench.benchmark import JobOutput
from scalebench.benchmarks.stream.outcome import job_outcome
from scalebench.benchmarks.stream.rules import StreamSettings

from .base import ScalebenchCheck, knob_variables, planned_test, recorded


@planned_test
class STREAMCheck(rfm.RunOnlyRegressionTest, ScalebenchCheck, recorded('STREAMCheck'),
                  knob_variables(StreamSettings)):
    descr = "STREAM memory bandwidth per node (copy, scale, add, triad) against the node's theoretical bandwidth"
    output_description = 'no STREAM table'

    @run_after('setup')
    def set_executable(self):
        binary = self.stack_spec().extras.get('stream_binary', 'stream')
        missing = missing_binary(binary, 'stream_binary')
        self.skip_if(bool(missing) and not self.is_dry_run(), missing)
        self.launch_program(resolve_binary(binary), list(self.case_plan.args))

    def parse_outputs(self, read):
        return job_outcome(JobOutput(read(self.job.stdout), self.num_nodes, self.num_tasks, self.num_cpus_per_task,
                                     tuple(self.case_plan.args), dict(self.partition_spec().extras)))

    @sanity_function
    def validate(self):
        return self.assert_result(lambda outcome: [(not outcome.problems, '; '.join(outcome.problems))])

    def record(self, outcome):
        for name, value in outcome.recorded.items():
            setattr(self, name, value)

    def figures(self, outcome):
        return outcome.figures
