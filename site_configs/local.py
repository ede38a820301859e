"""ReFrame configuration of the embedded default: this machine, local scheduler, OpenMPI's mpirun.

Processor, memory and Rpeak inputs are detected when the configuration loads (scalebench.site.host);
set SCALEBENCH_CLOCK_GHZ or SCALEBENCH_FLOPS_PER_CYCLE to override what detection gets wrong.
"""
import os

from reframe.core.exceptions import ConfigError

from scalebench.hpl import peak

from scalebench.site import host
from scalebench.errors import ScalebenchError
from scalebench.site.siteconf import general_config, logging_config, system_dirs



def _override(name, kind):
    text = os.environ.get(name)
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise ConfigError(f'{name}: {text!r} is not a {kind.__name__}') from None


_host = host.detect()
_overrides = {'clock_ghz': _override('SCALEBENCH_CLOCK_GHZ', float),
              'flops_per_cycle': _override('SCALEBENCH_FLOPS_PER_CYCLE', int)}
try:
    _peak = peak.peak_inputs(_overrides, host=_host)
except ScalebenchError as err:  # ReFrame prints a ConfigError as one line, anything else as a traceback
    raise ConfigError(f'Rpeak of this machine: {err}') from None

site_configuration = {
    'systems': [
        {
            'name': 'local',
            'descr': f'Embedded default: this machine ({_host.model_name})',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            **system_dirs(),
            'partitions': [
                {
                    'name': 'default',
                    'descr': f'{_peak.cores_per_node} cores, local scheduler',
                    'scheduler': 'local',
                    'launcher': 'mpirun',
                    # Three MPI stacks of one machine: interconnect checks compare them.
                    'environs': ['openmpi', 'openmpi-tcp', 'mpich'],
                    # Benchmarks must not share cores: one job at a time.
                    'max_jobs': 1,
                    'time_limit': '30m',
                    'features': ['hpl'],
                    'processor': {
                        'arch': _host.microarch,
                        'num_cpus': _host.cpus,
                        'num_cpus_per_core': _host.cpus_per_core,
                        'num_sockets': _host.sockets,
                        'num_cpus_per_socket': _host.cpus // _host.sockets,
                    },
                    'extras': {
                        'max_nodes': 1,
                        'cores_per_node': _peak.cores_per_node,
                        'memory_per_node': _host.memory_bytes,
                        'microarch': _peak.microarch,
                        'clock_ghz': _peak.clock_ghz,
                        'flops_per_cycle': _peak.flops_per_cycle,
                        'rpeak_derivation': list(_peak.derivation),
                        # A full-memory HPL takes hours here: bound each solve to ~8 s, and take
                        # Rmax as the best of 3 solves (this VM's noise moves one solve by 30%).
                        'hpl_time_budget_s': 8,
                        'hpl_trials': 3,
                    },
                },
            ],
        },
    ],
    'environments': [
        {
            'name': 'openmpi',
            'features': ['mpi', 'openmpi', 'hpl', 'hpcc', 'lammps', 'openfoam', 'netpipe'],
            'env_vars': [
                # Debian's OpenMPI refuses to run as root without these.
                ['OMPI_ALLOW_RUN_AS_ROOT', '1'],
                ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1'],
                # Debian's OpenFOAM v1912: sourcing etc/bashrc fails, this is enough (local ranks
                # inherit it from mpirun); the tutorials come with openfoam-examples.
                ['WM_PROJECT_DIR', '/usr/share/openfoam'],
                ['FOAM_TUTORIALS', '/usr/share/doc/openfoam-examples/examples'],
            ],
            'extras': {
                'stack': 'openmpi-sm',
                'hpl_binary': 'hpcc',
                'lmp_binary': 'lmp',  # Debian's lammps (OpenMPI build)
                'netpipe_binary': 'NPopenmpi',
                # One core per BLAS thread, ranks bound to their cores.
                'launcher_options': ['--map-by', 'slot:PE={threads_per_rank}', '--bind-to', 'core'],
            },
        },
        {
            # OpenMPI over loopback TCP instead of shared memory: the interconnect checks only.
            'name': 'openmpi-tcp',
            'features': ['mpi', 'openmpi', 'hpcc', 'netpipe'],
            'env_vars': [
                ['OMPI_ALLOW_RUN_AS_ROOT', '1'],
                ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1'],
                ['OMPI_MCA_btl', 'self,tcp'],
            ],
            'extras': {
                'stack': 'openmpi-tcp',
                'netpipe_binary': 'NPopenmpi',
                'launcher_options': ['--map-by', 'slot:PE={threads_per_rank}', '--bind-to', 'core'],
            },
        },
        {
            # Debian's MPICH (ch4:ucx); `mpirun` is OpenMPI's here, so the stack names its own.
            'name': 'mpich',
            'features': ['mpi', 'mpich', 'netpipe'],
            'extras': {
                'stack': 'mpich',
                'netpipe_binary': 'NPmpich2',
                'mpirun': 'mpirun.mpich',
                'launcher_options': ['-bind-to', 'core'],
            },
        },
    ],
    'logging': logging_config(),
    'general': general_config(),
}
