# scalebench test site configuration: "nordhaven", an invented national
# system with AMD Genoa CPU nodes (2 x 96 cores), AMD Rome CPU nodes and
# H100 GPU nodes (4 x H100 per node), InfiniBand, Slurm + mpirun.
#
# Shape followed: the EESSI test-suite's site files (EESSI/test-suite,
# config/<site>.py, e.g. the Genoa + H100 national-system one).  Idioms kept:
# partitions named after CPU/GPU generations; EESSI's feature vocabulary
# ('cpu', 'gpu', 'always_request_gpus') plus one feature per supported
# "scale"; `extras` keys 'mem_per_node' (MiB) and 'gpu_vendor'; GPU count in
# `devices` without an arch; 'mpirun' launcher; `access` with '-p <part>' and
# '--export=None'; EESSI init in `prepare_cmds` together with SLURM_EXPORT_ENV
# handling; account from $SBATCH_ACCOUNT read at load time; no `processor`
# (remote_detect) except where noted; and a final function that forces
# environs=['default'], `sched_options.use_nodes_option`, the 'memory'
# resource (--mem={size}) and, on 'gpu' partitions, the '_rfm_gpu' resource
# (--gpus-per-node={num_gpus_per_node}).
#
# Self-contained: the constants EESSI imports from eessi.testsuite.constants
# are re-declared below (values invented where EESSI's would be copied).
#
# ReFrame >= 4.10.1 rejects feature names that start with a digit (EESSI's
# scale names such as '1_node'; reframe-hpc/reframe#3723).  So scale features
# here carry a letter prefix.  Set NORDHAVEN_DIGIT_SCALES=1 to emit the
# digit-leading spelling instead, which reproduces that validation failure.
#
# All names, hosts, accounts, paths and memory figures are invented.

import os

# --- stand-ins for eessi.testsuite.constants ------------------------------
FEAT_CPU = 'cpu'
FEAT_GPU = 'gpu'
FEAT_ALWAYS_REQUEST_GPUS = 'always_request_gpus'
EXTRA_MEM_PER_NODE = 'mem_per_node'   # value in MiB
EXTRA_GPU_VENDOR = 'gpu_vendor'
VENDOR_NVIDIA = 'nvidia'

_SCALE_SHAPES = [
    # (name, nodes, cores-per-node or None, node fraction or None)
    ('1_core', 1, 1, None),
    ('2_cores', 1, 2, None),
    ('4_cores', 1, 4, None),
    ('1cpn_2nodes', 2, 1, None),
    ('1_4_node', 1, None, 4),
    ('1_2_node', 1, None, 2),
    ('1_node', 1, None, 1),
    ('2_nodes', 2, None, 1),
    ('4_nodes', 4, None, 1),
    ('8_nodes', 8, None, 1),
]

_DIGIT_SCALES = os.environ.get('NORDHAVEN_DIGIT_SCALES', '') == '1'
_SCALE_PREFIX = '' if _DIGIT_SCALES else 'scale_'
SCALES = {f'{_SCALE_PREFIX}{name}': {'num_nodes': nodes}
          for name, nodes, _cpn, _part in _SCALE_SHAPES}

# whole-node-only GPU partition: no scale that spreads 1 core over nodes
_GPU_SCALES = [s for s in SCALES if not s.endswith('cpn_2nodes')]

# --- load-time settings ----------------------------------------------------
_eessi_version = os.environ.get('EESSI_VERSION', '2023.06')
_eessi_repo = os.environ.get('EESSI_CVMFS_REPO', '/cvmfs/software.eessi.io')
EESSI_INIT = f'source {_eessi_repo}/versions/{_eessi_version}/init/bash'

_account = os.environ.get('SBATCH_ACCOUNT')
_ACCOUNT_OPTS = [f'-A {_account}'] if _account else []

_prefix = os.environ.get('RFM_PREFIX',
                         os.path.join(os.path.expanduser('~'), 'nh_reframe'))

site_configuration = {
    'systems': [
        {
            'name': 'nordhaven',
            'descr': 'Invented national system (Rome, Genoa, H100)',
            'modules_system': 'lmod',
            'hostnames': [r'^nh-int\d+\.nordhaven\.invalid$'],
            'prefix': _prefix,
            # shared scratch per user, as EESSI site files do; the root can
            # be moved with NORDHAVEN_SCRATCH (e.g. for dry runs)
            'stagedir': os.path.join(
                os.environ.get('NORDHAVEN_SCRATCH', '/nh-scratch'),
                os.environ.get('USER', 'nobody'), 'rfm_stage'),
            'partitions': [
                {
                    'name': 'rome',
                    'descr': 'AMD Rome CPU nodes (2x64), processor declared',
                    'scheduler': 'slurm',
                    'launcher': 'mpirun',
                    'access': ['-p rome', '--export=None'] + _ACCOUNT_OPTS,
                    'prepare_cmds': [
                        EESSI_INIT,
                        'export SLURM_EXPORT_ENV=ALL',
                    ],
                    'max_jobs': 100,
                    'features': [FEAT_CPU, 'zen2', 'infiniband'] + list(SCALES),
                    'extras': {
                        # rounded down from RealMemory so --mem never exceeds it
                        EXTRA_MEM_PER_NODE: 227328,   # MiB
                    },
                    # EESSI leaves this to remote_detect; its example file
                    # shows this (arch-less) form as the fallback.
                    'processor': {
                        'num_cpus': 128,
                        'num_sockets': 2,
                        'num_cpus_per_socket': 64,
                        'num_cpus_per_core': 1,
                    },
                },
                {
                    'name': 'genoa',
                    'descr': 'AMD Genoa CPU nodes (2x96)',
                    'scheduler': 'slurm',
                    'launcher': 'mpirun',
                    'access': ['-p genoa', '--export=None'] + _ACCOUNT_OPTS,
                    'prepare_cmds': [
                        'export EESSI_SOFTWARE_SUBDIR_OVERRIDE=x86_64/amd/zen4',
                        EESSI_INIT,
                        # mpirun inside the job must see the job's environment
                        'unset SLURM_EXPORT_ENV',
                    ],
                    'env_vars': [
                        ['OMPI_MCA_pml', 'ucx'],
                        ['UCX_TLS', 'rc,sm,self'],
                    ],
                    'sched_options': {'job_submit_timeout': 120},
                    'max_jobs': 120,
                    'features': [FEAT_CPU, 'zen4', 'infiniband'] + list(SCALES),
                    'extras': {
                        EXTRA_MEM_PER_NODE: 356352,   # MiB
                    },
                },
                {
                    'name': 'gpu_h100',
                    'descr': 'NVIDIA H100 nodes (4 per node, 2x48-core host)',
                    'scheduler': 'slurm',
                    'launcher': 'mpirun',
                    'access': ['-p gpu_h100', '--export=None'] + _ACCOUNT_OPTS,
                    'prepare_cmds': [
                        EESSI_INIT,
                        'unset SLURM_EXPORT_ENV',
                    ],
                    'env_vars': [['OMPI_MCA_pml', 'ucx']],
                    'max_jobs': 60,
                    'devices': [
                        {
                            'type': 'gpu',
                            'num_devices': 4,
                        }
                    ],
                    'features': [
                        FEAT_GPU,
                        FEAT_ALWAYS_REQUEST_GPUS,
                        'sapphirerapids',
                        'h100',
                        'infiniband',
                    ] + _GPU_SCALES,
                    'extras': {
                        EXTRA_GPU_VENDOR: VENDOR_NVIDIA,
                        EXTRA_MEM_PER_NODE: 753664,   # MiB
                    },
                },
            ],
        },
    ],
    'general': [
        {
            'remote_detect': True,
            'purge_environment': True,
            'resolve_module_conflicts': False,
            'check_search_recursive': True,
            'report_file': os.path.join(_prefix, 'report_files',
                                        'run-report-{sessionid}.json'),
        }
    ],
}


def _set_required(config, set_memory=True):
    """Same role as EESSI's set_common_required_config(): one 'default'
    environment everywhere, --nodes always, memory and GPU resources."""
    config['environments'] = [{'name': 'default'}]
    mem = ([{'name': 'memory', 'options': ['--mem={size}']}]
           if set_memory else [])
    gpu = [{'name': '_rfm_gpu',
            'options': ['--gpus-per-node={num_gpus_per_node}']}]
    for system in config['systems']:
        for part in system['partitions']:
            part['environs'] = ['default']
            if part['scheduler'] in ('slurm', 'squeue'):
                part.setdefault('sched_options', {})['use_nodes_option'] = True

            if FEAT_GPU in part.get('features', []):
                part['resources'] = mem + gpu
            else:
                part['resources'] = list(mem)


_set_required(site_configuration)
