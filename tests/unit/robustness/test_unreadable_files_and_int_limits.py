"""Files that cannot be read as files (/proc/self/mem, unreadable directories, symbolic-link loops, missing
includes), ranks beyond a C int, and spack validate over them: each ends as a named one-line error
(exit 2), a finding that names what was not read, or a right answer, never a traceback. The parser, reader and ingest-figure classes are in test_physical_sense.py."""
import json
import os
import sys
from pathlib import Path

import pytest

from cli_calls import cli, one_error_line
from scalebench.spack.validate import validate_tree
from scalebench.validation import C_INT_MAX

REPO = Path(__file__).resolve().parents[3]


def hpl_text(*rows: str, threshold: str = "16.0") -> str:
    """HPL 2.3 output of the given result rows, each with its PASSED residual line."""
    return (f"- Computational tests pass if scaled residuals are less than                {threshold}\n"
            + "".join(f"{row}\n||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   1.2e-03 ...... PASSED\n"
                      for row in rows))


GOOD_ROW = "WR11C2R4        10000   192     1     2               6.50             1.0256e+02"


# --- 10. a regular file that cannot be read -----------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="no /proc/self/mem on this machine")
@pytest.mark.parametrize("command", [("parse", "hpl"), ("parse", "osu"), ("tune", "rank"), ("plan",)])
def test_proc_self_mem_is_a_named_error_not_a_crash(capsys, command):
    """/proc/self/mem is a regular file of size 0 whose read() fails with EIO."""
    status, _, err = cli(capsys, *command, "/proc/self/mem")
    assert status == 2
    assert one_error_line(err).endswith("cannot read /proc/self/mem: Input/output error")


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="no /proc/self/mem on this machine")
def test_proc_self_mem_as_thresholds_is_a_named_error(capsys, tmp_path):
    import reframe_reports as rr

    rr.write_run(tmp_path / "r", "good", [rr.testcase("HPLCheck", {"rmax": (45.7, "Gflop/s")},
                                                      params={"scale": "1_core"})])
    status, _, err = cli(capsys, "accept", str(tmp_path / "r"), "--thresholds", "/proc/self/mem")
    assert status == 2 and "thresholds: cannot read /proc/self/mem: Input/output error" in one_error_line(err)


# --- 7. values beyond a C int are never written ----------------------------------------------------------

@pytest.mark.parametrize("ranks", ["99999999999999999999", str(C_INT_MAX + 1)])
def test_freeze_refuses_ranks_beyond_a_c_int_and_writes_nothing(capsys, tmp_path, ranks):
    hpl = tmp_path / "hpl.out"
    hpl.write_text(hpl_text(GOOD_ROW))
    decks = tmp_path / "decks"
    status, _, err = cli(capsys, "tune", "freeze", str(hpl), "--system", "s", "--partition", "p",
                         "--decks-dir", str(decks), "--ranks", ranks)
    assert status == 2 and f"ranks: must be at most {C_INT_MAX}" in one_error_line(err)
    assert not decks.exists() or not list(decks.rglob("*.yaml"))


def test_freeze_at_a_c_int_of_ranks_writes_it(capsys, tmp_path):
    hpl = tmp_path / "hpl.out"
    hpl.write_text(hpl_text(GOOD_ROW))
    status, out, _ = cli(capsys, "tune", "freeze", str(hpl), "--system", "s", "--partition", "p",
                         "--decks-dir", str(tmp_path / "decks"), "--ranks", str(C_INT_MAX))
    assert status == 0 and f"ranks: {C_INT_MAX}" in Path(out.strip()).read_text()


def test_a_frozen_deck_holding_ranks_beyond_a_c_int_is_refused(tmp_path):
    from scalebench.errors import InputError
    from scalebench.hpl.frozen import frozen_deck

    deck = tmp_path / "s" / "p.yaml"
    deck.parent.mkdir()
    deck.write_text(f"nb: 192\ngrid: {{p: 1, q: 2, ranks: {10**20}}}\n")
    with pytest.raises(InputError, match=f"grid.ranks: must be a positive whole number \\(<= {C_INT_MAX}\\)"):
        frozen_deck("s", "p", tmp_path)


# --- 11 and 13. spack validate: unreadable directories and symbolic-link loops ---------------------------

def _tree(root: Path) -> Path:
    """A copy of the repository's spack_envs/ (every environment valid) to break."""
    import shutil

    shutil.copytree(REPO / "spack_envs", root, symlinks=True)
    assert validate_tree(root) == []
    return root


def _as_unprivileged_user(call):
    """call()'s result, run where file permissions hold: in a child process that gives up root."""
    if os.geteuid() != 0:
        return call()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: everything it needs is imported already (the interpreter is under /root)
        status = 1
        try:
            os.close(read)
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, json.dumps(call()).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0 and data, "the unprivileged child failed"
    return json.loads(data)


@pytest.mark.skipif(sys.platform != "linux", reason="permissions as on Linux")
@pytest.mark.parametrize("locked, finding", [
    ("openmpi-tcp", "openmpi-tcp: <dir>: cannot be read (Permission denied): what it holds is not validated"),
    ("sites", "'../sites/$SCALEBENCH_SPACK_SITE': {root}/sites cannot be read (Permission denied)"),
    ("common", "included path '../common/apps.yaml' cannot be read (Permission denied)"),
    ("sites/example-cray-ex",
     "included path '../sites/$SCALEBENCH_SPACK_SITE' cannot be read (Permission denied) for "
     "SCALEBENCH_SPACK_SITE=example-cray-ex"),
])
def test_an_unreadable_directory_is_a_finding_not_a_crash(locked, finding):
    import shutil
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="scalebench-perm-"))  # under /tmp: every parent is searchable
    try:
        top.chmod(0o755)
        root = _tree(top / "tree")
        (root / locked).chmod(0)
        findings = _as_unprivileged_user(lambda: [str(f) for f in validate_tree(root)])
    finally:
        for path in (top, *top.rglob("*")):
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(top)
    assert any(finding.format(root=root) in f for f in findings), findings


def test_a_symbolic_link_loop_include_is_named_as_a_loop(tmp_path, capsys):
    (tmp_path / "sites" / "x").mkdir(parents=True)
    (tmp_path / "sites" / "x" / "site.yaml").write_text("fabric: ethernet\nscheduler: slurm\n")
    (tmp_path / "a.yaml").symlink_to("b.yaml")
    (tmp_path / "b.yaml").symlink_to("a.yaml")
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "spack.yaml").write_text(
        "spack:\n  include:\n  - ../a.yaml\n  - ../sites/$SCALEBENCH_SPACK_SITE\n  specs: [hpl]\n")
    status, out, _ = cli(capsys, "spack", "validate", str(tmp_path / "e"))
    assert status == 1
    assert f"included path '../a.yaml' is a loop of symbolic links ({tmp_path / 'a.yaml'})" in out
    assert "does not exist" not in out


def test_a_missing_include_still_does_not_exist(tmp_path, capsys):
    (tmp_path / "sites" / "x").mkdir(parents=True)
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "spack.yaml").write_text(
        "spack:\n  include:\n  - ../nowhere.yaml\n  - ../sites/$SCALEBENCH_SPACK_SITE\n  specs: [hpl]\n")
    status, out, _ = cli(capsys, "spack", "validate", str(tmp_path / "e"))
    assert status == 1 and "included path '../nowhere.yaml' does not exist" in out


def test_spack_validate_of_a_symbolic_link_loop_is_a_named_error(tmp_path, capsys):
    (tmp_path / "loop").symlink_to("loop")
    status, _, err = cli(capsys, "spack", "validate", str(tmp_path / "loop"))
    assert status == 2 and one_error_line(err).endswith("is a loop of symbolic links")
