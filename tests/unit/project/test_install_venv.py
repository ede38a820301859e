"""scripts/install-venv.sh, the site install: a missing prerequisite ends as one line saying what
provides it on this distribution family (from /etc/os-release), exit 3, and no .venv made; a wheelhouse without the
wheels this machine needs names the `make wheelhouse` that makes them.

The script runs from a scratch copy (this checkout's .venv is never touched) with a stand-in python
that answers the script's probe; other distributions' os-release files are bind-mounted in a private
mount namespace (root only, else those cases skip).
"""
import os
import platform
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, require_tools

OS_RELEASES = {
    "debian": ("ID=debian\n", "apt install python3.11 python3.11-venv"),
    "ubuntu": ("ID=ubuntu\nID_LIKE=debian\n", "apt install python3.11 python3.11-venv"),
    "rhel": ('ID="rhel"\nID_LIKE="fedora"\n', "dnf install python3.11 python3.11-pip"),
    "rocky": ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', "dnf install python3.11 python3.11-pip"),
    "sles": ('ID="sles"\nID_LIKE="suse"\n', "zypper install python311 python311-pip"),
    "opensuse": ('ID="opensuse-leap"\nID_LIKE="suse opensuse"\n', "zypper install python311 python311-pip"),
    "other": ("ID=alpine\n", "install CPython 3.11 or newer, or load a module that provides it"),
}


@pytest.fixture
def checkout(tmp_path):
    """What install-venv.sh reads of a checkout: itself, requirements.txt and pyproject.toml."""
    (tmp_path / "scripts").mkdir()
    for name in ("scripts/install-venv.sh", "requirements.txt", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def stand_in_python(path, answer: str):
    """An executable that prints the probe's answer, "major minor has-venv", whatever it is asked."""
    path.write_text(f"#!/bin/sh\necho {answer}\n")
    path.chmod(0o755)
    return path


def install(checkout, os_release: str | None = None, **env: str) -> subprocess.CompletedProcess:
    command = ["bash", str(checkout / "scripts" / "install-venv.sh")]
    if os_release is not None:
        release = checkout / "os-release"
        release.write_text(os_release)
        command = ["unshare", "--mount", "--", "sh", "-c", 'mount --bind "$0" /etc/os-release && exec "$@"',
                   str(release), *command]
    return subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True, timeout=60)


def one_line(result) -> str:
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("scalebench install: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("family", OS_RELEASES)
def test_old_python_names_this_distributions_package(checkout, family):
    require_tools("unshare")
    if os.geteuid() != 0:
        pytest.skip("needs root for a private mount namespace")
    os_release, advice = OS_RELEASES[family]
    result = install(checkout, os_release, PYTHON=str(stand_in_python(checkout / "python3.9", "3 9 1")))
    line = one_line(result)
    assert result.returncode == 3
    assert "is Python 3.9, scalebench needs 3.11 or newer" in line and advice in line
    assert not (checkout / ".venv").exists()


def test_no_python(checkout):
    result = install(checkout, PYTHON=str(checkout / "no-such-python"))
    assert result.returncode == 3
    assert "no Python at" in one_line(result)
    assert not (checkout / ".venv").exists()


def test_python_without_venv_module(checkout):
    result = install(checkout, PYTHON=str(stand_in_python(checkout / "python3.12", "3 12 0")))
    assert result.returncode == 3
    assert "(Python 3.12) has no venv/ensurepip module" in one_line(result)
    assert not (checkout / ".venv").exists()


def test_venv_of_another_python(checkout):
    (checkout / ".venv" / "bin").mkdir(parents=True)
    stand_in_python(checkout / ".venv" / "bin" / "python", "3 11 1")
    result = install(checkout, PYTHON=str(stand_in_python(checkout / "python3.12", "3 12 1")))
    assert result.returncode == 3
    assert ".venv has Python 3.11, not" in one_line(result) and "make clean-venv" in result.stderr


def test_wheelhouse_that_is_not_a_directory(checkout):
    result = install(checkout, WHEELHOUSE=str(checkout / "nowhere"))
    assert result.returncode == 2
    assert "make wheelhouse WHEELHOUSE=" in one_line(result)


def test_wheelhouse_without_the_wheels(checkout):
    (checkout / "empty").mkdir()
    result = install(checkout, PYTHON=sys.executable, WHEELHOUSE=str(checkout / "empty"))
    assert result.returncode == 1
    python = "%d.%d" % sys.version_info[:2]
    assert f"make wheelhouse PYTHONS={python} PLATFORMS={platform.machine()}" in result.stderr.splitlines()[-1]
