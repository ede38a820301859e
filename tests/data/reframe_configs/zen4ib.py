# The zen4-ib archetype (site_configs/sites/archetypes/zen4-ib.yaml) written as a site would write its own
# ReFrame configuration; zen4ib.facts.yaml holds what the configuration has no place for. Planned and
# dry-run, the two describe the same jobs (tests/integration/test_site_reframe_configs.py).
site_configuration = {
    'systems': [{
        'name': 'zen4ib',
        'descr': '1024 x 2 x 64-core AMD EPYC 9554 (Zen 4), 768 GiB, InfiniBand NDR200',
        'hostnames': [r'zen4ib-login[0-9]+\.example\.invalid$'],
        'modules_system': 'lmod',
        'partitions': [{
            'name': 'cpu',
            'descr': '2 x 64-core EPYC 9554, 768 GiB DDR5, ConnectX-7 NDR200',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'access': ['--partition=cpu'],
            'environs': ['openmpi-ucx', 'mpich-ofi'],
            'time_limit': '4h',
            'processor': {'arch': 'zen4', 'num_cpus': 128, 'num_cpus_per_core': 1, 'num_sockets': 2,
                          'num_cpus_per_socket': 64},
        }],
    }],
    'environments': [
        {'name': 'openmpi-ucx', 'features': ['mpi'],
         'modules': ['openmpi/5.0-ucx', 'hpl/2.3', 'lammps/2024', 'openfoam/2412', 'osu-micro-benchmarks/7.5',
                     'stream/5.10'],
         'env_vars': [['SLURM_MPI_TYPE', 'pmix'], ['OMPI_MCA_pml', 'ucx']]},
        {'name': 'mpich-ofi', 'features': ['mpi'],
         'modules': ['mpich/4.3-ofi', 'hpl/2.3', 'osu-micro-benchmarks/7.5'],
         'env_vars': [['SLURM_MPI_TYPE', 'pmi2'], ['FI_PROVIDER', 'verbs']]},
    ],
}
