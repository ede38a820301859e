"""Faults during a run on the throwaway Slurm cluster: in one ReFrame run of the fault probe
(tests/integration/checks/fault_probe.py), one case has a rank killed, one its job cancelled, one a
node crash under it and one hits its time limit, beside cases that must still pass. Each fault must
end as a failed case whose reason says what happened, in ReFrame's report and in scalebench's, and
nothing already written may be lost or rewritten.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import REPO, VENV_BIN, file_hashes, perflog_rows, run_reframe
from scalebench import programs
from scalebench.reporting.store import ingest
from scalebench_lab import cluster
from slurm_fixtures import slurm_cluster_factory  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slurm_lab]

PROBE = Path(__file__).resolve().parent / "checks" / "fault_probe.py"
VICTIMS = ("rank_killed", "cancelled", "time_limit", "node_crash")
BYSTANDERS = {"none_quick": 1, "none_through": 2}  # fault -> ranks
CRASHED_NODE = "n3"
# What Slurm writes into each victim's job stderr, and what it must not (another fault's words).
SAYS = {
    "rank_killed": r"^srun: error: n1: task 1: Killed$",
    # the batch step's line, or only srun's step's when the step ends the script first (seen under load)
    "cancelled": r"\*\*\* (JOB \d+|STEP \d+\.\d+) ON n1 CANCELLED AT \S+ \*\*\*$",
    "time_limit": r"\*\*\* (JOB \d+|STEP \d+\.\d+) ON n2 CANCELLED AT \S+ DUE TO TIME LIMIT \*\*\*$",
    "node_crash": r"^srun: error: Node failure on n3$|CANCELLED AT \S+ DUE TO NODE FAILURE",
}
NOT_SAYS = {
    "rank_killed": r"DUE TO|Node failure",
    "cancelled": r"DUE TO|Node failure|task \d+: Killed",
    "time_limit": r"NODE FAILURE|Node failure|task \d+: Killed",
    "node_crash": r"TIME LIMIT|task \d+: Killed",
}
# How a check's sanity names it (scalebench.programs.ended_early)
ENDED_EARLY = {
    "rank_killed": r"task 1 on n1: Killed",
    "cancelled": r"job cancelled",
    "time_limit": r"job cancelled: time limit",
    "node_crash": r"node n3 failed(; job cancelled: node failure)?|job cancelled: node failure",
}
WAIT_S = 90  # for the jobs to start and the quick case to finish


def _site_file(directory: Path) -> Path:
    """testcluster.yaml with room for every case at once, marked for the probe."""
    site = yaml.safe_load((REPO / "site_configs" / "sites" / "testcluster.yaml").read_text())
    site["partitions"][0].update(max_jobs=8, max_nodes=3, features=["faultprobe"])
    path = directory / "faultprobe.yaml"
    path.write_text(yaml.safe_dump(site))
    return path


def _probe_jobs(state: cluster.State) -> dict[str, tuple[str, str]]:
    """fault -> (job id, state) of the probe's jobs in the queue."""
    listing = state.run_client(["squeue", "-h", "-o", "%i|%k|%T"], timeout=10).stdout
    jobs = {}
    for line in listing.splitlines():
        job_id, comment, job_state = line.split("|")
        if comment.startswith("fault="):
            jobs[comment.removeprefix("fault=")] = (job_id, job_state)
    return jobs


def _mid_run(state: cluster.State) -> dict[str, tuple[str, str]] | None:
    """The probe's jobs once every victim and the through case run, with the ranks the faults aim at
    started; None before."""
    jobs = _probe_jobs(state)
    needed = {"rank_killed": {"SLURM_PROCID": "1"}, "node_crash": {"SLURMD_NODENAME": CRASHED_NODE},
              "cancelled": {}, "time_limit": {}, "none_through": {}}
    started = all(fault in jobs and jobs[fault][1] == "RUNNING"
                  and cluster.job_processes(state, jobs[fault][0], SLURM_STEP_ID="0", **env)
                  for fault, env in needed.items())
    return jobs if started else None


def _written_files(run_dir: Path) -> dict[Path, bytes]:
    """What the run has written so far, but its scratch stage directory."""
    return {path: path.read_bytes() for path in run_dir.rglob("*")
            if path.is_file() and "stage" not in path.relative_to(run_dir).parts}


def _wait(what: str, ready, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = ready()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"not within {timeout:g} s: {what}")


def _inject(state: cluster.State, run_dir: Path) -> SimpleNamespace:
    """Wait until every victim is mid-run and the quick case has finished, then strike."""
    jobs = _wait("every probe job mid-run", lambda: _mid_run(state))
    _wait("the quick case's perflog line",
          lambda: any(row.get("display_name", "").endswith("=none_quick") for row in perflog_rows(run_dir)))
    written = _written_files(run_dir)
    rank = cluster.job_processes(state, jobs["rank_killed"][0], SLURM_STEP_ID="0", SLURM_PROCID="1")
    for pid in rank:  # as the OOM killer would
        os.kill(pid, signal.SIGKILL)
    state.run_client(["scancel", jobs["cancelled"][0]], timeout=10)
    crashed = cluster.crash_node(state, CRASHED_NODE)
    # The time limit strikes on its own; the through case must still be running after all the faults.
    through = _probe_jobs(state).get("none_through", ("", "gone"))[1]
    return SimpleNamespace(jobs=jobs, written=written, killed_rank=rank, crashed=crashed, through_state=through)


@pytest.fixture(scope="module")
def faults(slurm_cluster_factory, tmp_path_factory):  # noqa: F811
    # Eight CPUs per node (they share this machine's, the ranks only sleep): every case runs at once.
    # A silent node is marked DOWN after 10 s, not Slurm's default 300.
    state = slurm_cluster_factory(nodes=3, mode="loopback", cpus_per_node=8, slurmd_timeout_s=10)
    tmp = tmp_path_factory.mktemp("faults")
    env = state.client_env()
    env["SCALEBENCH_SITE"] = str(_site_file(tmp))
    results = tmp / "results"
    earlier = results / "runs" / "1-earlier"
    first = run_reframe(earlier, "-r", "-n", "%fault=none_quick", config="slurm.py", env=env, checks=str(PROBE),
                        timeout=120)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    earlier_before = file_hashes(earlier)
    run_dir, release = results / "runs" / "2-faults", tmp / "release"
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(run_reframe, run_dir, "-r", "-S", f"release_file={release}", config="slurm.py",
                             env=env, checks=str(PROBE), timeout=400)
        try:
            injected = _inject(state, run_dir)
        except BaseException:
            state.run_client(["scancel", "--user=root"], timeout=10, check=False)  # end the run quickly
            raise
        finally:
            release.touch()
        proc = future.result()
    sessions, warnings = ingest([run_dir])
    return SimpleNamespace(state=state, results=results, earlier=earlier, earlier_before=earlier_before,
                           run_dir=run_dir, proc=proc, injected=injected, sessions=sessions, warnings=warnings,
                           cases={c.params["fault"]: c for c in sessions[0].cases},
                           queue=state.run_client(["squeue", "-h"], timeout=10).stdout)


def test_run_ends_with_a_complete_report_and_no_job_left(faults):
    assert faults.proc.returncode != 0  # failures
    assert faults.warnings == []
    assert sorted(faults.cases) == sorted([*VICTIMS, *BYSTANDERS])
    assert "Ran 6/6 test case(s)" in faults.proc.stdout, faults.proc.stdout[-3000:]
    assert faults.queue.strip() == ""


def test_faults_really_happened(faults):
    assert faults.injected.killed_rank  # rank 1's shell and its sleep
    assert len(faults.injected.crashed) >= 3  # slurmd, a slurmstepd and the rank under it
    nodes = faults.state.run_client(["sinfo", "-h", "-N", "-o", "%N %T"], timeout=10).stdout
    assert f"{CRASHED_NODE} down*" in nodes.splitlines()


@pytest.mark.parametrize("fault", VICTIMS)
def test_each_fault_fails_its_case_with_what_happened(faults, fault):
    case = faults.cases[fault]
    assert case.result == "fail"
    assert case.fail_phase == "sanity"
    assert re.fullmatch(r"sanity error: 0 of [12] ranks finished", case.fail_reason), case.fail_reason
    said = "\n".join(case.job_messages)
    assert re.search(SAYS[fault], said, re.M), said
    assert not re.search(NOT_SAYS[fault], said), said
    assert re.fullmatch(ENDED_EARLY[fault], programs.ended_early(said) or ""), said


def test_other_cases_of_the_run_pass(faults):
    assert faults.injected.through_state == "RUNNING"  # it lived through every fault
    for fault, ranks in BYSTANDERS.items():
        case = faults.cases[fault]
        assert case.result == "pass", case.fail_reason
        assert case.figure("ranks_done") == ranks and case.job_messages == ()


def test_report_lists_each_failure_with_its_reason(faults, tmp_path):
    out = tmp_path / "report"
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "report", str(faults.results), "--out", str(out),
                           "--format", "md,html"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    markdown = (out / "report.md").read_text()
    section = markdown.split("### Failures\n", 1)[1].split("\n#", 1)[0]
    failures = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(failures) == len(VICTIMS), failures
    page = (out / "report.html").read_text()
    for fault in VICTIMS:
        line = next(ln for ln in failures if f"%fault={fault} " in ln)
        assert f": sanity: {faults.cases[fault].fail_reason}; job output: " in line
        message = next(m for m in faults.cases[fault].job_messages if re.search(SAYS[fault], m))
        assert f"`{message}`" in line  # a code span: Slurm's '*** ... ***' stays literal
        assert f"<code>{message}</code>" in page


def test_results_written_before_the_faults_survive(faults):
    # Only appended to since: nothing lost, nothing rewritten.
    for path, before in faults.injected.written.items():
        assert path.read_bytes().startswith(before), path
    assert any(p.parent.name == "debug" and p.suffix == ".log" for p in faults.injected.written)  # a perflog
    assert file_hashes(faults.earlier) == faults.earlier_before
    # One perflog line per case, with its outcome: a failed case's figure is null.
    logged = {row["display_name"].rpartition("=")[2]: (row["result"], row["perf_value"])
              for row in perflog_rows(faults.run_dir)}
    assert logged == {**{f: ("fail", "null") for f in VICTIMS}, **{f: ("pass", str(n)) for f, n in BYSTANDERS.items()}}
