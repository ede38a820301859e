"""The missing-program guard of the checks, run by a real shell."""
import subprocess

from scalebench import programs


def _job(program: str):
    return subprocess.run(["bash", "-c", programs.guard(program) + "\necho ran"], capture_output=True, text=True)


def test_a_present_program_passes_the_guard():
    job = _job("sh")
    assert job.returncode == 0 and job.stdout == "ran\n" and programs.missing(job.stderr) is None


def test_a_missing_program_ends_the_job_naming_it(tmp_path):
    job = _job(str(tmp_path / "xhpl"))
    assert job.returncode == 127 and job.stdout == ""
    assert programs.missing(job.stderr) == f"benchmark program not found: {tmp_path / 'xhpl'}"
    (tmp_path / "err").write_text("noise\n" + job.stderr)
    assert programs.missing_in(str(tmp_path / "err")) == programs.missing(job.stderr)
    assert programs.missing_in(str(tmp_path / "absent")) is None


def test_a_hostile_name_is_quoted_not_run(tmp_path):
    canary = tmp_path / "pwned"
    job = _job(f"x; touch {canary}; $(touch {canary})`touch {canary}`")
    assert job.returncode == 127 and not canary.exists()
    assert "touch" in programs.missing(job.stderr)


def test_read_output_names_the_missing_program_before_any_parse_error(tmp_path):
    from scalebench.errors import ParseError

    def unparsable():
        raise ParseError("no result line")

    stderr = tmp_path / "err"
    stderr.write_text(f"{programs.MISSING_MARK} xhpl\n")
    assert programs.read_output(str(stderr), unparsable, "no HPL result") == (
        None, "benchmark program not found: xhpl")
    stderr.write_text("")
    assert programs.read_output(str(stderr), unparsable, "no HPL result") == (None, "no HPL result: no result line")
    assert programs.read_output(str(stderr), lambda: 42, "no HPL result") == (42, None)


# Launchers' own lines, as srun/slurmstepd, Open MPI's and MPICH's mpirun print them.
SRUN_SEGFAULT_THEN_TIME_LIMIT = """\
srun: error: n1: task 0: Segmentation fault
[vm:01131] mca: bml: Using tcp btl for send to [[8315,26087],2] on node n3
srun: Job step aborted: Waiting up to 7 seconds for job step to finish.
slurmstepd-n1: error: *** JOB 3 ON n1 CANCELLED AT 2026-11-28T09:21:42 DUE TO TIME LIMIT ***
srun: error: n3: task 2: Terminated
srun: error: n2: task 1: Terminated
"""


def test_ended_early_names_the_rank_that_died_and_why_slurm_cancelled_the_job():
    assert programs.ended_early(SRUN_SEGFAULT_THEN_TIME_LIMIT) == (
        "task 0 on n1: Segmentation fault; job cancelled: time limit")
    assert programs.ended_early("slurmstepd: error: *** STEP 12.0 ON n4 CANCELLED AT 2026-01-01T00:00:00 ***\n") == (
        "job cancelled")
    # the OOM killer's victims are Killed: the first of them says which node
    assert programs.ended_early("slurmstepd: error: Detected 1 oom_kill event in StepId=7.0. Some of the step "
                                "tasks have been OOM Killed.\nsrun: error: n2: tasks 0-3: Killed\n"
                                "srun: error: n3: task 4: Killed\n") == (
        "the OOM killer ended a task; tasks 0-3 on n2: Killed")
    # srun --kill-on-bad-exit cancels the step once a rank is killed; the others' ends follow from it
    assert programs.ended_early("srun: error: n1: task 1: Killed\nslurmstepd-n1: error: *** STEP 2.0 ON n1 CANCELLED "
                                "AT 2026-11-28T09:54:45 ***\nsrun: error: n1: task 0: Exited with exit code 143\n") == (
        "task 1 on n1: Killed")
    assert programs.ended_early("slurmstepd: error: *** JOB 4 ON n1 CANCELLED AT 2026-11-28T09:54:45 ***\n"
                                "srun: error: n1: task 0: Killed\n") == "job cancelled"
    # scancel as Slurm writes it: the job's line, the step's, and a task ended by its SIGTERM
    assert programs.ended_early("slurmstepd-n1: error: *** JOB 3 ON n1 CANCELLED AT 2026-11-28T11:19:57 ***\n"
                                "slurmstepd-n1: error: *** STEP 3.0 ON n1 CANCELLED AT 2026-11-28T11:19:57 ***\n"
                                "srun: error: n1: task 0: Exited with exit code 143\n") == "job cancelled"
    assert programs.ended_early("mpirun noticed that process rank 3 with PID 4711 on node c12 exited on signal 9 "
                                "(Killed).\n") == "rank 3 on c12: signal 9 (Killed)"
    assert programs.ended_early("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
                                "=   RANK 5 PID 99 RUNNING AT nid001\n=   EXIT CODE: 139\n") == (
        "rank 5 on nid001: exit code 139")
    assert programs.ended_early("srun: error: Node failure on n3\nslurmstepd: error: *** JOB 9 ON n2 CANCELLED AT "
                                "2026-01-01T00:00:00 DUE TO NODE FAILURE ***\n") == (
        "node n3 failed; job cancelled: node failure")
    assert programs.ended_early("srun: error: n1: task 0: Exited with exit code 2\n") == (
        "task 0 on n1: Exited with exit code 2")
    # a rank's own output that looks alike is not the launcher's
    assert programs.ended_early("step 3: Segmentation fault handler installed\nall fine\n") is None


def test_read_output_puts_how_the_job_ended_before_the_missing_output(tmp_path):
    from scalebench.errors import ParseError

    def unparsable():
        raise ParseError("hpccoutf.txt: no such file")

    stderr = tmp_path / "err"
    stderr.write_text(SRUN_SEGFAULT_THEN_TIME_LIMIT)
    assert programs.read_output(str(stderr), unparsable, "no HPL result") == (
        None, "task 0 on n1: Segmentation fault; job cancelled: time limit; no HPL result: hpccoutf.txt: no such file")
    assert programs.read_output(str(tmp_path / "absent"), unparsable, "no HPL result") == (
        None, "no HPL result: hpccoutf.txt: no such file")
