# scalebench test site configuration: "sbtutor", a minimal invented cluster.
#
# Shape followed: ReFrame's own tutorial configurations
# (reframe-hpc/reframe, examples/tutorial/config/cluster*.py): one system
# with a short description and a hostname pattern, a Slurm partition reached
# with `access: ['-p <partition>']` and launched with srun, one environment
# with compiler names, features and an `extras` entry.  No modules system, no
# processor block, no logging/general sections (ReFrame's built-in defaults).
# Names and hosts are invented.

site_configuration = {
    'systems': [
        {
            'name': 'sbtutor',
            'descr': 'Minimal Slurm cluster',
            'hostnames': [r'^sbtutor-head\.invalid$'],
            'partitions': [
                {
                    'name': 'batch',
                    'descr': 'Compute nodes',
                    'scheduler': 'slurm',
                    'launcher': 'srun',
                    'access': ['-p batch'],
                    'environs': ['gnu'],
                    'resources': [
                        {
                            'name': 'memory',
                            'options': ['--mem={size}']
                        }
                    ]
                }
            ]
        }
    ],
    'environments': [
        {
            'name': 'gnu',
            'cc': 'gcc',
            'cxx': 'g++',
            'ftn': 'gfortran',
            'features': ['openmp', 'mpi'],
            'extras': {'omp_flag': '-fopenmp'}
        }
    ]
}
