# scalebench test site configuration: "ridgeback", an invented HPE Cray EX
# CPU system (2 x 64-core AMD EPYC "Rome" per node, Slingshot, Slurm + srun).
#
# Shape followed: CSCS's per-system ReFrame files (eth-cscs/cscs-reframe-tests,
# config/systems/<system>.py merged by config/cscs.py) for their Cray EX
# CPU-only cluster.  Idioms kept: lmod; a local "login" partition plus a Slurm
# partition; the Slurm account computed at load time from the user's primary
# group and put in `access`; named `resources` (memory/switches) that tests
# fill via `extra_resources`; memory in `extras` (MB, as Slurm reports it);
# PrgEnv-* environments that load Cray PE modules; uenv environments whose
# image/view reach Slurm via `--uenv={uenv}` / `--view={views}` resources
# which are appended, after the dict is built, to every partition that has the
# `uenv` feature; `sched_options.max_sacct_failures` set for all Slurm
# partitions in a final loop; no `processor` block (left to remote_detect).
# Added for scalebench: a variant partition that does declare `processor`.
# All names, hosts, accounts and modules are invented.

import grp
import os

_SYSTEM = 'ridgeback'


def _user_account():
    """Slurm account: $RIDGEBACK_ACCOUNT, else the user's primary group,
    else a fixed placeholder (never None, so the option stays well-formed)."""
    acct = os.environ.get('RIDGEBACK_ACCOUNT')
    if acct:
        return acct

    try:
        return grp.getgrgid(os.getgid()).gr_name
    except KeyError:
        return 'rb-default'


_ACCOUNT = _user_account()

# Slingshot / Cray MPICH settings exported into every job of the Slurm
# partitions (partition-level env_vars)
_SLINGSHOT_ENV = [
    ['MPICH_OFI_NIC_POLICY', 'NUMA'],
    ['FI_CXI_DEFAULT_CQ_SIZE', '131072'],
    ['SB_SITE_TAG', f'{_SYSTEM}-cray-ex'],
]

_COMMON_RESOURCES = [
    {
        'name': 'switches',
        'options': ['--switches={num_switches}']
    },
    {
        'name': 'memory',
        'options': ['--mem={mem_per_node}']
    },
]

site_configuration = {
    'systems': [
        {
            'name': _SYSTEM,
            'descr': 'Invented Cray EX CPU cluster (2x AMD EPYC 7742)',
            'hostnames': [r'^rb-ln\d{3}\.ridgeback\.invalid$'],
            'modules_system': 'lmod',
            'resourcesdir': '/rbfs/shared/reframe/resources',
            'max_local_jobs': 8,
            'partitions': [
                {
                    'name': 'login',
                    'descr': 'Login nodes',
                    'scheduler': 'local',
                    'launcher': 'local',
                    'time_limit': '10m',
                    'environs': ['builtin', 'PrgEnv-gnu', 'PrgEnv-cray'],
                    'max_jobs': 8,
                },
                {
                    # Relies on processor auto-detection (remote_detect)
                    'name': 'mc',
                    'descr': 'Multicore nodes (2x AMD EPYC 7742, 256 GB)',
                    'scheduler': 'slurm',
                    'launcher': 'srun',
                    'time_limit': '20m',
                    'access': ['--constraint=mc', f'--account={_ACCOUNT}'],
                    'environs': ['builtin', 'PrgEnv-gnu', 'PrgEnv-cray'],
                    'max_jobs': 200,
                    'resources': list(_COMMON_RESOURCES),
                    'sched_options': {
                        'job_submit_timeout': 90,
                        'ignore_reqnodenotavail': True,
                    },
                    'env_vars': list(_SLINGSHOT_ENV),
                    'prepare_cmds': [
                        'ulimit -s unlimited',
                        'export SB_PARTITION_KIND=mc',
                    ],
                    'container_platforms': [
                        {
                            'type': 'Apptainer',
                            'modules': ['rb-apptainer/1.3'],
                        },
                    ],
                    'features': ['remote', 'scontrol', 'uenv', 'slingshot'],
                    'extras': {
                        'cn_memory': 245000,     # MB, Slurm RealMemory
                        'interconnect': 'slingshot11',
                    },
                },
                {
                    # Same nodes, but the processor is declared explicitly
                    'name': 'mc_pinned',
                    'descr': 'Multicore nodes, declared topology',
                    'scheduler': 'slurm',
                    'launcher': 'srun',
                    'time_limit': '20m',
                    'access': [
                        '--constraint=mc',
                        '--hint=nomultithread',
                        f'--account={_ACCOUNT}',
                    ],
                    'environs': ['builtin', 'PrgEnv-gnu', 'PrgEnv-cray'],
                    'max_jobs': 200,
                    'resources': list(_COMMON_RESOURCES),
                    'sched_options': {
                        'job_submit_timeout': 90,
                        'use_nodes_option': True,
                    },
                    'env_vars': list(_SLINGSHOT_ENV),
                    'prepare_cmds': ['ulimit -s unlimited'],
                    'features': ['remote', 'uenv', 'slingshot', 'zen2'],
                    'extras': {
                        'cn_memory': 245000,
                        'interconnect': 'slingshot11',
                    },
                    'processor': {
                        'arch': 'zen2',
                        'vendor': 'AuthenticAMD',
                        'model': 'AMD EPYC 7742 64-Core Processor',
                        'platform': 'x86_64',
                        'num_cpus': 256,
                        'num_cpus_per_core': 2,
                        'num_sockets': 2,
                        'num_cpus_per_socket': 128,
                    },
                },
            ],
        },
    ],
    'environments': [
        {
            'name': 'builtin',
            'cc': 'cc',
            'cxx': 'CC',
            'ftn': 'ftn',
            'features': ['builtin'],
        },
        {
            'name': 'PrgEnv-gnu',
            'target_systems': [_SYSTEM],
            'modules': ['cray', 'PrgEnv-gnu', 'craype-x86-rome'],
            'cc': 'cc',
            'cxx': 'CC',
            'ftn': 'ftn',
            'features': ['serial', 'openmp', 'mpi', 'prgenv', 'cpe',
                         'cray-mpich'],
            'extras': {'omp_flag': '-fopenmp'},
        },
        {
            'name': 'PrgEnv-cray',
            'target_systems': [_SYSTEM],
            'modules': ['cray', 'PrgEnv-cray', 'craype-x86-rome'],
            'cc': 'cc',
            'cxx': 'CC',
            'ftn': 'ftn',
            'features': ['serial', 'openmp', 'mpi', 'prgenv', 'cpe',
                         'cray-mpich'],
            'env_vars': [['CRAY_CPU_TARGET', 'x86-rome']],
            'extras': {'omp_flag': '-fopenmp'},
        },
    ],
    'general': [
        {
            'remote_detect': True,
            'resolve_module_conflicts': False,
            'target_systems': [_SYSTEM],
        },
    ],
}

# uenv environments.  At CSCS they are generated at load time from the images
# named in an environment variable (and `uenv image inspect`); here they are a
# fixed list.  The image and the view are not modules: they are Slurm options
# (`--uenv=...`, `--view=...`) carried by environment `resources`.
_UENVS = [
    {
        'name': 'hplkit_24_7_v2_default',
        'target_systems': [_SYSTEM],
        'features': ['uenv', 'prgenv', 'serial', 'openmp', 'mpi',
                     'cray-mpich', 'blas'],
        'cc': 'mpicc',
        'cxx': 'mpic++',
        'ftn': 'mpifort',
        'prepare_cmds': ['export SB_UENV_ACTIVE=hplkit'],
        'extras': {'uenv_label': 'hplkit/24.7:v2'},
        'resources': {
            'uenv': {'uenv': 'hplkit/24.7:v2@/user-environment'},
            'uenv_views': {'views': 'default'},
        },
    },
]

site_configuration['environments'] += _UENVS
for _system in site_configuration['systems']:
    _uenv_names = [e['name'] for e in _UENVS
                   if _system['name'] in e['target_systems']]
    for _part in _system['partitions']:
        if _part['scheduler'] == 'slurm':
            _part.setdefault('sched_options', {})
            _part['sched_options'].setdefault('max_sacct_failures', 50)

        if 'uenv' in _part.get('features', []):
            _part['environs'] += _uenv_names
            _part['resources'] = _part.get('resources', []) + [
                {'name': 'uenv', 'options': ['--uenv={uenv}']},
                {'name': 'uenv_views', 'options': ['--view={views}']},
            ]
