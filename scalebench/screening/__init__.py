"""Screening a whole machine in one allocation per chunk of nodes (ScreeningCheck): the probe's
settings and output (probe), the jobs of a partition (jobs), the verdict on every node and link
(verdict), and the interference recorded beside them that can leave a verdict undecided
(interference)."""
