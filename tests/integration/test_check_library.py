"""scalebench as a site's check library: a wheel built from this tree, installed into a fresh virtual
environment outside it, serves a "site repository" that subclasses the HPL and STREAM checks (their
own valid_systems, valid_prog_environs and a variable of their own) and dry-runs them with its own ReFrame
configuration and facts, on both ends of the ReFrame versions the checks support (pyproject.toml's
reframe-hpc range): nothing assumes the clone, the data ships inside the package.
"""
from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from test_dry_run_sites import cases_of, hpl_dat
from test_site_install import copy_worktree
from wheel_cache import CACHE, _from_registry, wheelhouse_for

pytestmark = pytest.mark.integration

PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
CONFIGS = REPO / "tests" / "data" / "reframe_configs"
SITE_CHECK = '''
import reframe as rfm
from reframe.core.builtins import variable

from scalebench_checks.hpl import HPLCheck


@rfm.simple_test
class SiteHPL(HPLCheck):
    """The site's acceptance HPL: scalebench's check on its own partition, with its own records."""

    valid_systems = ['sbtutor:batch']
    valid_prog_environs = ['gnu']
    maintainers = ['hpc-ops']
    acceptance_round = variable(str, value='2026-12', loggable=True)
'''
SITE_STREAM = '''
import reframe as rfm
from reframe.core.builtins import variable

from scalebench_checks.stream import STREAMCheck


@rfm.simple_test
class SiteSTREAM(STREAMCheck):
    """The site's memory acceptance: scalebench's STREAM on its own partition, with its own records."""

    valid_systems = ['sbtutor:batch']
    valid_prog_environs = ['gnu']
    maintainers = ['hpc-ops']
    acceptance_round = variable(str, value='2026-12', loggable=True)
'''


def supported_reframe() -> tuple[str, str]:
    """(oldest, newest) of pyproject.toml's reframe-hpc range: its lower bound's last release tested, and
    requirements.txt's pin."""
    bound = re.search(r'"reframe-hpc>=([0-9.]+),<', (REPO / "pyproject.toml").read_text()).group(1)
    pin = re.search(r"^reframe-hpc==([0-9.]+)$", (REPO / "requirements.txt").read_text(), re.M).group(1)
    return {"4.7": "4.7.4"}.get(bound, bound), pin


def reframe_wheels(version: str) -> Path:
    """ReFrame `version` and what it needs beyond requirements.txt, from the registry once (cached)."""
    folder = CACHE / f"reframe-{version}-cp{PYTHON.replace('.', '')}-{platform.machine()}"
    if not folder.is_dir():
        partial = folder.with_name(folder.name + ".partial")
        _from_registry([sys.executable, "-m", "pip", "download", "-q", "--only-binary", ":all:", "-d", str(partial),
                        f"reframe-hpc=={version}"], f"ReFrame {version}")
        partial.rename(folder)
    return folder


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    source = copy_worktree(tmp_path_factory.mktemp("source"))
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
                    str(source)], check=True, capture_output=True, timeout=600)
    return next(dist.glob("scalebench_hpc-*.whl"))


def site_repository(root: Path) -> Path:
    """A site's own test repository: its ReFrame configuration, its facts (its stack has STREAM too), its
    subclasses of HPLCheck and STREAMCheck."""
    repo = root / "site-tests"
    (repo / "checks").mkdir(parents=True)
    (repo / "config.py").write_text((CONFIGS / "reframe_tutorial_like.py").read_text())
    facts = (CONFIGS / "reframe_tutorial_like.facts.yaml").read_text()
    assert "features: [hpl, openmpi]" in facts
    (repo / "facts.yaml").write_text(facts.replace("features: [hpl, openmpi]", "features: [hpl, openmpi, stream]"))
    (repo / "checks" / "site_hpl.py").write_text(SITE_CHECK)
    (repo / "checks" / "site_stream.py").write_text(SITE_STREAM)
    return repo


@pytest.mark.parametrize("end", ["oldest", "newest"])
def test_a_site_repository_subclasses_the_installed_checks(wheel, tmp_path, end):
    version = dict(zip(("oldest", "newest"), supported_reframe()))[end]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    sources = [wheelhouse_for(PYTHON, platform.machine())] + ([reframe_wheels(version)] if end == "oldest" else [])
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index",
                              *(f"--find-links={s}" for s in sources), f"reframe-hpc=={version}", str(wheel)],
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    repo, run = site_repository(tmp_path), tmp_path / "run"
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path / "home"), "PWD": str(repo),
           "SCALEBENCH_FACTS": "facts.yaml"}
    proc = subprocess.run([str(venv / "bin" / "reframe"), "-C", "config.py", "-c", "checks", "--system",
                           "sbtutor", "--dry-run", "-o", str(run / "output"), "-s", str(run / "stage"),
                           "--report-file", str(run / "report.json")],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert f"ReFrame Setup]\n  version:           {version}" in proc.stdout
    cases = [c for c in cases_of(run) if c["display_name"].startswith("SiteHPL")]
    plan = subprocess.run([str(venv / "bin" / "scalebench"), "plan", "config.py", "--system", "sbtutor", "-n",
                           "HPLCheck|STREAMCheck", "--json"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=300)
    assert plan.returncode == 0, plan.stderr
    planned = {c["params"]["scale"]: c for c in json.loads(plan.stdout)["cases"] if c["check"] == "HPLCheck"}
    [stream_plan] = [c for c in json.loads(plan.stdout)["cases"] if c["check"] == "STREAMCheck"]
    assert sorted(c["display_name"].split("%scale=")[1] for c in cases) == sorted(planned)
    [stream] = [c for c in cases_of(run) if c["display_name"].startswith("SiteSTREAM")]
    assert stream["display_name"] == "SiteSTREAM %scale=1_node" and stream["result"] == "pass"
    assert stream["acceptance_round"] == "2026-12"
    script = (Path(stream["stagedir"]) / "rfm_job.sh").read_text()
    assert "#SBATCH -p batch" in script and "#SBATCH --nodes=1" in script and str(REPO) not in script
    assert f"stream {stream_plan['args'][0]}" in script  # the plan's array size, to the stack's STREAM
    for case in cases:
        assert case["result"] == "pass" and case["acceptance_round"] == "2026-12"  # its own variable, logged
        stage = Path(case["stagedir"])
        deck = planned[case["display_name"].split("%scale=")[1]]["hpl"]["deck"]
        assert hpl_dat((stage / "HPL.dat").read_text()) == ([deck["n"]], [deck["nb"]], [(deck["p"], deck["q"])])
        script = (stage / "rfm_job.sh").read_text()
        assert str(REPO) not in script and "#SBATCH -p batch" in script  # the site's access, no clone's path
