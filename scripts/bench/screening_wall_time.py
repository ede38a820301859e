"""Benchmark: wall time of screening the throwaway Slurm cluster's nodes in one ScreeningCheck job,
against NodeHealthCheck on the same nodes through ReFrame's --distribute=all (one hpcc job per node).

Run (root; the machine otherwise idle, since the nodes share its cores):
    .venv/bin/python scripts/bench/screening_wall_time.py [--nodes 6] [--keep] [--smoke]

Starts the cluster in netns mode (one core per node), runs both through ReFrame with the netns test
site (site_configs/sites/testcluster-netns.yaml, all nodes, the tcp-10GbE stack), stops the cluster,
and prints for each way: ReFrame's wall time, the jobs it submitted, the time from the first job's
submission to the last one's end (the machine held), and what was screened (nodes; links). The
partition runs one job at a time (max_jobs: 1): so would a site whose MaxSubmit is reached. --smoke
checks that the script runs, in about a minute: NodeHealthCheck's hpcc then solves a deck of SMOKE_ARGS
(its own deck takes minutes a node here); its figures are worthless.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from scalebench import paths
from scalebench.site.partition import SCREEN_MIN_NODES
from scalebench_lab import cluster

WAYS = {
    "ScreeningCheck, one job": ("screening.py", ["-n", "ScreeningCheck"]),
    "NodeHealthCheck --distribute=all": ("hpl.py", ["-n", "NodeHealthCheck", "--distribute=all",
                                                     "-S", "ranks_per_node=1", "-S", "efficiency_floor=0"]),
}
SMOKE_ARGS = {"NodeHealthCheck --distribute=all": ["-S", "time_budget_s=0.05", "-S", "trials=1"]}


def run_way(state: cluster.State, site: Path, work: Path, name: str, checks: str, args: list[str]) -> dict:
    run_dir = work / name.split()[0]
    env = state.client_env()
    env.update(SCALEBENCH_SITE=str(site), SCALEBENCH_RUN_DIR=str(run_dir))
    argv = state.client_argv([str(Path(sys.executable).with_name("reframe")), "-C", str(paths.SITE_CONFIGS / "slurm.py"),
                              "-c", str(paths.REPO_ROOT / "reframe_tests" / checks), "-r", *args])
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - start
    cases = json.loads((run_dir / "report.json").read_text())["runs"][0]["testcases"] if (run_dir / "report.json").exists() else []
    spans = [(c["job_submit_time"], c["job_completion_time_unix"]) for c in cases
             if c.get("job_submit_time") and c.get("job_completion_time_unix")]
    held = max(e for _, e in spans) - min(s for s, _ in spans) if spans else float("nan")
    nodes = sorted({n for c in cases for n in (c.get("job_nodelist") or [])})
    links = sum(line.startswith("pair ") for c in cases for line in (c.get("probe_output") or "").splitlines())
    return {"way": name, "status": proc.returncode, "wall": wall, "jobs": len(cases), "held": held,
            "passed": sum(c["result"] == "pass" for c in cases), "nodes": len(nodes), "links": links}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=6)
    parser.add_argument("--keep", action="store_true", help="keep the run directories (printed)")
    parser.add_argument("--smoke", action="store_true", help="a run that checks the script works")
    args = parser.parse_args()
    if args.nodes < SCREEN_MIN_NODES:  # ReFrame would find no check to run, and exit 0
        parser.error(f"--nodes: screening needs at least {SCREEN_MIN_NODES}")
    work = Path(tempfile.mkdtemp(prefix="sb-screen-bench-"))
    site = yaml.safe_load((paths.SITE_CONFIGS / "sites" / "testcluster-netns.yaml").read_text())
    site["partitions"][0].update(max_nodes=args.nodes, environs=["tcp-10GbE"])
    site_path = work / "site.yaml"
    site_path.write_text(yaml.safe_dump(site))
    directory = Path(tempfile.mkdtemp(prefix="sbc-", dir="/tmp"))  # short: Slurm's sockets live under it
    state = cluster.start(directory, args.nodes, "netns", cpus_per_node=1)
    rows = []
    try:
        for name, (checks, extra) in WAYS.items():
            smoke = SMOKE_ARGS.get(name, []) if args.smoke else []
            rows.append(run_way(state, site_path, work, name, checks, [*extra, *smoke]))
    finally:
        cluster.stop(directory)
        shutil.rmtree(directory, ignore_errors=True)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown CPU")
    print(f"{args.nodes} nodes of the throwaway cluster (netns, one core each) on {os.cpu_count()} cores of {cpu}; "
          f"load before: {Path('/proc/loadavg').read_text().split()[0]}")
    print(f"{'way':34} {'ReFrame':>8} {'jobs':>5} {'held':>8} {'passed':>7} {'nodes':>6} {'links':>6}")
    for r in rows:
        print(f"{r['way']:34} {r['wall']:7.0f}s {r['jobs']:5d} {r['held']:7.0f}s {r['passed']:7d} {r['nodes']:6d} "
              f"{r['links']:6d}" + ("" if r["status"] == 0 else f"  (ReFrame exited {r['status']})"))
    if args.keep:
        print(f"run directories: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["status"] == 0 and r["jobs"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
