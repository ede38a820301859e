"""STREAM: a node's memory bandwidth (copy, scale, add, triad, in GB/s per node) and triad's fraction
of the node's theoretical bandwidth where the site file gives it (partition `memory_bandwidth_gbs`).

One whole node, one rank with a thread on every core, each array a share of the node's memory
(scalebench.rooms.stream.rules); every node of a partition with ReFrame's --distribute. The program is
the stack's `stream_binary` (build/bin/stream on the embedded default: hpcc's STREAM), else `stream`.
Parser, outcome and report section: scalebench.rooms.stream.
"""
import reframe as rfm
from reframe.core.builtins import run_after, sanity_function, variable

from scalebench.programs import missing_binary, resolve_binary
from scalebench.rooms.stream.outcome import stream_outcome
from scalebench.rooms.stream.output import parse_stream

from .base import ScalebenchCheck, planned_test, recorded


@planned_test
class STREAMCheck(rfm.RunOnlyRegressionTest, ScalebenchCheck, recorded('STREAMCheck')):
    descr = "STREAM memory bandwidth per node (copy, scale, add, triad) against the node's theoretical bandwidth"
    array_elements = variable(int, value=0, loggable=True)  # doubles per array per rank; 0: the plan's
    output_description = 'no STREAM table'

    @run_after('setup')
    def set_executable(self):
        binary = self.current_environ.extras.get('stream_binary', 'stream')
        missing = missing_binary(binary, 'STREAM binary')
        self.skip_if(bool(missing) and not self.is_dry_run(), missing)
        self.array_elements = self.array_elements or int(self.case_plan.args[0])
        self.launch_program(resolve_binary(binary), [str(self.array_elements)])

    def parse_outputs(self, read):
        return stream_outcome(parse_stream(read(self.job.stdout)), nodes=self.num_nodes, ranks=self.num_tasks,
                              threads=self.num_cpus_per_task,
                              theoretical_gbs=self.current_partition.extras.get('memory_bandwidth_gbs'))

    @sanity_function
    def validate(self):
        return self.assert_result(lambda outcome: [(not outcome.problems, '; '.join(outcome.problems))])

    def record(self, outcome):
        # STREAM's own stream.c takes its array size when compiled, not as an argument: what it printed
        self.array_elements = outcome.output.array_elements or self.array_elements
        self.stream_rates = f'{outcome.output.rate_unit} per {outcome.output.rates_per} ({outcome.output.form} form)'

    def figures(self, outcome):
        return outcome.figures
