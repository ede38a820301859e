"""Interconnect microbenchmarks beyond hero numbers: whole curves over message sizes, per stack.

- NetPIPECheck: NetPIPE's MPI ping-pong (Debian: NPopenmpi, NPmpich2), on every stack that names
  its `netpipe_binary`, within a node and, where the partition has two nodes, between nodes;
  NetPIPEStreamCheck: its one-direction stream of small messages, for the message rate.
- HPCCNetworkCheck: hpcc's latency/bandwidth section (ping-pong min/avg/max over rank pairs, naturally
  and randomly ordered rings), with HPL kept tiny so the run takes seconds.
- OSU*Check: OSU micro-benchmarks where a stack provides them, found in the job under the stack's
  `osu_dir` (e.g. a Spack view's libexec/osu-micro-benchmarks), then on PATH.

Figures per message size are named <figure>_<bytes>; scalebench/data/benchmarks.yaml tells reports
how to draw them (n1/2, latency surprise, stack comparisons). NetPIPE's, OSU's and hpcc's plans and
outcomes are benchmarks (scalebench.benchmarks.netpipe, scalebench.benchmarks.osu, scalebench.benchmarks.hpcc); what the
microbenchmarks share is scalebench.interconnect.microbench.
"""

import reframe as rfm
from reframe.core.builtins import run_after, run_before, sanity_function, variable

from scalebench.hpl.hpcc_output import parse_hpcc
from scalebench.benchmarks.hpcc import outcome as hpcc_outcome, rules as hpcc_rules
from scalebench.benchmarks.netpipe.outcome import netpipe_measured
from scalebench.benchmarks.netpipe.output import parse_netpipe
from scalebench.benchmarks.osu.outcome import osu_measured
from scalebench.benchmarks.osu.output import parse_osu
from scalebench.benchmarks.osu.rules import OsuSettings

from .base import ScalebenchCheck, knob_variables, planned_test


class _Microbenchmark(rfm.RunOnlyRegressionTest, ScalebenchCheck):
    """Sanity: the outputs give figures and no problem; performance: those figures."""

    @sanity_function
    def validate(self):
        return self.assert_result(lambda measured: [(not measured.problems, '; '.join(measured.problems))])

    def figures(self, measured):
        return measured.figures


@planned_test
class NetPIPECheck(_Microbenchmark):
    descr = 'NetPIPE MPI ping-pong over message sizes: one-way latency and bandwidth curves'
    max_bytes = variable(int, value=8 * 2**20, loggable=True)
    perturbation = variable(int, value=0, loggable=True)  # NetPIPE's +-p bytes around each size
    hosts = variable(str, value='', loggable=True)
    output_file = 'np.out'
    output_description = 'no NetPIPE curve'
    mode_options = []  # NetPIPE's default mode: ping-pong

    @run_after('setup')
    def set_executable(self):
        self.launch_program(self.stack_spec().extras.get('netpipe_binary', 'NPmpi'),
                            [*self.mode_options, '-u', str(self.max_bytes), '-p', str(self.perturbation),
                             '-o', self.output_file])
        self.keep_files = [self.output_file]

    def parse_outputs(self, read):
        return netpipe_measured(parse_netpipe(read(self.output_file)), read(self.job.stdout), self.max_bytes,
                                stream=bool(self.mode_options))

    def record(self, measured):
        self.hosts = measured.hosts
        self.skip_if(measured.placement != self.placement,
                     f'asked for {self.placement}, ran {measured.placement} ({self.hosts})')


@planned_test
class NetPIPEStreamCheck(NetPIPECheck):
    descr = 'NetPIPE one-direction stream of small messages: message rate and bandwidth'
    max_bytes = 65536
    mode_options = ['-s']


@planned_test
class HPCCNetworkCheck(_Microbenchmark):
    descr = "hpcc latency/bandwidth section: ping-pong over rank pairs, natural and random rings"
    hpl_n = variable(int, value=1152, loggable=True)  # hpcc sizes its other kernels from HPL's N
    output_file = 'hpccoutf.txt'
    output_description = 'no hpcc latency/bandwidth figures'
    keep_files = ['hpccoutf.txt']

    @run_after('setup')
    def set_executable(self):
        self.launch_program(self.stack_spec().extras.get('hpcc_binary', 'hpcc'))
        self.env_vars.update(OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')

    @run_before('run')
    def write_input(self):
        self.write_stage_file('hpccinf.txt', hpcc_rules.hpcc_network_input(
            self.num_nodes, self.num_tasks_per_node, self.partition_spec().memory_per_node, self.hpl_n))

    def parse_outputs(self, read):
        return hpcc_outcome.hpcc_network_measured(parse_hpcc(read(self.output_file)), self.num_tasks)


class _OSUCheck(_Microbenchmark, knob_variables(OsuSettings)):
    """One OSU program, found in the job under the stack's `osu_dir` (recursively), else on PATH."""

    osu_binary = variable(str, value='')  # '' = the program found under osu_dir or on PATH
    osu_options = variable(list, value=[])  # e.g. ['-m', '1:4194304'] (OMB 5.x and later)
    output_description = 'no OSU table'
    program = ''
    figure, unit, extra = 'latency', 'us', ''  # the primary column per message size, and more figures

    @run_after('setup')
    def set_executable(self):
        osu_dir = self.stack_spec().extras.get('osu_dir')
        program, directories = (self.osu_binary, []) if self.osu_binary else \
            (getattr(self, 'benchmark', self.program), [osu_dir] if osu_dir else [])
        self.launch_program(program, [*self.case_plan.args, *map(str, self.osu_options)], directories)

    def parse_outputs(self, read):
        return osu_measured(parse_osu(read(self.job.stdout)), self.figure, self.unit, self.extra)


@planned_test
class OSULatencyCheck(_OSUCheck):
    descr = 'OSU osu_latency: one-way latency over message sizes'
    program = 'osu_latency'


@planned_test
class OSUBandwidthCheck(_OSUCheck):
    descr = 'OSU osu_bw: streaming bandwidth over message sizes, with n1/2'
    program, figure, unit, extra = 'osu_bw', 'bandwidth', 'MB/s', 'n_half'


@planned_test
class OSUBiBandwidthCheck(_OSUCheck):
    descr = 'OSU osu_bibw: bidirectional bandwidth over message sizes'
    program, figure, unit = 'osu_bibw', 'bandwidth', 'MB/s'


@planned_test
class OSUMultiBandwidthCheck(_OSUCheck):
    descr = 'OSU osu_mbw_mr: aggregate bandwidth, message rate and n1/2 for 1, 2, 4 process pairs'
    program, figure, unit, extra = 'osu_mbw_mr', 'bandwidth', 'MB/s', 'pairs'


@planned_test
class OSUCollectiveCheck(_OSUCheck):
    descr = 'OSU collectives: average latency over message sizes on every core of two nodes (or of one)'
