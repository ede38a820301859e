"""HPL: residual-checked Rmax and efficiency (Rmax/Rpeak) at each scale of a partition.

scalebench.hpl.case_plan decides every case (geometry, grid, N, NB, time limit, BLAS environment): the
check applies the plan, writes its deck, and reads the outcome (scalebench.hpl.outcome).
"""
import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.udeps as udeps
from reframe.core.builtins import run_after, run_before, sanity_function, variable

from scalebench.analysis import scaling
from scalebench.hpl.case_plan import HplSettings
from scalebench.hpl.outcome import hpl_outcome
from scalebench.benchmarks.hpl.rules import hpl_series
from scalebench.site import thresholds

from .base import ScalebenchCheck, knob_variables, planned_test, recorded, system_partitions
from .energy import EnergyFigures


@planned_test
class HPLCheck(rfm.RunOnlyRegressionTest, ScalebenchCheck, recorded('HPLCheck'), knob_variables(HplSettings),
               EnergyFigures):
    descr = 'HPL Rmax and efficiency vs Rpeak, residual-checked'

    # Its knobs (-S name=value) are scalebench.hpl.case_plan.HplSettings's fields (knob_variables); None
    # takes the partition's site file, then hpl_decks/rules.yaml.
    efficiency_floor = variable(float, type(None), value=None)  # None: site_configs/efficiency_floors.yaml
    output_description = 'no HPL result'

    @run_after('setup')
    def set_executable(self):
        hpl = self.hpl_plan = self.case_plan.detail
        self.skip_if(bool(hpl.missing) and not self.is_dry_run(), hpl.missing)
        self.launch_program(hpl.binary, hpl.profile.args)  # quoted: -S hpl_binary=... is no shell code
        self.env_vars.update(hpl.env_vars)
        self.output_file = self.job.stdout if hpl.profile.output == 'stdout' else hpl.profile.output
        self.keep_files = sorted({hpl.profile.input, self.output_file})
        for name, value in hpl.provenance().items():
            setattr(self, name, value)

    @run_before('run')
    def write_deck(self):
        self.write_stage_file(*self.deck_file())

    def deck_file(self):
        return self.hpl_plan.input_file()

    @run_before('performance')
    def set_efficiency_floor(self):
        floor = self.efficiency_floor
        if floor is None:
            floor = thresholds.efficiency_floor(self.current_system.name, self.current_partition.name)
        self.reference.update({'*': {'efficiency': (100 * floor, 0, None, '%')}})

    def parse_outputs(self, read):
        hpl = self.hpl_plan
        return hpl_outcome(read(self.output_file), read(self.job.stderr), hpcc=hpl.profile.is_hpcc,
                           expected_cases=hpl.expected_cases, tasks=self.num_tasks,
                           rpeak_gflops=hpl.rpeak_gflops, sweep=hpl.sweep is not None,
                           interference=self.node_interference()[0],
                           expected_kernel=hpl.env_vars.get('OPENBLAS_CORETYPE'))

    @sanity_function
    def validate(self):
        return self.assert_result(lambda outcome: [(not outcome.problems,
                                                    f'HPL run not clean: {"; ".join(outcome.problems)}')])

    def record(self, outcome):
        self.blas_kernel_used, self.trial_gflops = outcome.kernels_used, outcome.trial_gflops
        self.ceiling_warnings = outcome.ceiling_warnings
        self.dgemm_repeats = outcome.dgemm.to_json() if outcome.dgemm else {}

    def figures(self, outcome):
        best, rpeak = outcome.best_row, self.hpl_plan.rpeak_gflops
        found = {'rmax': (outcome.rmax_gflops, 'Gflop/s'), 'rpeak_gflops': (rpeak, 'Gflop/s'),
                 'efficiency': (outcome.efficiency_pct(rpeak), '%'), 'n': (best.n, 'N'), 'time': (best.time_s, 's'),
                 **self.energy(outcome)}
        if outcome.solve_cv is not None:  # repeated solves of one deck
            found['solve_cv'] = (100 * outcome.solve_cv, '%')
        ceiling = outcome.dgemm_ceiling_gflops
        if ceiling is not None:  # only when the binary timed DGEMM in the same job
            found['dgemm_ceiling'] = (ceiling, 'Gflop/s')
            clock = self.hpl_plan.clock_from(ceiling)
            if clock is not None:
                found['dgemm_clock'] = (clock, 'GHz')
        return found


@planned_test
class NodeHealthCheck(HPLCheck):
    """hpcc on one whole node: HPL, DGEMM and STREAM. Run on every node with `--distribute=all`; then
    `scalebench screen` names the nodes behind their peers."""

    descr = 'One-node HPL, DGEMM and STREAM of a node, to screen every node'

    def figures(self, outcome):
        return {**super().figures(outcome), 'stream_triad': (outcome.stream_triad_gbs, 'GB/s')}


@planned_test
class HPLScalingCheck(rfm.RunOnlyRegressionTest, ScalebenchCheck, knob_variables(HplSettings, 'scaling')):
    descr = 'HPL speedup, parallel efficiency and Karp-Flatt serial fraction over the scales run'
    executable = 'true'
    local = True
    scales_compared = variable(str, value='', loggable=True)

    @run_after('init')
    def depend_on_series(self):
        """Every HPLCheck of a partition's series, on the same partition and stack (a partition gets
        only the variants it runs)."""
        series = {s.name for p in system_partitions() if p.fullname in self.valid_systems for s in hpl_series(p)}
        for num in HPLCheck.get_variant_nums(scale=lambda scale: scale in series):
            self.depends_on(HPLCheck.variant_name(num), udeps.by_env)

    @sanity_function
    def validate(self):
        return sn.assert_ge(len(self.rmax_by_cores()), 2, msg='fewer than two HPL results to compare')

    def rmax_by_cores(self):
        key = f'{self.current_system.name}:{self.current_partition.name}:rmax'
        values = {}
        for dep in (self.getdep(name) for name in self.series_variants()):
            values[dep.num_tasks * dep.num_cpus_per_task] = dep.perfvalues[key][0]
        return values

    def series_variants(self):
        names = {s.name for s in hpl_series(self.partition_spec())}
        return [HPLCheck.variant_name(num) for num in HPLCheck.get_variant_nums(scale=lambda scale: scale in names)]

    def parse_outputs(self, read):
        return self.rmax_by_cores()  # the dependencies' figures: this job itself prints nothing

    def record(self, values):
        self.scales_compared = ', '.join(f'{cores} cores: {rmax:.2f} Gflop/s' for cores, rmax in sorted(values.items()))

    def figures(self, values):
        measured = scaling.scaling_figures(values, higher_is_better=True, weak=self.scaling == 'weak')
        return {figure.name: (figure.value, figure.unit) for figure in measured}
