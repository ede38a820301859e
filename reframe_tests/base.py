"""What every scalebench check shares, as hpctestlib's base classes and EESSI's mixin do: the site's
partitions and stacks as plain data, the case plan of scalebench.site_plan applied as it is, and each
output read once for sanity and performance.
"""
import atexit
import os
import shlex
import shutil
import sys
import tempfile
import types
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher
from reframe.core.builtins import parameter, run_after, run_before, variable
from reframe.core.exceptions import ConfigError
from reframe.core.meta import make_test
from reframe.core.runtime import runtime, valid_sysenv_comb

from scalebench import knobs, paths, programs, registry, site_plan, textfile
from scalebench.check import Settings
from scalebench.errors import ScalebenchError
from scalebench.site import transport_evidence
from scalebench.nodeprobe import job as node_probe, samples as probe_samples
from scalebench.reporting import references
from scalebench.benchmarks import SETTINGS
from scalebench.site import facts as site_facts, launch, modules, reframe_config, rundir
from scalebench.site.jobs import LeftOut


def _partition_config(partition):
    """A ReFrame partition as its configuration writes it (its processor and devices as detected)."""
    return {'name': partition.name, 'scheduler': partition.scheduler.registered_name,
            'launcher': partition.launcher_type.registered_name, 'access': list(partition.access),
            'environs': [env.name for env in partition.environs], 'features': list(partition.features),
            'extras': dict(partition.extras), 'max_jobs': partition.max_jobs, 'time_limit': partition.time_limit,
            'processor': dict(partition.processor.info), 'devices': [dict(d.info) for d in partition.devices],
            'resources': [{'name': name, 'options': list(options)} for name, options in partition.resources.items()]}


def _environment_config(env):
    return {'name': env.name, 'features': list(env.features), 'extras': dict(env.extras),
            'env_vars': dict(env.env_vars)}


_DESCRIBED = {}


def described_system():
    """The system ReFrame runs on as scalebench sees it: a scalebench site file's, or the site's own
    configuration with its facts (scalebench.site.reframe_config); read once per process. A system with
    nothing scalebench can run on stops the run with one line, never a silent "0/0 PASSED"."""
    system = runtime().system
    key = (system.name, tuple(p.name for p in system.partitions))
    if key not in _DESCRIBED:
        environments = {env.name: env for p in system.partitions for env in p.environs}
        try:
            facts = site_facts.system_facts(system.name)
            described = reframe_config.describe({'name': system.name,
                                                 'partitions': [_partition_config(p) for p in system.partitions]},
                                                [_environment_config(e) for e in environments.values()], facts)
            reframe_config.check_nothing_to_run(described, site_plan.check_features(),
                                                bool(os.environ.get(site_facts.FACTS_VARIABLE)),
                                                site_facts.described_systems())
            if described.by_facts:
                _prepare_site_run(system, environments.values())
        except ScalebenchError as err:
            _stop(err)
        _DESCRIBED[key] = described
    return _DESCRIBED[key]


def _prepare_site_run(system, environments):
    """On a site's own configuration: `scalebench run` claims its run directory (provenance); a dry run off
    the cluster with SCALEBENCH_MODULE_STUBS=1 puts stubs of the configuration's modules first on the
    module path, so that ReFrame writes the `module load` lines a real run would."""
    dry_run = rundir.dry_run_requested(sys.argv)
    if os.environ.get('SCALEBENCH_RUN_DIR'):
        rundir.claim_run_dir(dry_run=dry_run)
    names = modules.module_names([{'modules': env.modules} for env in environments] +
                                 [{'modules': p.local_env.modules} for p in system.partitions])
    modules_system = runtime().modules_system
    # Without stubs the configuration's modules are ReFrame's business, as its own checks' are; it looks them
    # up only where it resolves module conflicts (otherwise it writes `module load` lines unchecked).
    checked = runtime().get_option('general/0/resolve_module_conflicts')
    if (os.environ.get(modules.STUBS_VARIABLE) and checked
            and modules.check(system.name, modules_system.name, names, dry_run)):
        stubs = Path(tempfile.mkdtemp(prefix='scalebench-module-stubs-'))
        atexit.register(shutil.rmtree, stubs, ignore_errors=True)
        modules.write_stubs(names, stubs, modules_system.name)
        modules_system.searchpath_add(str(stubs))


def _stop(err):
    """Stop ReFrame with one line and exit status 2 (bad input): an error ReFrame catches while loading a
    check file only skips the file, and the run would then pass with nothing run."""
    print('\n'.join([f'scalebench: {err}', *(f'  {line}' for line in getattr(err, 'details', ()))]),
          file=sys.stderr, flush=True)
    sys.exit(2)


def system_partitions():
    """The partitions of the system ReFrame runs on that scalebench describes."""
    return list(described_system().partitions)


def planned_test(cls):
    """rfm.simple_test for a check of scalebench.site_plan.CHECKS (under its class's name): its parameters
    are that entry's axes, in its order, with their values on this system, so the check's variants are
    those `scalebench plan` lists."""
    spec = site_plan.CHECKS[cls.__name__]
    values = spec.values(system_partitions()) if spec.axes else {}
    axes = {axis: parameter(list(values[axis]), loggable=True) for axis in spec.axes}
    return rfm.simple_test(make_test(cls.__name__, (cls,), axes, module=cls.__module__))


def performance_functions(check, figures):
    """Perf variables of the figures {name: (value, unit)} of `check`, as measured: each converted to, and
    reported in, its unit of the figure registry (scalebench/data/benchmarks.yaml)."""
    benchmark = registry.lookup(check)
    try:
        values = benchmark.in_units(figures)
    except ScalebenchError as err:
        raise ConfigError(str(err)) from None
    return {name: sn.make_performance_function(lambda v=value: v, benchmark.unit_of(name))
            for name, value in values.items()}


_TYPES = {'str': str, 'int': int, 'list': list, 'dict': dict}
# ReFrame 4.9 renamed RegressionMixin RegressionTestPlugin (deprecating the old name): the same class.
TestPlugin = getattr(rfm, 'RegressionTestPlugin', None) or rfm.RegressionMixin


def recorded(check):
    """A plugin declaring the variables `check` records (base: every check), named and typed once, in
    scalebench/data/provenance.yaml; loggable, so that the run report carries them."""
    def declare(namespace):
        for field in registry.provenance().recorded_by(check):
            kind = _TYPES[field.type]
            namespace[field.name] = variable(kind, value=kind(), loggable=True)
    return types.new_class(f'{check}Recorded', (TestPlugin,), exec_body=declare)


def setting(*kinds, **kwargs):
    """A variable a user sets with -S, of these types. A bool is declared as ReFrame's typ.Bool: a variable of
    plain bool takes -S name=false as bool('false'), which is True."""
    return variable(*(typ.Bool if kind is bool else kind for kind in kinds), **kwargs)


def knob_variables(settings, *names):
    """A plugin declaring the knobs of a settings dataclass (scalebench.knobs) as variables settable
    with -S: all of them, or those named; typed, defaulted and loggable as the dataclass says."""
    def declare(namespace):
        for knob in knobs.knobs(settings):
            if names and knob.name not in names:
                continue
            kind = str if knob.kind is Path else knob.kind
            value = None if knob.default is None else kind(knob.default)
            kinds = (kind, type(None)) if knob.optional else (kind,)
            namespace[knob.name] = setting(*kinds, value=value, loggable=knob.recorded)
    return types.new_class(f'{settings.__name__}Knobs', (TestPlugin,), exec_body=declare)


def knob_values(check, settings):
    """{name: value} of the knobs of `settings` that `check` has."""
    def value(knob):
        found = getattr(check, knob.name)
        return Path(found) if knob.kind is Path and found is not None else found
    return {knob.name: value(knob) for knob in knobs.knobs(settings) if hasattr(check, knob.name)}


class ScalebenchCheck(recorded('base')):
    """A check whose variants, partitions and jobs come from scalebench.site_plan.CHECKS[catalog_name]."""

    @property
    def catalog_name(self):
        """The check's entry in scalebench.site_plan.CHECKS: its class's name, or its nearest ancestor's."""
        return next(cls.__name__ for cls in type(self).__mro__ if cls.__name__ in site_plan.CHECKS)

    @property
    def figures_name(self):
        """The check whose figures (and their units) in scalebench/data/benchmarks.yaml are this check's:
        its own, or its nearest registered ancestor's (HPLTuneCheck's are HPLCheck's)."""
        registered = registry.registry()
        return next((cls.__name__ for cls in type(self).__mro__ if cls.__name__ in registered), self.catalog_name)

    # Where `scalebench references freeze` wrote the references this check is held to.
    references_dir = variable(str, value=str(paths.REFERENCES))
    # The node probe (scalebench.nodeprobe): on, and seconds between its samples during the run.
    node_probe = setting(bool, value=True)
    probe_interval_s = variable(float, value=2.0)
    # (directory, seconds) of the energy readings the probe takes too (EnergyFigures sets it), or None.
    probe_energy = None
    # -S reservation=NAME [-S reservation_time_limit=72h]: every job of the run in that Slurm reservation.
    reservation = variable(str, value='')
    reservation_time_limit = variable(str, value='')

    def params(self):
        return {axis: getattr(self, axis) for axis in site_plan.CHECKS[self.catalog_name].axes}

    @run_after('init')
    def select_partitions(self):
        """Only partitions that can run this variant get it; stacks by the features it needs."""
        spec = site_plan.CHECKS[self.catalog_name]
        planned = site_plan.valid_partitions(spec, self.params(), system_partitions(), self.plan_settings())
        # A site's subclass may narrow them with valid_systems and valid_prog_environs of its own.
        allowed = valid_sysenv_comb(getattr(self, 'valid_systems', ['*']), getattr(self, 'valid_prog_environs', ['*']))
        fullnames = {part.fullname for part in allowed}
        environs = {env.name for envs in allowed.values() for env in envs}
        self.valid_systems = [p.fullname for p in planned if p.fullname in fullnames]
        self.valid_prog_environs = [e for e in described_system().stacks_with(spec.stack_features) if e in environs]

    def plan_settings(self):
        """The variables of this check that change its plan."""
        return Settings(**knob_values(self, Settings), environ=dict(os.environ), reservation=self.asked_reservation(),
                        benchmarks=tuple(kind(**knob_values(self, kind)) for kind in SETTINGS))

    def asked_reservation(self):
        try:
            return site_plan.asked_reservation(self.reservation, self.reservation_time_limit)
        except ScalebenchError as err:
            raise ConfigError(str(err)) from None

    @run_after('setup')
    def apply_plan(self):
        """The case's plan as it is: the job's geometry, node sharing and limits, or the reason it is
        left out."""
        stack = self.stack_spec()
        try:
            self.case_plan = site_plan.CHECKS[self.catalog_name].plan(self.partition_spec(), stack, self.params(),
                                                                      self.plan_settings())
        except LeftOut as why:
            self.skip(str(why))
        job = self.case_plan.job
        if job is None:  # figures derived from other cases, on the one node ReFrame runs on
            self.num_nodes = 1
            return
        self.num_nodes, self.num_tasks = job.nodes, job.tasks
        self.num_tasks_per_node, self.num_cpus_per_task = job.tasks_per_node, job.threads_per_rank
        self.exclusive_access = job.exclusive
        if job.hyperthreads is not None:
            self.use_multithreading = job.hyperthreads
        if job.time_limit_s:
            self.time_limit = job.time_limit_s
        if job.gpu_request:
            self.request_gpus(job.gpu_request)
        self.job.options += job.scheduler_options(self.current_partition.scheduler.registered_name)
        self.job.launcher.options = list(job.launcher_options)
        self.env_vars.update(job.env_vars)
        self.stack, self.spack_lock, self.spack_specs = job.stack, job.spack_lock, job.spack_specs
        self.binding = job.binding
        self.transport = stack.extras.get('transport', '')
        self.fabric = stack.extras.get('fabric', '')

    @run_before('run')
    def use_stack_mpirun(self):
        """A stack whose MPI is not the partition's mpirun (MPICH next to OpenMPI on one machine) names
        its own in the environment's extras ('mpirun'): ReFrame's mpirun launcher would start OpenMPI's."""
        command = self.stack_spec().extras.get('mpirun')
        if not command or self.job.launcher.registered_name != 'mpirun':
            return
        options = list(self.job.launcher.options)
        self.job.launcher = getlauncher('local')()
        # the executable is quoted already, by the check that set it
        self.executable = f"{shlex.join([command, '-np', str(self.num_tasks), *options])} {self.executable}"

    @run_before('run', always_last=True)
    def run_node_probe(self):
        """Every job samples what else ran on its nodes, before, during and after the run, and the energy
        a check asks for (one per-node step does both; with node_probe=false it runs for energy alone,
        unrecorded). The last hook, and its lines enclose all the check's: they stay out of what a check
        times itself."""
        job = self.case_plan.job
        if job is None or not (self.node_probe or self.probe_energy):
            return
        start, stop = node_probe.probe_commands(self.current_partition.scheduler.registered_name, self.num_nodes,
                                                interval_s=self.probe_interval_s, max_s=job.time_limit_s or 86400,
                                                energy=self.probe_energy)
        self.prerun_cmds = [*start, *self.prerun_cmds]
        self.postrun_cmds = [*self.postrun_cmds, *stop]
        self.keep_files = [*self.keep_files, probe_samples.PROBE_DIR]

    def node_interference(self):
        """(record, one-line summary) of the job's node probe samples, read once; (None, '') with
        node_probe=false, whose samples (taken for energy alone) are no evidence of the case."""
        if not self.node_probe:
            return None, ''
        cores = (self.num_tasks_per_node or self.num_tasks) * (self.num_cpus_per_task or 1)
        return self.once('interference', lambda: probe_samples.interference_record(
            Path(self.stagedir), self.num_nodes, cores))

    @run_before('performance')
    def record_interference(self):
        if not self.is_dry_run() and self.case_plan.job is not None:
            record, summary = self.node_interference()
            if record is not None:
                self.interference, self.interference_summary = record, summary

    def request_gpus(self, count):
        """Ask Slurm for `count` GPUs per node as the partition takes them (scalebench.site.partition.GpuSpec):
        ReFrame's _rfm_gpu resource, another of the partition's, or an option of the job's own."""
        gpus = self.partition_spec().gpus
        if gpus.resource == '_rfm_gpu':
            self.num_gpus_per_node = count
        elif gpus.resource == 'access':
            return
        elif gpus.resource:
            self.extra_resources = {gpus.resource: {'num_gpus_per_node': count}}
        else:
            self.job.options += [gpus.slurm_option(count)]

    def partition_spec(self):
        return described_system().partition(self.current_partition.name)

    def stack_spec(self):
        return described_system().stacks[self.current_environ.name]

    def launch_program(self, program, args=(), directories=()):
        """Launch `program` (found under `directories`, then on PATH) as the stack runs it, looked for
        where it runs: in the batch shell, or inside the step when a container or the launcher's
        options may change the step's environment (a uenv). Its first and last rank print the
        transport their MPI selected, where the stack declares one."""
        job, gpus = self.case_plan.job, self.partition_spec().gpus
        gpu_runtime = gpus.runtime if gpus and job.gpus_per_node else ''
        launched = launch.launch(program, args, in_step=bool(job.step_environment), container=job.container,
                                 directories=directories, gpu_runtime=gpu_runtime, rank_variables=job.rank_variables)
        self.executable, self.executable_opts = launched.executable, list(launched.args)
        self.prerun_cmds += list(launched.prerun)

    def stage_path(self, name):
        return os.path.join(self.stagedir, name)

    def write_stage_file(self, name, text):
        with open(self.stage_path(name), 'w') as handle:
            handle.write(text)

    def read_stage_file(self, name):
        """A file of the finished job, read once however many parts of the check look at it."""
        return self.once(('file', name), lambda: textfile.read_text(self.stage_path(name), name))

    def once(self, key, compute):
        """compute() the first time `key` is asked for."""
        memo = self.__dict__.setdefault('_scalebench_once', {})
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    # A check that reads outputs defines parse_outputs(self, read), read(name) giving a stage file's text.
    parse_outputs = None
    output_description = 'no result in the job\'s output'

    def result(self):
        """(parsed outputs, None), or (None, why): the job's missing-program line first. Read once."""
        return self.once('result', lambda: programs.read_output(
            self.stage_path(self.job.stderr), lambda: self.parse_outputs(self.read_stage_file),
            self.output_description))

    def assert_result(self, checks):
        """The one sanity expression: the outputs parse, and every (ok, message) of checks(result) holds."""
        result, problem = self.result()
        if problem:
            return sn.assert_true(False, msg=problem)
        return sn.all([sn.assert_true(ok, msg=message) for ok, message in [*checks(result), self.transport_check()]])

    def transport_check(self):
        """(ok, message): the MPI selected the transport the stack declares (none declared: recorded only)."""
        found = transport_evidence.evidence(self.read_stage_file(self.job.stderr))
        self.transport_evidence = found.summary()
        if not self.transport or self.num_tasks <= 1:  # one process sends to no other
            return True, ''
        wrong = transport_evidence.verdict(self.stack, self.transport,
                                           self.stack_spec().extras.get('intra_node_transport'), found,
                                           self.num_nodes > 1)
        return wrong is None, wrong or ''

    def record(self, result):
        """Keep what the outputs say beyond the figures (loggable variables); nothing by default."""

    def figures(self, result):
        """The figures of the outputs, {name: (value, unit)} as measured, in the order perflogs list them;
        none by default."""
        return {}

    @run_before('performance')
    def set_references(self):
        """The figures' references learned from accepted runs: one past its bound fails this stage."""
        try:
            learned = references.reference_for(self.current_system.name, self.current_partition.name,
                                               self.current_environ.name, self.display_name,
                                               Path(self.references_dir))
        except ScalebenchError as err:
            raise ConfigError(str(err)) from None
        if learned:
            self.reference.update({self.current_partition.fullname: dict(learned)})

    @run_before('performance')
    def from_outputs(self):
        if self.is_dry_run() or self.parse_outputs is None:  # nothing ran, or nothing to read
            return
        result, problem = self.result()
        if problem is None:
            self.record(result)
            self.perf_variables.update(performance_functions(self.figures_name, self.figures(result)))
