"""ReFrame configuration of the embedded default: this machine, local scheduler, OpenMPI's mpirun.

The machine is described in site_configs/sites/local.yaml, whose `detect` values come from host
detection; SCALEBENCH_SITE names another site file to load instead (e.g. a copy with other cores).
"""
import os

import reframe
from reframe.core.exceptions import ConfigError

from scalebench import paths
from scalebench.errors import ScalebenchError
from scalebench.site.siteconf import load_site

try:
    site_configuration = load_site(os.environ.get('SCALEBENCH_SITE') or paths.SITE_CONFIGS / 'sites' / 'local.yaml',
                                   reframe=reframe.VERSION)
except ScalebenchError as err:  # ReFrame prints a ConfigError as one line, anything else as a traceback
    raise ConfigError(str(err)) from None
