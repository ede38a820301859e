# scalebench test site configuration: "camber", an invented university
# cluster with Intel Ice Lake and Sapphire Rapids partitions on InfiniBand
# (Mellanox/NVIDIA HDR-NDR), Slurm, Intel MPI, Environment Modules 4+.
#
# Shape followed: the multi-system file of the ExCALIBUR benchmarks
# (ukri-excalibur/excalibur-tests, benchmarks/reframe_config.py), in
# particular its university-cluster entry with cclake/icelake/sapphire
# partitions.  Idioms kept: modules_system 'tmod4'; max_local_jobs 1;
# partitions launched with 'mpirun' and configured through partition
# `env_vars` (I_MPI_PMI_LIBRARY, I_MPI_OFI_PROVIDER, UCX_NET_DEVICES);
# `access` = ['--partition=<slurm partition>', '--exclusive'];
# `sched_options.job_submit_timeout`; explicit `processor` blocks with
# num_cpus / num_cpus_per_core / num_sockets / num_cpus_per_socket and no
# arch; a 'default' environment plus Intel compiler+MPI environments made of
# modules; a custom launcher registered from the configuration file;
# a value computed from the login environment at load time (PATH with the
# Spack bin dir).  Deviation: `general.resolve_module_conflicts` is off
# (see there).  'tmod4' is kept although ReFrame 4.10 logs it as deprecated
# in favour of 'envmod'.  All names, hosts, paths and modules are invented.

import os

import reframe.core.launchers.mpi as rfmmpi
from reframe.core.exceptions import ConfigError

_PMI_LIB = '/opt/campus/slurm/current/lib/libpmi2.so'


# A launcher defined by the site file (as excalibur does for one network).
# Guarded so that loading this file twice in one process does not fail on
# "'camber_impi' is already registered as a launcher".
try:
    @rfmmpi.register_launcher('camber_impi')
    class CamberIntelMpiLauncher(rfmmpi.MpirunLauncher):
        def command(self, job):
            return ['mpirun', '-bootstrap', 'slurm', '-np', str(job.num_tasks)]
except ConfigError:
    pass


def _path_with_spack():
    path = os.environ.get('PATH', '')
    root = os.environ.get('SPACK_ROOT')
    if not root:
        return path

    bindir = os.path.join(root, 'bin')
    if bindir in path.split(os.pathsep):
        return path

    return bindir + os.pathsep + path if path else bindir


_IB_ENV = [
    ['I_MPI_PMI_LIBRARY', _PMI_LIB],
    ['I_MPI_OFI_PROVIDER', 'mlx'],
    ['I_MPI_FABRICS', 'shm:ofi'],
    ['UCX_NET_DEVICES', 'mlx5_0:1'],
    ['PATH', _path_with_spack()],
]

site_configuration = {
    'systems': [
        {
            'name': 'camber',
            'descr': 'Invented university research cluster',
            'hostnames': [r'^camber-login-[ab]-[1-3]\.campus\.invalid$'],
            'max_local_jobs': 1,
            'modules_system': 'tmod4',
            'partitions': [
                {
                    'name': 'icelake',
                    'descr': 'Ice Lake nodes (2x Xeon Platinum 8368Q, 38c)',
                    'scheduler': 'slurm',
                    'launcher': 'mpirun',
                    'env_vars': list(_IB_ENV),
                    'access': ['--partition=icx', '--exclusive'],
                    'sched_options': {'job_submit_timeout': 120},
                    'environs': ['default', 'intel-oneapi-impi',
                                 'gcc-openmpi'],
                    'max_jobs': 64,
                    'time_limit': '1h',
                    'features': ['icelake', 'infiniband', 'avx512'],
                    'extras': {'mem_per_node_mb': 250000},
                    'processor': {
                        'num_cpus': 76,
                        'num_cpus_per_core': 1,
                        'num_sockets': 2,
                        'num_cpus_per_socket': 38,
                    },
                },
                {
                    'name': 'sapphirerapids',
                    'descr': 'Sapphire Rapids nodes (2x Xeon Platinum 8480+)',
                    'scheduler': 'slurm',
                    'launcher': 'mpirun',
                    'env_vars': list(_IB_ENV),
                    'access': ['--partition=spr', '--exclusive'],
                    'sched_options': {'job_submit_timeout': 120},
                    'environs': ['default', 'intel-oneapi-impi',
                                 'gcc-openmpi'],
                    'max_jobs': 64,
                    'time_limit': '1h',
                    'features': ['sapphirerapids', 'infiniband', 'avx512',
                                 'amx'],
                    'extras': {'mem_per_node_mb': 500000},
                    'processor': {
                        'num_cpus': 112,
                        'num_cpus_per_core': 1,
                        'num_sockets': 2,
                        'num_cpus_per_socket': 56,
                    },
                },
                {
                    # Same nodes through the site-registered launcher and srun
                    # binding via PMI-2; no processor block (detected).
                    'name': 'spr-bootstrap',
                    'descr': 'Sapphire Rapids, Intel MPI Slurm bootstrap',
                    'scheduler': 'slurm',
                    'launcher': 'camber_impi',
                    'modules': ['campus-ib-settings'],
                    'env_vars': list(_IB_ENV),
                    'access': ['--partition=spr', '--exclusive'],
                    'sched_options': {
                        'job_submit_timeout': 120,
                        'use_nodes_option': True,
                    },
                    'environs': ['intel-oneapi-impi'],
                    'max_jobs': 16,
                    'features': ['sapphirerapids', 'infiniband'],
                },
            ]
        },
    ],
    'environments': [
        {
            # compilers are chosen by the build recipes, not by ReFrame
            'name': 'default',
            'cc': 'cc',
            'cxx': 'c++',
            'ftn': 'ftn',
        },
        {
            'name': 'intel-oneapi-impi',
            'modules': ['intel-oneapi-compilers/2024.2.1',
                        'intel-oneapi-mpi/2021.13.1',
                        'intel-oneapi-mkl/2024.2.1'],
            'cc': 'mpiicx',
            'cxx': 'mpiicpx',
            'ftn': 'mpiifx',
            'env_vars': [
                ['I_MPI_CC', 'icx'],
                ['I_MPI_CXX', 'icpx'],
                ['I_MPI_F90', 'ifx'],
                ['I_MPI_DEBUG', '4'],
            ],
            'features': ['mpi', 'intelmpi', 'mkl', 'openmp'],
            'extras': {'omp_flag': '-qopenmp'},
            'target_systems': ['camber'],
        },
        {
            'name': 'gcc-openmpi',
            'modules': ['gcc/13.2.0', 'openmpi/4.1.6'],
            'cc': 'mpicc',
            'cxx': 'mpicxx',
            'ftn': 'mpif90',
            'features': ['mpi', 'openmpi', 'openmp'],
            'extras': {'omp_flag': '-fopenmp'},
            'target_systems': ['camber'],
        },
    ],
    'general': [
        {
            # ReFrame validates the modules system (runs `modulecmd`) only
            # when this is true (the default); off, the file also loads on
            # a host without Environment Modules, as CSCS/EESSI files do.
            'resolve_module_conflicts': False,
            'target_systems': ['camber'],
        },
    ],
}
