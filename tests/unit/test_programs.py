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
