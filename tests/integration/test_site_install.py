"""The site install as a site user runs it (docs/install.md): `make install WHEELHOUSE=DIR` in a copy
of this working tree, by an unprivileged user (nobody), in a network namespace of its own (no network
at all), with dpkg-query and apt-get absent from PATH; then the first commands a site runs, from the
new .venv, the same way.

The wheelhouse comes from the registry through `make wheelhouse`, as root before the network is
dropped, and is cached in .cache/wheelhouse/ until requirements.txt changes (cold: about 100 MiB).
Then a real install with every other supported Python found on PATH (python3.X), offline too.
"""
from __future__ import annotations

import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import REPO, require_tools, unavailable
from wheel_cache import wheelhouse, wheelhouse_for

pytestmark = pytest.mark.integration

ARCH = platform.machine()
USER = "nobody"
# Package managers a login node may lack or the user may not run: the install must not need them.
ABSENT = ("dpkg", "dpkg-query", "apt", "apt-get", "dnf", "yum", "zypper", "rpm")

# What a site runs first from the new .venv, and words its output (stdout or stderr) must have;
# `scalebench plan` joins here.
SITE_COMMANDS = [
    ("reframe --version", "4.10.4"),
    ("scalebench spack validate", "no findings"),
    ("scalebench deck --nodes 2 --ranks-per-node 4 --memory-per-node 8GiB --json", '"ranks": 8'),
    ("scalebench plan site_configs/sites/example.yaml", "case(s) planned"),
]


def venv_argv(clone: Path, command: str) -> list[str]:
    """A command of SITE_COMMANDS with its program from the clone's .venv/bin."""
    program, *args = shlex.split(command)
    return [str(clone / ".venv" / "bin" / program), *args]


def copy_worktree(dest: Path) -> Path:
    """This working tree's files as git sees them (tracked and new, not ignored): no .venv, no .cache."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def path_without_package_managers(bin_dir: Path) -> str:
    """A PATH of one directory: links to every command of the system's PATH but the package managers."""
    bin_dir.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin"):
        for tool in Path(folder).glob("*"):
            link = bin_dir / tool.name
            if tool.name not in ABSENT and not link.exists() and os.access(tool, os.X_OK):
                link.symlink_to(tool)
    return str(bin_dir)


class SiteUser:
    """Runs commands as `nobody` with no network, a clean environment and PATH, in a copy of the tree."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.clone = copy_worktree(scratch / "scalebench")
        self.home = scratch / "home"
        self.home.mkdir()
        self.path = path_without_package_managers(scratch / "bin")
        self.installed: subprocess.CompletedProcess | None = None  # the run of `make install`

    def run(self, *argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
        command = ["unshare", "--net", "--", "runuser", "-u", USER, "--", "env", "-i", f"HOME={self.home}",
                   f"PATH={self.path}", "LANG=C.UTF-8", *argv]
        return subprocess.run(command, cwd=self.clone, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def site():
    """A SiteUser whose clone has run `make install WHEELHOUSE=...`."""
    require_tools("unshare", "runuser", "make", "git")
    if os.geteuid() != 0:
        pytest.skip("needs root to drop the network and become nobody")
    scratch = Path(tempfile.mkdtemp(prefix="scalebench-site-"))
    try:
        scratch.chmod(0o755)
        user = SiteUser(scratch)
        probe = user.run("python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])")
        if probe.returncode:
            unavailable(f"needs a python3 that {USER} can run (python3-venv, installed by scripts/install.sh)")
        python = probe.stdout.strip()
        if python not in wheelhouse.supported_pythons():
            unavailable(f"python3 is {python}, not a supported Python")
        shutil.copytree(wheelhouse_for(python, ARCH), scratch / "wheelhouse")
        subprocess.run(["chown", "-R", f"{USER}:", str(scratch)], check=True)
        user.installed = user.run("make", "install", f"WHEELHOUSE={scratch / 'wheelhouse'}")
        yield user
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_install_as_an_unprivileged_user_offline(site):
    assert site.installed.returncode == 0, site.installed.stdout + site.installed.stderr
    assert "scalebench install: .venv ready" in site.installed.stdout
    assert (site.clone / ".venv" / "bin" / "reframe").is_file()
    assert all(shutil.which(tool, path=site.path) is None for tool in ABSENT)
    # The namespace has no network device but loopback.
    devices = site.run("cat", "/proc/net/dev").stdout.splitlines()[2:]
    assert [line.split(":")[0].strip() for line in devices] == ["lo"]
    assert site.run("id", "-u").stdout.strip() != "0"


def test_second_install_does_nothing(site):
    stamp = site.clone / ".venv" / ".scalebench-installed"
    before = stamp.stat().st_mtime_ns
    again = site.run("make", "-s", "install")
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert stamp.stat().st_mtime_ns == before  # pip never ran


@pytest.mark.parametrize("command, expected", SITE_COMMANDS,
                         ids=["-".join(word.lstrip("-") for word in c.split()[:2]) for c, _ in SITE_COMMANDS])
def test_site_commands_from_the_new_venv(site, command, expected):
    assert site.installed.returncode == 0, "the install failed"
    result = site.run(*venv_argv(site.clone, command))
    assert result.returncode == 0, result.stdout + result.stderr
    assert expected in result.stdout + result.stderr


def other_pythons() -> list[str]:
    return [v for v in wheelhouse.supported_pythons() if v != "%d.%d" % sys.version_info[:2]]


@pytest.mark.parametrize("python", other_pythons())
def test_install_with_another_python_offline(python, tmp_path):
    """Found on PATH only where someone installed it (nothing here installs Pythons): else a plain skip."""
    found = shutil.which(f"python{python}")
    executable = found and subprocess.run([found, "-c", "import sys; print(sys.executable)"],
                                          capture_output=True, text=True).stdout.strip()
    if not executable:
        pytest.skip(f"no python{python} on PATH")
    require_tools("unshare", "make", "git")
    if os.geteuid() != 0:
        pytest.skip("needs root to drop the network")
    clone = copy_worktree(tmp_path / "scalebench")
    wheels = wheelhouse_for(python, ARCH)
    offline = ["unshare", "--net", "--"]
    install = subprocess.run([*offline, "make", "-C", str(clone), "install", f"PYTHON={executable}",
                              f"WHEELHOUSE={wheels}"], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr
    assert f".venv ready (Python {python})" in install.stdout
    for command, expected in SITE_COMMANDS:
        result = subprocess.run([*offline, *venv_argv(clone, command)], cwd=clone, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0 and expected in result.stdout + result.stderr, (command, result.stderr)
