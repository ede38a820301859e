"""Real-Spack tier: every shipped environment concretizes, on a temporary copy of spack_envs/.

Runs only where a Spack is found (SPACK_ROOT, else `spack` on PATH); otherwise every test skips
with the reason. The site is SCALEBENCH_SPACK_SITE (default: debian12-local, this project's
Debian 12 developer machine). SCALEBENCH_SPACK_ENVS=a,b restricts the environments;
SCALEBENCH_SPACK_TIMEOUT sets the time limit of one solve in seconds (default 1800). A solve costs
1.5-2.5 minutes of CPU here and runs under `nice -n 19`.
"""
import os
import subprocess
from pathlib import Path

import pytest

from scalebench.spack.concretize import DEFAULT_TIMEOUT_S, concretize_env, find_spack, no_spack_reason
from scalebench.spack.specs import load_table
from scalebench.spack.validate import SITE_VAR, find_envs

REPO = Path(__file__).resolve().parents[2]
SPACK_ENVS = REPO / "spack_envs"
SPACK = find_spack()
SITE = os.environ.get(SITE_VAR) or "debian12-local"
ONLY = {name for name in os.environ.get("SCALEBENCH_SPACK_ENVS", "").split(",") if name}
TIMEOUT = float(os.environ.get("SCALEBENCH_SPACK_TIMEOUT") or DEFAULT_TIMEOUT_S)
ENVS = [env.parent for env in find_envs(SPACK_ENVS) if not ONLY or env.parent.name in ONLY]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(SPACK is None, reason=f"{no_spack_reason()}: the real-Spack tier needs one"),
]


def _repo_state():
    """`git status` of spack_envs/ (ignored and untracked files listed one by one) and its files."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--ignored", "--", "spack_envs"],
        cwd=REPO, capture_output=True, text=True, check=True).stdout
    files = sorted(str(p.relative_to(SPACK_ENVS)) for p in SPACK_ENVS.rglob("*"))
    return status, files


@pytest.fixture(scope="module")
def repo_before():
    return _repo_state()


def test_site_exists():
    assert (SPACK_ENVS / "sites" / SITE).is_dir(), f"{SITE_VAR}={SITE}: no spack_envs/sites/{SITE}/"


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.name)
def test_env_concretizes_on_a_temporary_copy(env, repo_before, record_property):
    result = concretize_env(env, site=SITE, spack=SPACK, tree=SPACK_ENVS, timeout=TIMEOUT)
    record_property("concretize", result.summary())
    print(result.summary())
    assert result.ok, f"{result.summary()}\n{' '.join(result.command)}\n{result.output_tail}"
    assert result.lock_sha256 and len(result.roots) >= 4, result.roots
    for app in ("hpl", "lammps", "openfoam", "osu-micro-benchmarks"):
        assert any(root.startswith(app) for root in result.roots), (app, result.roots)
    # One MPI per stack environment, and the one the stack names.
    mpis = sorted(set(result.packages) & set(load_table().providers("mpi")))
    expected = {"openmpi": "openmpi", "mpich": "mpich"}.get(env.name.split("-")[0])
    assert len(mpis) == 1 and (expected is None or mpis == [expected]), mpis
    # Nothing written into the repository: no spack.lock, no .spack-env/.
    assert _repo_state() == repo_before
    assert not (env / "spack.lock").exists() and not (env / ".spack-env").exists()
