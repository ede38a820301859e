"""HPL tuning mode: one sweep of NB x grid x BCAST x DEPTH at the one-node N; optionally freezes the
winner into hpl_decks/<system>/<partition>.yaml for the scaling checks.

    reframe -C site_configs/<site>.py -c reframe_tests/tuning -r [-S freeze=true]

Kept out of reframe_tests/ itself so that a plain scaling run never starts a sweep.
"""
import os
from dataclasses import replace

from reframe.core.builtins import run_after, variable

from scalebench.hpl import frozen, tune

from ..base import planned_test, setting
from ..hpl import HPLCheck


@planned_test
class HPLTuneCheck(HPLCheck):
    descr = 'HPL tuning sweep (NB x grid x BCAST x DEPTH); best PASSED row frozen on request'
    nbs = variable(str, value='')  # comma-separated; '' = scalebench.hpl.tune defaults
    freeze = setting(bool, value=False)
    force = setting(bool, value=False)  # replace a frozen deck (the old one is kept, renamed)
    frozen_deck = variable(str, value='', loggable=True)

    def plan_settings(self):
        nbs = tuple(int(v) for v in self.nbs.split(',')) if self.nbs else None
        return replace(super().plan_settings(), sweep_nbs=nbs)

    @run_after('performance')
    def freeze_winner(self):
        if not self.freeze or self.is_dry_run():
            return
        ranking = tune.rank(self.result()[0].hpl.rows)
        path = frozen.freeze(ranking[0], self.current_system.name, self.current_partition.name,
                             source=os.path.join(self.outputdir, self.output_file),
                             decks_dir=self.decks_dir, force=self.force, ranking=ranking, ranks=self.num_tasks)
        self.frozen_deck = str(path)
