"""Real Slurm energy outputs for scalebench's parser tests: `python -m scalebench_lab.sacct_vectors --out DIR`.

Root, under the machine's heavy-work lock (it starts throwaway clusters); about two minutes. Writes into
DIR (tests/data/slurm_energy/ in the repository):
  jobs.sacct, jobs.sacct-X        sacct of exclusive jobs (srun steps, two nodes) and a shared one, with
                                  every step, and of the allocations alone; jobs.law.json: the emulated
                                  meter's power law, so a test knows the joules each line must hold
  wrapped.sacct, wrapped.law.json a job during which the meter's counter wrapped
  no_plugin.sacct                 accounting without an energy plugin (ConsumedEnergyRaw 0)
  running.sacct                   a running job and a pending one (no End, no Start)
  scontrol.txt, scontrol_none.txt the energy lines of `scontrol show config` with and without a plugin
  profile.csv                     sh5util's Energy series of a job run with --profile=energy
Every file is as the command printed it (SLURM_TIME_FORMAT=%s), except scontrol's, cut to the keys the
parser reads (the rest names this machine's paths).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

from scalebench.energy.slurm import SACCT_FIELDS
from scalebench_lab import cluster, meter

_SCONTROL_KEYS = ("AccountingStorageType", "AcctGatherEnergyType", "AcctGatherNodeFreq", "AcctGatherProfileType",
                  "JobAcctGatherFrequency", "JobAcctGatherType", "PrologFlags")


def _sacct(state: cluster.State, *args: str) -> str:
    env = {"SLURM_TIME_FORMAT": "%s"}
    return state.run_client(["sacct", "-n", "-P", "--noconvert", f"--format={','.join(SACCT_FIELDS)}", *args],
                            env=dict(state.client_env(), **env), timeout=30).stdout


def _submit(state: cluster.State, *args: str) -> str:
    out = state.run_client(["sbatch", "--parsable", "-o", "/dev/null", *args], timeout=30).stdout
    return out.strip().split(";")[0]


def _wait_done(state: cluster.State, jobs: Sequence[str], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        queued = state.run_client(["squeue", "-h", "-o", "%i"], timeout=30).stdout.split()
        if not set(jobs) & set(queued):
            time.sleep(3)  # the extern step books the allocation's energy last
            return
        time.sleep(0.5)
    raise cluster.ClusterTimeout(f"jobs {', '.join(jobs)} still queued after {timeout:g} s")


def _scontrol(state: cluster.State) -> str:
    text = state.run_client(["scontrol", "show", "config"], timeout=30).stdout
    return "".join(line + "\n" for line in text.splitlines() if line.split("=")[0].strip() in _SCONTROL_KEYS)


def _with_cluster(work: Path, name: str, **kwargs):
    directory = Path(tempfile.mkdtemp(prefix=f"sbv-{name}-", dir=work))
    try:
        return directory, cluster.start(directory, 2, "netns", accounting_db=True, **kwargs)
    except BaseException:
        cluster.stop(directory)
        raise


def produce(out: Path, work: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    directory, state = _with_cluster(work, "jobs", energy="pm_counters", energy_profile=True)
    try:
        jobs = [_submit(state, "--exclusive", "-N1", "--wrap", "sleep 2; srun -N1 sleep 4; sleep 1"),
                _submit(state, "--exclusive", "-N2", "--profile=energy", "--acctg-freq=energy=1",
                        "--wrap", "srun -N2 sleep 5; srun -N2 sleep 3")]
        _wait_done(state, jobs)
        shared = _submit(state, "--oversubscribe", "-n1", "--wrap", "sleep 3")
        _wait_done(state, [shared])
        jobs.append(shared)
        (out / "jobs.sacct").write_text(_sacct(state, "-j", ",".join(jobs)))
        (out / "jobs.sacct-X").write_text(_sacct(state, "-X", "-j", ",".join(jobs)))
        shutil.copy(directory / "meter" / meter.PROFILE_FILE, out / "jobs.law.json")
        (out / "scontrol.txt").write_text(_scontrol(state))
        merged, csv = directory / "merged.h5", directory / "profile.csv"
        state.run_client(["sh5util", "-j", jobs[1], "-p", f"{directory / 'profile'}/", "-o", str(merged)], timeout=60)
        state.run_client(["sh5util", "-j", jobs[1], "-i", str(merged), "-E", "-s", "Energy", "-l", "Node:TimeSeries",
                          "-o", str(csv)], timeout=60)
        shutil.copy(csv, out / "profile.csv")
        running = _submit(state, "--exclusive", "-N2", "--wrap", "sleep 30")
        pending = _submit(state, "--exclusive", "-N2", "--wrap", "sleep 1")
        time.sleep(4)
        (out / "running.sacct").write_text(_sacct(state, "-j", f"{running},{pending}"))
    finally:
        cluster.stop(directory)
    directory, state = _with_cluster(work, "wrap", energy="pm_counters",
                                     meter_args=["--start-j", "999000", "--wrap-j", "1000000"])
    try:
        job = _submit(state, "--exclusive", "-N1", "--wrap", "srun sleep 3; sleep 2")
        _wait_done(state, [job])
        (out / "wrapped.sacct").write_text(_sacct(state, "-j", job))
        shutil.copy(directory / "meter" / meter.PROFILE_FILE, out / "wrapped.law.json")
    finally:
        cluster.stop(directory)
    directory, state = _with_cluster(work, "none")
    try:
        job = _submit(state, "--exclusive", "-N1", "--wrap", "srun sleep 2")
        _wait_done(state, [job])
        (out / "no_plugin.sacct").write_text(_sacct(state, "-j", job))
        (out / "scontrol_none.txt").write_text(_scontrol(state))
    finally:
        cluster.stop(directory)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scalebench_lab.sacct_vectors", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="sbv-", dir="/tmp"))
    try:
        produce(args.out.resolve(), work)
    except cluster.ClusterError as err:
        print(f"sacct_vectors: error: {err}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
