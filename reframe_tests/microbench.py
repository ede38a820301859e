"""Interconnect microbenchmarks beyond hero numbers: whole curves over message sizes, per stack.

- NetPIPECheck: NetPIPE's MPI ping-pong (Debian: NPopenmpi, NPmpich2), on every stack that names
  its `netpipe_binary`, within a node and, where the partition has two nodes, between nodes;
  NetPIPEStreamCheck: its one-direction stream of small messages, for the message rate.
- HPCCNetworkCheck: hpcc's latency/bandwidth section (ping-pong min/avg/max over rank pairs, naturally
  and randomly ordered rings), with HPL kept tiny so the run takes seconds.
- OSU*Check: OSU micro-benchmarks where a stack provides them (`osu_dir` in the environment's extras,
  e.g. a Spack view's libexec/osu-micro-benchmarks, or on PATH); skipped, naming the binary, otherwise.

Figures per message size are named <figure>_<bytes>; scalebench/data/benchmarks.yaml tells reports
how to draw them (n1/2, latency surprise, stack comparisons).
"""
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.backends import getlauncher
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from scalebench import programs

from scalebench.hpl import deck

from scalebench.interconnect import microbench

from scalebench.site import scales
from scalebench.errors import ParseError
from scalebench.parse.hpcc import parse_hpcc
from scalebench.parse.netpipe import parse_netpipe
from scalebench.parse.osu import parse_osu


def performance_functions(figures):
    """Perf variables of figures known only from the output (one per message size)."""
    return {name: sn.make_performance_function(lambda v=value: v, unit) for name, (value, unit) in figures.items()}


class StackMpirun(rfm.RegressionTestPlugin):
    """A stack whose MPI is not the partition's mpirun (MPICH next to OpenMPI on one machine) names
    its own in the environment's extras ('mpirun'): ReFrame's mpirun launcher would start OpenMPI's."""

    @run_before('run')
    def use_stack_mpirun(self):
        command = self.current_environ.extras.get('mpirun')
        if not command or self.job.launcher.registered_name != 'mpirun':
            return
        options = list(self.job.launcher.options)
        self.job.launcher = getlauncher('local')()
        # the executable is quoted already, by the check that set it
        self.executable = f"{shlex.join([command, '-np', str(self.num_tasks), *options])} {self.executable}"


class _TwoRankCheck(rfm.RunOnlyRegressionTest, StackMpirun):
    """Two processes, within one node or on two nodes (the placement parameter)."""

    placement = parameter(list(microbench.PLACEMENTS), loggable=True)
    num_nodes = variable(int, value=0, loggable=True)
    stack = variable(str, value='', loggable=True)
    spack_lock = variable(str, value='', loggable=True)

    @run_after('setup')
    def set_placement(self):
        part, env = self.current_partition, self.current_environ
        layout = microbench.two_rank_layout(self.placement, int(part.extras.get('max_nodes', 1)),
                                            self.cores_per_node())
        self.skip_if(isinstance(layout, str), layout)
        scale, ranks_per_node = layout
        scales.task_setup(scale, part.extras, part.processor.num_cores, env.name, env.extras,
                          ranks_per_node=ranks_per_node).apply(self)

    def cores_per_node(self):
        part = self.current_partition
        return int(part.extras.get('cores_per_node') or part.processor.num_cores)

    def set_figures(self, figures):
        self.perf_variables = performance_functions(figures)


@rfm.simple_test
class NetPIPECheck(_TwoRankCheck):
    descr = 'NetPIPE MPI ping-pong over message sizes: one-way latency and bandwidth curves'
    valid_systems = ['*']
    valid_prog_environs = ['+netpipe']
    max_bytes = variable(int, value=8 * 2**20, loggable=True)
    perturbation = variable(int, value=0, loggable=True)  # NetPIPE's +-p bytes around each size
    hosts = variable(str, value='', loggable=True)
    output_file = 'np.out'
    mode_options = []  # NetPIPE's default mode: ping-pong

    @run_after('setup')
    def set_executable(self):
        program = self.current_environ.extras.get('netpipe_binary', 'NPmpi')
        self.executable = shlex.quote(program)
        self.prerun_cmds.append(programs.guard(program))
        self.executable_opts = [*self.mode_options, '-u', str(self.max_bytes), '-p', str(self.perturbation),
                                '-o', self.output_file]
        self.keep_files = [self.output_file]

    def _read(self, name):
        with open(os.path.join(self.stagedir, name), errors='replace') as handle:
            return handle.read()

    def figures(self):
        return microbench.netpipe_figures(parse_netpipe(self._read(self.output_file)))

    def _measured(self):
        """The figures and the {rank: host} lines, read once for sanity and performance."""
        if not hasattr(self, '_outputs'):
            self._outputs = self.figures(), microbench.netpipe_hosts(self._read(self.job.stdout))
        return self._outputs

    @sanity_function
    def validate(self):
        outputs, problem = programs.read_output(os.path.join(self.stagedir, self.job.stderr), self._measured,
                                                f'no NetPIPE curve in {self.output_file}')
        if problem:
            return sn.assert_true(False, msg=problem)
        return sn.assert_eq(sorted(outputs[1]), [0, 1],
                            msg='NetPIPE reports ranks {0}, expected [0, 1] (wrong MPI launcher?)')

    @run_before('performance')
    def set_performance(self):
        figures, hosts = self._measured()
        self.hosts = ' '.join(hosts[rank] for rank in sorted(hosts))
        measured = microbench.placement_of(hosts)
        self.skip_if(measured != self.placement, f'asked for {self.placement}, ran {measured} ({self.hosts})')
        self.set_figures(figures)


@rfm.simple_test
class NetPIPEStreamCheck(NetPIPECheck):
    descr = 'NetPIPE one-direction stream of small messages: message rate and bandwidth'
    max_bytes = 65536
    mode_options = ['-s']

    def figures(self):
        return microbench.netpipe_stream_figures(parse_netpipe(self._read(self.output_file)))


@rfm.simple_test
class HPCCNetworkCheck(rfm.RunOnlyRegressionTest, StackMpirun):
    descr = "hpcc latency/bandwidth section: ping-pong over rank pairs, natural and random rings"
    valid_systems = ['*']
    valid_prog_environs = ['+hpcc']
    scale = variable(str, value='')  # '' = 2_nodes where the partition has them, else 1_node
    hpl_n = variable(int, value=1152, loggable=True)  # hpcc sizes its other kernels from HPL's N
    num_nodes = variable(int, value=0, loggable=True)
    stack = variable(str, value='', loggable=True)
    spack_lock = variable(str, value='', loggable=True)
    output_file = 'hpccoutf.txt'
    keep_files = ['hpccoutf.txt']

    @run_after('setup')
    def set_geometry(self):
        part, env = self.current_partition, self.current_environ
        self.scale = self.scale or microbench.whole_nodes_scale(int(part.extras.get('max_nodes', 1)))
        scales.task_setup(self.scale, part.extras, part.processor.num_cores, env.name, env.extras).apply(self)
        self.skip_if(self.num_tasks < 2, 'a ping-pong needs two processes')
        program = env.extras.get('hpcc_binary', 'hpcc')
        self.executable = shlex.quote(program)
        self.prerun_cmds.append(programs.guard(program))
        self.env_vars.update(OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')

    @run_before('run')
    def write_input(self):
        request = deck.DeckRequest(nodes=self.num_nodes, ranks_per_node=self.num_tasks_per_node,
                                   memory_per_node=int(self.current_partition.extras['memory_per_node']),
                                   max_n=self.hpl_n, max_n_reason='hpcc network check: HPL kept small')
        with open(os.path.join(self.stagedir, 'hpccinf.txt'), 'w') as handle:
            handle.write(deck.hpccinf_txt(deck.make_deck(request)))

    def _figures(self):
        """hpcc's output and its network figures, read once for sanity and performance."""
        if not hasattr(self, '_outputs'):
            with open(os.path.join(self.stagedir, self.output_file), errors='replace') as handle:
                parsed = parse_hpcc(handle.read())
            self._outputs = parsed, microbench.hpcc_network_figures(parsed)
        return self._outputs

    @sanity_function
    def validate(self):
        outputs, problem = programs.read_output(os.path.join(self.stagedir, self.job.stderr), self._figures,
                                                f'no hpcc latency/bandwidth figures in {self.output_file}')
        if problem:
            return sn.assert_true(False, msg=problem)
        procs = outputs[0].last_summary.get('CommWorldProcs')
        return sn.assert_eq(procs, self.num_tasks,
                            msg='hpcc reports {0} processes, {1} requested (wrong MPI launcher?)')

    @run_before('performance')
    def set_performance(self):
        self.perf_variables = performance_functions(self._figures()[1])


class _OSUCheck(_TwoRankCheck):
    """One OSU program; its binary from the stack's `osu_dir` (searched recursively) or PATH."""

    valid_systems = ['*']
    valid_prog_environs = ['+osu']
    osu_binary = variable(str, value='')  # '' = the program found under osu_dir or on PATH
    osu_options = variable(list, value=[])  # e.g. ['-m', '1:4194304'] (OMB 5.x and later)
    program = ''
    figure, unit = 'latency', 'us'  # the primary column, per message size

    @run_after('setup')
    def set_executable(self):
        name = getattr(self, 'benchmark', self.program)
        found = self.osu_binary or microbench.find_binary(
            name, [d for d in [self.current_environ.extras.get('osu_dir')] if d])
        self.skip_if(not found, f'{name} not found (osu_dir of stack {self.stack or self.current_environ.name}, '
                                f'then PATH): build OSU with the stack, e.g. spack_envs/')
        self.executable = shlex.quote(found)
        self.executable_opts = [shlex.quote(str(option)) for option in self.osu_options]

    def _table(self):
        """The OSU table and its primary column by size, read once for sanity and performance."""
        if not hasattr(self, '_outputs'):
            with open(os.path.join(self.stagedir, self.job.stdout), errors='replace') as handle:
                table = parse_osu(handle.read())
            self._outputs = table, microbench.osu_curve(table)
        return self._outputs

    @sanity_function
    def validate(self):
        try:
            _, curve = self._table()
        except (OSError, ParseError) as err:
            return sn.assert_true(False, msg=f'no OSU table in {self.job.stdout}: {err}')
        return sn.assert_ge(len(curve), 1, msg='no message size measured')

    def more_figures(self, table, curve):
        """Figures beyond the primary column per size."""
        return {}

    @run_before('performance')
    def set_performance(self):
        table, curve = self._table()
        self.set_figures({**microbench.sized(self.figure, curve, self.unit), **self.more_figures(table, curve)})


@rfm.simple_test
class OSULatencyCheck(_OSUCheck):
    descr = 'OSU osu_latency: one-way latency over message sizes'
    program = 'osu_latency'


@rfm.simple_test
class OSUBandwidthCheck(_OSUCheck):
    descr = 'OSU osu_bw: streaming bandwidth over message sizes, with n1/2'
    program, figure, unit = 'osu_bw', 'bandwidth', 'MB/s'

    def more_figures(self, table, curve):
        return microbench.n_half_figure(curve)


@rfm.simple_test
class OSUBiBandwidthCheck(_OSUCheck):
    descr = 'OSU osu_bibw: bidirectional bandwidth over message sizes'
    program, figure, unit = 'osu_bibw', 'bandwidth', 'MB/s'


@rfm.simple_test
class OSUMultiBandwidthCheck(_OSUCheck):
    """osu_mbw_mr with 1, 2 and 4 pairs: half the ranks on each side (two nodes, or two halves of one)."""

    descr = 'OSU osu_mbw_mr: aggregate bandwidth, message rate and n1/2 for 1, 2, 4 process pairs'
    program, figure, unit = 'osu_mbw_mr', 'bandwidth', 'MB/s'
    pairs = parameter([1, 2, 4], loggable=True)

    @run_after('setup')
    def set_pairs(self):
        if self.num_nodes == 2:  # one pair per node so far: `pairs` ranks on each node
            self.num_tasks, self.num_tasks_per_node = 2 * self.pairs, self.pairs
        else:
            self.num_tasks, self.num_tasks_per_node = 2 * self.pairs, 2 * self.pairs
        cores = self.cores_per_node()
        self.skip_if(self.num_tasks_per_node > cores,
                     f'{self.pairs} pair(s) need {self.num_tasks_per_node} cores per node; the nodes have {cores}')

    def more_figures(self, table, curve):
        return {**microbench.sized('message_rate', microbench.osu_message_rate_curve(table), 'msg/s'),
                **microbench.n_half_figure(curve)}


@rfm.simple_test
class OSUCollectiveCheck(_OSUCheck):
    descr = 'OSU collectives: average latency over message sizes on every core of two nodes (or of one)'
    benchmark = parameter(['osu_allreduce', 'osu_alltoall', 'osu_allgather'], loggable=True)
    placement = parameter(['whole_nodes'], loggable=True)

    @run_after('setup')
    def set_placement(self):
        """Every core of two nodes where the partition has them, else of one: no two-rank layout."""
        part, env = self.current_partition, self.current_environ
        scale = microbench.whole_nodes_scale(int(part.extras.get('max_nodes', 1)))
        scales.task_setup(scale, part.extras, part.processor.num_cores, env.name, env.extras).apply(self)
        self.skip_if(self.num_tasks < 2, 'a collective needs two processes')
