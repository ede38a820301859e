"""HPL tuning mode: one sweep of NB x grid x BCAST x DEPTH at a modest N; optionally freezes the
winner into hpl_decks/<system>/<partition>.yaml for the scaling checks.

    reframe -C site_configs/<site>.py -c reframe_tests/tuning -r [-S freeze=true]

Kept out of reframe_tests/ itself so that a plain scaling run never starts a sweep.
"""
import os

import reframe as rfm
import reframe.utility as util
from reframe.core.builtins import parameter, run_after, run_before, variable

from scalebench.hpl import tune

_hpl = util.import_module_from_file(os.path.join(os.path.dirname(__file__), '..', 'hpl.py'))


@rfm.simple_test
class HPLTuneCheck(_hpl.HPLCheck):
    descr = 'HPL tuning sweep (NB x grid x BCAST x DEPTH); best PASSED row frozen on request'
    scale = parameter(['1_node'], loggable=True)
    nbs = variable(str, value='')  # comma-separated; '' = scalebench.hpl.tune defaults
    freeze = variable(bool, value=False)
    force = variable(bool, value=False)  # replace a frozen deck (the old one is kept, renamed)
    frozen_deck = variable(str, value='', loggable=True)
    trials = 1  # each combination of the sweep is solved once, whatever the partition's hpl_trials

    @run_after('setup')
    def make_sweep(self):
        nbs = [int(v) for v in self.nbs.split(',')] if self.nbs else None
        self.sweep = tune.sweep_deck(self.deck, nbs=nbs)
        self.expected_cases = self.sweep.tests
        self.deck_summary = f'sweep of {self.sweep.tests} tests at N={self.deck.n}'
        # Every combination takes about as long as one solve of the modest N.
        self.time_limit = int(self.time_limit * self.sweep.tests)

    @run_before('run')
    def write_deck(self):
        name, text = (('hpccinf.txt', tune.sweep_hpccinf_txt(self.sweep)) if self.is_hpcc
                      else ('HPL.dat', tune.sweep_hpl_dat(self.sweep)))
        with open(os.path.join(self.stagedir, name), 'w') as handle:
            handle.write(text)

    @run_after('performance')
    def freeze_winner(self):
        if not self.freeze:
            return
        ranking = tune.rank(self._hpl().rows)
        path = tune.freeze(ranking[0], self.current_system.name, self.current_partition.name,
                           source=os.path.join(self.outputdir, self.output_file),
                           decks_dir=self.decks_dir, force=self.force, ranking=ranking,
                           ranks=self.num_tasks)
        self.frozen_deck = str(path)
