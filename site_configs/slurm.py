"""ReFrame configuration of a Slurm site described in YAML (no Python edits per site).

    SCALEBENCH_SITE=site_configs/sites/<site>.yaml reframe -C site_configs/slurm.py -c reframe_tests -r

The YAML names the system, its partitions (scheduler, launcher, node counts, cores, memory and the
Rpeak inputs) and its interconnect/MPI stacks (one ReFrame environment each); see
site_configs/sites/example.yaml. There is no default site: a forgotten export must not submit
another site's jobs.
"""
import os

import reframe
from reframe.core.exceptions import ConfigError

from scalebench.errors import ScalebenchError
from scalebench.site.siteconf import load_site

if not os.environ.get('SCALEBENCH_SITE'):
    raise ConfigError('SCALEBENCH_SITE is not set: name your site file, e.g. '
                      'SCALEBENCH_SITE=site_configs/sites/<site>.yaml (start from site_configs/sites/example.yaml)')
try:
    site_configuration = load_site(os.environ['SCALEBENCH_SITE'], reframe=reframe.VERSION)
except ScalebenchError as err:  # ReFrame prints a ConfigError as one line, anything else as a traceback
    raise ConfigError(str(err)) from None
