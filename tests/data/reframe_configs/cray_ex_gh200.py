# scalebench test site configuration: "gannet", an invented HPE Cray EX
# system with 4 x NVIDIA GH200 Grace-Hopper superchips per node
# (4 Grace CPUs x 72 Neoverse-V2 cores = 288 cores, no SMT; 4 x H100 sm_90).
#
# Shape followed: CSCS's per-system file for their GH200 vcluster
# (eth-cscs/cscs-reframe-tests, config/systems/<system>.py): a `base_config`
# dict whose name/descr/hostnames are filled in afterwards; lmod; login +
# "normal" Slurm partition with srun; `devices` (gpu, sm_90, 4) and features
# gpu/nvgpu/remote/scontrol/uenv; free-form `gres` and `memory` resources;
# memory in `extras` (MB); a per-user account prefixed like CSCS's
# `--account=a-<group>`; uenv `--uenv`/`--view` resources appended to every
# partition with the `uenv` feature.  Added for scalebench: a `_rfm_gpu`
# resource (so `num_gpus_per_node` is honoured) and a `gpu` alias in the
# excalibur style, and a second partition that declares `processor`.
# All names, hosts, accounts, images and modules are invented.

import copy
import grp
import os

_ACCOUNT_PREFIX = 'g-'


def _account():
    # Environment first (CI runs), else the primary group of the user.
    if os.environ.get('GANNET_ACCOUNT'):
        return os.environ['GANNET_ACCOUNT']

    try:
        return _ACCOUNT_PREFIX + grp.getgrgid(os.getgid()).gr_name
    except KeyError:
        return _ACCOUNT_PREFIX + 'users'


_GH200_DEVICES = [
    {
        'type': 'gpu',
        'arch': 'sm_90',
        'model': 'GH200 (H100 96GB HBM3)',
        'num_devices': 4,
    }
]

_GH200_RESOURCES = [
    {
        # ReFrame maps a test's num_gpus_per_node onto this resource
        'name': '_rfm_gpu',
        'options': ['--gres=gpu:{num_gpus_per_node}'],
    },
    {
        'name': 'gpu',
        'options': ['--gres=gpu:{num_gpus_per_node}'],
    },
    {
        'name': 'gres',
        'options': ['--gres={gres}'],
    },
    {
        'name': 'memory',
        'options': ['--mem={mem_per_node}'],
    },
    {
        'name': 'switches',
        'options': ['--switches={num_switches}'],
    },
]

base_config = {
    'modules_system': 'lmod',
    'resourcesdir': '/gnfs/store/reframe/resources',
    'max_local_jobs': 16,
    'partitions': [
        {
            'name': 'login',
            'descr': 'Login nodes (Grace CPU only)',
            'scheduler': 'local',
            'launcher': 'local',
            'time_limit': '10m',
            'environs': ['builtin'],
            'max_jobs': 16,
        },
        {
            'name': 'normal',
            'descr': 'GH200 nodes, processor from auto-detection',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'time_limit': '15m',
            'access': [f'--account={_account()}'],
            'environs': ['builtin', 'PrgEnv-gnu'],
            'max_jobs': 500,
            'resources': copy.deepcopy(_GH200_RESOURCES),
            'sched_options': {
                'max_sacct_failures': 100,
                'resubmit_on_errors': ['QOSMaxSubmitJobPerUserLimit'],
            },
            'env_vars': [
                ['MPICH_GPU_SUPPORT_ENABLED', '1'],
                ['FI_CXI_RDZV_PROTO', 'alt_read'],
            ],
            'prepare_cmds': ['export SB_NODE_KIND=gh200'],
            'features': ['ce', 'gpu', 'nvgpu', 'remote', 'scontrol', 'uenv',
                         'hugepages_slurm'],
            'extras': {
                'cn_memory': 860000,   # MB: Slurm MaxMemPerNode
                'gpu_mem_gib': 96,
            },
            'devices': copy.deepcopy(_GH200_DEVICES),
        },
        {
            'name': 'normal_pinned',
            'descr': 'GH200 nodes, processor declared',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'time_limit': '15m',
            'access': [f'--account={_account()}', '--gpus-per-node=4'],
            'environs': ['builtin', 'PrgEnv-gnu'],
            'max_jobs': 500,
            'resources': copy.deepcopy(_GH200_RESOURCES),
            'sched_options': {'max_sacct_failures': 100},
            'env_vars': [['MPICH_GPU_SUPPORT_ENABLED', '1']],
            'features': ['gpu', 'nvgpu', 'remote', 'uenv', 'neoverse_v2'],
            'extras': {'cn_memory': 860000},
            'devices': copy.deepcopy(_GH200_DEVICES),
            'processor': {
                'arch': 'neoverse_v2',
                'vendor': 'ARM',
                'platform': 'aarch64',
                'num_cpus': 288,
                'num_cpus_per_core': 1,
                'num_sockets': 4,
                'num_cpus_per_socket': 72,
            },
        },
    ],
}

base_config['name'] = 'gannet'
base_config['descr'] = 'Invented GH200 vcluster'
base_config['hostnames'] = [r'^gannet-ln\d{3}\.gh\.invalid$', 'gannet-uan01.invalid']

site_configuration = {
    'systems': [base_config],
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
            'target_systems': ['gannet'],
            'modules': ['cray', 'PrgEnv-gnu', 'craype-arm-grace',
                        'craype-accel-nvidia90', 'cudatoolkit'],
            'cc': 'cc',
            'cxx': 'CC',
            'ftn': 'ftn',
            'nvcc': 'nvcc',
            'features': ['serial', 'openmp', 'mpi', 'cuda', 'prgenv',
                         'cray-mpich'],
        },
        {
            # uenv: image and view go to Slurm as --uenv=/--view= options
            'name': 'hplkit_25_1_v1_default',
            'target_systems': ['gannet'],
            'cc': 'mpicc',
            'cxx': 'mpic++',
            'ftn': 'mpifort',
            'nvcc': 'nvcc',
            'features': ['uenv', 'prgenv', 'serial', 'openmp', 'mpi', 'cuda',
                         'cray-mpich'],
            'extras': {'uenv_label': 'hplkit/25.1:v1', 'uarch': 'gh200'},
            'resources': {
                'uenv': {'uenv': 'hplkit/25.1:v1'},
                'uenv_views': {'views': 'default,modules'},
            },
        },
    ],
    'general': [
        {
            'remote_detect': True,
            'resolve_module_conflicts': False,
            'target_systems': ['gannet'],
        },
    ],
}

_uenv_names = [e['name'] for e in site_configuration['environments']
               if 'uenv' in e.get('features', [])]
for _part in base_config['partitions']:
    if 'uenv' in _part.get('features', []):
        _part['environs'] += _uenv_names
        _part['resources'] += [
            {'name': 'uenv', 'options': ['--uenv={uenv}']},
            {'name': 'uenv_views', 'options': ['--view={views}']},
        ]
