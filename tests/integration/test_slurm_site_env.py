"""A site's environment reaches every rank, on a real Slurm: the stack's Lmod module is loaded in the
job and its variable seen by each rank, and each rank runs on exactly the cores the plan gave it
(srun --cpu-bind=cores under Slurm's task/affinity; /proc/self/status, printed by every rank).

The HPL binary of the stack is a wrapper that prints what its rank sees, then runs the built xhpl: the
job is the HPL check's own, as a site would run it."""
import os
import re

import pytest
import yaml

from conftest import REPO, XHPL, lmod_environ, require_xhpl, run_reframe
from scalebench.hpl.case_plan import HplSettings
from scalebench.site.siteconf import site_systems
from scalebench.check import Settings
from scalebench.site_plan import Filters, plan_cases, site_specs
from slurm_fixtures import slurm_cluster_factory  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slurm_lab]

PROBE = re.compile(r"^env-probe node=(\S+) local=(\d+) module=(\S+) cpus=(\S+)$", re.MULTILINE)


def cpu_list(text):
    """'0-1,4' -> {0, 1, 4}"""
    cpus = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    require_xhpl()
    root = tmp_path_factory.mktemp("site-env")
    (root / "modules" / "probe").mkdir(parents=True)
    (root / "modules" / "probe" / "1.0.lua").write_text('setenv("SCALEBENCH_PROBE_MODULE", "probe-1.0")\n')
    wrapper = root / "probe-xhpl"
    wrapper.write_text("#!/bin/sh\n"
                       'echo "env-probe node=$SLURMD_NODENAME local=$SLURM_LOCALID '
                       'module=${SCALEBENCH_PROBE_MODULE:-unset} '
                       'cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)" >&2\n'
                       f'exec {XHPL} "$@"\n')
    wrapper.chmod(0o755)
    data = yaml.safe_load((REPO / "site_configs" / "sites" / "testcluster.yaml").read_text())
    data["modules_system"] = "lmod"
    part = data["partitions"][0]
    part.update(max_nodes=2, cores_per_node=2, cpu_bind="cores")
    stack = data["stacks"][0]
    stack.update(modules=["probe/1.0"], hpl_binary=str(wrapper), hpl_profile="xhpl")
    path = root / "site.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path, root / "modules"


@pytest.fixture(scope="module")
def runs(slurm_cluster_factory, site, tmp_path_factory):  # noqa: F811
    """Two HPL runs at 2 nodes: 2 ranks x 1 thread per node, then 1 rank x 2 threads."""
    path, module_tree = site
    cluster = slurm_cluster_factory(nodes=2, mode="loopback", cpus_per_node=2, task_plugin="affinity")
    env = lmod_environ()  # the shell a site engineer submits from: Lmod's `module` function exported
    env.update({k: v for k, v in cluster.client_env().items() if os.environ.get(k) != v})
    env.update(SCALEBENCH_SITE=str(path), MODULEPATH=str(module_tree))
    results = {}
    for ranks, threads in ((2, 1), (1, 2)):
        run_dir = tmp_path_factory.mktemp(f"run-{ranks}x{threads}") / "run"
        proc = run_reframe(run_dir, "-r", "-n", "HPLCheck%scale=2_nodes$", "-S", f"ranks_per_node={ranks}",
                           "-S", f"threads_per_rank={threads}", "-S", "efficiency_floor=0", config="slurm.py",
                           env=env, timeout=600)
        results[(ranks, threads)] = run_dir, proc
    return results


def planned_job(path, ranks, threads):
    partitions, stacks, environs = site_specs(site_systems(path))
    settings = Settings(benchmarks=(HplSettings(ranks_per_node=ranks, threads_per_rank=threads),))
    (case,) = plan_cases(partitions, stacks, environs, settings, Filters(names=("HPLCheck%scale=2_nodes$",)))
    return case.plan.job


@pytest.mark.parametrize("ranks, threads", [(2, 1), (1, 2)])
def test_every_rank_sees_the_module_and_runs_on_the_cores_the_plan_gave_it(runs, site, ranks, threads):
    run_dir, proc = runs[(ranks, threads)]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    job = planned_job(site[0], ranks, threads)
    assert (job.nodes, job.ranks_per_node, job.threads_per_rank) == (2, ranks, threads)
    assert "--cpu-bind=cores" in job.launcher_options
    (err,) = (run_dir / "output").rglob("rfm_job.err")  # ReFrame keeps a passed job's outputs
    seen = PROBE.findall(err.read_text())
    assert len(seen) == job.tasks and len({(node, local) for node, local, _, _ in seen}) == job.tasks, seen
    for node, local, module, cpus in seen:
        assert module == "probe-1.0", (node, local)  # the stack's module, loaded by the job, in every rank
        first = int(local) * threads  # Slurm's block distribution: local rank r owns cores r*T .. r*T+T-1
        assert cpu_list(cpus) == set(range(first, first + threads)), (node, local, cpus)
    script = next((run_dir / "output").rglob("rfm_job.sh")).read_text()
    assert "module load probe/1.0" in script and f"export OMP_NUM_THREADS={threads}" in script
    assert "export OMP_PLACES=cores" in script and "export OMP_PROC_BIND=close" in script
