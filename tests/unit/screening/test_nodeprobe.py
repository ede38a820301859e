"""The per-node probe (scalebench.nodeprobe): the sampler on this machine, with a busy process of a
job and a busy process that is not the job's; its samples read back and summarised; the job script's
lines that start and stop it."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scalebench.energy import sample as energy_sample
from scalebench.hpl.outcome import hpl_outcome
from scalebench.nodeprobe import job, samples, sampler

HOG = "sb-cpu-hog"
BUSY = "import ctypes, sys, time\nctypes.CDLL(None).prctl(15, sys.argv[1].encode())\nend = time.time() + 20\n" \
       "while time.time() < end: pass\n"


def busy(name, *, argv0=None, env=None):
    """A process spinning for up to 20 s, named `name` (its comm); argv0 sets its command line's first word."""
    command = ["bash", "-c", f'exec -a "{argv0}" {sys.executable} -c "$0" {name}', BUSY] if argv0 \
        else [sys.executable, "-c", BUSY, name]
    return subprocess.Popen(command, env=env)


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


def test_another_clusters_job_of_the_same_id_is_foreign():
    """Several Slurm clusters on one host (the lab's, beside a colleague's) number their jobs alike: a
    slurmstepd of job 4242 under another SLURM_CONF is not this job's; one without any may be."""
    theirs = busy("slurmstepd", argv0="slurmstepd: [4242.0]", env={**os.environ, "SLURM_CONF": "/other/slurm.conf"})
    ours = busy("slurmstepd", argv0="slurmstepd: [4242.0]", env={**os.environ, "SLURM_CONF": "/ours/slurm.conf"})
    try:
        time.sleep(0.3)
        _, job_pids, _, _ = sampler.Processes(None, "4242", "/ours/slurm.conf").account()
        _, unknown, _, _ = sampler.Processes(None, "4242", None).account()
    finally:
        for process in (theirs, ours):
            process.kill()
            process.wait()
    assert ours.pid in job_pids and theirs.pid not in job_pids
    assert {ours.pid, theirs.pid} <= unknown


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
    # a one-CPU node sharing a 2-CPU host (the lab's): the host's other CPU is no idle core of its job
    assert samples.excess_foreign({**one_core, "node_cpus": 1}, job_cores_per_node=1) == 1.0


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
    # stopped by its stop file (srun would SIGKILL it on a SIGTERM), srun signalled only past the bounded wait
    assert stop == ["touch nodeprobe/stop",
                    "for _ in $(seq 100); do kill -0 $scalebench_probe 2>/dev/null || break; sleep 0.1; done",
                    "kill -TERM $scalebench_probe 2>/dev/null; wait $scalebench_probe"]
    local, _ = job.probe_commands("local", 1, interval_s=1, max_s=60, python="/venv/bin/python")
    assert local[1] == ("/venv/bin/python -m scalebench.nodeprobe.sampler run --dir nodeprobe --interval 1 --max-s 60 "
                        "--job-pid $$ > nodeprobe/probe.log 2>&1 &")
    other, _ = job.probe_commands("pbs", 4, interval_s=1, max_s=60, python="/venv/bin/python")
    assert "--nodes 1 " in other[3]  # its first node only: the record counts the others as without samples



def test_energy_is_taken_by_the_same_probe_step():
    """One srun step per node writes both: the interference samples and the energy samples."""
    start, stop = job.probe_commands("slurm", 4, interval_s=2, max_s=3600, energy=("energy", 1),
                                     python="/venv/bin/python")
    steps = [line for line in start + stop if "srun" in line]
    assert len(steps) == 1 and "scalebench.energy" not in " ".join(start + stop)
    assert " -m scalebench.nodeprobe.sampler run --dir nodeprobe " in steps[0]
    assert " --energy-out energy --energy-interval 1 " in steps[0]
    plain, _ = job.probe_commands("slurm", 4, interval_s=2, max_s=3600, python="/venv/bin/python")
    assert "--energy" not in " ".join(plain)


# A probe on "this node" whose energy counter is an emulated pm_counters file (the node's energy in J).
ENERGY_PROBE = """import sys
from pathlib import Path
from scalebench.energy import counters
from scalebench.nodeprobe import sampler
found, read = counters.pm_counters(Path(sys.argv[1]))
counters.discover = lambda: (found, [read])
sys.exit(sampler.main(sys.argv[2:]))
"""


def test_the_probe_takes_energy_rounds_on_their_own_cadence_around_its_samples(tmp_path):
    meter = tmp_path / "pm"
    meter.mkdir()
    (meter / "energy").write_text("5000 J\n")
    probe = subprocess.Popen([sys.executable, "-c", ENERGY_PROBE, str(meter), "run", "--dir", str(tmp_path / "np"),
                              "--interval", "0.5", "--window", "0.3", "--energy-out", str(tmp_path / "energy"),
                              "--energy-interval", "0.2"], env={**os.environ, "SLURMD_NODENAME": "n017"})
    time.sleep(1.5)
    (meter / "energy").write_text("5600 J\n")
    time.sleep(1.0)
    stopped = time.time()
    probe.send_signal(signal.SIGTERM)
    assert probe.wait(timeout=10) == 0
    lines = [json.loads(line) for line in (tmp_path / "np" / "n017.jsonl").read_text().splitlines()]
    assert [s["phase"] for s in lines[:1] + lines[-1:]] == ["before", "after"]
    during = [s for s in lines if s["phase"] == "during"]
    assert all(s["window_s"] >= 0.5 for s in during[:-1])  # the CPU samples keep their own cadence
    (found,) = energy_sample.read_directory(tmp_path / "energy")
    assert found.host == socket.gethostname() and found.interval_s == 0.2
    (segment,) = found.segments["pm_counters:node"]
    times = segment.times
    assert len(times) > len(during)  # the finer cadence is kept too
    assert all(b - a >= 0.199 for a, b in zip(times, times[1:-1]))  # every 0.2 s, the last at the stop
    # the rounds enclose the run: the first before the sample the job script waits for, the last after the stop
    assert times[0] < lines[0]["t"] and times[-1] >= stopped
    assert segment.joules[0] == 0 and segment.joules[-1] == 600  # what the meter said, unwrapped from its start


def test_the_probe_imports_no_scalebench_energy_unless_asked_and_goes_on_without_a_meter(tmp_path):
    """Without energy, nothing but the sampler is imported; with it, a node without any counter (or whose
    file exists already) gets its header or a line in probe.log, and the interference samples go on."""
    listed = ("import sys\nfrom scalebench.nodeprobe import sampler\nsampler.main(sys.argv[1:])\n"
              "print(sorted(m for m in sys.modules if m.startswith('scalebench')))")
    args = ["run", "--dir", str(tmp_path / "np"), "--interval", "0.1", "--window", "0", "--max-s", "0.3"]
    plain = subprocess.run([sys.executable, "-c", listed, *args], capture_output=True, text=True, timeout=30)
    assert plain.stdout.split("\n")[-2] == "['scalebench', 'scalebench.nodeprobe', 'scalebench.nodeprobe.sampler']"
    none = "import sys\nfrom scalebench.energy import counters\ncounters.discover = lambda: ([], [])\n" + listed
    energy = [*args, "--energy-out", str(tmp_path / "energy")]
    first = subprocess.run([sys.executable, "-c", none, *energy], capture_output=True, text=True, timeout=30)
    assert first.returncode == 0 and first.stderr == ""
    assert energy_sample.read_directory(tmp_path / "energy")[0].counters == ()
    again = subprocess.run([sys.executable, "-c", none, *energy], capture_output=True, text=True, timeout=30)
    assert again.returncode == 0 and "exists (one sampler per node and run): no energy samples" in again.stderr
    probed = (tmp_path / "np").glob("*.jsonl")
    assert [len(p.read_text().splitlines()) >= 3 * 3 for p in probed] == [True]  # three runs, each before..after


RECORDED = Path(__file__).resolve().parents[2] / "data" / "nodeprobe" / "hog_beside_rank"


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


def test_a_node_that_is_a_share_of_its_host_counts_its_own_cpus(monkeypatch):
    """The lab's namespace nodes are one-CPU shares of this machine: the probe's cores left idle are those
    of the node, not of the host, so what else runs on the host is foreign to the node's job."""
    monkeypatch.setenv("SCALEBENCH_NODE_CPUS", "1")
    assert sampler.node_cpus() == 1
    fields = sampler.Probe(None).sample("during")
    assert fields["node_cpus"] == 1 and fields["cpus"] == os.cpu_count()  # the host's, for the job's share
    monkeypatch.setenv("SCALEBENCH_NODE_CPUS", str(10 * (os.cpu_count() or 1)))  # never more than the host
    assert sampler.node_cpus() == os.cpu_count()
    monkeypatch.setenv("SCALEBENCH_NODE_CPUS", "many")
    assert sampler.node_cpus() == os.cpu_count()
