"""Pytest fixtures for a throwaway Slurm cluster (scalebench_lab.cluster) that is ALWAYS stopped.

Use from a test module (fixtures imported into a module are visible to its tests):

    from slurm_fixtures import slurm_cluster_factory  # noqa: F401

    @pytest.fixture(scope="module")
    def cluster(slurm_cluster_factory):
        return slurm_cluster_factory(nodes=2, mode="loopback")

    def test_x(cluster):
        cluster.run_client(["srun", "-N2", "hostname"], timeout=30)   # SLURM_CONF + MPI env set
        env = cluster.client_env()          # for ReFrame: os.environ + SLURM_CONF + OMPI_MCA_* ...
        argv = cluster.client_argv([...])   # netns mode: prefixed with nsenter into the head netns

The factory returns scalebench_lab.cluster.State. Every cluster it started (or tried to start: the
directory is registered before `start`, so a half-started one is cleaned too) is stopped by a
finalizer when the module (slurm_cluster_factory) or the session (slurm_session_cluster_factory)
ends, whatever the tests did. Skips when not root or Slurm is missing; fails instead when CI is set.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import require_tools, unavailable
from scalebench_lab import cluster

SLURM_TOOLS = ("slurmctld", "slurmd", "munged", "munge", "unmunge", "sinfo", "squeue", "srun", "sbatch", "scancel")
NETNS_TOOLS = ("ip", "nsenter", "unshare", "mount", "hostname", "tc")


def require_root() -> None:
    if os.geteuid() != 0:
        unavailable("needs root (Slurm daemons, munged, network namespaces)")


def require_slurm(mode: str = "loopback") -> None:
    """Skip (fail in CI) unless root with Slurm + munge (+ iproute2 etc. for netns) installed."""
    require_root()
    require_tools(*SLURM_TOOLS, *(NETNS_TOOLS if mode == "netns" else ()))


class ClusterFactory:
    """Callable: factory(nodes=2, mode="loopback", **start_kwargs) -> cluster.State."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory):
        self._tmp = tmp_path_factory
        self._dirs: list[tuple[Path, bool]] = []  # (directory, remove it afterwards)

    def _new_dir(self, mode: str) -> tuple[Path, bool]:
        directory = self._tmp.mktemp(f"slurm-{mode}")
        if len(str(directory)) <= cluster.MAX_DIR_LEN:
            return directory, False
        # Slurm's unix sockets live under the directory: a long basetemp would break srun.
        return Path(tempfile.mkdtemp(prefix="sbc-", dir="/tmp")), True

    def __call__(self, nodes: int = 2, mode: str = "loopback", **kwargs) -> cluster.State:
        require_slurm(mode)
        directory, remove = self._new_dir(mode)
        self._dirs.append((directory, remove))  # registered before start: a half start is stopped too
        return cluster.start(directory, nodes, mode, **kwargs)

    def stop_all(self) -> None:
        errors = []
        while self._dirs:
            directory, remove = self._dirs.pop()
            try:
                cluster.stop(directory)
            except Exception as err:  # keep stopping the others
                errors.append(f"{directory}: {err}")
            if remove and not errors:
                shutil.rmtree(directory, ignore_errors=True)
        if errors:
            raise cluster.ClusterError("stopping test clusters: " + "; ".join(errors))


def _factory(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ClusterFactory:
    factory = ClusterFactory(tmp_path_factory)
    request.addfinalizer(factory.stop_all)
    return factory


@pytest.fixture(scope="module")
def slurm_cluster_factory(request, tmp_path_factory) -> ClusterFactory:
    """Start clusters for one test module; all are stopped when the module ends."""
    return _factory(request, tmp_path_factory)


@pytest.fixture(scope="session")
def slurm_session_cluster_factory(request, tmp_path_factory) -> ClusterFactory:
    """Start clusters shared by the whole session; all are stopped when the session ends."""
    return _factory(request, tmp_path_factory)
