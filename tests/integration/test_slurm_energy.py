"""Energy to solution through a real Slurm: the acct_gather_energy/pm_counters plugin, fed by an emulated
meter whose power is known, accounted by slurmdbd, read back by the HPL check after its job, and reported.

About a minute. The cluster (netns mode, two one-core nodes, slurmdbd + MariaDB) mounts the meter's files as
/sys/cray/pm_counters in each node's own mount namespace. Each node draws a power that rises 4 W per
second from its own base (scalebench_lab.meter), so the core phase (the solve HPL dates), the job and
any other window have different, known energies: a figure taken over the wrong window, summed over
steps, or of the wrong nodes misses its expected value. A second partition of the site (the same
Slurm nodes) turns the sampler off and reads the core phase from Slurm's own hdf5 energy profile.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, require_xhpl, run_reframe, unavailable
from scalebench.reporting.store import ingest
from scalebench_lab import accounting, meter
from slurm_fixtures import slurm_cluster_factory  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slurm_lab]

SCALES = "HPLCheck%scale=(1_node|2_nodes)$"
PROFILED = "debug-profile"  # the site's partition whose core phase comes from sh5util


@pytest.fixture(scope="module")
def energy_run(slurm_cluster_factory, tmp_path_factory):  # noqa: F811
    require_xhpl()
    if accounting.missing_tools():
        unavailable(f"needs {', '.join(accounting.missing_tools())} (scripts/debian-packages-slurm.txt)")
    cluster = slurm_cluster_factory(nodes=2, mode="netns", cpus_per_node=1, accounting_db=True,
                                    energy="pm_counters", energy_period_s=1, energy_profile=True)
    base = tmp_path_factory.mktemp("slurm-energy")
    site = yaml.safe_load((REPO / "site_configs" / "sites" / "testcluster-netns.yaml").read_text())
    partition = site["partitions"][0]
    # a solve of about 15 s at the expected efficiency: HPL dates it to the second, and scalebench
    # measures no core phase under 5 s (scalebench/data/energy.yaml)
    partition.update(scheduler="slurm", max_nodes=2, hpl_time_budget_s=15, environs=["tcp-10GbE"],
                     energy={"source": "slurm", "plugin": "pm_counters", "period_s": 1})
    site["partitions"].append(dict(partition, name=PROFILED, max_nodes=1, energy=dict(
        partition["energy"], sampler=False, profile_dir=str(cluster.dir / "profile"))))
    site["stacks"] = [dict(site["stacks"][0], hpl_binary="build/bin/xhpl")]
    (base / "site.yaml").write_text(yaml.safe_dump(site))
    env = cluster.client_env()
    env["SCALEBENCH_SITE"] = str(base / "site.yaml")
    run_dir = base / "run"
    proc = run_reframe(run_dir, "-r", "-n", SCALES, "-S", "efficiency_floor=0", config="slurm.py", env=env,
                       argv_prefix=tuple(cluster.client_argv([])), timeout=600)
    law = meter.load_law(cluster.dir / "meter")
    report = subprocess.run([sys.executable, "-m", "scalebench", "report", str(run_dir), "--out", str(base / "report"),
                             "--format", "md"], capture_output=True, text=True, timeout=120)
    return run_dir, proc, law, report, base / "report"


def cases(run_dir, partition="debug"):
    sessions, warnings = ingest([run_dir])
    assert warnings == []
    return {c.num_nodes: c for c in sessions[0].cases
            if c.benchmark == "HPLCheck" and c.result != "skip" and c.partition == partition}


def test_reframe_passes_both_node_counts(energy_run):
    run_dir, proc, _, _, _ = energy_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert sorted(cases(run_dir)) == [1, 2] and sorted(cases(run_dir, PROFILED)) == [1]


def test_core_phase_energy_power_and_gflops_per_watt_are_the_meters(energy_run):
    """Over the window HPL dates, the sampler's joules are the meter's (to its 1 J resolution and the
    interpolation between 1 s readings of a 4 W/s ramp)."""
    run_dir, _, law, _, _ = energy_run
    for nodes, case in cases(run_dir).items():
        core = case.recorded("energy_detail")["core"]
        hosts = case.recorded("job_nodelist")
        assert len(hosts) == nodes
        expected = sum(law.joules(h, core["start"], core["end"]) for h in hosts)
        assert core["joules"] == pytest.approx(expected, rel=0.005), nodes
        assert core["coverage"] == ["node"] and core["nodes"] == nodes
        assert case.figure("energy") == pytest.approx(core["joules"] / 1e3)
        assert case.figure("power") == pytest.approx(expected / (core["end"] - core["start"]) / 1e3, rel=0.005)
        assert case.figure("gflops_per_watt") == pytest.approx(
            case.figure("rmax") / (expected / (core["end"] - core["start"])), rel=0.005)


def test_slurms_own_power_profile_gives_the_core_phase(energy_run):
    """sh5util's samples: whole watts, stamped to the whole second they were taken in (so up to 4 W
    early on this ramp): within 3% of the meter."""
    run_dir, _, law, _, _ = energy_run
    case = cases(run_dir, PROFILED)[1]
    core = case.recorded("energy_detail")["core"]
    (node,) = case.recorded("job_nodelist")
    expected = law.joules(node, core["start"], core["end"])
    assert core["source"].startswith("Slurm acct_gather_profile/hdf5 of acct_gather_energy/pm_counters")
    assert core["joules"] == pytest.approx(expected, rel=0.03)
    assert case.figure("gflops_per_watt") == pytest.approx(
        case.figure("rmax") / expected * (core["end"] - core["start"]), rel=0.03)


def test_one_probe_step_per_node_ends_with_its_last_samples(energy_run):
    """The energy readings above are the node probe's: the job starts one per-node step, and stops it so
    that every node takes its last samples (srun would SIGKILL it on a SIGTERM)."""
    run_dir, _, _, _, _ = energy_run
    outputs = sorted((run_dir / "output").rglob("HPLCheck_*/rfm_job.sh"))
    assert outputs
    for script in outputs:
        steps = [line for line in script.read_text().splitlines() if line.startswith("srun --overlap")]
        assert len(steps) == 1 and "scalebench.nodeprobe.sampler run" in steps[0], script
        assert ("--energy-out" in steps[0]) == ("debug-profile" not in str(script)), script
        for node in (script.parent / "nodeprobe").glob("*.jsonl"):
            assert json.loads(node.read_text().splitlines()[-1])["phase"] == "after", node


def test_the_core_phase_is_the_solve_inside_the_job(energy_run):
    """HPL's stamps are whole seconds: the window is the solve's time to within a second, and lies in the job."""
    run_dir, _, _, _, _ = energy_run
    for nodes, case in cases(run_dir).items():
        detail = case.recorded("energy_detail")
        core, whole = detail["core"], detail["job"]
        assert abs((core["end"] - core["start"]) - case.figure("time")) <= 1.0, nodes
        assert whole["start"] <= core["start"] and core["end"] <= whole["end"] + 1
        assert core["window"].startswith("core phase") and whole["window"] == "job total, includes set-up"


def test_slurm_job_total_is_the_allocations_energy(energy_run):
    """sacct -X: the extern step (PrologFlags=Contain) spans the allocation; its Start and End are whole
    seconds, so the meter's energy over them, give or take a second at each end, bounds the value."""
    run_dir, _, law, _, _ = energy_run
    for nodes, case in cases(run_dir).items():
        whole = case.recorded("energy_detail")["job"]
        hosts = case.recorded("job_nodelist")
        low = sum(law.joules(h, whole["start"] + 1, whole["end"]) for h in hosts)
        high = sum(law.joules(h, whole["start"], whole["end"] + 1) for h in hosts)
        assert low <= whole["joules"] <= high, (nodes, low, whole["joules"], high)
        assert "acct_gather_energy/pm_counters" in whole["source"] and whole["coverage"] == ["node"]
        assert case.figure("job_energy") == pytest.approx(whole["joules"] / 1e3)
        # set-up (matrix generation, the DGEMM ceiling) is in the job, not in the core phase
        assert case.figure("job_energy") > case.figure("energy")


def test_report_has_the_column_the_table_and_the_plot(energy_run):
    _, _, _, report, out = energy_run
    assert report.returncode == 0, report.stderr
    text = next(out.glob("*.md")).read_text()
    assert "### Energy to solution" in text and "Gflop/s/W" in text and "energy-testcluster-debug" in text
    assert "no energy source" not in text
