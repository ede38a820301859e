"""The per-node probe: what else ran on every node of a job while it ran.

`sampler` is the program the job starts on each node (standard library only); `job` gives the job
script's lines that start and stop it; `samples` reads what it wrote into a case's summary and names
the interference a verdict rests on.
"""
