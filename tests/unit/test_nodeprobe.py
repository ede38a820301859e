"""The per-node probe (scalebench.nodeprobe): the sampler on this machine, with a busy process of a
job and a busy process that is not the job's; its samples read back and summarised; the job script's
lines that start and stop it."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scalebench.hpl.outcome import hpl_outcome
from scalebench.nodeprobe import job, samples, sampler

HOG = "sb-cpu-hog"
BUSY = "import ctypes, sys, time\nctypes.CDLL(None).prctl(15, sys.argv[1].encode())\nend = time.time() + 20\n" \
       "while time.time() < end: pass\n"


def busy(name, *, argv0=None):
    """A process spinning for up to 20 s, named `name` (its comm); argv0 sets its command line's first word."""
    command = ["bash", "-c", f'exec -a "{argv0}" {sys.executable} -c "$0" {name}', BUSY] if argv0 \
        else [sys.executable, "-c", BUSY, name]
    return subprocess.Popen(command)


def test_the_sampler_tells_the_jobs_processes_from_foreign_ones():
    """A Slurm job's processes are its slurmstepd's descendants: here a fake slurmstepd of job 4242 that is
    itself busy; the hog, outside it, is foreign. (Which processes a sample names depends on what else
    this shared machine runs: the accounting is asserted, not the ranking.)"""
    stepd = busy("slurmstepd", argv0="slurmstepd: [4242.0]")
    hog = busy(HOG)
    try:
        time.sleep(0.3)  # both named and spinning
        processes = sampler.Processes(job_pid=None, slurm_job="4242")
        time.sleep(1.0)
        table, job_pids, spent, _ = processes.account()
    finally:
        for process in (stepd, hog):
            process.kill()
            process.wait()
    assert stepd.pid in job_pids and hog.pid not in job_pids
    assert table[hog.pid][1] == HOG and spent[hog.pid] > 0 and spent[stepd.pid] > 0


def test_the_sampler_writes_before_during_and_after_until_stopped(tmp_path):
    stepd = busy("slurmstepd", argv0="slurmstepd: [4242.0]")
    try:
        probe = subprocess.Popen([sys.executable, "-m", "scalebench.nodeprobe.sampler", "run", "--dir", str(tmp_path),
                                  "--interval", "0.5", "--window", "0.3"],
                                 env={**os.environ, "SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "n017"})
        time.sleep(2.0)
        probe.send_signal(signal.SIGTERM)
        assert probe.wait(timeout=10) == 0
    finally:
        stepd.kill()
        stepd.wait()
    lines = [json.loads(line) for line in (tmp_path / "n017.jsonl").read_text().splitlines()]
    assert lines[0]["phase"] == "before" and lines[-1]["phase"] == "after"
    during = [s for s in lines if s["phase"] == "during"]
    assert len(during) >= 2 and all(s["node"] == "n017" and s["cpus"] == os.cpu_count() for s in lines)
    assert sum(s["job_cores"] * s["window_s"] for s in during) > 0  # CPU seconds of the fake job step
    assert stepd.pid not in {pid for s in during for _, pid, _ in s["foreign_top"]}
    assert all(s["foreign_cores"] >= 0 and 0 <= s["steal_pct"] <= 100 and s["load1"] >= 0 for s in lines)


def test_job_membership_follows_the_parent_chain_to_the_job_script():
    procs = sampler.Processes.__new__(sampler.Processes)
    procs.job_pid, procs.stepd = 100, None
    table = {1: ((1, "0"), "init", "S", 0, (0, 0)), 100: ((100, "1"), "bash", "S", 1, (0, 0)),
             101: ((101, "2"), "mpirun", "S", 100, (0, 0)), 102: ((102, "3"), "xhpl", "R", 101, (0, 0)),
             200: ((200, "4"), "make", "R", 1, (0, 0)), 201: ((201, "5"), "cc1", "R", 200, (0, 0))}
    assert procs.job_pids(table) == {100, 101, 102}


def _sample(phase, window=1.0, **fields):
    return {"probe": 1, "node": "vm", "phase": phase, "window_s": window, "cpus": 2, "steal_pct": 0.0,
            "foreign_cores": 0.0, "job_cores": 2.0, "foreign_top": [], "load1": 2.0, **fields}


def test_foreign_load_counts_only_beyond_the_cores_the_job_leaves_idle():
    one_core = _sample("during", foreign_cores=1.0)
    assert samples.excess_foreign(one_core, job_cores_per_node=1) == 0.0  # on the idle core
    assert samples.excess_foreign(one_core, job_cores_per_node=2) == 1.0  # on the job's cores


def test_a_probe_directory_is_read_into_the_cases_record(tmp_path):
    directory = tmp_path / samples.PROBE_DIR
    directory.mkdir()
    hog = [["sb-cpu-hog", 4242, 0.5], ["sshd", 17, 0.01]]
    lines = [_sample("before", 0.5, load1=0.4), _sample("during", 2.0, foreign_cores=0.5, foreign_top=hog, load1=1.9),
             _sample("during", 2.0, foreign_cores=0.44, foreign_top=hog, steal_pct=1.0, clock_mhz=2600.0,
                     clock_source="cpufreq", energy_j=123.0, load1=2.3),  # another reader's field: kept, not needed here
             _sample("during", 0.5, job_cores=9.0),  # the ranks reaped: how this window split is unknown
             _sample("after", 0.5, load1=2.1)]
    (directory / "vm.jsonl").write_text("".join(json.dumps(s) + "\n" for s in lines) + "not json\n"
                                        + '{"phase": "during", "node": "vm"')  # cut while being written
    (directory / "n2.jsonl").write_text(json.dumps({**_sample("during"), "node": "n2"}) + "\n")
    record, text = samples.interference_record(tmp_path, expected_nodes=3, job_cores_per_node=2)
    assert record["nodes"] == 2 and record["expected_nodes"] == 3
    assert record["problems"] == "vm.jsonl:6: not a probe sample"
    assert record["foreign_cores"] == pytest.approx(0.47) and record["foreign_node"] == "vm"
    assert record["foreign_top"] == "sb-cpu-hog[4242] 0.44, sshd[17] 0.01"
    assert record["steal_pct"] == 0.44 and record["clock_mhz"] == 2600.0
    assert (record["load1_before"], record["load1_max"], record["load1_after"]) == (0.4, 2.3, 2.1)
    assert list(record["per_node"]) == ["vm", "n2"]  # the most disturbed first
    assert text == ("2 node(s) probed, 1 without samples: steal 0.4%, foreign load 0.47 cores (sb-cpu-hog[4242] "
                    "0.44, sshd[17] 0.01 on vm), load 0.4/2.3/2.1 before/during/after, clock 2600 MHz (cpufreq)")
    assert samples.interference_reasons(record, max_steal=0.05, max_foreign_cores=0.25) == [
        "foreign load 0.47 cores on vm (> 0.25): sb-cpu-hog[4242] 0.44, sshd[17] 0.01"]
    assert samples.interference_reasons(record, max_steal=0.001, max_foreign_cores=1.0) == [
        "CPU steal 0.4% on vm (> 0%)"]


def test_no_probe_directory_is_said_not_guessed(tmp_path):
    record, text = samples.interference_record(tmp_path, expected_nodes=4, job_cores_per_node=8)
    assert record == {"nodes": 0, "expected_nodes": 4}
    assert text == "no node probe samples (4 node(s) expected)"
    assert samples.interference_reasons(record, 0.05, 0.25) == []


def test_the_job_script_starts_the_probe_on_every_node_and_stops_it():
    start, stop = job.probe_commands("slurm", 16, interval_s=2, max_s=3600, python="/venv/bin/python")
    assert start[1].startswith("srun --overlap --nodes=16 --ntasks=16 --ntasks-per-node=1 --cpu-bind=none "
                               "--kill-on-bad-exit=0 /venv/bin/python -m scalebench.nodeprobe.sampler run")
    assert "--job-pid" not in start[1]  # a pid of the first node means nothing on the others
    assert start[3].endswith("wait --dir nodeprobe --nodes 16 --timeout 10 --pid $scalebench_probe")
    assert stop == ["kill -TERM $scalebench_probe 2>/dev/null; wait $scalebench_probe"]
    local, _ = job.probe_commands("local", 1, interval_s=1, max_s=60, python="/venv/bin/python")
    assert local[1] == ("/venv/bin/python -m scalebench.nodeprobe.sampler run --dir nodeprobe --interval 1 --max-s 60 "
                        "--job-pid $$ > nodeprobe/probe.log 2>&1 &")
    other, _ = job.probe_commands("pbs", 4, interval_s=1, max_s=60, python="/venv/bin/python")
    assert "--nodes 1 " in other[3]  # its first node only: the record counts the others as without samples


RECORDED = Path(__file__).resolve().parents[1] / "data" / "nodeprobe" / "hog_beside_rank"


def test_a_recorded_job_beside_a_cpu_hog_names_it_and_its_ceiling_warning_blames_interference():
    """tests/data/nodeprobe/hog_beside_rank: the HPL check's stage directory from this machine, a hog on the
    core of rank 1 (source.txt)."""
    record, text = samples.interference_record(RECORDED, expected_nodes=1, job_cores_per_node=2)
    assert record["foreign_top"].startswith("sb-cpu-hog[28711] 0.53")
    assert record["foreign_cores"] > 0.25 and "sb-cpu-hog[28711]" in text
    outcome = hpl_outcome((RECORDED / "rfm_job.out").read_text(), (RECORDED / "rfm_job.err").read_text(),
                          hpcc=False, expected_cases=3, tasks=2, rpeak_gflops=166.4, interference=record,
                          expected_kernel="SkylakeX")
    assert outcome.problems == () and outcome.kernels_used == "SkylakeX"
    assert outcome.dgemm_ceiling_gflops == pytest.approx(92.519475) and outcome.solve_cv > 0.05
    assert "while the node was disturbed (foreign load" in outcome.ceiling_warnings
    assert "sb-cpu-hog[28711]" in outcome.ceiling_warnings and "wrong BLAS kernel" not in outcome.ceiling_warnings
