"""HPL: residual-checked Rmax and efficiency (Rmax/Rpeak) at each scale of a partition.

Runs hpcc (its HPL section) or a site's xhpl with a deck written by scalebench.hpl.deck. Partition
extras give the Rpeak inputs and limits (see site_configs/); environment extras give the binary,
the launcher options and the stack name.
"""
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.udeps as udeps
from reframe.core.builtins import (parameter, performance_function, run_after, run_before,
                                   sanity_function, variable)

from scalebench import paths, programs

from scalebench.analysis import metrics

from scalebench.hpl import blas, deck, peak, tune

from scalebench.results import thresholds

from scalebench.site import scales
from scalebench.parse.hpcc import parse_hpcc
from scalebench.parse.hpl import parse_hpl


@rfm.simple_test
class HPLCheck(rfm.RunOnlyRegressionTest):
    descr = 'HPL Rmax and efficiency vs Rpeak, residual-checked'
    valid_systems = ['+hpl']
    valid_prog_environs = ['+hpl']
    scale = parameter(scales.scale_names(), loggable=True)

    hpl_binary = variable(str, value='')  # '' = the environment's extras['hpl_binary'], else xhpl
    threads_per_rank = variable(int, value=1, loggable=True)
    ranks_per_node = variable(int, type(None), value=None, loggable=True)  # None: fill the cores
    nb = variable(int, type(None), value=None)  # None: frozen deck or hpl_decks/rules.yaml
    memory_fraction = variable(float, type(None), value=None)
    scaling = variable(str, value='weak', loggable=True)  # weak: N1 x sqrt(nodes); strong: N1
    fixed_n = variable(int, type(None), value=None)  # strong scaling at this N
    time_budget_s = variable(float, type(None), value=None)  # None: partition extras, else memory
    expected_efficiency = variable(float, value=0.75)  # only for sizing N from a time budget
    decks_dir = variable(str, value=str(paths.HPL_DECKS))  # where frozen decks are looked up
    efficiency_floor = variable(float, type(None), value=None)  # None: site_configs/efficiency_floors.yaml
    # Solves of the same deck in one run; Rmax is the best (TOP500 practice). None: partition extras
    # 'hpl_trials', else 1. On a noisy machine a few short solves say more than one.
    trials = variable(int, type(None), value=None, loggable=True)

    expected_cases = 1  # HPL tests in one run (trials of one deck; a tuning sweep runs many)

    # Recorded in every perflog line and report.
    num_nodes = variable(int, value=0, loggable=True)
    stack = variable(str, value='', loggable=True)
    deck_summary = variable(str, value='', loggable=True)
    n_policy = variable(str, value='', loggable=True)
    blas_kernel = variable(str, value='', loggable=True)
    rpeak_derivation = variable(str, value='', loggable=True)
    hpl_deck = variable(dict, value={})  # the deck as JSON, for reports
    blas_kernel_used = variable(str, value='', loggable=True)  # what OpenBLAS says it runs
    deck_source = variable(str, value='', loggable=True)  # frozen deck or the generic rules
    idle_ranks = variable(int, value=0, loggable=True)
    grid_reason = variable(str, value='', loggable=True)
    spack_lock = variable(str, value='', loggable=True)  # 'sha256:<hash> <path>' of a Spack-built stack
    ceiling_warnings = variable(str, value='', loggable=True)
    trial_gflops = variable(str, value='', loggable=True)  # every PASSED solve, in run order

    @run_after('setup')
    def set_geometry(self):
        extras, env = self.current_partition.extras, self.current_environ
        setup = scales.task_setup(self.scale, extras, self.current_partition.processor.num_cores,
                                  env.name, env.extras, self.threads_per_rank, self.ranks_per_node)
        setup.apply(self)
        self.geometry = setup.geometry
        # A prime rank count: a flat 1 x R grid, or a squarer one with ranks left idle.
        choice = tune.grid_choice(self.geometry.ranks)
        self.grid, self.idle_ranks, self.grid_reason = (choice.p, choice.q), choice.idle_ranks, choice.reason
        self.num_tasks = choice.p * choice.q
        self.peak = peak.peak_inputs(extras, host=None)
        self.rpeak = self.peak.rpeak_gflops(self.geometry.nodes, self.geometry.cores_per_node)
        self.rpeak_derivation = '; '.join(extras.get('rpeak_derivation') or self.peak.derivation)

    @run_after('setup')
    def set_executable(self):
        env_extras = self.current_environ.extras
        self.hpl_binary = self.hpl_binary or env_extras.get('hpl_binary', 'xhpl')
        self.is_hpcc = os.path.basename(self.hpl_binary) == 'hpcc'
        self.executable = shlex.quote(self.hpl_binary)  # -S hpl_binary=... is no shell code
        self.prerun_cmds.append(programs.guard(self.hpl_binary))
        self.output_file = 'hpccoutf.txt' if self.is_hpcc else self.job.stdout
        self.keep_files = ['hpccoutf.txt', 'hpccinf.txt'] if self.is_hpcc else ['HPL.dat']
        threads = str(self.geometry.threads_per_rank)
        self.env_vars.update(OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads,
                             MKL_NUM_THREADS=threads, OPENBLAS_VERBOSE='2')
        choice = blas.choose_coretype(os.environ, self.peak.microarch)
        if choice.value:
            self.env_vars['OPENBLAS_CORETYPE'] = choice.value
        self.blas_kernel = f'{choice.value or "auto"}: {choice.reason}'
        if choice.warning:
            self.blas_kernel += f' (warning: {choice.warning})'

    @run_after('setup')
    def set_deck(self):
        extras = self.current_partition.extras
        budget = self.time_budget_s or extras.get('hpl_time_budget_s')
        max_n, reason = None, ''
        if budget:  # a cap for one node; the scaling law takes N to more nodes
            rpeak_node = self.peak.rpeak_gflops(1, self.geometry.cores_per_node)
            max_n = deck.largest_n_within(float(budget), self.expected_efficiency * rpeak_node)
            reason = (f'time budget: {float(budget):g} s at {self.expected_efficiency:.0%} of '
                      f'Rpeak {rpeak_node:.1f} Gflop/s')
        request = deck.DeckRequest(
            nodes=self.geometry.nodes, ranks_per_node=self.geometry.ranks_per_node,
            threads_per_rank=self.geometry.threads_per_rank,
            memory_per_node=int(extras['memory_per_node']), memory_fraction=self.memory_fraction,
            nb=self.nb, max_n=max_n, max_n_reason=reason, grid=self.grid)
        system, partition = self.current_system.name, self.current_partition.name
        frozen = tune.frozen_path(system, partition, self.decks_dir)
        self.deck_source = (f'frozen deck {frozen}' if frozen.exists()
                            else 'hpl_decks/rules.yaml (no frozen deck for this partition)')
        self.deck = deck.deck_for_scaling(request, tune.rules_for(system, partition, self.decks_dir),
                                          self.scaling, self.fixed_n)
        self.n_policy = self.deck.n_policy
        self.trials = self.trials or int(extras.get('hpl_trials', 1))
        deck.require_positive('trials', self.trials)
        self.expected_cases = self.trials
        limit = deck.job_time_limit(self.deck.n, self.expected_efficiency * self.rpeak, trials=self.trials)
        max_limit = extras.get('max_time_limit_s')
        deck.check_time_limit(limit, float(max_limit) if max_limit else None)
        self.time_limit = int(limit)
        self.hpl_deck = self.deck.to_json()
        self.deck_summary = (f'N={self.deck.n} NB={self.deck.nb} {self.deck.p}x{self.deck.q} '
                             f'mem={self.deck.memory_used_fraction:.1%}')

    @run_before('run')
    def write_deck(self):
        name, text = (('hpccinf.txt', deck.hpccinf_txt(self.deck, self.trials)) if self.is_hpcc
                      else ('HPL.dat', deck.hpl_dat(self.deck, trials=self.trials)))
        with open(os.path.join(self.stagedir, name), 'w') as handle:
            handle.write(text)

    @run_before('performance')
    def check_blas_ceiling(self):
        with open(os.path.join(self.stagedir, self.job.stderr), errors='replace') as handle:
            self.blas_kernel_used = ','.join(sorted(set(blas.kernels_reported(handle.read())))) or 'not reported'
        if not self.is_hpcc:
            self.perf_variables.pop('dgemm_ceiling', None)
            return
        flags = thresholds.report_flags()
        result = blas.ceiling_flags(self._hpl().rmax_gflops, self.dgemm_ceiling_gflops(), self.rpeak,
                                    flags['min_hpl_over_dgemm'], flags['min_dgemm_over_rpeak'])
        self.ceiling_warnings = '; '.join(result.warnings)

    def dgemm_ceiling_gflops(self):
        # hpcc's StarDGEMM is the per-process rate with every process busy: times the ranks.
        return self._parsed().last_summary['StarDGEMM_Gflops'] * self.num_tasks

    @run_before('performance')
    def set_efficiency_floor(self):
        floor = self.efficiency_floor
        if floor is None:
            floor = thresholds.efficiency_floor(self.current_system.name, self.current_partition.name)
        self.reference = {'*': {'efficiency': (100 * floor, 0, None, '%')}}

    def _parsed(self):
        if not hasattr(self, '_result'):
            with open(os.path.join(self.stagedir, self.output_file), errors='replace') as handle:
                text = handle.read()
            self._result = parse_hpcc(text) if self.is_hpcc else parse_hpl(text)
        return self._result

    def _hpl(self):
        return self._parsed().hpl if self.is_hpcc else self._parsed()

    def _processes_reported(self):
        if self.is_hpcc:
            return (self._parsed().last_summary or {}).get('CommWorldProcs')
        return {row.p * row.q for row in self._hpl().rows}.pop() if self._hpl().rows else None

    @sanity_function
    def validate(self):
        result, problem = programs.read_output(os.path.join(self.stagedir, self.job.stderr), self._hpl,
                                               f'no HPL result in {self.output_file}')
        if problem:
            return sn.assert_true(False, msg=problem)
        if result is None:
            return sn.assert_true(False, msg=f'{self.output_file} has no HPL section')
        problems = result.problems(expected_cases=self.expected_cases)
        ranks = self._processes_reported()
        return sn.all([
            sn.assert_eq(problems, [], msg='HPL run not clean: {0}'),
            sn.assert_eq(ranks, self.num_tasks,
                         msg='program reports {0} processes, {1} requested (wrong MPI launcher?)'),
        ])

    @performance_function('Gflop/s')
    def rmax(self):
        return self._hpl().rmax_gflops

    @performance_function('Gflop/s')
    def rpeak_gflops(self):
        return self.rpeak

    @performance_function('%')
    def efficiency(self):
        return 100 * self._hpl().rmax_gflops / self.rpeak

    @performance_function('Gflop/s')
    def dgemm_ceiling(self):
        return self.dgemm_ceiling_gflops()

    def _best_row(self):
        """The PASSED solve that set Rmax (the last row when none passed: sanity has failed then)."""
        result = self._hpl()
        return next((r for r in result.rows if r.status == 'PASSED' and r.gflops == result.rmax_gflops),
                    result.rows[-1])

    @run_before('performance')
    def record_trials(self):
        self.trial_gflops = ' '.join(format(r.gflops, '.2f') if isinstance(r.gflops, float) else str(r.gflops)
                                     for r in self._hpl().rows if r.status == 'PASSED')

    @performance_function('N')
    def n(self):
        return self._best_row().n

    @performance_function('s')
    def time(self):
        return self._best_row().time_s


@rfm.simple_test
class HPLScalingCheck(rfm.RunOnlyRegressionTest):
    descr = 'HPL speedup, parallel efficiency and Karp-Flatt serial fraction over the scales run'
    valid_systems = ['+hpl']
    valid_prog_environs = ['+hpl']
    executable = 'true'
    local = True
    scaling = variable(str, value='weak', loggable=True)  # set it like HPLCheck's: -S scaling=strong
    stack = variable(str, value='', loggable=True)
    scales_compared = variable(str, value='', loggable=True)

    @run_after('init')
    def depend_on_runnable_scales(self):
        # A cluster scales over nodes, a single machine over its cores; only scales every HPL
        # partition of this system can run (a skipped dependency would skip this check).
        partitions = [p for p in self.current_system.partitions if 'hpl' in p.features]
        over_nodes = any(int(p.extras.get('max_nodes', 1)) > 1 for p in partitions)
        self.dep_names = []
        for num in HPLCheck.get_variant_nums():
            scale = scales.get_scale(HPLCheck.get_variant_info(num)['params']['scale'])
            in_series = scale.cores_per_node is None if over_nodes else scale.num_nodes == 1
            if in_series and partitions and all(
                    scales.skip_reason(scale, int(p.extras['cores_per_node']),
                                       int(p.extras.get('max_nodes', 1))) is None for p in partitions):
                self.dep_names.append(HPLCheck.variant_name(num))
                self.depends_on(self.dep_names[-1], udeps.by_env)
        self.skip_if(len(self.dep_names) < 2, 'fewer than two scales runnable on this system')

    @run_after('setup')
    def set_stack(self):
        self.stack = self.current_environ.extras.get('stack', self.current_environ.name)

    @sanity_function
    def validate(self):
        return sn.assert_ge(len(self.rmax_by_cores()), 2, msg='fewer than two HPL results to compare')

    def rmax_by_cores(self):
        key = f'{self.current_system.name}:{self.current_partition.name}:rmax'
        values = {}
        for name in self.dep_names:
            dep = self.getdep(name)
            values[dep.num_tasks * dep.num_cpus_per_task] = dep.perfvalues[key][0]
        return values

    @run_before('performance')
    def set_scaling_figures(self):
        values = self.rmax_by_cores()
        self.scales_compared = ', '.join(f'{cores} cores: {rmax:.2f} Gflop/s'
                                         for cores, rmax in sorted(values.items()))
        self.perf_variables = {
            figure.name: sn.make_performance_function(lambda v=figure.value: v, figure.unit)
            for figure in metrics.scaling_figures(values, higher_is_better=True,
                                                  weak=self.scaling == 'weak')
        }
